"""The whole book as one PDF (``python3 tasks.py pdf``), read back with pypdf.

The book is built with the ``singlehtml`` builder (once per run, beside the HTML
build the browser tests read: ``tests/book_build.py``) and printed by
``_ext/book_pdf.py``, as ``tasks.py pdf`` does. The PDF must hold
every chapter under its number, in the order of ``_toc.yml``, with a table of
contents and bookmarks; its fonts embedded; and none of the words that only make
sense on a screen (sliders to move, code to unfold, buttons to click).

Needs Chromium, as tests/test_book.py does; ``PE_COURSE_SKIP_BROWSER=1`` skips
it on purpose (refused when ``CI`` is set).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

#: Words a reader of paper cannot act on: an order to move a slider, and the
#: labels of buttons and folds. (The reference pages may still say what a
#: slider of an explorable figure is: they describe the code.)
SCREEN_ONLY = [r"\b(?:Move|Drag|move|drag) the\b(?: \w+)? sliders?\b", r"Show code cell", r"Hide code cell",
               r"Click to (?:show|hide)", r"Copy to clipboard", r"Toggle hidden content", r"Ctrl\s*\+\s*K"]


def chapter_titles() -> list[str]:
    """Each chapter's title, from its notebook's first heading, in the order of _toc.yml."""
    files = re.findall(r"^\s*- file: (chapters/\w+)", (ROOT / "_toc.yml").read_text(), flags=re.M)  # not commented out
    titles = []
    for name in files:
        cells = json.loads((ROOT / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        heading = next(line for cell in cells if cell["cell_type"] == "markdown"
                       for line in "".join(cell["source"]).splitlines() if line.startswith("# "))
        titles.append(heading[2:].strip())
    return titles


@pytest.fixture(scope="module")
def pdf(tmp_path_factory, book_build):
    from browser import require_browser

    require_browser("the PDF is not printed")
    output = tmp_path_factory.mktemp("pdf")
    printed = subprocess.run([sys.executable, str(ROOT / "_ext" / "book_pdf.py"),
                              str(book_build("singlehtml") / "index.html"), str(output / "book.pdf")],
                             capture_output=True, text=True, cwd=ROOT)
    assert printed.returncode == 0, printed.stderr[-3000:]
    from pypdf import PdfReader

    return PdfReader(str(output / "book.pdf"))


@pytest.fixture(scope="module")
def text(pdf) -> str:
    import unicodedata

    # NFKC: the fonts' ligatures ("ﬁ") read back as the letters they join.
    return unicodedata.normalize("NFKC", "\n".join(page.extract_text() or "" for page in pdf.pages))


def bookmarks(outline) -> list[str]:
    """Every bookmark's title, the nested ones too."""
    found = []
    for entry in outline:
        found += bookmarks(entry) if isinstance(entry, list) else [entry["/Title"]]
    return found


def test_the_book_has_the_pages_a_book_of_this_length_needs(pdf, text):
    # Thirteen chapters with figures and code: well over a hundred A4 pages, and not
    # thousands (which would mean each figure or line of code took a page).
    assert 100 <= len(pdf.pages) <= 600, len(pdf.pages)
    assert len(text) > 200_000


def test_every_chapter_is_there_under_its_number_in_order(text):
    flat = re.sub(r"\s+", " ", text)
    where = []
    for number, title in enumerate(chapter_titles(), start=1):
        # A title may break across lines; its first words under its number suffice.
        start = " ".join(title.split()[:4])
        found = [m.start() for m in re.finditer(re.escape(f"{number}. {start}"), flat)]
        assert found, f"chapter {number}, {title!r}, is not in the PDF under its number"
        where.append(found)
    # The contents list each chapter once, then the chapters follow in the same order.
    assert all(len(found) >= 2 for found in where), "a chapter is missing from the contents"
    assert [found[-1] for found in where] == sorted(found[-1] for found in where)


def test_sections_are_numbered(text):
    assert re.search(r"\b2\.1\. \S", text) and re.search(r"\b5\.2\. \S", text)


def test_the_pdf_has_bookmarks_and_a_contents_page(pdf, text):
    titles = bookmarks(pdf.outline)
    for number, title in enumerate(chapter_titles(), start=1):
        assert any(t.startswith(f"{number}. ") and title.split()[0] in t for t in titles), (title, titles[:20])
    assert "Contents" in text[:20_000]


def test_no_screen_only_words(text):
    flat = re.sub(r"\s+", " ", text)
    found = {phrase: re.findall(phrase, flat)[:3] for phrase in SCREEN_ONLY if re.search(phrase, flat)}
    assert not found, f"words that only make sense on a screen: {found}"


def test_every_figure_is_printed(pdf):
    """Every figure of the chapters, the explorable ones as their still drawing, is an
    image in the PDF: at least as many images as the chapters glue figures."""
    glued = 0
    for path in (ROOT / "chapters").glob("*.ipynb"):
        glued += len(re.findall(r"```\{glue:figure\}", path.read_text(encoding="utf-8")))
    images = sum(len(page.images) for page in pdf.pages)
    assert glued > 30 and images >= glued, (images, glued)


def test_every_font_is_embedded(pdf):
    fonts, missing = set(), set()
    for page in pdf.pages:
        resources = page.get("/Resources") or {}
        for font in (resources.get("/Font") or {}).values():
            font = font.get_object()
            if font.get("/Subtype") == "/Type3":
                continue   # MathJax's glyphs, drawn by the PDF's own procedures: nothing to embed
            descendants = font.get("/DescendantFonts")
            for face in ([d.get_object() for d in descendants] if descendants else [font]):
                descriptor = face.get("/FontDescriptor")
                name = str(face.get("/BaseFont"))
                fonts.add(name)
                if descriptor is None or not any(k in descriptor.get_object()
                                                 for k in ("/FontFile", "/FontFile2", "/FontFile3")):
                    missing.add(name)
    assert fonts and not missing, f"fonts not embedded: {sorted(missing)}"
