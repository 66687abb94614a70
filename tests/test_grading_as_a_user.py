"""The grader run as an ordinary user, as a teacher runs ``python3 tasks.py grade``.

When the tests run as root (as CI does), grading is run as an unprivileged
user id with no account (``setpriv``), on a copy of what a teacher's grading
needs that this user can read: the course's grading code, the library, the
masters and specs, the reference answers and the submissions, all in a
fresh folder the user owns. The course's Python and environment are used
where they are; where they lie below a folder the user cannot enter (root's
home, for an interpreter installed by pyenv), a private mount namespace
shows the user that one folder and nothing else of it. Run by anyone else,
the tests grade as themselves.

One honest and two hostile submissions are graded in the sandbox. One
hostile submission tries to rewrite the teacher's files, which outside the
sandbox belong to the same user as its processes; the other takes more
memory, in three processes, than its budget, which the grader must see from
outside the sandbox without any privilege.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from classroom import sandbox
from classroom.build import build_to_grade
from classroom.masters import ROOT
from test_red_team import ATTACKS

# Skipped where bubblewrap cannot run, except under CI, where that is a failure.
pytestmark = pytest.mark.skipif(bool(sandbox.check()) and not os.environ.get("CI"), reason=sandbox.check() or "")

ASSIGNMENT = "encoding_matrix"
#: A user id with no account, for the grader when the tests run as root.
USER = 64123

HOSTILE = """
import glob, os
touched = 0
for path in glob.glob('{course}/**/*', recursive=True) + ['{course}/scores.csv', '{home}/planted']:
    try:
        with open(path, 'a') as handle:
            handle.write('\\nmallory was here\\n')
        touched += 1
    except OSError:
        pass
raise RuntimeError('uid %d touched %d' % (os.getuid(), touched))
"""

#: The red team's attack of three processes that together pass the 1 GiB budget: the
#: watch must see them from outside.
HOG = ATTACKS["memory_in_many_processes"]

GRADE = """
import json, os, sys
from pathlib import Path
from classroom import sandbox
from classroom.grade import grade_folder
why = sandbox.check()
if why:
    print(json.dumps({"unavailable": why}))
    sys.exit(0)
course = Path(sys.argv[1])
rows = grade_folder(course / "submissions", out=course / "scores.csv", build=course / "build",
                    assignment=sys.argv[2], jobs=2, timeout=60, log=lambda line: None)
print(json.dumps({"uid": os.getuid(), "rows": rows}))
"""


def _entered_by_others(path: Path) -> Path | None:
    """The first folder above ``path`` that others may not enter, or None."""
    for folder in [*reversed(path.parents), path]:
        if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def _views(paths: list[Path], scratch: Path) -> list[str]:
    """Shell lines that show the user, in a private mount namespace, the folders below closed ones."""
    lines = []
    for path in paths:
        closed = _entered_by_others(path)
        if closed is None:
            continue
        inside = path.relative_to(closed).parts[0]
        if _entered_by_others(closed / inside) not in (None, closed):
            pytest.fail(f"{closed / inside} is closed to other users too; grant them access to test")
        view = scratch / f"view-{len(lines)}"
        (view / inside).mkdir(parents=True)
        view.chmod(0o755)
        lines += [f"mount --bind '{closed / inside}' '{view / inside}'", f"mount --rbind '{view}' '{closed}'"]
    return lines


def _checksums(folder: Path) -> dict:
    return {str(path): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    built = build_to_grade(ASSIGNMENT, tmp_path_factory.mktemp("as-a-user-build"))
    scratch = Path(tempfile.mkdtemp(prefix="grading-as-a-user-"))
    try:
        scratch.chmod(0o755)
        course = scratch / "course"
        ignore = shutil.ignore_patterns("_build", "__pycache__", "*.pyc")
        for part in ("classroom", "pe_lib", "assignments"):
            shutil.copytree(ROOT / part, course / part, ignore=ignore)
        (course / "build" / ASSIGNMENT).mkdir(parents=True)
        shutil.copy(built.references, course / "build" / ASSIGNMENT / "references.json")
        submissions = course / "submissions"
        submissions.mkdir()
        nbformat.write(nbformat.read(built.solutions, as_version=4), submissions / "ada.ipynb")
        hostile = nbformat.read(built.student, as_version=4)
        hostile.cells.insert(1, nbformat.v4.new_code_cell(HOSTILE.format(course=course, home=scratch)))
        nbformat.write(hostile, submissions / "mallory.ipynb")
        hog = nbformat.read(built.student, as_version=4)
        hog.cells.insert(1, nbformat.v4.new_code_cell(HOG))
        nbformat.write(hog, submissions / "hog.ipynb")
        command = [sys.executable, "-c", GRADE, str(course), ASSIGNMENT]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch),
               "PYTHONPATH": str(course), "LANG": "C.UTF-8"}
        if os.geteuid() == 0:
            for path in [scratch, *scratch.rglob("*")]:
                os.chown(path, USER, USER, follow_symlinks=False)
            script = _views([Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable)], scratch)
            script.append('exec setpriv --reuid=%d --regid=%d --clear-groups -- "$@"' % (USER, USER))
            command = ["unshare", "--mount", "--propagation", "private", "sh", "-ec", "\n".join(script),
                       "grade-as-a-user", *command]
        before = _checksums(course)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if "unavailable" in result:
            if "namespaces" in result["unavailable"]:
                pytest.skip(f"user namespaces are off for ordinary users here: {result['unavailable']}")
            pytest.fail(result["unavailable"])
        result["changed"] = sorted(path for path, digest in _checksums(course).items()
                                   if before.get(path) != digest
                                   and not path.endswith(("scores.csv", ".scores.csv.progress")))
        result["planted"] = (scratch / "planted").exists()
        result["csv"] = (course / "scores.csv").read_text()
        yield result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_the_grader_runs_as_an_ordinary_user(graded):
    assert graded["uid"] != 0
    if os.geteuid() == 0:
        assert graded["uid"] == USER


def test_an_honest_submission_earns_full_marks(graded):
    (ada,) = [row for row in graded["rows"] if row["student"] == "ada"]
    assert ada["total"] == ada["possible"] == "11" and ada["reason"] == ""


def test_a_hostile_submission_touches_none_of_the_teachers_files(graded):
    (mallory,) = [row for row in graded["rows"] if row["student"] == "mallory"]
    assert mallory["total"] == "0"
    assert "cell 2 raised RuntimeError: uid 65534 touched 0" in mallory["reason"]
    assert graded["changed"] == [] and not graded["planted"]
    assert graded["csv"].startswith("student,assignment,q1")


def test_the_memory_of_all_its_processes_is_watched_from_outside(graded):
    (hog,) = [row for row in graded["rows"] if row["student"] == "hog"]
    assert hog["total"] == "0"
    assert "used more than 1 GiB of memory (its processes and files together) and was stopped" in hog["reason"]
