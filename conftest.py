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
"""

import os
import re
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from nbval.plugin import IPyNbFile

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


def pytest_collection_modifyitems(items):
    skipped = ("stderr",) if compare_figures() else ("stderr", *FIGURE_OUTPUTS)
    for notebook in {item.parent for item in items if isinstance(item.parent, IPyNbFile)}:
        notebook.skip_compare = (*notebook.skip_compare, *skipped)
