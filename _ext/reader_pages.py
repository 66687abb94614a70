"""What the course changes in the pages the theme writes, for every reader.

Once the build is done, each page is rewritten in three small ways:

- Font Awesome once. The theme (pydata-sphinx-theme) draws its icons twice
  over: its style sheet loads Font Awesome's web fonts (about 270 kB), and every
  page also loads ``fontawesome.js`` (1.5 MB), which replaces each
  ``<i class="fa-...">`` by an SVG. The fonts alone draw the same icons, so the
  script tag goes, and the file with it.
- Names a screen reader says as they are seen (WCAG 2.5.3). A hidden code
  cell's toggle (myst-nb) shows "Show code cell source" but is named "Toggle
  hidden content"; the search button shows "Search Ctrl+K" but is named
  "Search". Their ``aria-label`` goes, so their name is the text they show.
- The references' entries as items of their list (WCAG 1.3.1, 4.1.2): the
  bibliography (sphinxcontrib-bibtex, docutils) is a ``role="list"`` whose
  entries carry ``role="doc-biblioentry"``, a role DPUB-ARIA has withdrawn, so
  the list has no items; they become ``role="listitem"``.
- A name for the arrow that unfolds a part of the navigation (WCAG 4.1.2):
  the theme's ``<summary>`` holds only an icon, so it gets words that only a
  screen reader reads.

And every page gets ``_static/scrollable_formulas.js``: formulas are not Tab
stops (``_config.yml``), except a display formula wider than its column, which
scrolls and must then be reachable by keyboard (WCAG 2.1.1); and
``_static/button_labels.js``: each folded block's button is named after its
title, not "Toggle hidden content" like every other (WCAG 2.4.6), and each
copy button gets a name, which its tooltip does not give it (WCAG 4.1.2).
"""

from __future__ import annotations

import re
from pathlib import Path

#: The theme's script tag, in whatever folder depth a page sits.
FONTAWESOME_SCRIPT = re.compile(r'\s*<script defer src="(?:\.\./)*_static/scripts/fontawesome\.js\?digest=\w+"></script>')
#: Labels that hide the text their element shows.
MISMATCHED_LABELS = (
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
    ('<button class="btn search-button-field search-button__button pst-js-only" title="Search" aria-label="Search"',
     '<button class="btn search-button-field search-button__button pst-js-only" title="Search"'),
    ('<summary><span class="toctree-toggle" role="presentation"><i class="fa-solid fa-chevron-down"></i></span>',
     '<summary><span class="toctree-toggle" role="presentation"><i class="fa-solid fa-chevron-down"></i></span>'
     '<span class="visually-hidden">Show or hide the pages below</span>'),
)


def rewrite(text: str) -> str:
    """A page as the course serves it."""
    text = FONTAWESOME_SCRIPT.sub("", text)
    text = text.replace('role="doc-biblioentry"', 'role="listitem"')
    for label, plain in MISMATCHED_LABELS:
        text = text.replace(label, plain)
    return text


def _rewrite_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if rewrite(text) != text:
            page.write_text(rewrite(text), encoding="utf-8")
    for name in ("fontawesome.js", "fontawesome.js.map", "fontawesome.js.LICENSE.txt"):
        (out / "_static" / "scripts" / name).unlink(missing_ok=True)


def setup(app):
    app.add_js_file("scrollable_formulas.js", defer="defer")
    app.add_js_file("button_labels.js", defer="defer")
    app.connect("build-finished", _rewrite_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
