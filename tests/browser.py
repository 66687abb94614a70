"""Headless Chromium for the tests that read the book, the PDF and the lab.

Playwright's synchronous API runs an asyncio event loop for as long as its context is
open, and marks it as the thread's running loop. A context kept open for a whole
session (a session-scoped fixture) therefore leaves a running loop behind it: any
later test module on the same worker that opens Playwright again fails with "using
Playwright Sync API inside the asyncio loop", so the suite's result would depend on
how pytest-xdist deals the modules. The ``browser`` fixture in ``tests/conftest.py``
is module-scoped for that reason: each module that needs a browser opens one and
closes it, and loop and browser are gone before the next module starts.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
BROWSER_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
MAC_CHROME = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"


def find_browser() -> str | None:
    found = (shutil.which(name) for name in BROWSER_NAMES)
    return next((path for path in found if path), MAC_CHROME if Path(MAC_CHROME).exists() else None)


def require_browser(skipped: str = "browser tests skipped on purpose") -> str:
    """The Chromium to test with; without one, skip on purpose (never under CI) or fail."""
    executable = find_browser()
    if executable is None:
        if os.environ.get("PE_COURSE_SKIP_BROWSER") == "1" and not os.environ.get("CI"):
            pytest.skip(f"PE_COURSE_SKIP_BROWSER=1: {skipped}")
        pytest.fail(
            "No Chromium or Chrome found (looked for " + ", ".join(BROWSER_NAMES) + "). "
            "Install one (Debian/Ubuntu: apt-get install chromium); "
            "python3 tasks.py test does this itself when run as root."
        )
    return executable


@contextmanager
def launched_browser():
    """Chromium under Playwright, closed (with Playwright's event loop) on exit."""
    executable = require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()
