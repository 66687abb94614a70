"""Worked examples opens with its checklist: eight checks, each linked to the
section of the page that runs it, in the order the page runs them, and the
opening promises those eight."""

import re
from pathlib import Path

from chapter_text import cell_sources

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "worked_examples.ipynb"


def linked_sections(text: str) -> list[str]:
    """The section each numbered row of a table links to, in order."""
    items = re.split(r"^\| *\d+ *\|", text, flags=re.M)[1:]
    return [re.search(r"worked-examples-[a-z0-9-]+", item)[0] for item in items]


def section_labels(markdown: list[str]) -> list[str]:
    """Every worked-examples label on the page, in page order."""
    return [label for text in markdown
            for label in re.findall(r"^\((worked-examples-[a-z0-9-]+)\)=", text, re.M)]


def test_the_checklist_leads_and_names_the_page_sections_in_order():
    markdown = cell_sources(CHAPTER, "markdown")
    labels = section_labels(markdown)
    checklist = next(text for text in markdown
                     if text.startswith("(worked-examples-checklist)="))
    checks = linked_sections(checklist)
    assert len(checks) == 8 and len(set(checks)) == 8
    # the checklist is the page's first section, before any check it names
    assert labels[0] == "worked-examples-checklist"
    places = [labels.index(check) for check in checks]  # each exists
    assert places == sorted(places), checks
    # the opening promises as many checks as the checklist holds
    opening = markdown[0]
    assert "worked-examples-checklist" in opening
    assert re.search(r"\beight checks\b", opening, re.I)
