"""Published examples that the course corrects are named one way in every
chapter: the slide deck with the per-column exponent is cited by its entry in
references.bib, and the tutorial with the row V5, whose author is unknown, is
named the same way without an invented citation (its corrections are checked
against the formula on the page, so a reader needs no source)."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"

SLIDE_DECK = "a slide deck on the encoding {cite}`ibrahimpositional`"
TUTORIAL = "an online tutorial of the encoding"


def prose(chapter: str) -> str:
    cells = json.loads((CHAPTERS / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", text).lower()


CHAPTER_NAMES = sorted(path.stem for path in CHAPTERS.glob("*.ipynb"))


@pytest.mark.parametrize("chapter", ["equations", "worked_examples", "misconceptions"])
def test_the_slide_deck_is_cited_in_the_same_words_where_it_is_corrected(chapter):
    assert SLIDE_DECK in prose(chapter)


@pytest.mark.parametrize("chapter", CHAPTER_NAMES)
def test_every_mention_of_the_slide_deck_cites_it(chapter):
    text = prose(chapter)
    mentions = text.count("slide deck")
    assert text.count("slide deck on the encoding {cite}`ibrahimpositional`") == mentions


@pytest.mark.parametrize("chapter", CHAPTER_NAMES)
def test_the_tutorial_is_named_one_way(chapter):
    text = prose(chapter)
    assert text.count("online tutorial") == text.count(TUTORIAL)
    assert "a tutorial's" not in text and "another tutorial" not in text


def test_the_tutorial_is_named_where_it_is_corrected_and_listed():
    assert TUTORIAL in prose("worked_examples")
    assert TUTORIAL in prose("misconceptions")


def test_the_slide_deck_has_an_entry_without_an_invented_address():
    bib = (ROOT / "references.bib").read_text(encoding="utf-8")
    entry = re.search(r"@misc\{ibrahimpositional,(.*?)\n\}", bib, flags=re.S)
    assert entry, "references.bib has no entry ibrahimpositional"
    fields = entry.group(1)
    assert "Ibrahim, Ahmed" in fields and "howpublished = {Slides}" in fields
    assert "url" not in fields.lower() and "doi" not in fields.lower()
