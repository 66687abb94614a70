"""The built book, as a reader meets it: it builds with zero warnings, and every page
works in a real browser opened from disk, with no network.

The book is built once into a temporary folder. Pages are opened as ``file://``
URLs in headless Chromium driven by Playwright, with the network off, which is how
a classroom without a connection would read ``_build/html``; at a phone's width
the pointer is a finger. Screenshots of the intro and every chapter at both
widths are saved under ``_build/screenshots``, and, before and after each move of
a slider of an explorable figure, of that figure under
``_build/screenshots/explorable``.

A browser is required. ``python3 tasks.py test`` installs Debian's chromium when
it is missing and it can; otherwise the tests fail, saying so. Set
``PE_COURSE_SKIP_BROWSER=1`` to skip them on purpose (refused when ``CI`` is set).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest
from browser import require_browser
from explorable_driver import figure_ids, move_every_slider

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "_build" / "screenshots"
@pytest.fixture(scope="module")
def book(book_build) -> Path:
    """The whole book built with warnings as errors: its HTML folder."""
    return book_build("html")


def pages(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


class _LinksAndIds(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        for key in ("id", "name"):
            if attributes.get(key):
                self.ids.add(attributes[key])
        if tag == "a" and attributes.get("href"):
            self.links.append(attributes["href"])


def parse(page: Path) -> _LinksAndIds:
    parser = _LinksAndIds()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_the_book_builds_with_no_warnings(book):
    assert (book / "index.html").exists()
    assert (book / "intro.html").exists()


def test_mathjax_is_served_from_the_build(book):
    for page in pages(book):
        text = page.read_text(encoding="utf-8")
        assert "cdn.jsdelivr.net/npm/mathjax" not in text, page.name
    assert (book / "_static" / "mathjax").is_dir()


def test_each_script_loads_once_a_page(book):
    for page in pages(book):
        sources = re.findall(r'<script[^>]*\ssrc="([^"?]+)', page.read_text(encoding="utf-8"))
        repeated = sorted({source for source in sources if sources.count(source) > 1})
        assert not repeated, f"{page.name} loads {repeated} more than once"


def test_every_internal_link_and_anchor_resolves(book):
    broken = []
    parsed = {page: parse(page) for page in pages(book)}
    for page, content in parsed.items():
        for href in content.links:
            url = urlparse(href)
            if url.scheme or href.startswith(("mailto:", "//")):
                continue
            target_path, fragment = urldefrag(unquote(href))
            target = (page.parent / target_path).resolve() if target_path else page
            if not target.exists():
                broken.append(f"{page.relative_to(book)}: {href} (no such file)")
            elif fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if fragment not in ids:
                    broken.append(f"{page.relative_to(book)}: {href} (no such anchor)")
    assert not broken, "\n".join(broken)


# Text a reader sees outside code: raw TeX here means MathJax did not render it.
_VISIBLE_PROSE = """() => {
  const main = document.querySelector('main') || document.body;
  const copy = main.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container, .cell_input, .highlight')
      .forEach(e => e.remove());
  return copy.innerText;
}"""
_RAW_TEX = re.compile(r"\\begin\{|\\\(|\\\[|\$\$|(?<![\w$])\$[^$\n]+\$(?![\w$])")


def open_page(browser, url: str, width: int = 1280, **options):
    """Open ``url`` in a fresh browser context with the network off, as a phone (a
    finger for a pointer) below 600 px, and wait for MathJax; return the page and the
    problems it reported. ``options`` go to the context (``java_script_enabled``);
    close the page with ``page.context.close()``."""
    context = browser.new_context(
        viewport={"width": width, "height": 900 if width > 600 else 844}, offline=True,
        has_touch=width < 600, **options,
    )
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda r: problems.append(f"failed to load {r.url}: {r.failure}"))
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:"))
            else problems.append(f"asked the network for {r.url}"))
    page.goto(_past_redirect(url), wait_until="load")
    if options.get("java_script_enabled", True):
        page.wait_for_function(_MATHJAX_STARTED)
        page.evaluate("() => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise")
    return page, problems


# A page that loads MathJax is ready once its startup promise exists; one that
# does not load it is ready at once.
_MATHJAX_STARTED = """() => !document.querySelector('script[src*="mathjax"]')
  || (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)"""
_REFRESH = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.IGNORECASE)


def _past_redirect(url: str) -> str:
    """The page a redirect file (``index.html``) leads to, so the browser does not
    navigate again while it is being inspected; any other URL unchanged."""
    if not url.startswith("file://"):
        return url
    path = Path(unquote(urlparse(url).path))
    found = _REFRESH.search(path.read_text(encoding="utf-8")[:500]) if path.is_file() else None
    if not found:
        return url
    target = path.parent / found.group(1)
    assert target.is_file(), f"{path.name} redirects to {found.group(1)}, which is not in the book"
    return target.as_uri()


def test_every_page_renders_in_a_browser_opened_from_disk(visits):
    """Every page of the book at both widths: no console error, no failed or network
    request, no TeX left unrendered, every image loaded, described and drawn in its
    own shape."""
    failures = []
    for (name, width), visit in visits.items():
        failures += [f"{name} at {width} px: {p}" for p in visit["problems"]]
        prose = visit["prose"]
        failures += [f"{name} at {width} px: unrendered TeX near {m.group(0)!r}" for m in _RAW_TEX.finditer(prose)]
        for source, loaded, has_alt, shape in visit["images"]:
            if not loaded:
                failures.append(f"{name} at {width} px: image {source} did not load")
            if not has_alt:
                failures.append(f"{name} at {width} px: image {source} has no alt text of its own")
            if abs(shape - 1) > 0.02:  # a pixel of rounding on a small image, not a squashed one
                failures.append(f"{name} at {width} px: image {source} is drawn {shape:.2f} times as wide "
                                "for its height as it is")
    assert not failures, "\n".join(failures)


def test_mathematics_is_typeset(book, browser):
    page, problems = open_page(browser, (book / "chapters" / "sinusoidal_encoding.html").as_uri())
    rendered = page.evaluate("() => document.querySelectorAll('mjx-container').length")
    page.context.close()
    assert not problems
    assert rendered > 10


def test_search_finds_a_chapter(book, browser):
    page, problems = open_page(browser, (book / "search.html").as_uri() + "?q=wavelength")
    page.wait_for_selector("#search-results li", timeout=15000)
    titles = page.evaluate("() => Array.from(document.querySelectorAll('#search-results li a')).map(a => a.href)")
    page.context.close()
    assert not problems
    assert any("sinusoidal_encoding" in title for title in titles)


# --- The page a reader sees, at a desktop width and a phone width -------------

WIDTHS = (1280, 390)

# Opens every hidden solution (sphinx-togglebutton) and every hidden cell
# (myst-nb's <details>), so that what a reader can reveal is checked too.
_OPEN_EVERYTHING = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
}"""

# Everything measured on one page, in one pass.
_MEASURE = r"""() => {
  const column = document.querySelector('article.bd-article') || document.querySelector('main');
  const edge = column.getBoundingClientRect().right + 1;
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const wide = el => el.scrollWidth > el.clientWidth + 1;
  const shown = el => el.getClientRects().length > 0 && el.getBoundingClientRect().width > 0;
  const squash = text => text.replace(/\s+/g, ' ').trim().slice(0, 70);

  const equations = [];
  document.querySelectorAll('div.math').forEach((block, n) => {
    if (!shown(block)) return;
    const number = block.querySelector('span.eqno');
    const formula = block.querySelector('mjx-container');
    const tex = block.querySelector('mjx-assistive-mml');
    const name = number ? `equation ${number.innerText.trim()}` : `unnumbered equation ${n + 1}`;
    const problems = [];
    for (const el of [block, formula]) {
      if (!el) continue;
      if (wide(el) && !scrolls(el)) problems.push('clipped');
      if (el.getBoundingClientRect().right > edge) problems.push('runs past its column');
    }
    if (number && (number.getBoundingClientRect().right > edge || !shown(number)))
      problems.push('its number is not visible');
    equations.push({name, text: squash(tex ? tex.textContent : block.textContent),
                    problems: [...new Set(problems)], scrolls: !!formula && wide(formula)});
  });

  const blocks = [];
  document.querySelectorAll('main pre').forEach(pre => {
    if (!shown(pre) || !wide(pre)) return;
    const kind = pre.closest('.cell_output, .output') ? 'output'
               : pre.closest('.cell_input') ? 'code cell' : 'code block';
    const lines = pre.innerText.split('\n');
    const longest = lines.reduce((a, b) => (b.length > a.length ? b : a), '');
    blocks.push({kind, scrolls: scrolls(pre), characters: longest.length, text: squash(longest)});
  });

  // What a phone reader would have to swipe sideways to read: a code output
  // (a <pre> in a cell's output) or a table wider than the box it sits in. A
  // table that cannot be narrowed may scroll in its own box when its chapter
  // marks it so: the class wide-table on it or around it (a MyST div of that
  // class, or the cell tag wide-table, which myst-nb writes as tag_wide-table).
  const swipes = [];
  const firstLine = el => squash((el.innerText || '').split('\n').find(l => l.trim()) || '');
  document.querySelectorAll('main pre').forEach(pre => {
    if (!shown(pre) || !wide(pre) || !pre.closest('.cell_output, .output')) return;
    swipes.push({kind: 'output', marked: false, text: firstLine(pre),
                 overflow: pre.scrollWidth - pre.clientWidth});
  });
  document.querySelectorAll('main table').forEach(table => {
    if (!shown(table) || table.closest('mjx-container')) return;
    let box = table.parentElement;
    while (box && box !== column && !scrolls(box)) box = box.parentElement;
    box = box || column;
    const overflow = Math.max(table.scrollWidth, table.getBoundingClientRect().width) - box.clientWidth;
    if (overflow <= 1 && !wide(box)) return;
    swipes.push({kind: 'table', marked: !!table.closest('.wide-table, .tag_wide-table'),
                 text: firstLine(table.rows[0] || table), overflow: Math.round(overflow)});
  });

  const images = [];
  document.querySelectorAll('main img').forEach(img => {
    if (shown(img) && img.getBoundingClientRect().right > edge)
      images.push(img.getAttribute('src'));
  });

  // Inline formulas: MathJax never breaks one, so a formula wider than what is
  // left of its line overflows. It is cut off when no box around it scrolls
  // sideways and its right edge passes the nearest box that clips (or the screen).
  const inline = [];
  const screen = document.documentElement.clientWidth;
  document.querySelectorAll('mjx-container:not([display="true"])').forEach(formula => {
    if (!shown(formula) || formula.closest('div.math')) return;
    let limit = screen, reachable = false;
    for (let el = formula.parentElement; el && el !== document.documentElement; el = el.parentElement) {
      const overflow = getComputedStyle(el).overflowX;
      if (overflow === 'auto' || overflow === 'scroll') { reachable = true; break; }
      if (overflow === 'hidden' || overflow === 'clip')
        limit = Math.min(limit, el.getBoundingClientRect().right);
    }
    const right = formula.getBoundingClientRect().right;
    if (!reachable && right > limit + 1) {
      const tex = formula.querySelector('mjx-assistive-mml');
      const line = formula.closest('p, li, td, dd, dt, div') || formula.parentElement;
      inline.push({text: squash(tex ? tex.textContent : formula.textContent),
                   beyond: Math.round(right - limit),
                   context: squash(line.innerText).slice(0, 60)});
    }
  });

  // Every figure as drawn: its file, the pixels it holds and the width it is shown at.
  const figures = [];
  document.querySelectorAll('main img').forEach(img => {
    if (shown(img) && img.naturalWidth > 0)
      figures.push({src: img.getAttribute('src'), natural: img.naturalWidth,
                    shown: img.getBoundingClientRect().width});
  });

  // Outputs and prose, not code: cell inputs go, and so do listings of source
  // (literalinclude, fenced code), whose doctests show reprs as code does.
  const copy = (document.querySelector('main') || document.body).cloneNode(true);
  copy.querySelectorAll('.cell_input, script, style, mjx-container').forEach(e => e.remove());
  copy.querySelectorAll('div[class*="highlight-"]').forEach(e => {
    if (!e.closest('.cell_output')) e.remove();
  });
  // The page itself never scrolls sideways: whatever is too wide scrolls in its own box.
  const page = document.documentElement;
  const pageWidth = page.scrollWidth > page.clientWidth + 1 ? page.scrollWidth : null;
  return {equations, blocks, swipes, images, inline, figures, pageWidth, text: copy.innerText};
}"""

_NUMPY_REPR = re.compile(r"\bnp\.(?:float|int|uint|bool|complex|str_)\w*\(|(?<![\w.])array\(")


def reader_pages(html: Path) -> list[Path]:
    """The pages a reader reads: the introduction and every chapter."""
    return [html / "intro.html"] + sorted((html / "chapters").glob("*.html"))


#: Each image: its source, whether it loaded, whether it is described (by alt
#: text of its own, not its file's name, which Sphinx gives an image pasted
#: bare), and its drawn shape (width over height) against its own (1 when not
#: drawn).
_IMAGES = ("() => Array.from(document.images).map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0,"
           " (i.getAttribute('alt') || '').trim().length > 0"
           " && i.getAttribute('alt') !== i.getAttribute('src'),"
           " i.naturalHeight && i.clientHeight ? (i.clientWidth / i.clientHeight) / (i.naturalWidth / i.naturalHeight) : 1])")


@pytest.fixture(scope="module")
def visits(book, browser) -> dict:
    """Every page of the book opened once at each width, and everything the tests
    below read from it taken in that one visit, in an order that leaves each
    reading as a reader would meet the page: what loaded (problems, prose,
    images), then axe-core on the page as loaded (not on a redirect file), then,
    on a reader page (:func:`reader_pages`), the screenshot, the explorable
    figures moved (:func:`explore`), the hidden parts opened, and the measures.

    Keyed by ``(path relative to the book, width)``."""
    if not AXE.is_file():
        pytest.fail(f"axe-core is not installed at {AXE}: python3 tasks.py test installs it from npm "
                    "(npm install --prefix .axe axe-core)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    readers = set(reader_pages(book))
    found = {}
    for path in pages(book):
        redirect = 'http-equiv="Refresh"' in path.read_text(encoding="utf-8")[:500]
        for width in WIDTHS:
            page, problems = open_page(browser, path.as_uri(), width)
            visit = {"problems": problems, "path": path, "prose": page.evaluate(_VISIBLE_PROSE),
                     "images": page.evaluate(_IMAGES), "axe": None, "reading": None}
            if not redirect:
                page.add_script_tag(path=str(AXE))
                visit["axe"] = page.evaluate(_RUN_AXE, [AXE_TAGS, AXE_EXTRA_RULES])
            if path in readers:
                page.screenshot(path=str(SCREENSHOTS / f"{path.stem}-{width}.png"), full_page=True)
                explored = explore(page, path.stem, width) if path.stem in EXPLORABLE_PAGES else None
                page.evaluate(_OPEN_EVERYTHING)
                page.wait_for_timeout(100)
                visit["reading"] = {"problems": problems, "path": path, "explorable": explored,
                                    **page.evaluate(_MEASURE)}
            found[(str(path.relative_to(book)), width)] = visit
            page.context.close()
    return found


@pytest.fixture(scope="module")
def readings(visits) -> dict:
    """Each reader page at each width, keyed ``(page name, width)``: screenshot saved,
    explorable figures moved (:func:`explore`), hidden parts opened, measured."""
    return {(visit["path"].stem, width): visit["reading"]
            for (_, width), visit in visits.items() if visit["reading"] is not None}


def test_a_screenshot_of_every_chapter_at_both_widths(book, readings):
    missing = [
        f"{path.stem}-{width}.png"
        for path in reader_pages(book) for width in WIDTHS
        if not (SCREENSHOTS / f"{path.stem}-{width}.png").is_file()
        or (SCREENSHOTS / f"{path.stem}-{width}.png").stat().st_size < 10_000
    ]
    assert not missing, "screenshots missing or blank: " + ", ".join(missing)
    assert not [f"{name} at {width} px: {p}" for (name, width), r in readings.items() for p in r["problems"]]


def test_display_equations_fit_or_scroll_at_both_widths(readings):
    """A formula may scroll inside its own box; it must never be cut, nor hide its number."""
    clipped = [
        f"{name} at {width} px: {eq['name']} {', '.join(eq['problems'])}: {eq['text']!r}"
        for (name, width), reading in readings.items()
        for eq in reading["equations"] if eq["problems"]
    ]
    assert not clipped, f"{len(clipped)} display equations cut off:\n" + "\n".join(clipped)


def test_no_numpy_repr_reaches_the_page(readings):
    found = [
        f"{name} at {width} px: {m.group(0)!r} in {reading['text'][max(0, m.start() - 40): m.end() + 20]!r}"
        for (name, width), reading in readings.items() if width == WIDTHS[0]
        for m in _NUMPY_REPR.finditer(reading["text"])
    ]
    assert not found, "NumPy reprs on the page:\n" + "\n".join(found)


def test_code_and_outputs_fit_their_blocks(readings):
    """At 1280 px every line of code and output fits its block (about 80 characters).
    On a phone no column holds 80 characters, so a wide block must scroll, never be cut."""
    wide = [
        f"{name} at {width} px: {block['kind']} line of {block['characters']} characters "
        f"{'scrolls' if block['scrolls'] else 'is cut'}: {block['text']!r}"
        for (name, width), reading in readings.items()
        for block in reading["blocks"]
        if width == WIDTHS[0] or not block["scrolls"]
    ]
    assert not wide, f"{len(wide)} lines wider than their block:\n" + "\n".join(wide)


PHONE = WIDTHS[-1]
#: The class (or cell tag) that lets a table scroll in its own box on a phone;
#: give it only to a table that cannot be narrowed (its columns are the point).
WIDE_TABLE = "wide-table"


def test_no_output_or_table_needs_a_sideways_swipe_on_a_phone(readings):
    """At 390 px every code output and every table fits the column: nothing to swipe.

    An output is measured by its <pre> (its scrollWidth against its clientWidth),
    a table against the box that holds it (the column, or the box that scrolls
    around it). A table marked ``wide-table`` (the class, or the cell tag) is the
    one exception: it scrolls in its own box because it cannot be narrowed.
    """
    swipes = [
        f"{name}: {swipe['kind']} {swipe['overflow']} px too wide, first line {swipe['text']!r}"
        for (name, width), reading in sorted(readings.items()) if width == PHONE
        for swipe in reading["swipes"] if not swipe["marked"]
    ]
    assert not swipes, (f"{len(swipes)} outputs and tables need a sideways swipe at {PHONE} px "
                        f"(wrap them to the column, narrow them, or mark a table that cannot be "
                        f"narrowed {WIDE_TABLE}):\n" + "\n".join(swipes))


def test_no_page_scrolls_sideways(readings):
    wide = [f"{name} at {width} px: the page is {r['pageWidth']} px wide"
            for (name, width), r in readings.items() if r["pageWidth"]]
    assert not wide, "pages wider than the screen:\n" + "\n".join(wide)


def test_figures_fit_the_column(readings):
    wide = [f"{name} at {width} px: {src}" for (name, width), r in readings.items() for src in r["images"]]
    assert not wide, "images wider than the column:\n" + "\n".join(wide)


def test_inline_formulas_are_not_cut_off(readings):
    """An inline formula is never broken by MathJax 3, so on a phone a long one runs
    off the screen, where no reader can scroll to it. Measured with every dropdown
    and folded cell opened, as a reader opens them; a formula that long belongs in
    a display equation."""
    cut = [
        f"{name} at {width} px: {formula['text']!r} runs {formula['beyond']} px past the "
        f"edge, in {formula['context']!r}"
        for (name, width), reading in readings.items()
        for formula in reading["inline"]
    ]
    assert not cut, f"{len(cut)} inline formulas cut off:\n" + "\n".join(cut)


# The smallest text a figure may show on a phone, in CSS pixels: below about 9 px
# it cannot be read without zooming.
SMALLEST_FIGURE_TEXT_PX = 9.0


def png_dpi(data: bytes) -> float | None:
    """The resolution a PNG file states (Matplotlib writes it), in dots per inch."""
    position = 8
    while position + 8 <= len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        if kind == b"pHYs" and data[position + 16] == 1:  # unit: the metre
            return int.from_bytes(data[position + 8:position + 12], "big") * 0.0254
        if kind == b"IDAT":
            return None
        position += 12 + length
    return None


def notebook_figures() -> dict[str, dict]:
    """Every PNG figure the chapters show, by the SHA-256 of its bytes: where it is
    and the figure-data record ``glue_figure`` stored beside it (None if none)."""
    import base64
    import hashlib

    found = {}
    for chapter, number, cell, _ in chapter_cells():
        outputs = cell.get("outputs", [])
        records = {}
        for output in outputs:
            for key, value in output.get("data", {}).items():
                if key.endswith("figure-data+json"):
                    records[value["name"]] = value
        for output in outputs:
            data = output.get("data", {})
            for key in ("image/png", "application/papermill.record/image/png"):
                if key in data:
                    name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                    digest = hashlib.sha256(base64.b64decode("".join(data[key]))).hexdigest()
                    if digest in found and found[digest]["record"] is not None:
                        continue  # the same drawing shown under its glue cell, for JupyterLab
                    found[digest] = {"where": f"{chapter}: cell {number}" + (f" ({name})" if name else ""),
                                     "record": records.get(name)}
    return found


def test_figure_text_is_legible_on_a_phone(readings):
    """Text in a figure shown at 390 px must be at least about 9 px high.

    How large a figure's text appears is its size in points, times the
    figure's pixels per point, times how much the page shrinks the image:
    ``points / 72 * dpi * shown width / natural width``. The browser gives the
    last two (the image's ``naturalWidth`` and its rendered width); the PNG
    states its dpi (Matplotlib writes a ``pHYs`` chunk); the smallest font
    size is what ``glue_figure`` records beside the figure's data
    (``smallest_font_pt``). The image on the page is matched to its notebook
    output by the SHA-256 of its bytes, which the build copies unchanged.
    Measuring this way needs no guess about cropping (``bbox_inches="tight"``
    changes the pixel width but not the dpi) or retina output (which doubles
    both). A figure not glued with ``glue_figure`` fails: its text size is
    unknown. A record from before ``smallest_font_pt`` existed is read as the
    book style's 12 points.
    """
    import hashlib

    from pe_lib.course.display.style import FONT_SIZE

    figures = notebook_figures()
    small = []
    for (name, width), reading in readings.items():
        if width != 390:
            continue
        for figure in reading["figures"]:
            path = (reading["path"].parent / unquote(figure["src"])).resolve()
            if not path.is_file() or path.suffix.lower() != ".png":
                continue
            data = path.read_bytes()
            known = figures.get(hashlib.sha256(data).hexdigest())
            if known is None:
                continue  # not a figure from a chapter's outputs (a logo, an icon)
            if known["record"] is None:
                small.append(f"{known['where']} is not glued with glue_figure; "
                             "its text size cannot be checked")
                continue
            points = known["record"].get("smallest_font_pt") or FONT_SIZE
            dpi = png_dpi(data) or 72.0
            pixels = points / 72 * dpi * figure["shown"] / figure["natural"]
            if pixels < SMALLEST_FIGURE_TEXT_PX:
                small.append(f"{name} at {width} px: {known['where']}: {points:g} pt text shows "
                             f"{pixels:.1f} px high ({figure['natural']} px image at {dpi:.0f} dpi "
                             f"shown {figure['shown']:.0f} px wide)")
    assert not small, f"{len(small)} figures with text too small on a phone:\n" + "\n".join(small)


# --- Read from the notebooks: what a cell shows -----------------------------

HIDDEN_INPUT = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
HIDDEN_OUTPUT = {"remove-cell", "remove-output"}
_GLUE_CALL = re.compile(r"^\s*(?:glue|glue_number)\(", re.M)
_MARKDOWN_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)


def chapter_cells():
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, start=1):
            if cell["cell_type"] == "code":
                yield path.stem, number, cell, set(cell.get("metadata", {}).get("tags", []))


def _only_glue(source: str) -> bool:
    statements = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    bookkeeping = re.compile(r"^\s*(?:glue|glue_number|plt\.close)\(|^\s*from myst_nb import|^\s*from pe_lib\.course\.formatting import|^\s+\S")
    return all(bookkeeping.match(line) for line in statements)


def test_no_visible_code_cell_glues():
    """Glue calls are bookkeeping: they belong in cells tagged remove-cell (or whose input is hidden)."""
    shown = [
        f"{chapter}: cell {number} {'only glues' if _only_glue(''.join(cell['source'])) else 'glues beside its code'}"
        for chapter, number, cell, tags in chapter_cells()
        if not tags & HIDDEN_INPUT and _GLUE_CALL.search("".join(cell["source"]))
    ]
    assert not shown, f"{len(shown)} visible code cells with glue calls:\n" + "\n".join(shown)


def test_no_markdown_table_printed_raw():
    """A table is glued as Markdown and shown rendered, never printed as `| a | b |` text."""
    raw = []
    for chapter, number, cell, tags in chapter_cells():
        if tags & HIDDEN_OUTPUT:
            continue
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
            if _MARKDOWN_RULE.search(text):
                raw.append(f"{chapter}: cell {number} prints a Markdown table")
    assert not raw, "\n".join(raw)


# A call that draws: a figure made, plotted on, or glued.
_DRAWS = re.compile(
    r"\bbook_figure\(|\bglue_figure\(|\bplt\.|\.subplots\(|\b(?:ax|axes|fig|top|bottom)\w*(?:\[[^\]]*\])?\."
    r"(?:plot|step|imshow|loglog|semilogy|semilogx|scatter|bar|barh|hist|fill_between|axhline|axvline|"
    r"colorbar|legend|set|set_\w+|text|annotate|grid)\("
)
_SCAFFOLD = re.compile(
    r"^\s*(?:with course_style\(\):|for .* in .*:|import |from \S+ import |\)|\]|\}|#)"
)


def _computes(source: str) -> bool:
    """Whether a cell does anything but draw: a statement that is neither a drawing
    call, nor the scaffolding around one, nor a continuation line."""
    depth = 0
    for line in source.splitlines():
        stripped = line.strip()
        starts_statement = depth == 0
        depth += sum(stripped.count(c) for c in "([{") - sum(stripped.count(c) for c in ")]}")
        if not stripped or not starts_statement or _SCAFFOLD.match(line) or _DRAWS.search(line):
            continue
        if re.match(r"^\s*\w[\w, ]*=\s*(?:book_figure|plt\.subplots)\(", line):
            continue
        return True
    return False


def test_no_visible_code_cell_draws():
    """Drawing code is folded (``hide-input``); the computation it draws stays visible in
    a cell of its own. A visible cell that draws fails, whether it only draws or draws
    beside its computation (then the computation stays and the drawing moves)."""
    shown = []
    for chapter, number, cell, tags in chapter_cells():
        source = "".join(cell["source"])
        if tags & HIDDEN_INPUT or not _DRAWS.search(source):
            continue
        what = "draws beside its computation" if _computes(source) else "only draws"
        shown.append(f"{chapter}: cell {number} {what}")
    assert not shown, f"{len(shown)} visible code cells that draw (tag them hide-input):\n" + "\n".join(shown)


def _is_explorable(output: dict) -> bool:
    """An explorable figure (``pe_lib.course.display.explorable``): a figure, not a value,
    though a chapter shows it as a cell's last expression."""
    return "".join(output["data"].get("text/html", "")).startswith('<div class="explorable"')


def test_no_bare_value_is_shown():
    """A cell whose last line is a bare expression shows its repr (``[1.0, 0.01]``) with
    nothing to say what it is. Values the reader should see are printed with words;
    a value a cell only glues stays in a cell the page removes. An explorable figure
    is shown that way on purpose."""
    bare = [
        f"{chapter}: cell {number} shows {''.join(output['data'].get('text/plain', ''))[:40]!r}"
        for chapter, number, cell, tags in chapter_cells()
        if not tags & HIDDEN_OUTPUT
        for output in cell.get("outputs", [])
        if output.get("output_type") == "execute_result" and not _is_explorable(output)
    ]
    assert not bare, f"{len(bare)} cells show a bare value:\n" + "\n".join(bare)


# --- Explorable figures, on the chapters that carry them -----------------------

#: Each page with explorable figures (``pe_lib.course.display.explorable`` and
#: ``explorable_figures``) and their ids, in
#: page order. A figure that goes missing from its chapter, or one added without
#: being listed here, fails the tests below.
EXPLORABLE_PAGES = {
    "sinusoidal_encoding": ["explorable-clocks"],
    "properties": ["explorable-dot-product"],
    "rope": ["explorable-rope"],
    "choosing_the_base": ["explorable-wavelengths"],
    "context_extension": ["explorable-context-extension"],
}
#: How many sliders each figure has.
EXPLORABLE_SLIDERS = {"explorable-clocks": 1, "explorable-wavelengths": 2, "explorable-dot-product": 2,
                      "explorable-rope": 2, "explorable-context-extension": 1}
EXPLORABLE_SCREENSHOTS = SCREENSHOTS / "explorable"
EXPLORABLE_MARKER = '<div class="explorable"'


# What a reader sees of each figure and its static drawing: on screen the figure,
# with the drawing's caption under it; without scripts, or on paper, the drawing.
_EXPLORABLE_SHOWN = """() => ({
  figures: Array.from(document.querySelectorAll('div.explorable')).map(e => e.getClientRects().length > 0),
  drawings: Array.from(document.querySelectorAll('figure.explorable-fallback img')).map(
    i => i.getClientRects().length > 0 && i.complete && i.naturalWidth > 0 && i.alt.length > 20),
  captions: Array.from(document.querySelectorAll('figure.explorable-fallback figcaption')).map(
    c => c.offsetHeight > 0),
})"""
_SCROLLS_SIDEWAYS = "() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1"


def explore(page, chapter: str, width: int) -> dict:
    """Move every slider of the explorable figures on ``page``, a chapter open at
    ``width``, as a reader would: with the mouse at 1280 px, with a finger at 390 px,
    and with the keyboard at both.

    ``tests/explorable_driver.py`` checks each drawing against pe_lib before and
    after each move and saves screenshots of both under ``_build/screenshots/explorable``.
    Returns the figures found, the problems, the moves made, whether the page then
    scrolls sideways, and what shows on screen and on paper."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    expected = EXPLORABLE_PAGES[chapter]
    EXPLORABLE_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    drawn = f"() => document.querySelectorAll('.explorable.explorable-ready').length === {len(expected)}"
    try:
        page.wait_for_function(drawn, timeout=30_000)
    except PlaywrightTimeout:
        return {"ids": figure_ids(page), "problems": ["the figures' scripts did not run in 30 s"],
                "measured": {}, "wide": None, "on_screen": None, "on_paper": None}
    ids = figure_ids(page)
    problems, measured = move_every_slider(page, touch=width < 600, screenshots=EXPLORABLE_SCREENSHOTS,
                                           tag=str(width))
    wide = page.evaluate(_SCROLLS_SIDEWAYS)
    on_screen = page.evaluate(_EXPLORABLE_SHOWN)
    page.emulate_media(media="print")
    on_paper = page.evaluate(_EXPLORABLE_SHOWN)
    page.emulate_media(media="screen")
    return {"ids": ids, "problems": problems, "measured": measured, "wide": wide,
            "on_screen": on_screen, "on_paper": on_paper}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("chapter", list(EXPLORABLE_PAGES))
def test_every_slider_of_a_chapter_moves_its_figure_to_what_pe_lib_computes(readings, chapter, width):
    """On the chapter's own page, opened from disk with the network off, every slider
    is dragged and its drawing checked against pe_lib (:func:`explore`); the page
    reports no error and does not scroll sideways; the static drawing gives way to
    the figure and its caption stays; printed, the drawing comes back."""
    reading = readings[(chapter, width)]
    explored = reading["explorable"]
    expected = EXPLORABLE_PAGES[chapter]
    assert explored["ids"] == expected
    assert not reading["problems"] + explored["problems"], "\n".join(reading["problems"] + explored["problems"])
    assert len(explored["measured"]) == sum(EXPLORABLE_SLIDERS[name] for name in expected), explored["measured"]
    assert not explored["wide"], f"{chapter} scrolls sideways at {width} px once its sliders have moved"
    count = len(expected)
    assert explored["on_screen"] == {"figures": [True] * count, "drawings": [False] * count, "captions": [True] * count}
    assert explored["on_paper"] == {"figures": [False] * count, "drawings": [True] * count, "captions": [True] * count}


@pytest.mark.parametrize("chapter", list(EXPLORABLE_PAGES))
def test_without_javascript_the_static_drawing_shows(book, browser, chapter):
    page, problems = open_page(browser, (book / "chapters" / f"{chapter}.html").as_uri(), 390,
                               java_script_enabled=False)
    shown = page.evaluate(_EXPLORABLE_SHOWN)
    page.context.close()
    # The theme preloads its scripts, and the browser refuses them with JavaScript off.
    problems = [p for p in problems if not (p.startswith("failed to load") and ".js?" in p)]
    assert not problems, "\n".join(problems)
    count = len(EXPLORABLE_PAGES[chapter])
    assert shown == {"figures": [False] * count, "drawings": [True] * count, "captions": [True] * count}


def test_no_plotting_library_is_loaded(book):
    """The figures need no plotting library in the browser: each carries its drawing
    (SVG) and a short script of its own, so no page loads plotly.js or any other, and
    no page fetches anything from a network."""
    carrying = {}
    for page in pages(book):
        html = page.read_text(encoding="utf-8")
        assert "cdn.plot.ly" not in html and "Plotly." not in html, page.name
        sources = re.findall(r'<script[^>]*\ssrc="([^"]*(?:plotly|bokeh|vega)[^"]*)"', html)
        assert not sources, f"{page.name} loads {sources}"
        if html.count(EXPLORABLE_MARKER):
            carrying[page.stem] = html.count(EXPLORABLE_MARKER)
    assert not list(book.rglob("plotly*.js"))
    assert carrying == {chapter: len(ids) for chapter, ids in EXPLORABLE_PAGES.items()}


# --- Every reader: axe-core's WCAG 2.1 A and AA rules, and the Tab order ---------

#: axe-core, installed from npm by ``python3 tasks.py test`` (``ensure_axe``).
AXE = ROOT / ".axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: Also run: a visible label that is not the start of the control's accessible
#: name (WCAG 2.5.3); axe counts it as experimental, and readers of a screen
#: reader and of voice control meet it all the same.
AXE_EXTRA_RULES = ["label-content-name-mismatch"]
#: What fails the test.
AXE_FAILING = {"serious", "critical"}

# preload: false. axe would fetch every style sheet again by XMLHttpRequest (for
# its CSSOM rule, css-orientation-lock), which a page opened from disk refuses
# (CORS): the rule could not run either way, and the refusals would land among
# the page's own console errors.
_RUN_AXE = """async ([tags, extra]) => {
  const rules = Object.fromEntries(extra.map(r => [r, {enabled: true}]));
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, rules, resultTypes: ['violations'],
                                          preload: false});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5), count: v.nodes.length}));
}"""


@pytest.fixture(scope="module")
def axe_results(visits) -> dict:
    """axe-core's violations on every page of the book at both widths, as loaded."""
    return {key: visit["axe"] for key, visit in visits.items() if visit["axe"] is not None}


def test_axe_finds_no_serious_or_critical_violation_on_any_page(axe_results):
    """axe-core 4.14 with the WCAG 2.1 A and AA rules, on every page at 1280 and 390 px.
    Moderate and minor findings are reported by ``python3 tasks.py bench`` readers, not failed."""
    failing = [
        f"{name} at {width} px: {v['impact']} {v['id']} ({v['help']}) on {v['count']} elements, "
        f"e.g. {', '.join(v['nodes'])}"
        for (name, width), violations in axe_results.items()
        for v in violations if v["impact"] in AXE_FAILING
    ]
    assert len(axe_results) >= 2 * (len(EXPLORABLE_PAGES) + 10)
    assert not failing, f"{len(failing)} serious or critical violations:\n" + "\n".join(failing)


_TAB_STOPS = """() => {
  const stops = Array.from(document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex]')).filter(
    e => !e.disabled && e.tabIndex >= 0 && e.getClientRects().length > 0);
  const formulas = stops.filter(e => e.closest('mjx-container'));
  return {all: stops.length, formulas: formulas.length,
          still: formulas.filter(e => e.scrollWidth <= e.clientWidth + 1).length};
}"""


@pytest.mark.parametrize("chapter", ["sinusoidal_encoding", "properties"])
def test_formulas_are_not_tab_stops(book, browser, chapter):
    """A keyboard reader tabs from link to control, not through every formula; MathJax's
    explorer, which a reader can turn on from its menu, is what reads a formula aloud.
    Only a formula wider than its column, which scrolls, is a Tab stop, so that a
    keyboard can scroll it (``_static/scrollable_formulas.js``)."""
    page, problems = open_page(browser, (book / "chapters" / f"{chapter}.html").as_uri())
    page.wait_for_timeout(300)
    stops = page.evaluate(_TAB_STOPS)
    formulas = page.evaluate("() => document.querySelectorAll('mjx-container').length")
    page.context.close()
    assert not problems
    assert formulas > 20 and stops["still"] == 0, stops


_TOGGLE_NAMES = """() => Array.from(document.querySelectorAll('button.toggle-button')).map(
  b => [b.getAttribute('aria-label'), b.closest('.admonition').querySelector('.admonition-title').textContent.trim()])"""


def test_each_fold_is_named_after_its_title(book, browser):
    """A screen reader lists a page's buttons by name: sixteen called "Toggle hidden content"
    cannot be told apart, nor sixteen called "The verdict" (``_static/button_labels.js``)."""
    page, problems = open_page(browser, (book / "chapters" / "misconceptions.html").as_uri())
    page.wait_for_timeout(300)
    names = page.evaluate(_TOGGLE_NAMES)
    page.context.close()
    labels = [label for label, _ in names]
    assert not problems
    assert len(names) > 10, names
    assert all(label.startswith(f"Show or hide: {title} (") for label, title in names), names[:5]
    assert len(set(labels)) == len(labels), sorted(labels)


_COPY_NAMES = """() => Array.from(document.querySelectorAll('button.copybtn')).map(
  b => b.getAttribute('aria-label'))"""


def test_each_copy_button_is_named_after_its_code(book, browser):
    """A copy button's "Copy" is a tooltip a screen reader does not read; each
    gets a name of its own, with its section (``_static/button_labels.js``)."""
    page, problems = open_page(browser, (book / "chapters" / "rope_in_code.html").as_uri())
    page.wait_for_timeout(300)
    labels = page.evaluate(_COPY_NAMES)
    page.context.close()
    assert not problems
    assert len(labels) > 5, labels
    assert all(label and label.startswith("Copy code block ") and "(" in label for label in labels), labels[:5]
    assert len(set(labels)) == len(labels), labels


_FOCUSED_TOGGLE_OUTLINE = """() => {
  const focused = document.activeElement;
  if (!focused || !focused.matches('button.toggle-button')) return null;
  const style = getComputedStyle(focused);
  return [style.outlineStyle, parseFloat(style.outlineWidth)];
}"""


def test_a_fold_reached_by_tab_shows_where_the_focus_is(book, browser):
    """sphinx-togglebutton draws its buttons without an outline; a keyboard reader tabbing
    to a solution must see which one Enter will open (WCAG 2.4.7, ``_static/course.css``)."""
    page, problems = open_page(browser, (book / "chapters" / "rope.html").as_uri())
    page.wait_for_timeout(300)
    outline = None
    for _ in range(400):
        page.keyboard.press("Tab")
        outline = page.evaluate(_FOCUSED_TOGGLE_OUTLINE)
        if outline is not None:
            break
    page.context.close()
    assert not problems
    assert outline is not None, "no fold reached by Tab"
    style, width = outline
    assert style != "none" and width >= 2, outline
