"""Font Awesome once: the theme's icons come from its web fonts, not also from its script.

The book theme (pydata-sphinx-theme) draws its icons twice over: its style sheet
loads Font Awesome's web fonts (about 270 kB), and every page also loads
``fontawesome.js`` (1.5 MB), which replaces each ``<i class="fa-...">`` by an SVG.
The fonts alone draw the same icons, so the script tag is taken out of every page
once the build is done, and the file out of the output.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The theme's script tag, in whatever folder depth a page sits.
SCRIPT = re.compile(r'\s*<script defer src="(?:\.\./)*_static/scripts/fontawesome\.js\?digest=\w+"></script>')


def _drop_script(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = SCRIPT.sub("", text)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")
    for name in ("fontawesome.js", "fontawesome.js.map", "fontawesome.js.LICENSE.txt"):
        (out / "_static" / "scripts" / name).unlink(missing_ok=True)


def setup(app):
    app.connect("build-finished", _drop_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
