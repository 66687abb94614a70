"""The record of the students graded so far, kept beside the CSV so that a run can go on.

Each student's row (and feedback note) is appended to ``.<csv name>.progress``,
one line of JSON, as soon as that student is graded. A later run with the same
``--out`` takes the row of every student whose *key* is unchanged instead of
grading them again; ``--regrade`` ignores the record. The key is a digest of
everything the row depends on: the bytes of the notebook that were graded
(not those of an earlier look), the student's name, the assignment it is
graded as, that assignment's spec, master and references, the library and
the runner the sandbox is given (:func:`library_digest`), the grader's own
code, Python's and NumPy's versions, and the time limits. A row whose result
may be the machine's doing (a time-out, a run killed from outside, a sandbox
that did not start, the grader's own failure) is marked ``retry`` and graded
again by the next run. Entries of students who are not in a run (a late
folder graded into the class's CSV) are kept. A line cut short (a run killed
while writing it) is ignored.

>>> key(["ada", "abc"]) == key(["ada", "abc"]) != key(["ada", "abd"])
True
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

#: Longest line of the record read back.
LINE_LIMIT = 1 << 20


def key(parts: list) -> str:
    """A digest of ``parts`` (text and numbers)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def file_digest(path: Path) -> str:
    """SHA-256 of a file of the course (``""`` if it cannot be read)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def grader_digest() -> str:
    """A digest of the grader's own code: a changed grader grades everyone again."""
    folder = Path(__file__).resolve().parent
    return key([file_digest(path) for path in sorted(folder.glob("*.py"))])


def tree_digest(folder: Path) -> str:
    """A digest of the names and bytes of the files under ``folder``, compiled files left out."""
    folder = Path(folder)
    parts = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            parts.append([str(path.relative_to(folder)), hashlib.sha256(path.read_bytes()).hexdigest()])
    return key(parts)


def library_digest() -> str:
    """A digest of what the sandbox is given and runs with: the library, the runner, Python and NumPy."""
    import platform

    import numpy

    from classroom import sandbox

    return key([tree_digest(sandbox.LIBRARY), hashlib.sha256(sandbox.RUNNER.read_bytes()).hexdigest(),
                platform.python_version(),
                numpy.__version__, sandbox.PYTHON])


def reusable(entry: dict | None) -> bool:
    """True for a recorded entry a later run may keep (not one marked to be graded again).

    >>> reusable({"row": {}}), reusable({"row": {}, "retry": True}), reusable(None)
    (True, False, False)
    """
    return isinstance(entry, dict) and not entry.get("retry")


def record_path(out: Path) -> Path:
    """Where the record of a run writing ``out`` is kept."""
    out = Path(out)
    return out.with_name(f".{out.name}.progress")


def load(path: Path) -> dict[str, dict]:
    """The entries of the record at ``path`` by key; an unreadable line is skipped."""
    found = {}
    try:
        with open(path, "rb") as handle:
            for line in handle:
                if len(line) > LINE_LIMIT:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("row"), dict):
                    found[entry["key"]] = entry
    except OSError:
        pass
    return found


class Record:
    """The record a run appends to; a failure to write (a full disk) is remembered, not raised."""

    def __init__(self, path: Path | None, kept: list[dict]):
        self.path, self.problem = path, ""
        if path is None:
            return
        try:
            temporary = path.with_name(path.name + ".partial")
            with open(temporary, "w", encoding="utf-8") as handle:
                for entry in kept:
                    handle.write(json.dumps(entry) + "\n")
            os.replace(temporary, path)
        except OSError as error:
            self.problem = error.strerror or str(error)
            try:
                os.unlink(temporary)
            except OSError:
                pass

    def add(self, entry: dict) -> None:
        """Append one student's entry, flushed to disk."""
        if self.path is None or self.problem:
            return
        try:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as error:
            self.problem = error.strerror or str(error)
