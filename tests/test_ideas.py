"""Each idea is taught once: the map `chapters/ideas.toml` names its home
chapter, the labels other chapters link to, and telltales that only the full
treatment needs. A telltale in any other chapter's prose is a second telling
(the textbook's column-100 example was once worked in three chapters)."""

import re
import tomllib
from pathlib import Path

import pytest

from chapter_text import chapter_markdown

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
IDEAS = tomllib.loads((CHAPTERS / "ideas.toml").read_text(encoding="utf-8"))["idea"]


def prose(chapter: str) -> str:
    """The Markdown of a chapter, lower case, every run of spaces and line
    breaks made one space, so that a phrase wrapped over two lines still
    matches."""
    text = chapter_markdown(CHAPTERS / f"{chapter}.ipynb")
    return squash(text)


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).lower()


def labels(chapter: str) -> set[str]:
    text = chapter_markdown(CHAPTERS / f"{chapter}.ipynb")
    return set(re.findall(r"^\(([A-Za-z0-9_-]+)\)=\s*$", text, flags=re.M))


CHAPTER_NAMES = sorted(path.stem for path in CHAPTERS.glob("*.ipynb"))


def test_the_map_is_complete_and_every_home_is_a_chapter_of_the_book():
    toc = "".join(line for line in (ROOT / "_toc.yml").read_text(encoding="utf-8").splitlines(keepends=True)
                  if not line.lstrip().startswith("#"))  # a page commented out is not in the book
    names = [idea["name"] for idea in IDEAS]
    assert len(names) == len(set(names)), "an idea is listed twice"
    for idea in IDEAS:
        assert set(idea) >= {"name", "summary", "home", "labels", "telltales"}, idea["name"]
        assert idea["labels"] and idea["telltales"], idea["name"]
        assert f"file: chapters/{idea['home']}\n" in toc, f"{idea['home']} is not in _toc.yml"
    homes = {idea["home"] for idea in IDEAS}
    assert {"sinusoidal_encoding", "worked_examples", "properties", "attention_scores"} <= homes


@pytest.mark.parametrize("idea", IDEAS, ids=[idea["home"] + ":" + idea["labels"][0] for idea in IDEAS])
def test_each_home_label_is_in_its_chapter(idea):
    missing = set(idea["labels"]) - labels(idea["home"])
    assert not missing, f"{idea['name']}: {sorted(missing)} not defined in {idea['home']}.ipynb"


@pytest.mark.parametrize("idea", IDEAS, ids=[idea["home"] + ":" + idea["labels"][0] for idea in IDEAS])
def test_each_telltale_is_in_the_home_prose_only(idea):
    home_prose = prose(idea["home"])
    for telltale in idea["telltales"]:
        assert squash(telltale) in home_prose, (
            f"{idea['name']}: the telltale {telltale!r} is not in {idea['home']}.ipynb; "
            "update the map where the treatment changed"
        )
    told_again = {
        chapter: [t for t in idea["telltales"] if squash(t) in prose(chapter)]
        for chapter in CHAPTER_NAMES
        if chapter != idea["home"]
    }
    told_again = {chapter: found for chapter, found in told_again.items() if found}
    assert not told_again, (
        f"{idea['name']} is taught in {idea['home']}.ipynb, but "
        + "; ".join(f"{chapter}.ipynb tells it again ({', '.join(map(repr, found))})"
                    for chapter, found in told_again.items())
        + f": replace it by a sentence and {{ref}}`{idea['labels'][0]}`"
    )


def test_the_telltale_check_catches_a_second_telling():
    """The check itself: a telltale found in another chapter's prose counts."""
    idea = next(idea for idea in IDEAS if "25 and 35" in idea["telltales"])
    copy = squash("Positions 25 and\n35 of column 100 differ by 0.45.")
    assert any(squash(t) in copy for t in idea["telltales"])
