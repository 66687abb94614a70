"""Serve plotly.js from the built book, once, to the pages that carry explorable figures.

A figure from ``pe_lib.course.display.explorable`` is a ``<div class="explorable">`` and
one ``Plotly.newPlot`` call; it does not carry plotly.js. The script comes from
the ``plotly`` package (``package_data/plotly.min.js``), is copied once into
``_static/explorable`` of the HTML output, and is loaded by a ``<script>`` tag in
the head of each page whose body holds such a figure, before the figures'
calls run. Pages without one do not load it. Nothing is fetched from a network.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import plotly

SOURCE = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
#: Where the script lies in the output, relative to ``_static``.
TARGET = "explorable/plotly.min.js"
#: What marks a page that needs it: the wrapper every explorable figure is drawn in.
MARKER = '<div class="explorable"'


def _copy_plotly(app) -> None:
    # Copied before the pages are written, so that Sphinx can add its checksum to the URL.
    if app.builder.format == "html":
        target = Path(app.outdir) / "_static" / TARGET
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.stat().st_size != SOURCE.stat().st_size:
            shutil.copyfile(SOURCE, target)


def _load_where_needed(app, pagename, templatename, context, doctree) -> None:
    if MARKER in context.get("body", ""):
        # Called during html-page-context, add_js_file adds the script to this page only.
        app.add_js_file(TARGET)


def setup(app):
    app.connect("builder-inited", _copy_plotly)
    app.connect("html-page-context", _load_where_needed)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
