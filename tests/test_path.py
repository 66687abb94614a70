"""Nothing is used before it is taught on the reader's path, and the deep dives
stand beside the core as the book says.

``chapters/path.toml`` records what each chapter on the path needs and
teaches. The path is ``_toc.yml``'s core, then its deep dives: a core chapter's
needs are taught by earlier core chapters, a deep dive's by the core or an
earlier deep dive. The record is held to the notebooks by reading them: a
chapter whose code builds a Keras model needs "keras-layers", one whose prose
mentions a cache needs "kv-cache", and so on (``HEURISTICS``), unless it
teaches the idea itself (a chapter once trained Keras classifiers two chapters
before the book taught Keras, and another leaned on a cache the book never
explained).

Each deep dive opens, right under its title, with the box that says so and
names what it needs; each is linked from a core chapter.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from pe_lib.course.display.reading_time import CORE_PART, DEEP_DIVES_PART, reader_path

from chapter_text import cell_sources

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
RECORD = tomllib.loads((CHAPTERS / "path.toml").read_text(encoding="utf-8"))
PATH = reader_path(ROOT)
CORE = [name.removeprefix("chapters/") for name in PATH[CORE_PART]]
DEEP_DIVES = [name.removeprefix("chapters/") for name in PATH[DEEP_DIVES_PART]]
ON_PATH = CORE + DEEP_DIVES

#: (idea, where, pattern, what it means): a chapter whose code or prose matches
#: the pattern needs the idea, unless it teaches it.
HEURISTICS = [
    ("keras-call", "code", r"\bimport keras\b|\bfrom keras\b|\bkeras\.", "its code calls Keras"),
    ("keras-layers", "code",
     r"\bkeras\.Model\(|\bkeras\.Input\(|\bkeras\.layers\.Layer\)|\.compile\(|\.fit\(|\brun_\w*experiments?\w*\("
     r"|\brun_extrapolation\(|\brun_real_text\(", "its code builds or trains a Keras model"),
    ("training-loop", "code",
     r"\.fit\(|\brun_\w*experiments?\w*\(|\brun_extrapolation\(|\brun_real_text\(", "its code trains a model"),
    ("order-task", "code", r"\bmarker_order_task\b|\border_classifier\b|\brun_order_experiments\b",
     "its code uses the marker-order task or its classifier"),
    ("kv-cache", "prose", r"\bcach(?:e|es|ed|ing)\b", "its prose mentions a cache"),
    ("greedy-decoding", "prose", r"\bgreedy\b", "its prose mentions greedy decoding"),
    ("context-extension", "code", r"\bscaled_angle_rates\b|\byarn_ramp\b|\brope_scaling\b|\bllama3_rates\b",
     "its code stretches RoPE's rates"),
    ("alibi", "code", r"\balibi\b", "its code uses ALiBi"),
]


def cells(chapter: str) -> list[dict]:
    return json.loads((CHAPTERS / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]


def text_of(chapter: str, kind: str) -> str:
    return "\n".join(cell_sources(CHAPTERS / f"{chapter}.ipynb", kind))


def missing_needs(path: list[str], record: dict) -> dict[str, list[str]]:
    """``chapter -> its needs not taught before it``, for ``path`` in reading
    order: the core, then the deep dives, so that a deep dive may use the
    whole core and the deep dives before it."""
    missing, taught = {}, set()
    for chapter in path:
        entry = record[chapter]
        unmet = [need for need in entry["needs"] if need not in taught and need not in entry["teaches"]]
        if unmet:
            missing[chapter] = unmet
        taught |= set(entry["teaches"])
    return missing


def test_every_chapter_on_the_path_has_a_record():
    unrecorded = [chapter for chapter in ON_PATH if chapter not in RECORD]
    assert not unrecorded, f"chapters/path.toml has no entry for {unrecorded}: say what each needs and teaches"
    for chapter, entry in RECORD.items():
        assert set(entry) == {"needs", "teaches"}, chapter
        assert entry["teaches"], f"{chapter} teaches nothing?"


@pytest.mark.parametrize("chapter", sorted(RECORD))
def test_every_recorded_chapter_is_on_the_path(chapter):
    if not (CHAPTERS / f"{chapter}.ipynb").exists():
        pytest.skip(f"chapters/{chapter}.ipynb is not in this checkout yet")
    assert chapter in ON_PATH, (
        f"chapters/{chapter}.ipynb is recorded in chapters/path.toml but is not on the reader's path: "
        f"list it in _toc.yml's {CORE_PART!r} or {DEEP_DIVES_PART!r}")


def test_each_idea_is_taught_by_one_chapter():
    homes: dict[str, list[str]] = {}
    for chapter, entry in RECORD.items():
        for idea in entry["teaches"]:
            homes.setdefault(idea, []).append(chapter)
    twice = {idea: chapters for idea, chapters in homes.items() if len(chapters) > 1}
    assert not twice, f"taught by more than one chapter: {twice}"


@pytest.mark.parametrize("chapter", ON_PATH)
def test_every_need_is_taught_earlier_on_the_path(chapter):
    unmet = missing_needs(ON_PATH, {name: RECORD.get(name, {"needs": [], "teaches": []}) for name in ON_PATH}).get(chapter, [])
    teachers = {idea: name for name, entry in RECORD.items() for idea in entry["teaches"]}
    assert not unmet, f"{chapter} needs what no earlier chapter on the path teaches: " + ", ".join(
        f"{need} (taught by {teachers.get(need, 'no chapter')})" for need in unmet)


@pytest.mark.parametrize("chapter", ON_PATH)
def test_the_record_agrees_with_the_notebook(chapter):
    entry = RECORD[chapter]
    text = {"code": text_of(chapter, "code"), "prose": text_of(chapter, "markdown")}
    unrecorded = []
    for idea, where, pattern, meaning in HEURISTICS:
        found = re.search(pattern, text[where], flags=re.I if where == "prose" else 0)
        if found and idea not in entry["needs"] and idea not in entry["teaches"]:
            unrecorded.append(f"{meaning} ({found.group(0)!r}), so it needs {idea!r}")
    assert not unrecorded, f"chapters/path.toml's {chapter} is out of date: " + "; ".join(unrecorded)


def test_the_order_check_finds_an_idea_used_before_it_is_taught():
    record = {"a": {"needs": [], "teaches": ["x"]}, "b": {"needs": ["y"], "teaches": ["z"]},
              "c": {"needs": ["x"], "teaches": ["y"]}}
    assert missing_needs(["a", "b", "c"], record) == {"b": ["y"]}
    assert missing_needs(["a", "c", "b"], record) == {}


def deep_dive_box(chapter: str) -> str | None:
    """The deep-dive box right under the chapter's title, or None."""
    first = next(cell for cell in cells(chapter) if cell["cell_type"] == "markdown")
    lines = [line for line in "".join(first["source"]).splitlines() if line.strip()]
    while lines and (re.match(r"^\([\w-]+\)=$", lines[0].strip()) or lines[0].startswith("# ")):
        lines.pop(0)
    if not lines or not re.match(r"^(`{3,}|:{3,})\{admonition\}\s+Deep dive\s*$", lines[0]):
        return None
    fence = re.match(r"^(`{3,}|:{3,})", lines[0]).group(1)
    body = lines[1:next((j for j in range(1, len(lines)) if lines[j].strip() == fence), len(lines))]
    classes = " ".join(line for line in body if line.strip().startswith(":class:"))
    return "\n".join(body) if "deep-dive" in classes.split() else None


@pytest.mark.parametrize("chapter", DEEP_DIVES)
def test_each_deep_dive_opens_with_its_box(chapter):
    box = deep_dive_box(chapter)
    assert box is not None, (
        f"{chapter}.ipynb does not open, right under its title, with the box\n"
        "```{admonition} Deep dive\n:class: deep-dive\nBeside the core path. It needs {ref}`chapter-...` "
        "(and ...); it is self-contained otherwise.\n```")
    assert "Beside the core path" in box and re.search(r"\{ref\}`chapter-[\w-]+`", box), box


@pytest.mark.parametrize("chapter", CORE)
def test_no_core_chapter_is_marked_as_a_deep_dive(chapter):
    assert deep_dive_box(chapter) is None


@pytest.mark.parametrize("chapter", DEEP_DIVES)
def test_a_core_chapter_links_to_each_deep_dive(chapter):
    label = next(iter(re.findall(r"^\((chapter-[\w-]+)\)=", text_of(chapter, "markdown"), flags=re.M)), None)
    assert label, f"{chapter}.ipynb has no chapter-... label"
    linking = [core for core in CORE if f"{{ref}}`{label}`" in text_of(core, "markdown")]
    assert linking, f"no core chapter links to the deep dive {chapter} ({{ref}}`{label}`)"
