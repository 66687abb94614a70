"""Worked examples promises, in its opening list, the checks its closing
checklist gathers: both name the same sections, linked, in the same order."""

import re
from pathlib import Path

from chapter_text import cell_sources

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "worked_examples.ipynb"


def linked_sections(text: str) -> list[str]:
    """The section each numbered item of a list links to, in order."""
    items = re.split(r"^\d+\. ", text, flags=re.M)[1:]
    return [re.search(r"worked-examples-[a-z0-9-]+", item)[0] for item in items]


def test_the_opening_promises_the_checklist_in_its_order():
    markdown = cell_sources(CHAPTER, "markdown")
    opening = next(text for text in markdown if "In this chapter you will" in text)
    closing = next(text for text in markdown if text.startswith("(worked-examples-checklist)="))
    promised = linked_sections(opening.split("In this chapter you will", 1)[1])
    assert promised == linked_sections(closing), (promised, linked_sections(closing))
    assert len(promised) == 8
