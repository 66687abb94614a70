"""The grading report: one CSV row per student, and a feedback file each.

Text in the CSV that a spreadsheet would read as a formula (it starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading
apostrophe, as OWASP advises against CSV injection; scores are numbers the
grader wrote. Feedback files get one distinct name per student, one that
Windows, macOS and Linux all accept: no reserved device name (``CON``,
``NUL``, ``COM1``...), at most :data:`NAME_BYTES` bytes of UTF-8, compared as
those systems compare names (normalised, case ignored). Every file is
written whole or not at all: into a hidden temporary file in its folder,
then renamed.

>>> row = {"student": "=1+1", "assignment": "a", "q1": "2", "total": "2",
...        "possible": "2", "flags": "", "reason": ""}
>>> print(csv_text([row], ["q1"]), end="")
student,assignment,q1,total,possible,flags,reason
'=1+1,a,2,2,2,,
>>> feedback_names(["ann lee", "ann_lee", "Bo"])
{'ann lee': 'ann_lee-2.txt', 'ann_lee': 'ann_lee.txt', 'Bo': 'Bo.txt'}
"""

from __future__ import annotations

import collections
import csv
import hashlib
import io
import os
import tempfile
import unicodedata
from pathlib import Path

#: Columns before the questions' and after them.
LEADING, TRAILING = ["student", "assignment"], ["total", "possible", "flags", "reason"]
#: Most characters of one CSV field; a longer text is cut, with a marker that says so.
FIELD_LIMIT = 2000
#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Most bytes of a feedback file's stem (UTF-8); file systems allow 255 for the whole name.
NAME_BYTES = 80
#: Names Windows keeps for devices, whatever follows their first dot.
RESERVED = frozenset(["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
                     + [f"{port}{digit}" for port in ("COM", "LPT") for digit in "123456789\u00b9\u00b2\u00b3"])


def number(value: float) -> str:
    """A score as short text: 2, 0.75, 1.3333."""
    return f"{round(float(value), 4):g}"


def neutral(text: object) -> str:
    """``text`` on one line, capped, with an apostrophe in front if a spreadsheet would run it as a formula.

    A text longer than :data:`FIELD_LIMIT` characters is cut, and says so:
    Python's ``csv`` refuses a field over 128 KiB, a spreadsheet a cell over
    32,767 characters, and one student's flags must not cost the class its file.

    >>> neutral("-2"), neutral("@SUM(A1)"), neutral("ada")
    ("'-2", "'@SUM(A1)", 'ada')
    >>> len(neutral("x" * 10_000)) <= FIELD_LIMIT, neutral("x" * 10_000).endswith("characters cut]")
    (True, True)
    """
    text = str(text)
    text = "'" + text if text.startswith(FORMULA_STARTS) else text
    text = text.replace("\r", " ").replace("\n", " ")
    if len(text) > FIELD_LIMIT:
        kept = FIELD_LIMIT - 48  # room for the marker
        text = text[:kept] + f" ... [{len(text) - kept:,} more characters cut]"
    return text


def columns(questions: list[str], feedback: bool) -> list[str]:
    """The CSV's header: student, assignment, the questions, totals, flags, reason (and feedback)."""
    return LEADING + list(questions) + TRAILING + (["feedback"] if feedback else [])


def csv_text(rows: list[dict], questions: list[str], feedback: bool = False) -> str:
    """The rows as CSV text, with a header; every text cell is neutralised."""
    handle = io.StringIO()
    names = columns(questions, feedback)
    writer = csv.DictWriter(handle, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: neutral(row.get(name, "")) for name in names})
    return handle.getvalue()


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a temporary file in its folder, then a rename.

    On any error (a full disk, say) the temporary file is removed, ``path``
    is left as it was, and the error is raised.
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~umask())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def umask() -> int:
    """This process's umask (read from ``/proc``; set and restored where that cannot be read)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_scores(path: Path) -> list[dict] | None:
    """The rows of the scores file at ``path`` (each a dict of its columns), or ``None`` if there is none.

    A file that is no CSV with a ``student`` column holds no student's scores: ``[]``.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return []
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if "student" not in (reader.fieldnames or []):
            return []
        return [row for row in reader if row.get("student")]
    except csv.Error:
        return []


def write_csv(path: Path, rows: list[dict], questions: list[str], feedback: bool = False) -> None:
    """Write the CSV at ``path`` in one step (a temporary file, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, csv_text(rows, questions, feedback))


def writable(path: Path, *, folder: bool) -> str:
    """Why a file at ``path`` (or, with ``folder``, files in the folder ``path``) cannot be written; ``""`` if it can.

    The folder is made if missing, and a temporary file is made in it and removed.
    """
    path = Path(path)
    where = path if folder else path.parent
    if folder and path.exists() and not path.is_dir():
        return f"{path} is not a folder"
    if not folder and path.is_dir():
        return f"{path} is a folder"
    above = next(parent for parent in [where, *where.parents] if parent.exists())  # "/" or "." at least
    if not above.is_dir():
        return f"{above} is not a folder"
    try:
        where.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".check-", dir=where)
        os.close(handle)
        os.unlink(temporary)
        if not folder and path.exists() and not os.access(path, os.W_OK):
            return f"{path} cannot be replaced (permission denied)"
    except OSError as error:
        return f"{where} cannot be written ({error.strerror or error})"
    return ""


def _bytes_cut(text: str, limit: int) -> str:
    """The longest start of ``text`` whose UTF-8 holds at most ``limit`` bytes."""
    encoded = text.encode("utf-8")[:limit]
    return encoded.decode("utf-8", errors="ignore")


def _safe(student: str) -> str:
    text = unicodedata.normalize("NFC", student)
    text = "".join(c if c.isalnum() or c in "-_." else "_" for c in text).strip(". ")
    text = _bytes_cut(text, NAME_BYTES).rstrip(". ") or "student"
    if text.split(".")[0].upper() in RESERVED:
        text = f"{text}_"
    return text


def feedback_names(students: list[str], taken: set[str] = frozenset()) -> dict[str, str]:
    """A distinct file name for each student's feedback, even on a file system that ignores case.

    A name made safe (letters, digits, ``-_.``) that another student's also
    becomes is numbered: the student whose name needed no change keeps the
    plain one. A name in ``taken`` (the notes of students graded into the
    same CSV by an earlier run) is never given.

    >>> feedback_names(["ann"], taken={"ann.txt"})
    {'ann': 'ann-49915e.txt'}
    """
    groups = collections.defaultdict(list)
    for student in students:
        groups[_safe(student).casefold()].append(student)
    names = {}
    for members in groups.values():
        members = sorted(set(members), key=lambda student: (_safe(student) != student, student))
        for index, student in enumerate(members):
            stem = _safe(student) if index == 0 else f"{_safe(student)}-{index + 1}"
            names[student] = f"{stem}.txt"
    fold = lambda name: unicodedata.normalize("NFC", name).casefold()  # noqa: E731
    reserved = {fold(name) for name in taken}
    counted = collections.Counter(fold(name) for name in names.values())
    for student, name in sorted(names.items()):  # a numbered name that is someone's plain one
        key = fold(name)
        if counted[key] > 1 or key in reserved:
            counted[key] -= 1
            names[student] = f"{name[:-4]}-{hashlib.sha256(student.encode()).hexdigest()[:6]}.txt"
    return {student: names[student] for student in students}


def feedback_text(student: str, title: str, details: dict, row: dict, notes: list[str]) -> str:
    """A plain-text note for one student: the score of each question and why points were lost."""
    lines = [f"{title}: feedback for {student}", ""]
    if row.get("possible"):
        lines += [f"Total: {row['total']} of {row['possible']}", ""]
    for question, (score, points, failures) in details.items():
        lines.append(f"{question}: {number(score)} of {number(points)}")
        lines += [f"  - {failure}" for failure in failures]
    if row.get("flags"):
        lines += ["", f"Flagged: {row['flags']}"]
    if notes:
        lines += ["", "Notes:"] + [f"  - {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write_feedback(folder: Path, name: str, text: str) -> Path:
    """Write ``<folder>/<name>`` (a name from :func:`feedback_names`) whole, and return its path.

    A note that already holds ``text`` is left as it is.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return path
    except (OSError, UnicodeDecodeError):
        pass
    write_whole(path, text)
    return path


def stale_notes(folder: Path, names: set[str]) -> list[str]:
    """The notes in ``folder`` that no name of ``names`` is: left from an earlier run."""
    try:
        return sorted(entry.name for entry in os.scandir(folder)
                      if entry.name.endswith(".txt") and not entry.name.startswith(".")
                      and entry.name not in names)
    except OSError:
        return []
