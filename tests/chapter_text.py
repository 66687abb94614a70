"""A chapter notebook's cells as text, for the tests that read what a page says.

>>> from pathlib import Path
>>> page = Path(__file__).resolve().parents[1] / "chapters" / "why_order_matters.ipynb"
>>> chapter_markdown(page).lstrip().startswith("(chapter-")
True
"""

from __future__ import annotations

import json
from pathlib import Path


def cell_sources(path: Path, kind: str) -> list[str]:
    """The source of each cell of ``kind`` ("markdown" or "code"), in page order."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells if cell["cell_type"] == kind]


def chapter_markdown(path: Path, separator: str = "\n") -> str:
    """Every Markdown cell of a chapter, joined by ``separator``."""
    return separator.join(cell_sources(path, "markdown"))
