"""Notebook regression settings shared by every ``pytest --nbval`` run.

nbval compares each re-executed cell's outputs with the committed ones. Two
kinds of output are left out of that comparison:

- What a library prints on stderr (TensorFlow's start-up messages, for
  instance) differs between machines and says nothing about the chapter.
  Errors still fail the cell: they are not streams.
- Figures, when this environment is not the locked one. A figure's PNG bytes
  depend on Matplotlib, FreeType, Pillow and zlib; a patch release of any of
  them changes the bytes of a figure whose data did not change. The data
  behind every figure is asserted by the chapter's own cells, and its text
  form (``<Figure size 640x320 with 2 Axes>``) is still compared, so the
  bytes are compared only when every package is installed at the version that
  ``requirements.lock`` pins: there a changed figure means a changed course.
  ``PE_COURSE_COMPARE_FIGURES=1`` or ``0`` forces the choice.

nbval itself already skips plain ``image/png`` outputs; glued figures are
stored as ``application/papermill.record/image/png``, which it would compare.

A figure glued with ``pe_lib.course.display.style.glue_figure`` also records the
data it draws. That record is compared number by number: exactly for a figure
whose data is the same on every processor, within the figure's stated
relative tolerance for one drawn from sines, exponentials or matrix products
(which differ in their last bits between processors); the PNG bytes of such a
figure are never compared.
"""

import json
import math
import os
import re
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pytest
from nbformat import NotebookNode
from nbval.plugin import IPyNbCell, IPyNbFile

LOCK = Path(__file__).resolve().parent / "requirements.lock"
FIGURE_OUTPUTS = tuple(
    f"{prefix}{kind}"
    for prefix in ("", "application/papermill.record/")
    for kind in ("image/png", "image/jpeg", "image/svg+xml")
)


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@lru_cache(maxsize=None)
def environment_matches_lock(lock: Path = LOCK) -> bool:
    """True when every package that ``lock`` pins is installed at that version."""
    if not lock.exists():
        return False
    installed = {_normalized(dist.metadata["Name"]): dist.version for dist in metadata.distributions()}
    for line in lock.read_text().splitlines():
        pinned = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;#]+)", line)
        if pinned and installed.get(_normalized(pinned.group(1))) != pinned.group(3):
            return False
    return True


def compare_figures() -> bool:
    forced = os.environ.get("PE_COURSE_COMPARE_FIGURES")
    if forced in {"0", "1"}:
        return forced == "1"
    return environment_matches_lock()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    skipped = ("stderr",) if compare_figures() else ("stderr", *FIGURE_OUTPUTS)
    for notebook in {item.parent for item in items if isinstance(item.parent, IPyNbFile)}:
        notebook.skip_compare = (*notebook.skip_compare, *skipped)
    # A notebook's cells run in one kernel, in order: `--order shuffle` (pytest-random-order)
    # may move the notebook among the other modules but never reorders its cells.
    for item in items:
        if isinstance(item.parent, IPyNbFile):
            item.add_marker(pytest.mark.random_order(disabled=True))


# --- figures compared by the data they draw -------------------------------------------------
GLUE_PREFIX = "application/papermill.record/"
FIGURE_DATA = GLUE_PREFIX + "application/vnd.pe-course.figure-data+json"


def _leaves(value):
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _leaves(value[key])
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def figure_data_difference(reference, test, rtol):
    """None when two figure-data records draw the same picture, else what differs.

    Numbers agree within ``rtol`` of the largest magnitude in their own array
    (so a curve through zero is not held to a relative tolerance at zero);
    everything else (words, lengths, missing values) must be equal.
    """
    if isinstance(reference, dict) or isinstance(test, dict):
        if not (isinstance(reference, dict) and isinstance(test, dict)) or reference.keys() != test.keys():
            return f"keys {sorted(reference) if isinstance(reference, dict) else reference!r} != " \
                   f"{sorted(test) if isinstance(test, dict) else test!r}"
        for key in reference:
            found = figure_data_difference(reference[key], test[key], rtol)
            if found:
                return f"{key}: {found}"
        return None
    if isinstance(reference, list) or isinstance(test, list):
        if not (isinstance(reference, list) and isinstance(test, list)) or len(reference) != len(test):
            return "lengths differ"
        numeric = [x for x in _leaves(reference) if isinstance(x, (int, float)) and not isinstance(x, bool)]
        scale = max((abs(x) for x in numeric), default=0.0)
        left, right = list(_leaves(reference)), list(_leaves(test))
        if len(left) != len(right):
            return "shapes differ"
        for index, (a, b) in enumerate(zip(left, right)):
            both_numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
            if both_numbers:
                if not math.isclose(a, b, rel_tol=0.0, abs_tol=rtol * max(abs(a), abs(b), scale)):
                    return f"item {index}: {a!r} != {b!r} (relative tolerance {rtol:g})"
            elif a != b:
                return f"item {index}: {a!r} != {b!r}"
        return None
    if reference != test:
        return f"{reference!r} != {test!r}"
    return None


def _split_figure_records(outputs):
    """The figure-data records of one cell, and its other outputs with the PNG bytes of
    figures that are compared by their data removed."""
    records = [output["data"][FIGURE_DATA] for output in outputs if FIGURE_DATA in output.get("data", {})]
    by_data = {record["name"] for record in records if not record.get("exact", True)}
    rest = []
    for output in outputs:
        data = output.get("data", {})
        if FIGURE_DATA in data:
            continue
        name = output.get("metadata", {}).get("scrapbook", {}).get("name")
        if name in by_data:
            kept = NotebookNode({key: value for key, value in data.items() if key not in FIGURE_OUTPUTS})
            output = NotebookNode({**output, "data": kept})
        rest.append(output)
    return records, rest


def _drawn(record):
    """A record's data: one line of JSON, or (in older notebooks) the parsed structure."""
    data = record["data"]
    return json.loads(data) if isinstance(data, str) else data


_compare_outputs = IPyNbCell.compare_outputs


def _compare_outputs_and_figure_data(self, test, ref, skip_compare=None):
    test_records, test = _split_figure_records(test)
    ref_records, ref = _split_figure_records(ref)
    if [r["name"] for r in ref_records] != [r["name"] for r in test_records]:
        self.comparison_traceback = [f"figures recorded: {[r['name'] for r in ref_records]} committed, "
                                     f"{[r['name'] for r in test_records]} now"]
        return False
    for reference, now in zip(ref_records, test_records):
        rtol = reference.get("rtol") or 1e-12
        found = figure_data_difference(_drawn(reference), _drawn(now), rtol)
        if found or reference.get("rtol") != now.get("rtol"):
            self.comparison_traceback = [f"figure {reference['name']!r} draws other data: {found or 'rtol changed'}"]
            return False
    return _compare_outputs(self, test, ref, skip_compare)


IPyNbCell.compare_outputs = _compare_outputs_and_figure_data
