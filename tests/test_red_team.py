"""Hostile submissions: each gains nothing (it scores what the blank scores) and harms nothing.

Every attack is the blank student notebook of Assignment 1 with one cell
added after the first (or, where it defines the graded functions, last).
The attacks know the real paths on the teacher's machine (the classmates'
notebooks, the course, the build, the CSV), the worst case. Some measure
what the sandbox let them do and report it as the error of their cell, the
one channel back that is sealed before any hidden input exists. Beside them
lie entries that are no notebook at all (a FIFO, links, a device, a notebook
too large), names that clash or that a spreadsheet would run, and two honest
classmates. One grading run, with two jobs, grades them all; the checks read
its CSV, its feedback files, the files before and after, and the processes
left.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import socket
import stat
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from classroom import sandbox
from classroom.build import build_to_grade
from classroom.grade import grade_folder
from classroom.masters import ROOT

# Skipped where bubblewrap cannot run, except under CI, where that is a failure.
pytestmark = pytest.mark.skipif(bool(sandbox.check()) and not os.environ.get("CI"), reason=sandbox.check() or "")

ASSIGNMENT = "encoding_matrix"
#: Text from the hidden side that must never reach any output: the grader's code, the
#: solutions, the wire format, and the probes' hidden inputs (the first rows of the
#: closest_rows tables, as a repr of them or of the probe code would show them).
SECRETS = ("built_from_rates", "BEGIN SOLUTION", "__ndarray__", "pair_index", "END SOLUTION",
           "default_rng", "[3.0, 4.0]", "3.0, 4.0", "4.05", "0.479", "0.48", "Leak")
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
import os, sys
line = ('[' + '[],' * (21 << 20) + '[]]\\n').encode()
for path in ('/scratch/answers.json', '/tmp/answers.json'):
    try:
        open(path, 'wb').write(line)
    except OSError:
        pass
os.write(int(sys.argv[2]), line)  # the report pipe: one 63 MB line of empty lists
os._exit(0)
""",
    "huge_answer_in_a_probe": """
import os, sys
def angle_rates(depth, base=10000.0):
    if (depth, base) == (4, 10000.0):  # one line of 63 MB, under the probe's own name
        os.write(int(sys.argv[2]), ('["rates_4_10000", [' + '[],' * (21 << 20) + '[]]]\\n').encode())
    return None
""",
    "fills_memory_folders": """
import ctypes, os
found = []
for top in ('/tmp', '/dev/shm', '/scratch', '/', '/dev', '/opt'):
    written = 0
    for name in ('a', 'b'):
        try:
            with open(os.path.join(top, 'fill' + name), 'wb') as handle:
                for _ in range(40):
                    handle.write(b'x' * (8 << 20))
                    handle.flush()
                    written += 8 << 20
        except OSError:
            pass
    found.append(top.replace('/', '') + '=' + str(written >> 20))
libc = ctypes.CDLL(None, use_errno=True)
found.append('memfd=' + str(libc.memfd_create(b'x', 0) >= 0))
found.append('shm=' + str(libc.shmget(0, 1 << 30, 0o1600) >= 0))
found.append('userns=' + str(libc.unshare(0x10000000) == 0))
raise RuntimeError(' '.join(found))
""",
    "memory_in_many_processes": """
import subprocess, sys, time
hog = 'import time\\nx = b"x" * (450 << 20)\\ntime.sleep(60)'
children = [subprocess.Popen([sys.executable, '-c', hog]) for _ in range(3)]
while True:
    try:
        time.sleep(20)
    except BaseException:
        pass
""",
    "many_files": """
import os, time
os.mkdir('/scratch/many')
index = 0
while True:
    try:
        os.close(os.open('/scratch/many/%d' % index, os.O_CREAT | os.O_WRONLY))
        index += 1
    except BaseException:
        time.sleep(0.1)
""",
    "many_processes": """
import os, time
for _ in range(400):
    if os.fork() == 0:
        os.execv('/usr/bin/sleep', ['sleep', '60'])
while True:
    try:
        time.sleep(20)
    except BaseException:
        pass
""",
    "reads_the_job": """
import glob, os, select
found = []
for path in [name for top in ('/scratch', '/tmp', '/opt') for name in glob.glob(top + '/**', recursive=True)]:
    try:
        found.append(open(path, errors='replace').read())
    except OSError:
        pass
for fd in range(40):
    try:
        if select.select([fd], [], [], 0)[0]:
            found.append(os.read(fd, 1 << 20).decode(errors='replace'))
    except (OSError, ValueError):
        pass
found.append(open('/proc/self/cmdline').read())
text = ' '.join(found)
if 'default_rng' in text:
    raise RuntimeError(text[text.index('default_rng'):][:150])
def closest_rows(table):
    raise ValueError(repr(table.tolist() if hasattr(table, 'tolist') else table))
def angle_rates(depth, base=10000.0):
    raise type('Leak_%d_%d' % (depth, base), (Exception,), {{}})()
""",
    "steals_the_probes": """
import os, sys, time
job, report = int(sys.argv[1]), int(sys.argv[2])
if os.fork() == 0:
    stolen = os.read(job, 1 << 20).decode(errors='replace')  # waits for the probes
    os.write(report, ('{{"cell_errors": [[1, "Leak", %r]]}}\\n' % stolen[:150]).encode())
    for key in ('rates_4_10000', 'closest_codes', 'closest_points'):
        os.write(report, ('["%s", %s]\\n' % (key, '"' + stolen[:100].replace('"', "'") + '"')).encode())
    os.write(report, b'{{"end": 3}}\\n')
    os._exit(0)
""",
    "deep_sum": "x = " + " + ".join(["1"] * 3000),
    "unary_minus": "x = " + "-" * 100_000 + "1",
    "forged_huge_numbers": """
import os, sys
def angle_rates(depth, base=10000.0):
    if (depth, base) == (4, 10000.0):  # answers of 400 digits, sent before the probes ask
        big = '1' + '0' * 400
        for key, value in (('largest_entry', big), ('fast_wave_pair', '[%s, 1, 2]' % big),
                           ('norms_squared', '[%s]' % big), ('rates_3_10000', big)):
            os.write(int(sys.argv[2]), ('["%s", %s]\\n' % (key, value)).encode())
    return None
""",
    "huge_cell": "x = 1\n" * 1_000_000,  # a million lines: the notebook holds too many items
    "long_line": "x = '" + "a" * 5_000_000 + "'",  # 5 MB in one line
    "reads_the_host": """
import os, socket
found = [socket.gethostname()]
for path in ('/proc/loadavg', '/proc/meminfo'):
    found.append(open(path).read().split('\\n')[0].replace(' ', ''))
try:
    found.append(str(os.getloadavg()))
except OSError:
    found.append('noload')
raise RuntimeError(' '.join(found))
""",
    "finds_the_course": """
import glob, os, sys
course = '{course}'
# Where Python and the environment live is in view (the teacher's own .venv may
# lie in the course's folder): set those paths aside, then look for the course.
installed = {{os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), sys.prefix, sys.base_prefix}}
seen = dict(sys_path=' '.join(sys.path), executable=sys.executable, environ=repr(dict(os.environ)),
            cwd=os.getcwd(), runner=repr(sys.argv), modules=' '.join(
                str(getattr(module, '__file__', '')) for module in list(sys.modules.values())))
for path in glob.glob('/proc/*/mountinfo') + glob.glob('/proc/*/cmdline') + glob.glob('/proc/*/environ') \
        + glob.glob('/proc/*/maps') + glob.glob('/proc/*/mounts'):
    try:
        seen[path] = open(path, 'rb').read().decode('utf-8', 'replace')
    except OSError:
        pass
for path in glob.glob('/proc/*/cwd') + glob.glob('/proc/*/root') + glob.glob('/proc/*/exe') \
        + glob.glob('/proc/*/fd/*') + glob.glob('/proc/*/map_files/*'):
    try:
        seen[path] = os.readlink(path)
    except OSError:
        pass
for name, text in list(seen.items()):
    for path in sorted(installed, key=len, reverse=True):
        text = text.replace(path, '<python>')
    seen[name] = text
where = sorted(name for name, text in seen.items() if course in text)
mounts = len(seen.get('/proc/self/mountinfo', '').splitlines())
raise RuntimeError('course seen in %s; %d mounts, %d places read' % (where or 'nothing', mounts, len(seen)))
""",
}

#: Attacks that define the graded functions: their cell goes last, after the blank's own.
DEFINE_FUNCTIONS = {"huge_answer_in_a_probe", "reads_the_job", "forged_huge_numbers"}
#: Names a teacher must be able to tell apart, and note names some system refuses:
#: name -> whether the entry is the solutions (else the blank).
NAMES = {"Jos\u00e9": True, "Jose\u0301": False, "anna": True, "\u0430nna": False, "CON": False,
         "nul": False, "com1": False, "new\nline": True}
#: A folder name of 63 letters of four bytes each (252 bytes, legal on Linux).
LONG_NAME = "\U0001D49C" * 63
#: Names a spreadsheet would run as formulas.
FORMULA_NAMES = ("=HYPERLINK(\"http:x\")", "+1", "-2", "@SUM(A1)")


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


#: The time limits of the red team's grading. What an attack is stopped for must not
#: depend on the machine's speed: a fork or file bomb is stopped by the sandbox's
#: count of processes or files, a memory bomb by its memory, and only the time bomb
#: (which swallows every alarm) by the notebook's time limit. On a loaded 2-core
#: machine starting the sandbox and forking hundreds of processes takes seconds, so
#: the limits leave room for that many times over; the time bomb costs one worker
#: NOTEBOOK_SECONDS, the verdicts are the same at any speed.
NOTEBOOK_SECONDS = 60
CELL_SECONDS = 20


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("red-team")
    built = build_to_grade(ASSIGNMENT, root / "build")
    build = built.references.parents[1]
    folder, out = root / "submissions", root / "results"
    folder.mkdir()
    out.mkdir()
    scores, feedback = out / "scores.csv", out / "feedback"
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
        at = len(notebook.cells) if name in DEFINE_FUNCTIONS else first + 1
        notebook.cells.insert(at, nbformat.v4.new_code_cell(code.format(**values)))
        nbformat.write(notebook, folder / f"{name}.ipynb")
    # Entries that are no notebook: a FIFO in a folder, links, a device, a notebook too large.
    (folder / "x").mkdir()
    os.mkfifo(folder / "x" / "x.ipynb")
    nbformat.write(solutions, root / "elsewhere.ipynb")
    os.symlink(root / "elsewhere.ipynb", folder / "linked.ipynb")
    if os.geteuid() == 0:
        os.mknod(folder / "device.ipynb", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    with open(folder / "too_large.ipynb", "wb") as handle:
        handle.truncate(33 << 20)
    # Names: a folder and a notebook of one name, names that clean alike, formulas.
    (folder / "dup").mkdir()
    nbformat.write(solutions, folder / "dup" / "work.ipynb")
    (folder / "dup.ipynb").write_bytes(built.student.read_bytes())
    nbformat.write(solutions, folder / "ann lee.ipynb")
    (folder / "ann_lee.ipynb").write_bytes(built.student.read_bytes())
    for name in FORMULA_NAMES:
        (folder / f"{name}.ipynb").write_bytes(built.student.read_bytes())
    for name, solved in NAMES.items():
        nbformat.write(solutions if solved else blank, folder / f"{name}.ipynb")
    (folder / LONG_NAME).mkdir()
    (folder / LONG_NAME / "work.ipynb").write_bytes(built.student.read_bytes())
    (folder / "bom.ipynb").write_bytes(b"\xef\xbb\xbf" + nbformat.writes(solutions).encode())
    guarded = (folder, build, ROOT / "classroom", ROOT / "assignments", ROOT / "pe_lib")
    before = checksums(*guarded)
    began = time.perf_counter()
    rows = grade_folder(folder, out=scores, build=build, jobs=2, timeout=NOTEBOOK_SECONDS,
                        cell_timeout=CELL_SECONDS, feedback=feedback, log=lambda line: None)
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
    notes = {path.name: path.read_text() for path in sorted(feedback.iterdir())}
    return {"rows": {row["student"]: row for row in rows}, "written": written, "after_wait": scores.read_text(),
            "before": before, "after": checksums(*guarded), "connected": connected, "notes": notes,
            "survivors": survivors(), "seconds": seconds, "built": built}


def harmless(run) -> None:
    """Nothing changed: classmates, course, build, CSV; no process left; no secret printed."""
    assert run["after"] == run["before"]
    assert run["after_wait"] == run["written"]
    assert run["survivors"] == []
    for text in [run["written"], *run["notes"].values()]:
        assert not [secret for secret in SECRETS if secret in text]
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


def test_patched_checks_only_forge_lines_that_are_no_answers(run):
    assert "angle_rates(4, base=10000): was not computed" in run["rows"]["patches_the_checks"]["reason"]


def test_the_memory_and_time_bombs_are_stopped_with_a_reason(run):
    assert "MemoryError" in run["rows"]["memory_bomb"]["reason"]
    assert "timed out" in run["rows"]["time_bomb"]["reason"]


# ---------------------------------------------------------------- finding 1: bounded resources


def test_the_memory_backed_folders_hold_what_their_sizes_allow_and_nothing_else_is_writable(run):
    """/tmp, /dev/shm and /scratch were sized at half the host's memory; / and /dev were writable."""
    found = re.search(r"cell \d+ raised RuntimeError: (.*?)( \||$)", run["rows"]["fills_memory_folders"]["reason"])
    written = dict(item.split("=") for item in found.group(1).split())
    for folder, size in sandbox.FOLDERS.items():
        assert 0 < int(written[folder.replace("/", "")]) <= size >> 20
    assert written[""] == written["dev"] == written["opt"] == "0"  # the root, /dev, /opt
    assert written["memfd"] == written["shm"] == written["userns"] == "False"


def test_memory_in_all_processes_together_is_bounded(run):
    """Three processes of 450 MiB each pass the 1 GiB budget that each alone keeps within."""
    assert "used more than 1 GiB of memory (its processes and files together) and was stopped" in \
        run["rows"]["memory_in_many_processes"]["reason"]


def test_files_and_processes_are_bounded_in_number(run):
    assert f"created more than {sandbox.FILE_COUNT} files and was stopped" in run["rows"]["many_files"]["reason"]
    reason = run["rows"]["many_processes"]["reason"]
    # As root the kernel exempts the process limit and the watch stops the sandbox;
    # as anyone else the limit refuses the fork.
    assert f"started more than {sandbox.TASKS} processes and threads" in reason or "BlockingIOError" in reason


# ---------------------------------------------------------------- findings 4 and 5: files and the grader's memory


@pytest.mark.parametrize("student, reason", [
    ("x", "not graded: x/x.ipynb is a FIFO, not a regular file"),
    ("linked", "not graded: linked.ipynb is a symbolic link; hand in the notebook itself"),
    ("device", "not graded: device.ipynb is a device, not a regular file"),
    ("too_large", "not graded: too_large.ipynb is larger than 32 MiB"),
])
def test_an_entry_that_is_no_regular_notebook_gets_a_row_and_stops_no_one(run, student, reason):
    if student == "device" and os.geteuid() != 0:
        pytest.skip("only root can make a device node")
    row = run["rows"][student]
    assert row["total"] == "0" and row["reason"] == reason and row["assignment"] == ASSIGNMENT
    harmless(run)


def test_answers_that_would_fill_the_graders_memory_are_refused_unparsed(run):
    assert "no answers came back: the cells' report is too long" in run["rows"]["huge_answers"]["reason"]
    assert "angle_rates(4, base=10000): could not be read: it is larger than 4 MiB" in \
        run["rows"]["huge_answer_in_a_probe"]["reason"]


# ---------------------------------------------------------------- finding 6: who is who


def test_a_folder_and_a_notebook_of_one_name_are_graded_apart(run):
    rows = run["rows"]
    assert rows["dup/"]["total"] == "11" and rows["dup.ipynb"]["total"] == "0"
    assert rows["dup/"]["reason"] == "2 entries are named 'dup' (dup/, dup.ipynb): each has its own row"
    assert rows["dup/"]["feedback"] != rows["dup.ipynb"]["feedback"]


def test_names_that_clean_alike_get_their_own_feedback(run):
    rows, notes = run["rows"], run["notes"]
    assert rows["ann lee"]["feedback"] == "ann_lee-2.txt" and rows["ann_lee"]["feedback"] == "ann_lee.txt"
    assert "feedback for ann lee" in notes["ann_lee-2.txt"] and "Total: 11 of 11" in notes["ann_lee-2.txt"]
    assert "feedback for ann_lee" in notes["ann_lee.txt"] and "Total: 0 of 11" in notes["ann_lee.txt"]
    assert len(notes) == len(rows)


# ---------------------------------------------------------------- finding 8: feedback that does not leak


def test_no_hidden_input_reaches_the_feedback_through_errors_files_or_pipes(run):
    rows = run["rows"]
    assert "RuntimeError" not in rows["reads_the_job"]["reason"]  # it found no job to quote
    note = run["notes"][rows["reads_the_job"]["feedback"]]
    assert "  - closest_rows(codes table): raised ValueError\n" in note
    assert "  - angle_rates(12, base=100): raised an exception of its own class\n" in note
    harmless(run)


# ---------------------------------------------------------------- finding 9: formulas


def test_a_name_a_spreadsheet_would_run_reaches_the_csv_neutralised(run):
    table = list(csv.reader(io.StringIO(run["written"])))
    students = [line[0] for line in table[1:]]
    for name in FORMULA_NAMES:
        assert "'" + name in students and name not in students
    assert not [cell for line in table[1:] for cell in line if cell[:1] in ("=", "+", "-", "@")]


def test_without_the_sandbox_the_same_attack_does_harm(run, tmp_path):
    """The checks above can fail: unconfined, an attack deletes a classmate's notebook."""
    built = run["built"]
    folder = tmp_path / "submissions"
    folder.mkdir()
    nbformat.write(nbformat.read(built.solutions, as_version=4), folder / "ada.ipynb")
    blank = nbformat.read(built.student, as_version=4)
    blank.cells.insert(1, nbformat.v4.new_code_cell(f"import os\nos.remove({str(folder / 'ada.ipynb')!r})"))
    nbformat.write(blank, folder / "mallory.ipynb")
    grade_folder(folder, out=None, build=built.references.parents[1], jobs=1, timeout=25,
                 unsafe_no_sandbox=True, log=lambda line: None)
    assert not (folder / "ada.ipynb").exists()


# ---------------------------------------------------------------- one entry never aborts the class


def test_code_the_parser_cannot_read_costs_that_row_only(run):
    """3,000 terms in a row (RecursionError) and 100,000 minus signs (MemoryError) in ast.parse."""
    for student in ("deep_sum", "unary_minus"):
        row = run["rows"][student]
        assert row["total"] == "0" and row["flags"] == "cell 2 is nested too deeply to be read for imports"
        assert "cell 2 raised" in row["reason"]
    harmless(run)


def test_forged_numbers_of_hundreds_of_digits_cost_their_checks_only(run):
    row = run["rows"]["forged_huge_numbers"]
    assert row["total"] == "0"
    note = run["notes"][row["feedback"]]
    assert "  - largest_entry: is not numbers, not numbers\n" in note
    assert "  - fast_wave_pair: item 0 is not the expected value\n" in note
    harmless(run)


def test_a_cell_larger_than_the_cap_is_refused_before_it_is_read(run):
    row = run["rows"]["long_line"]
    assert row["total"] == "0" and row["q1"] == "0"
    assert row["reason"] == "not graded: cell 2 holds more than 128 KiB of code; hand in the notebook without it"
    assert run["rows"]["huge_cell"]["reason"] == ("not graded: huge_cell.ipynb holds more than 250000 items; "
                                                  "clear its outputs and hand it in again")


def test_the_sandbox_sees_its_own_host_name_load_and_memory(run):
    found = re.search(r"cell 2 raised RuntimeError: (.*?)( \||$)", run["rows"]["reads_the_host"]["reason"])
    name, load, memory, average = found.group(1).split(" ", 3)
    assert name == sandbox.HOSTNAME != socket.gethostname()
    assert load == "0.000.000.001/11" and average == "noload"  # os.getloadavg asks sysinfo, refused
    assert memory == f"MemTotal:{1 << 20}kB"  # the 1 GiB budget of the assignment, not the host's


def test_the_sandbox_sees_nothing_of_the_course_folder(run):
    """Not in the mount table, nor any process's command line, environment, files or maps.

    The library and the runner are copies bound from a neutral folder, and
    bubblewrap reads its options from a pipe; only where Python and the
    course's environment are installed stays in view (set aside by the attack).
    """
    found = re.search(r"cell 2 raised RuntimeError: course seen in (.*?); (\d+) mounts, (\d+) places read",
                      run["rows"]["finds_the_course"]["reason"])
    assert found, run["rows"]["finds_the_course"]["reason"]
    assert found.group(1) == "nothing"
    assert int(found.group(2)) > 10 and int(found.group(3)) > 20  # it did read the mount table and /proc


# ---------------------------------------------------------------- names a teacher can tell apart


def test_names_in_other_normal_forms_or_look_alike_letters_are_numbered_and_flagged(run):
    rows = run["rows"]
    assert rows["Jos\u00e9 (2)"]["total"] == "11" and rows["Jose\u0301"]["total"] == "0"
    assert rows["Jos\u00e9 (2)"]["flags"] == "its name looks like 1 other entry's: it is 'Jos\\xe9'"
    assert rows["Jose\u0301"]["flags"] == "its name looks like 1 other entry's: it is 'Jose\\u0301'"
    assert rows["anna"]["total"] == "11" and rows["\u0430nna (2)"]["total"] == "0"
    assert rows["\u0430nna (2)"]["flags"] == ("its name mixes Cyrillic and Latin letters: '\\u0430nna'; "
                                               "its name looks like 1 other entry's: it is '\\u0430nna'")
    assert len({row["feedback"] for row in rows.values()}) == len(rows)


def test_a_name_with_a_newline_gets_its_row(run):
    row = run["rows"]["new line"]
    assert row["total"] == "11" and "feedback for new line" in run["notes"][row["feedback"]]


def test_note_names_are_legal_on_windows_macos_and_linux(run):
    rows, notes = run["rows"], run["notes"]
    assert [rows[name]["feedback"] for name in ("CON", "nul", "com1")] == ["CON_.txt", "nul_.txt", "com1_.txt"]
    long = rows[LONG_NAME]
    assert long["total"] == "0" and long["feedback"] == "\U0001D49C" * 20 + ".txt"
    for name in notes:
        assert len(name.encode()) <= 100 and name.split(".")[0].upper() not in ("CON", "NUL", "COM1")
    assert len(notes) == len(rows)


def test_a_notebook_with_a_byte_order_mark_is_read(run):
    assert run["rows"]["bom"]["total"] == "11" and run["rows"]["bom"]["reason"] == ""
