"""A course a reader can finish: the introduction's reading times are those of
the pages, no page on the reader's path is too long for one sitting, the path
stays under its word budget, and the core fits one afternoon.

The times and counts come from ``pe_lib.course.display.reading_time``, which
defines once how a page is counted. An introduction is a Markdown page, where
glue cannot paste a computed value, so it states its times and this test
recomputes them: a stated time more than one rounding step away from its page
fails (the introduction once promised chapters "short enough for one class
each" beside pages of 4,600 words).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from pe_lib.course.display import reading_time as rt

ROOT = Path(__file__).resolve().parents[1]
INTRO = (ROOT / "intro.md").read_text(encoding="utf-8")
PATH = rt.reader_path(ROOT)
CORE, DEEP_DIVES = PATH[rt.CORE_PART], PATH[rt.DEEP_DIVES_PART]
ON_PATH = ["intro", *CORE, *DEEP_DIVES]
#: The rows of the introduction's tables of times, and the names of their totals.
#: What puts the introduction's tables in step with the pages.
REMEDY = "`python3 tasks.py bench timings --intro-tables` prints the tables to paste into intro.md"
ROW = re.compile(r"^\|\s*(?P<page>[^|]+?)\s*\|\s*(?P<read>[^|]+?)\s*\|\s*(?P<exercises>[^|]+?)\s*\|\s*$", re.M)
CORE_TOTAL, DEEP_TOTAL = "**The core path**", "**The deep dives**"


def chapter_labels() -> dict[str, str]:
    """``chapter-... label -> page name`` (``chapters/rope``) for every chapter."""
    labels = {}
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        first = next(cell for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
                     if cell["cell_type"] == "markdown")
        found = re.match(r"\s*\((chapter-[\w-]+)\)=", "".join(first["source"]))
        if found:
            labels[found.group(1)] = f"chapters/{path.stem}"
    return labels


def stated_times() -> dict[str, tuple[int, ...]]:
    """``page or total -> (minutes to read, with its exercises)`` as the
    introduction's tables state them."""
    labels, stated = chapter_labels(), {}
    for row in ROW.finditer(INTRO):
        try:
            times = tuple(rt.parse_minutes(row[column].strip("*")) for column in ("read", "exercises"))
        except ValueError:
            continue  # a header, a rule, or another table
        page = row["page"]
        link = re.fullmatch(r"\{ref\}`(chapter-[\w-]+)`", page)
        stated[labels.get(link.group(1), page) if link else page] = times
    return stated


@functools.cache  # a page is read once per run, however many tests count it
def counts(name: str) -> rt.PageCounts:
    return rt.page_counts(rt.page_file(ROOT, name))


def total(names: list[str]) -> rt.PageCounts:
    return sum((counts(name) for name in names), rt.PageCounts(0, 0, 0, 0))


def exact_times(computed: rt.PageCounts) -> tuple[float, float, float]:
    return computed.reading_minutes(), computed.minutes_with_exercises(), computed.minutes_with_all_exercises()


def off_by_more_than_a_step(stated: tuple[int, ...], computed: rt.PageCounts) -> bool:
    return any(abs(given - true) > rt.ROUNDING_MINUTES for given, true in zip(stated, exact_times(computed)))


def describe(computed: rt.PageCounts) -> str:
    return " | ".join(rt.format_minutes(minutes) for minutes in exact_times(computed))


def test_the_introduction_lists_the_path_and_only_the_path():
    stated = stated_times()
    pages = [name for name in stated if name.startswith("chapters/")]
    assert pages == CORE + DEEP_DIVES, (
        "the introduction's tables must list the core path, then the deep dives, in _toc.yml's order: "
        f"they list {pages}, _toc.yml has {CORE + DEEP_DIVES}; {REMEDY}")


@pytest.mark.parametrize("page", CORE + DEEP_DIVES)
def test_each_stated_time_is_its_pages(page):
    stated = stated_times().get(page)
    assert stated, f"the introduction states no time for {page}; {REMEDY}"
    assert not off_by_more_than_a_step(stated, counts(page)), (
        f"intro.md states {stated} minutes for {page}; its page gives {describe(counts(page))} "
        f"({counts(page)}); {REMEDY}")


def rounded_times(page: str) -> tuple[int, int, int]:
    """A page's three times as the introduction states them: each rounded."""
    return tuple(rt.rounded_minutes(minutes) for minutes in exact_times(counts(page)))


@pytest.mark.parametrize("name, pages", [(CORE_TOTAL, CORE), (DEEP_TOTAL, DEEP_DIVES)])
def test_each_stated_total_adds_the_rows_above_it(name, pages):
    """A reader can add the column: a total is the sum of its rows as printed."""
    stated = stated_times()
    assert stated.get(name), f"the introduction has no row {name} with its two times"
    rows = tuple(sum(times) for times in zip(*(stated[page] for page in pages)))
    assert stated[name] == rows, f"intro.md states {stated[name]} minutes for {name}; its rows add to {rows}; {REMEDY}"
    # each row is true to its page (above), so the total is true to the pages within half a step a row
    allowed = len(pages) * rt.ROUNDING_MINUTES / 2
    exact = exact_times(total(pages))[:2]
    assert all(abs(given - true) <= allowed for given, true in zip(stated[name], exact)), (stated[name], exact)


def test_the_introduction_states_the_whole_paths_three_times():
    """Core and deep dives together, in each column: the sum no table row gives."""
    sentence = " ".join(INTRO.split())
    found = re.search(r"The whole path: about (?P<read>[\dh min]+?) to read, (?P<exercises>[\dh min]+?) with every "
                      r"exercise titled \*Exercise\*, (?P<all>[\dh min]+?) with the \*Going further\* ones too",
                      sentence)
    assert found, f"intro.md must state the whole path's times; {REMEDY}"
    stated = tuple(rt.parse_minutes(found[column]) for column in ("read", "exercises", "all"))
    rows = tuple(sum(times) for times in zip(*(rounded_times(page) for page in CORE + DEEP_DIVES)))
    assert stated == rows, (
        f"intro.md states {stated} minutes for the whole path; its pages' rounded times add to {rows}; {REMEDY}")


def test_the_introduction_states_the_rates_the_times_are_counted_at():
    sentence = " ".join(INTRO.split())
    expected = (f"{rt.WORDS_PER_MINUTE} words a minute, {rt.SECONDS_PER_EQUATION} seconds for each display "
                f"equation, {rt.SECONDS_PER_CODE_LINE} seconds for each line of code shown, "
                f"{rt.SECONDS_PER_FIGURE} seconds for each figure or table, and {rt.MINUTES_PER_EXERCISE} "
                f"minutes for each exercise")
    assert expected in sentence, f"intro.md must say how its times are counted: {expected!r}"
    assert f"more than {rt.ROUNDING_MINUTES} minutes off" in sentence


def test_the_introduction_fits_its_budget():
    assert counts("intro").words <= 1300


@pytest.mark.parametrize("page", ON_PATH)
def test_no_page_on_the_path_is_longer_than_one_sitting(page):
    words = counts(page).words
    assert words <= rt.PAGE_WORD_LIMIT, (
        f"{page} has {words:,d} words of prose, over {rt.PAGE_WORD_LIMIT:,d}: split it where it holds two "
        "subjects, or cut where its prose restates a table or a figure")


def test_the_path_is_under_its_word_budget():
    words = {page: counts(page).words for page in ON_PATH}
    assert sum(words.values()) < rt.PATH_WORD_LIMIT, (
        f"the reader's path holds {sum(words.values()):,d} words of prose, not under {rt.PATH_WORD_LIMIT:,d}: "
        + ", ".join(f"{page.removeprefix('chapters/')} {count:,d}" for page, count in words.items()))


def test_the_core_path_fits_one_afternoon_with_its_core_exercises():
    minutes = total(CORE).minutes_with_exercises()
    assert minutes <= rt.CORE_MINUTES_LIMIT, (
        f"the core path takes {minutes:.0f} minutes with its core exercises ({total(CORE)}), "
        f"over {rt.CORE_MINUTES_LIMIT}: fold the machinery, cut prose that restates a table, "
        "or move a section a reader can leave for later to a deep dive")


def test_each_core_chapter_ends_with_an_exercise_and_leaves_the_rest_to_the_deep_dives():
    """A core chapter practises its central idea in an exercise titled 'Exercise';
    the 'Going further' ones live in the deep dives, so that the core's time
    with its exercises is the time a reader of the core spends."""
    without = [page for page in CORE if counts(page).exercises < 1]
    assert not without, f"core chapters with no exercise titled 'Exercise': {without}"
    further = {page: counts(page).further_exercises for page in CORE if counts(page).further_exercises}
    assert not further, f"core chapters with 'Going further' exercises, which belong in a deep dive: {further}"


def test_the_introduction_states_the_time_of_the_core_path():
    """The sentence that promises one afternoon, within a rounding step, and in
    the words of the table's total below it (it once said "about 3 h" over a
    table that added to 2 h 55 min)."""
    sentence = " ".join(INTRO.split())
    found = re.search(r"about (?P<core>[\dh min]+?) with each chapter's exercise", sentence)
    assert found, "intro.md must say how long the core path takes with its exercises"
    core = total(CORE)
    assert abs(rt.parse_minutes(found["core"]) - core.minutes_with_exercises()) <= rt.ROUNDING_MINUTES, (
        f"intro.md says {found['core']!r}; the core path gives {rt.format_minutes(core.minutes_with_exercises())} "
        f"({core})")
    table = stated_times()[CORE_TOTAL][1]
    assert rt.parse_minutes(found["core"]) == table, (
        f"intro.md says {found['core']!r} for the core path; its table's total says {rt.format_minutes(table)}")


# The counting itself, on a page whose counts are known by hand.

PAGE = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": [
            "(chapter-sample)=\n# A sample page\n\n",
            "Pair $i$ turns by $\\omega_i$ at {eval}`rate` radians, see {ref}`the rule <chapter-rope>`.\n\n",
            "$$\nx = \\sin p\n$$ (eq-sample)\n\n",
            "```{glue:figure} sample-fig\n:alt: Many words that nobody reads as prose here.\n:name: fig-sample\n\n",
            "Its caption has five words.\n```\n"]},
        {"cell_type": "code", "metadata": {"tags": []}, "source": ["x = 1\n", "\n", "y = 2\n"]},
        {"cell_type": "code", "metadata": {"tags": ["hide-input"]}, "source": ["plot(x)\n"]},
        {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": ["glue('rate', 1)\n"]},
        {"cell_type": "markdown", "metadata": {}, "source": [
            "```{literalinclude} helper.py\n:pyobject: Helper.shown\n:start-at: total =\n```\n\n",
            ":::{admonition} Exercise 1 (by hand)\nCompute `x` twice.\n:::\n\n",
            ":::{admonition} Going further 2\nAgain.\n:::\n\n",
            ":::{admonition} Solution\n:class: dropdown\n```python\nx = 1\n```\nIt is one.\n:::\n",
            "```{glue:md} sample_table\n:format: myst\n```\n"]},
    ],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}
HELPER = '''class Helper:
    def hidden(self):
        return 0

    def shown(self):
        """Not shown: the include starts below."""
        total = 0
        for step in range(3):
            total += step
        return total
'''


def test_a_page_is_counted_as_the_module_says(tmp_path):
    (tmp_path / "helper.py").write_text(HELPER, encoding="utf-8")
    (tmp_path / "sample.ipynb").write_text(json.dumps(PAGE), encoding="utf-8")
    counted = rt.page_counts(tmp_path / "sample.ipynb")
    # words: "A sample page" 3; "Pair [i] turns by [omega_i] at [rate] radians see the rule" 11 (a piece
    # of inline mathematics is a word); the caption 5; "Exercise 1 by hand" 4, "Compute [x] twice" 3;
    # "Going further 2" 3, "Again" 1; "Solution" 1, "It is one" 3
    assert counted.words == 3 + 11 + 5 + 4 + 3 + 3 + 1 + 1 + 3
    # code: two lines of the visible cell, four of the include (from "total = 0" to "return total"),
    # one of the fenced solution
    assert counted.code_lines == 2 + 4 + 1
    assert (counted.figures, counted.exercises, counted.further_exercises, counted.equations) == (2, 1, 1, 1)
    reading = 34 / 100 + 1 * 30 / 60 + 7 * 8 / 60 + 2 * 60 / 60
    assert counted.reading_minutes() == pytest.approx(reading)
    assert counted.minutes_with_exercises() == pytest.approx(reading + 10)
    assert counted.minutes_with_all_exercises() == pytest.approx(reading + 20)


def test_a_colon_fence_titled_with_code_is_still_a_directive():
    # A dropdown's title may hold inline code; its body is still counted (five words, one
    # line of code), and its fences are not.
    page = ("::::{dropdown} The code of `f`\nFive words of prose here.\n"
            "```python\nf = 1\n```\n::::\n")
    tally = rt._Tally(prose=[])
    rt._read_markdown(page.splitlines(), tally, None)
    assert rt._count_words("\n".join(tally.prose)) == 4 + 5
    assert tally.code_lines == 1


def test_a_missing_include_is_an_error_that_names_it(tmp_path):
    page = {**PAGE, "cells": PAGE["cells"][4:]}
    (tmp_path / "sample.ipynb").write_text(json.dumps(page), encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="helper.py"):
        rt.page_counts(tmp_path / "sample.ipynb")


def test_the_introduction_counts_the_core_chapters_it_lists():
    words = "one two three four five six seven eight nine ten eleven twelve".split()
    found = re.search(r"The \*\*core path\*\* is (\w+) chapters", INTRO)
    assert found, "intro.md must say how many chapters the core path has"
    assert found.group(1) == words[len(CORE) - 1], (
        f"intro.md says the core path is {found.group(1)} chapters; _toc.yml lists {len(CORE)}")
