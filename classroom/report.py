"""The grading report: one CSV row per student, and a feedback file each.

>>> row = {"student": "ada", "q1": 2, "total": 2, "possible": 2,
...        "flags": "", "reason": ""}
>>> csv_text([row], ["q1"]).splitlines()[0]
'student,q1,total,possible,flags,reason'
"""

from __future__ import annotations

import csv
import io
from pathlib import Path


def number(value: float) -> str:
    """A score as short text: 2, 0.75, 1.3333."""
    return f"{round(float(value), 4):g}"


def csv_text(rows: list[dict], questions: list[str]) -> str:
    """The rows as CSV text, with a header."""
    handle = io.StringIO()
    writer = csv.DictWriter(handle, fieldnames=["student", *questions, "total", "possible", "flags", "reason"],
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return handle.getvalue()


def write_csv(path: Path, rows: list[dict], questions: list[str]) -> None:
    """Write the CSV at ``path`` in one step (a temporary file, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(csv_text(rows, questions))
    partial.replace(path)


def feedback_text(student: str, title: str, details: dict, row: dict, notes: list[str]) -> str:
    """A plain-text note for one student: the score of each question and why points were lost."""
    lines = [f"{title}: feedback for {student}", "",
             f"Total: {row['total']} of {row['possible']}", ""]
    for question, (score, points, failures) in details.items():
        lines.append(f"{question}: {number(score)} of {number(points)}")
        lines += [f"  - {failure}" for failure in failures]
    if row.get("flags"):
        lines += ["", f"Flagged: {row['flags']}"]
    if notes:
        lines += ["", "Notes:"] + [f"  - {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write_feedback(folder: Path, student: str, text: str) -> Path:
    """Write ``<folder>/<student>.txt`` and return its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in student)[:80] or "student"
    path = folder / f"{safe}.txt"
    path.write_text(text)
    return path
