"""Hostile submissions: each gains nothing (it scores what the blank scores) and harms nothing.

Every attack is the blank student notebook of Assignment 1 with one cell
added after the first. The attacks know the real paths on the teacher's
machine (the classmates' notebooks, the course, the build, the CSV), the
worst case. One grading run, with two jobs, grades them beside two honest
classmates; the checks read its CSV, the files before and after, and the
processes left.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from classroom import sandbox
from classroom.grade import grade_folder
from classroom.masters import ROOT

# Skipped where bubblewrap cannot run, except under CI, where that is a failure.
pytestmark = pytest.mark.skipif(bool(sandbox.check()) and not os.environ.get("CI"), reason=sandbox.check() or "")

ASSIGNMENT = "encoding_matrix"
#: Text from the hidden side that must never reach any output.
SECRETS = ("built_from_rates", "BEGIN SOLUTION", "__ndarray__", "pair_index", "END SOLUTION")
#: Marks the processes the attacks start, so that survivors can be found.
MARK = "4271"

ATTACKS = {
    "forged_answers": """
import glob, json, os
seen = [open(path, 'rb').read() for path in glob.glob('/proc/*/cmdline')]
forged = dict(cell_errors=[], answers=dict(rates_4_10000=400.0), scores=dict(q1=400))
for path in ('/scratch/answers.json', 'answers.json', '{scratch_guess}'):
    try:
        open(path, 'w').write(json.dumps(forged))
    except OSError:
        pass
os.kill(os.getppid(), 9)
os._exit(0)
""",
    "links_the_references": """
import os
os.symlink('{references}', '/scratch/answers.json')
os._exit(0)
""",
    "kills_everything": """
import os, signal
os.kill(-1, signal.SIGKILL)
""",
    "edits_classmates": """
import os
for path in ('{ada}', '{cleo}'):
    for attempt in (lambda: os.remove(path), lambda: open(path, 'w').write('{{}}')):
        try:
            attempt()
        except OSError:
            pass
for top, folders, files in os.walk('/'):
    if top.startswith(('/proc', '/sys', '/dev', '/scratch')):
        continue
    for name in files:
        if name.endswith('.ipynb'):
            try:
                os.remove(os.path.join(top, name))
            except OSError:
                pass
""",
    "writes_into_the_course": """
import os
for path in ('{course}/classroom/grade.py', '{course}/assignments/{assignment}/checks.py',
             '{course}/pe_lib/__init__.py', '/opt/course/pe_lib/__init__.py', '{references}',
             '{course}/classroom/answers.py'):
    try:
        open(path, 'a').write('\\nSCORE = 400\\n')
    except OSError:
        pass
""",
    "leaks_hidden_files": """
found = []
for path in ('{course}/assignments/{assignment}/checks.py', '{course}/assignments/{assignment}/{assignment}.ipynb',
             '{references}', '{ada}', '/etc/shadow'):
    try:
        found.append(open(path).read())
    except OSError:
        pass
print(found)
table = ' '.join(found) or 'nothing'
def angle_rates(depth, base=10000.0):
    raise RuntimeError(' '.join(found) + 'x' * 1000000)
""",
    "detached_rewriter": """
import os, subprocess, time
subprocess.Popen(['sleep', '{mark}7'], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(200):
            for path in ('{scores}', '/scratch/answers.json'):
                try:
                    open(path, 'w').write('student,total\\nmallory,11\\n')
                except OSError:
                    pass
            time.sleep(0.05)
        os._exit(0)
    os._exit(0)
""",
    "network": """
import socket
for address in (('127.0.0.1', {port}), ('10.0.0.1', 80)):
    try:
        socket.create_connection(address, timeout=1).sendall(b'hello')
    except OSError:
        pass
""",
    "memory_bomb": """
hoard = bytearray(48 << 30)
""",
    "time_bomb": """
import time
while True:
    try:
        time.sleep(0.5)
    except BaseException:
        pass
""",
    "fork_bomb": """
import os, subprocess
for _ in range(40):
    subprocess.Popen(['sleep', '{mark}9'])
""",
    "patches_the_checks": """
import builtins, doctest, json, numpy as np
np.allclose = lambda *args, **kwargs: True
np.isclose = lambda *args, **kwargs: True
doctest.DocTestRunner.run = lambda *args, **kwargs: doctest.TestResults(0, 0)
json.dumps = lambda *args, **kwargs: '{{"cell_errors": [], "answers": {{"rates_4_10000": 1e9}}, "total": 11}}'
real_import = builtins.__import__
builtins.__import__ = lambda *args, **kwargs: np
try:
    real_import('otter').Notebook.check = lambda *args, **kwargs: None
except BaseException:
    pass
""",
    "huge_answers": """
import os
with open('/scratch/answers.json', 'w') as handle:
    handle.write('[' + '1,' * (40 << 20) + '1]')
os._exit(0)
""",
}


def checksums(*folders: Path) -> dict[str, str]:
    """SHA-256 of every file under the folders."""
    sums = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                sums[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def survivors() -> list[str]:
    """Processes started by the attacks that are still running."""
    listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in listing.splitlines() if line.startswith("sleep " + MARK)]


@pytest.fixture(scope="module")
def run(builds, tmp_path_factory):
    built = builds(ASSIGNMENT)
    build = built.student.parents[2]
    root = tmp_path_factory.mktemp("red-team")
    folder, out = root / "submissions", root / "results"
    folder.mkdir()
    out.mkdir()
    scores = out / "scores.csv"
    solutions = nbformat.read(built.solutions, as_version=4)
    for name in ("ada", "cleo"):
        nbformat.write(solutions, folder / f"{name}.ipynb")
    (folder / "ben.ipynb").write_bytes(built.student.read_bytes())
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    values = dict(references=built.references, ada=folder / "ada.ipynb", cleo=folder / "cleo.ipynb",
                  course=ROOT, assignment=ASSIGNMENT, scores=scores, mark=MARK,
                  port=listener.getsockname()[1], scratch_guess="/tmp/sandbox-x/answers.json")
    blank = nbformat.read(built.student, as_version=4)
    first = next(i for i, cell in enumerate(blank.cells) if cell.cell_type == "code")
    for name, code in ATTACKS.items():
        notebook = nbformat.from_dict(json.loads(nbformat.writes(blank)))
        notebook.cells.insert(first + 1, nbformat.v4.new_code_cell(code.format(**values)))
        nbformat.write(notebook, folder / f"{name}.ipynb")
    guarded = (folder, build, ROOT / "classroom", ROOT / "assignments", ROOT / "pe_lib")
    before = checksums(*guarded)
    began = time.perf_counter()
    rows = grade_folder(folder, out=scores, build=build, jobs=2, timeout=25, cell_timeout=3,
                        log=lambda line: None)
    seconds = time.perf_counter() - began
    written = scores.read_text()
    time.sleep(3)  # time for a detached process to strike
    try:
        connection, _ = listener.accept()
        connected = True
        connection.close()
    except BlockingIOError:
        connected = False
    listener.close()
    return {"rows": {row["student"]: row for row in rows}, "written": written, "after_wait": scores.read_text(),
            "before": before, "after": checksums(*guarded), "connected": connected,
            "survivors": survivors(), "seconds": seconds}


def harmless(run) -> None:
    """Nothing changed: classmates, course, build, CSV; no process left; no secret printed."""
    assert run["after"] == run["before"]
    assert run["after_wait"] == run["written"]
    assert run["survivors"] == []
    assert not any(secret in run["written"] for secret in SECRETS)
    assert max(len(row["reason"]) for row in run["rows"].values()) < 2000
    assert run["rows"]["ada"]["total"] == run["rows"]["cleo"]["total"] == "11"


def test_the_honest_classmates_keep_full_marks_and_the_blank_scores_zero(run):
    assert run["rows"]["ben"]["total"] == "0"
    harmless(run)


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_attack_gains_nothing_and_harms_nothing(run, attack):
    row = run["rows"][attack]
    assert row["total"] == run["rows"]["ben"]["total"] == "0"
    assert row["reason"]
    harmless(run)


def test_a_forged_answers_file_is_malformed_or_judged_like_any_answer(run):
    assert "angle_rates(4" in run["rows"]["forged_answers"]["reason"] or \
        "answers" in run["rows"]["forged_answers"]["reason"]


def test_a_link_in_place_of_the_answers_is_not_followed(run):
    assert "answers" in run["rows"]["links_the_references"]["reason"]


def test_no_connection_leaves_the_sandbox(run):
    assert not run["connected"]


def test_patched_checks_only_forge_answers_which_are_judged_like_any_other(run):
    assert "angle_rates(4, base=10000): has shape (), expected (2,)" in run["rows"]["patches_the_checks"]["reason"]


def test_the_memory_and_time_bombs_are_stopped_with_a_reason(run):
    assert "MemoryError" in run["rows"]["memory_bomb"]["reason"]
    assert "timed out" in run["rows"]["time_bomb"]["reason"]


def test_without_the_sandbox_the_same_attack_does_harm(builds, tmp_path):
    """The checks above can fail: unconfined, an attack deletes a classmate's notebook."""
    built = builds(ASSIGNMENT)
    folder = tmp_path / "submissions"
    folder.mkdir()
    nbformat.write(nbformat.read(built.solutions, as_version=4), folder / "ada.ipynb")
    blank = nbformat.read(built.student, as_version=4)
    blank.cells.insert(1, nbformat.v4.new_code_cell(f"import os\nos.remove({str(folder / 'ada.ipynb')!r})"))
    nbformat.write(blank, folder / "mallory.ipynb")
    grade_folder(folder, out=None, build=built.student.parents[2], jobs=1, timeout=25,
                 unsafe_no_sandbox=True, log=lambda line: None)
    assert not (folder / "ada.ipynb").exists()
