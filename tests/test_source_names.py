"""Published examples that the course corrects are named one way in every
chapter, each cited by its entry in references.bib: the slide deck with the
per-column exponent, and the blog post with the row V5 (whose page title is not
known, so its entry describes it in square brackets rather than inventing
one)."""

import re
from pathlib import Path

import pytest

from chapter_text import chapter_markdown

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"

SLIDE_DECK = "a slide deck on the encoding {cite}`ibrahimpositional`"
BLOG_POST = "a blog post on the encoding {cite}`chlaily_positional`"


def prose(chapter: str) -> str:
    text = chapter_markdown(CHAPTERS / f"{chapter}.ipynb")
    return re.sub(r"\s+", " ", text).lower()


CHAPTER_NAMES = sorted(path.stem for path in CHAPTERS.glob("*.ipynb"))


@pytest.mark.parametrize("chapter", ["worked_examples", "misconceptions"])
def test_the_slide_deck_is_cited_in_the_same_words_where_it_is_corrected(chapter):
    assert SLIDE_DECK in prose(chapter)


@pytest.mark.parametrize("chapter", CHAPTER_NAMES)
def test_every_mention_of_the_slide_deck_cites_it(chapter):
    text = prose(chapter)
    mentions = text.count("slide deck")
    assert text.count("slide deck on the encoding {cite}`ibrahimpositional`") == mentions


@pytest.mark.parametrize("chapter", ["worked_examples", "misconceptions"])
def test_the_blog_post_is_cited_in_the_same_words_where_it_is_corrected(chapter):
    assert BLOG_POST in prose(chapter)


@pytest.mark.parametrize("chapter", CHAPTER_NAMES)
def test_every_mention_of_the_blog_post_cites_it(chapter):
    text = prose(chapter)
    assert text.count("blog post") == text.count(BLOG_POST)
    assert text.count("chlaily_positional") == text.count(BLOG_POST)
    assert "tutorial" not in text


def test_the_slide_deck_has_an_entry_without_an_invented_address():
    bib = (ROOT / "references.bib").read_text(encoding="utf-8")
    entry = re.search(r"@misc\{ibrahimpositional,(.*?)\n\}", bib, flags=re.S)
    assert entry, "references.bib has no entry ibrahimpositional"
    fields = entry.group(1)
    assert "Ibrahim, Ahmed" in fields and "howpublished = {Slide deck" in fields
    assert "not published online" in fields  # a reader must not go looking for one
    assert "url" not in fields.lower() and "doi" not in fields.lower()


def test_the_blog_post_has_an_entry_with_its_address_and_no_invented_title():
    bib = (ROOT / "references.bib").read_text(encoding="utf-8")
    entry = re.search(r"@misc\{chlaily_positional,(.*?)\n\}", bib, flags=re.S)
    assert entry, "references.bib has no entry chlaily_positional"
    fields = dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?$", entry.group(1), flags=re.M))
    assert fields["author"] == "Chlaily, Saloua"
    assert fields["url"] == "https://saloua-chlaily.xyz/?p=1187"
    assert re.fullmatch(r"Accessed \d{4}-\d{2}-\d{2}", fields["note"])
    # The page's own title is not known: the entry describes the page instead,
    # in double braces so that the bibliography style keeps its capitals.
    assert re.fullmatch(r"\{\[[^\]]+\]\}", fields["title"])
