"""The grading report: one CSV row per student, and a feedback file each.

Text in the CSV that a spreadsheet would read as a formula (it starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading
apostrophe, as OWASP advises against CSV injection; scores are numbers the
grader wrote. Feedback files get one distinct name per student.

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
import unicodedata
from pathlib import Path

#: Columns before the questions' and after them.
LEADING, TRAILING = ["student", "assignment"], ["total", "possible", "flags", "reason"]
#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def number(value: float) -> str:
    """A score as short text: 2, 0.75, 1.3333."""
    return f"{round(float(value), 4):g}"


def neutral(text: object) -> str:
    """``text`` on one line, with an apostrophe in front if a spreadsheet would run it as a formula.

    >>> neutral("-2"), neutral("@SUM(A1)"), neutral("ada")
    ("'-2", "'@SUM(A1)", 'ada')
    """
    text = str(text)
    text = "'" + text if text.startswith(FORMULA_STARTS) else text
    return text.replace("\r", " ").replace("\n", " ")


def columns(questions: list[str], feedback: bool = False) -> list[str]:
    """The CSV's header: student, assignment, the questions, totals, flags, reason (and feedback)."""
    return LEADING + list(questions) + TRAILING + (["feedback"] if feedback else [])


def csv_text(rows: list[dict], questions: list[str], feedback: bool = False) -> str:
    """The rows as CSV text, with a header; every text cell is neutralised."""
    handle = io.StringIO()
    names = columns(questions, feedback)
    writer = csv.DictWriter(handle, fieldnames=names, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: neutral(row.get(name, "")) for name in names})
    return handle.getvalue()


def write_csv(path: Path, rows: list[dict], questions: list[str], feedback: bool = False) -> None:
    """Write the CSV at ``path`` in one step (a temporary file, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(csv_text(rows, questions, feedback))
    partial.replace(path)


def _safe(student: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in student).strip(".")[:80] or "student"


def feedback_names(students: list[str]) -> dict[str, str]:
    """A distinct file name for each student's feedback, even on a file system that ignores case.

    A name made safe (letters, digits, ``-_.``) that another student's also
    becomes is numbered: the student whose name needed no change keeps the
    plain one.
    """
    groups = collections.defaultdict(list)
    for student in students:
        groups[unicodedata.normalize("NFC", _safe(student)).casefold()].append(student)
    names = {}
    for members in groups.values():
        members = sorted(set(members), key=lambda student: (_safe(student) != student, student))
        for index, student in enumerate(members):
            stem = _safe(student) if index == 0 else f"{_safe(student)}-{index + 1}"
            names[student] = f"{stem}.txt"
    taken = collections.Counter(unicodedata.normalize("NFC", name).casefold() for name in names.values())
    for student, name in sorted(names.items()):  # a numbered name that is someone's plain one
        key = unicodedata.normalize("NFC", name).casefold()
        if taken[key] > 1:
            taken[key] -= 1
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
    """Write ``<folder>/<name>`` (a name from :func:`feedback_names`) and return its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path
