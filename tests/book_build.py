"""The book, built as ``python3 tasks.py book`` builds it (``tasks.BOOK_BUILD_OPTIONS``), for the tests that read it.

The browser tests read the HTML build and the PDF test prints the single-page
build. Both builds go to one output folder, HTML first: Sphinx then reads the
chapters once, and the single-page build reuses what the HTML build parsed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tasks import BOOK_BUILD_OPTIONS

ROOT = Path(__file__).resolve().parents[1]
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"


def build_book(output: Path, builder: str) -> Path:
    """Build the book with ``builder``, warnings as errors, into ``output``; its pages' folder."""
    built = subprocess.run([str(JUPYTER_BOOK), "build", str(ROOT), "--builder", builder, "--path-output",
                            str(output), *BOOK_BUILD_OPTIONS], capture_output=True, text=True, cwd=ROOT)
    assert built.returncode == 0, f"the {builder} build failed:\n{built.stdout[-4000:]}\n{built.stderr[-4000:]}"
    return output / "_build" / builder
