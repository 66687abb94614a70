"""Serve MathJax from the built book, not from a CDN, so every page renders offline.

MathJax 3 comes from the ``django-static-mathjax`` package, which is nothing but
MathJax's own files (Django is not needed). They are copied into
``_static/mathjax`` of the HTML output, and Sphinx's ``mathjax_path`` points there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import mathjax

SOURCE = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
ENTRY = "tex-mml-chtml.js"
# The other ready-made bundles are alternatives to ENTRY; nothing loads them.
_UNUSED_BUNDLES = {p.name for p in SOURCE.glob("*.js")} - {ENTRY}


def _point_sphinx_at_local_copy(app, config) -> None:
    config.mathjax_path = f"mathjax/{ENTRY}"  # relative to _static


def _copy_mathjax(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        shutil.copytree(
            SOURCE,
            Path(app.outdir) / "_static" / "mathjax",
            dirs_exist_ok=True,
            ignore=lambda folder, names: [n for n in names if Path(folder) == SOURCE and n in _UNUSED_BUNDLES],
        )


def setup(app):
    app.connect("config-inited", _point_sphinx_at_local_copy)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
