"""The four explorable figures in a browser: a small book of them is built like the
course's (the same Sphinx configuration and extensions), opened from disk in
headless Chromium with the network off, and every slider is dragged, with the
mouse at 1280 px and with a finger at 390 px (tests/explorable_driver.py checks
each drawing against pe_lib). Without JavaScript and on paper the static
drawing shows instead.

Screenshots before and after each move are saved under ``_build/screenshots/explorable``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from explorable_driver import figure_ids, move_every_slider
from test_book import browser  # noqa: F401  (a fixture: the book test's Chromium)

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "_build" / "screenshots" / "explorable"
WIDTHS = (1280, 390)

#: The four figures, as a chapter makes them: one line each, then the static drawing glued.
FIGURES = {
    "clocks": "explorable.clock_hands(range(101), 8, base=100.0, position=5)",
    "wavelengths": "explorable.wavelength_series(depth=64, base=10000.0)",
    "dot_product": "explorable.dot_product_by_offset(offset=10, depth=64)",
    "rope": "explorable.rotary_query_key(shift=3, offset=4)",
}


def figures_notebook() -> nbformat.NotebookNode:
    cells = [
        nbformat.v4.new_markdown_cell("# Four figures\n\nEach moves; $x^2$ checks that MathJax still runs."),
        nbformat.v4.new_code_cell("from pe_lib.course import explorable\nfrom pe_lib.course.plotting import glue_figure",
                                  metadata={"tags": ["remove-cell"]}),
    ]
    for name, call in FIGURES.items():
        cells += [
            nbformat.v4.new_markdown_cell(f"## {name}\n\nThe text before the figure."),
            nbformat.v4.new_code_cell(f"{name} = {call}\n{name}"),
            nbformat.v4.new_code_cell(f'glue_figure("fig-{name}", {name}.fallback(), rtol=1e-6)',
                                      metadata={"tags": ["remove-cell"]}),
            nbformat.v4.new_markdown_cell(
                f"```{{glue:figure}} fig-{name}\n:alt: The {name} figure drawn at its first setting.\n"
                f":name: fig-{name}\n:figclass: explorable-fallback\n\nThe {name} figure.\n```\n\nThe text after it."
            ),
        ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


@pytest.fixture(scope="session")
def figures_page(tmp_path_factory) -> Path:
    """A one-page book of the four figures, built with the course's own configuration."""
    from nbclient import NotebookClient

    folder = tmp_path_factory.mktemp("explorable-book")
    for name in ("_ext", "_static"):
        shutil.copytree(ROOT / name, folder / name)
    shutil.copy(ROOT / "references.bib", folder)
    shutil.copy(ROOT / "_config.yml", folder)
    (folder / "_toc.yml").write_text("format: jb-book\nroot: figures\n", encoding="utf-8")
    notebook = figures_notebook()
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(notebook, folder / "figures.ipynb")
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jupyter_book), "build", str(folder), "-W", "-n", "--keep-going"],
                            capture_output=True, text=True, cwd=folder)
    assert result.returncode == 0, f"the build failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return folder / "_build" / "html" / "figures.html"


def open_offline(browser, url: str, width: int, **options):  # noqa: F811
    """Open ``url`` in a fresh context with the network off; return the page and its problems."""
    context = browser.new_context(
        viewport={"width": width, "height": 900 if width > 600 else 844}, offline=True,
        has_touch=width < 600, **options,
    )
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda r: problems.append(f"failed to load {r.url}: {r.failure}"))
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(f"asked the network for {r.url}"))
    page.goto(url, wait_until="load")
    return page, problems


@pytest.mark.parametrize("width", WIDTHS)
def test_every_slider_moves_its_drawing_to_what_pe_lib_computes(figures_page, browser, width):  # noqa: F811
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page, problems = open_offline(browser, figures_page.as_uri(), width)
    page.wait_for_function("() => document.querySelectorAll('.explorable .js-plotly-plot').length === 4")
    assert figure_ids(page) == ["explorable-clocks", "explorable-wavelengths", "explorable-dot-product",
                                "explorable-rope"]
    found, measured = move_every_slider(page, touch=width < 600, screenshots=SCREENSHOTS, tag=str(width))
    assert len(measured) == 7, measured
    wide = page.evaluate("() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1")
    # With the figures drawn, the static drawings give way on screen; their captions stay.
    hidden = page.evaluate("""() => Array.from(document.querySelectorAll('figure.explorable-fallback')).map(f =>
        [getComputedStyle(f.querySelector('img')).display, f.querySelector('figcaption').offsetHeight > 0])""")
    page.context.close()
    assert not problems + found, "\n".join(problems + found)
    assert not wide, f"the page scrolls sideways at {width} px"
    assert hidden == [["none", True]] * 4


@pytest.mark.parametrize("media", ["no script", "print"])
def test_without_javascript_or_on_paper_the_static_drawing_shows(figures_page, browser, media):  # noqa: F811
    options = {"java_script_enabled": False} if media == "no script" else {}
    page, problems = open_offline(browser, figures_page.as_uri(), 390, **options)
    if media == "print":
        page.wait_for_function("() => document.querySelectorAll('.explorable .js-plotly-plot').length === 4")
        page.emulate_media(media="print")
    shown = page.evaluate("""() => ({
        figures: Array.from(document.querySelectorAll('div.explorable')).map(e => e.getClientRects().length > 0),
        drawings: Array.from(document.querySelectorAll('figure.explorable-fallback img')).map(
            i => i.getClientRects().length > 0 && i.complete && i.naturalWidth > 0 && i.alt.length > 20),
    })""")
    page.context.close()
    if media == "no script":  # the theme's scripts are preloaded, and refused with JavaScript off
        problems = [p for p in problems if not (p.startswith("failed to load") and ".js?" in p)]
    assert not problems, "\n".join(problems)
    assert shown == {"figures": [False] * 4, "drawings": [True] * 4}


def test_plotly_js_is_served_once_from_the_build(figures_page):
    html = figures_page.read_text(encoding="utf-8")
    assert html.count("_static/explorable/plotly.min.js") == 1
    assert html.count("Plotly.newPlot(") == 4
    script = figures_page.parent / "_static" / "explorable" / "plotly.min.js"
    assert script.stat().st_size > 1_000_000 and "cdn.plot.ly" not in html

