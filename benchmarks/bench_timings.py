"""How long the course takes to read and to run, beside its targets.

First, for every page on the reader's path (the introduction, the core path and
the deep dives of ``_toc.yml``) and for Classroom, prints its prose words,
visible code lines, figures, core and further exercises, and its reading
time without exercises, with its core exercises and with all of them
(``pe_lib.course.display.reading_time`` says how they are counted), the totals
of each part, and the limits: no page on the path over 3,000 words, the path
under 30,000, the core within 3 hours with its core exercises. ``--words-only`` stops there (it takes a second);
``--intro-tables`` prints instead the introduction's two tables of times, to
paste into ``intro.md`` when a chapter changes.

Then prints each chapter's execution time (top to bottom in a fresh kernel, outputs
discarded), their total, the time of `tasks.py test --quick` (the unit, property
and doc tests), and the time of the whole test command.

Targets on a 2-core machine: 40 s for a chapter that trains models, 60 s for
the real-text chapter, 15 s for any other; the whole test command, as
`tasks.py test` runs it (every test on two workers, then the layer tests on
JAX), within 8 minutes; `test --quick` within 2 minutes.

Run it with ``python3 tasks.py bench`` (or this file directly, from the
environment that tasks.py creates).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from pe_lib.course.display import reading_time as rt

#: Joins a number to its unit in the introduction's tables, so that a narrow column never breaks "10 min".
NO_BREAK = "\N{NO-BREAK SPACE}"

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tasks import quick_selection  # noqa: E402  (what `test --quick` runs)
TRAINING_TARGET_S = 40.0
CHAPTER_TARGET_S = 15.0
SUITE_TARGET_S = 480.0
#: `tasks.py test --quick`: the unit, property and doc tests, for the edit-test loop.
QUICK_TARGET_S = 120.0
#: The chapters that train Keras models, and so have the larger budget.
TRAINING_CHAPTERS = {"attention_scores", "train_short_test_long", "encoder_decoder",
                     "learned_vs_fixed", "rope"}
#: Chapters with a budget of their own.
OWN_TARGETS_S = {"real_text": 60.0}


def chapter_time(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    began = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - began


def pytest_time(*arguments: str, **environment: str) -> tuple[float, int]:
    began = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *arguments],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, **environment})
    if result.returncode:
        # the figures alone do not say what to fix: show pytest's summary of the failures
        summary = result.stdout.partition("short test summary info")[2] or result.stdout[-3000:]
        print(summary.strip(), flush=True)
    return time.perf_counter() - began, result.returncode


def verdict(seconds: float, target: float) -> str:
    return "ok" if seconds <= target else "OVER"


def reading_table() -> None:
    """Print every page's words and reading time, each part's totals, and the limits."""
    path = rt.reader_path(ROOT)
    parts = {"Introduction": ["intro"], **path, "For teachers": ["chapters/classroom"]}
    print(f"{'page':<28}{'words':>7}{'eqs':>5}{'code':>6}{'figs':>6}{'exer':>6}{'furth':>6}{'read':>12}{'with exer.':>13}"
          f"{'with all':>13}")
    on_path = rt.PageCounts(0, 0, 0, 0)
    for part, names in parts.items():
        print(f"{part}:")
        total = rt.PageCounts(0, 0, 0, 0)
        for name in names:
            counts = rt.page_counts(rt.page_file(ROOT, name))
            total += counts
            over = "  OVER" if counts.words > rt.PAGE_WORD_LIMIT and part != "For teachers" else ""
            print(f"  {name.removeprefix('chapters/'):<26}{counts.words:7,d}{counts.equations:5d}{counts.code_lines:6d}"
                  f"{counts.figures:6d}"
                  f"{counts.exercises:6d}{counts.further_exercises:6d}{rt.format_minutes(counts.reading_minutes()):>12}"
                  f"{rt.format_minutes(counts.minutes_with_exercises()):>13}"
                  f"{rt.format_minutes(counts.minutes_with_all_exercises()):>13}{over}")
        if part != "For teachers":
            on_path += total
        if len(names) > 1:
            print(f"  {'total':<26}{total.words:7,d}{total.equations:5d}{total.code_lines:6d}{total.figures:6d}"
                  f"{total.exercises:6d}"
                  f"{total.further_exercises:6d}{rt.format_minutes(total.reading_minutes()):>12}"
                  f"{rt.format_minutes(total.minutes_with_exercises()):>13}"
                  f"{rt.format_minutes(total.minutes_with_all_exercises()):>13}")
        if part == rt.CORE_PART:
            minutes = total.minutes_with_exercises()
            print(f"  core with its core exercises: {minutes:.0f} min, target {rt.CORE_MINUTES_LIMIT} min: "
                  f"{verdict(minutes, rt.CORE_MINUTES_LIMIT)}; with all its exercises: "
                  f"{total.minutes_with_all_exercises():.0f} min")
    print(f"reader's path: {on_path.words:,d} words, target under {rt.PATH_WORD_LIMIT:,d}: "
          f"{'ok' if on_path.words < rt.PATH_WORD_LIMIT else 'OVER'}; "
          f"{rt.format_minutes(on_path.reading_minutes())} to read, "
          f"{rt.format_minutes(on_path.minutes_with_exercises())} with the core exercises, "
          f"{rt.format_minutes(on_path.minutes_with_all_exercises())} with all of them")
    print(f"(reading at {rt.WORDS_PER_MINUTE} words a minute, {rt.SECONDS_PER_EQUATION} s a display equation, "
          f"{rt.SECONDS_PER_CODE_LINE} s a line of code, "
          f"{rt.SECONDS_PER_FIGURE} s a figure or table, {rt.MINUTES_PER_EXERCISE} min an exercise)\n", flush=True)


def chapter_label(path: Path) -> str:
    """The ``chapter-...`` label that opens a chapter's first Markdown cell."""
    first = next(cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown")
    found = re.match(r"\s*\((chapter-[\w-]+)\)=", first.source)
    if not found:
        raise ValueError(f"{path.name} does not open with a (chapter-...)= label")
    return found.group(1)


def intro_tables() -> None:
    """Print the introduction's tables of reading times, as intro.md holds them.

    Each table gives the time to read and the time with the exercises titled
    'Exercise'; the Going further ones, all in the deep dives, count in the
    sentence on the whole path (three columns fit a phone's width). Each row
    is rounded (:func:`~pe_lib.course.display.reading_time.rounded_minutes`)
    and a total adds the rows as printed, so a reader can check the sum."""
    path = rt.reader_path(ROOT)
    heads = {rt.CORE_PART: ("Core chapter", "The core path"), rt.DEEP_DIVES_PART: ("Deep dive", "The deep dives")}
    whole = [0, 0, 0]

    def row(name: str, times: list[int], bold: str = "") -> str:
        return f"| {name} | " + " | ".join(f"{bold}{rt.format_minutes(t, unit_space=NO_BREAK)}{bold}"
                                           for t in times) + " |"

    for part, names in path.items():
        head, total_name = heads[part]
        running = [0, 0, 0]
        if part == rt.DEEP_DIVES_PART:  # folded, so the phone reader reaches the path sooner
            print("::::{dropdown} Each deep dive's time")
        print(f"| {head} | Read | With exercises |\n|:--|--:|--:|")
        for name in names:
            file = rt.page_file(ROOT, name)
            counts = rt.page_counts(file)
            times = [rt.rounded_minutes(t) for t in (counts.reading_minutes(), counts.minutes_with_exercises(),
                                                    counts.minutes_with_all_exercises())]
            running = [a + b for a, b in zip(running, times)]
            print(row(f"{{ref}}`{chapter_label(file)}`", times[:2]))
        print(row(f"**{total_name}**", running[:2], bold="**"))
        print("::::\n" if part == rt.DEEP_DIVES_PART else "")
        whole = [a + b for a, b in zip(whole, running)]
    print(f"The whole path: about {rt.format_minutes(whole[0])} to read, "
          f"{rt.format_minutes(whole[1])} with every exercise titled *Exercise*, "
          f"{rt.format_minutes(whole[2])} with the *Going further* ones too.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-suite", action="store_true", help="do not time the whole test suite")
    parser.add_argument("--words-only", action="store_true", help="print the words and reading times only")
    parser.add_argument("--intro-tables", action="store_true", help="print the introduction's tables of times")
    args = parser.parse_args()

    if args.intro_tables:
        intro_tables()
        return

    reading_table()
    if args.words_only:
        return

    print(f"{'chapter':<34}{'seconds':>9}   target")
    total = 0.0
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        seconds = chapter_time(path)
        total += seconds
        target = OWN_TARGETS_S.get(
            path.stem, TRAINING_TARGET_S if path.stem in TRAINING_CHAPTERS else CHAPTER_TARGET_S
        )
        print(f"{path.stem:<34}{seconds:9.1f}   {target:g} s: {verdict(seconds, target)}", flush=True)
    print(f"{'all chapters':<34}{total:9.1f}")

    quick, code = pytest_time("-n", "2", "--dist", "loadscope", *quick_selection())
    print(f"{'test --quick (two workers)':<34}{quick:9.1f}   target {QUICK_TARGET_S:g} s: "
          f"{verdict(quick, QUICK_TARGET_S)}, {'passed' if code == 0 else 'FAILED'}")
    if not args.skip_suite:
        suite, code = pytest_time("-n", "2", "--dist", "loadscope")
        print(f"{'every test, two workers':<34}{suite:9.1f}   {'passed' if code == 0 else 'FAILED'}")
        jax, jax_code = pytest_time("tests/test_layers.py", "pe_lib/layers", KERAS_BACKEND="jax")
        print(f"{'layer tests on JAX':<34}{jax:9.1f}   {'passed' if jax_code == 0 else 'FAILED'}")
        whole = suite + jax
        print(f"{'whole test command':<34}{whole:9.1f}   target {SUITE_TARGET_S:g} s: "
              f"{verdict(whole, SUITE_TARGET_S)}, {'passed' if code == jax_code == 0 else 'FAILED'}")


if __name__ == "__main__":
    main()
