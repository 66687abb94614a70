"""Settings shared by every test under tests/.

Hypothesis: one profile for the whole suite. Examples that build Keras layers or
run NumPy on large arrays take a variable time on a shared 2-core machine, so no
example has a deadline (a slow example is not a failing one). On CI (``CI`` set)
the examples are derandomized: the same inputs on every run, so a failure can be
reproduced and a pass means the same thing each time. ``HYPOTHESIS_PROFILE``
picks a profile by name, e.g. ``HYPOTHESIS_PROFILE=thorough`` for a long search.

The grading tests share one build of each assignment per run (``builds``), and
the book's readers one build of the book (``book_build``), whichever worker
makes it first (``once_per_run.py``).
"""

import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from book_build import build_book
from browser import launched_browser
from classroom.build import build_assignment
from classroom.bundle import build_wheel
from classroom.masters import ASSIGNMENTS
from once_per_run import once, run_folder

_SHARED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "print_blob": True}
settings.register_profile("course", max_examples=100, **_SHARED)
settings.register_profile("ci", max_examples=100, derandomize=True, **_SHARED)
settings.register_profile("thorough", max_examples=2000, **_SHARED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "course"))


class Builds:
    """Build an assignment the first time a test asks for it, into one folder (one wheel for all)."""

    def __init__(self, folder):
        self.folder = folder
        self.done = {}
        self.wheel = None
        self.lock = threading.Lock()

    def __call__(self, name: str):
        with self.lock:
            if name not in self.done:
                master = ASSIGNMENTS / name / f"{name}.ipynb"
                self.wheel = once(self.folder, "wheel", lambda: build_wheel(self.folder / "wheel"))
                self.done[name] = once(self.folder, name, lambda: build_assignment(
                    master, self.folder, run_tests=False, wheel=self.wheel))
            return self.done[name]


@pytest.fixture(scope="session")
def builds(tmp_path_factory):
    """``builds(name)``: the :class:`classroom.build.Built` of assignment ``name``."""
    folder = run_folder(tmp_path_factory) / "assignment-builds"
    folder.mkdir(exist_ok=True)
    return Builds(folder)


@pytest.fixture(scope="session")
def book_build(tmp_path_factory):
    """``book_build(builder)``: the folder of the book's pages built with ``builder``
    ("html" or "singlehtml"), once per run; the HTML build first, whose parsed
    chapters the single-page build reuses."""
    folder = run_folder(tmp_path_factory)

    def build(builder: str) -> Path:
        if builder != "html":
            build("html")
        return once(folder, f"book-{builder}", lambda: build_book(folder / "book", builder))

    return build

@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for one test module (see tests/browser.py for why not longer)."""
    with launched_browser() as launched:
        yield launched


# The script that generated tests/data from Hugging Face transformers runs in an
# environment of its own; pytest must not import it (its doctests included).
collect_ignore = ["data"]
