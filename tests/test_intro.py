"""The introduction states the number of assignments in one place only: the count
that the classroom chapter computes from the assignment masters and glues
(a typed count went stale once, 'three' in one paragraph and 'four' in another)."""

import re
from pathlib import Path

INTRO = Path(__file__).resolve().parents[1] / "intro.md"
NUMBER_WORDS = "one two three four five six seven eight nine ten".split()


def test_the_introduction_takes_the_number_of_assignments_from_the_classroom_chapter():
    text = INTRO.read_text(encoding="utf-8")
    typed = re.findall(rf"\b(?:\d+|{'|'.join(NUMBER_WORDS)})\s+assignments\b", text, re.I)
    assert not typed, f"a typed count of assignments in intro.md: {typed}"
    assert "{glue:text}`chapters/classroom.ipynb::cls_count:s` assignments" in text
