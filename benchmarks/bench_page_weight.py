"""What a reader downloads for the explorable figures, beside its targets.

Prints:
- plotly.js, the one script every explorable figure shares, served from the
  book's ``_static``: its size, and its size gzipped (as a web server would send it);
- each explorable figure in the chapters' committed outputs (or, before any
  chapter carries one, the four figures at their default settings): the bytes
  of its HTML, which holds the data of every slider step;
- with a built book (``python3 tasks.py book``, or ``--html DIR``): every page,
  its HTML and the files it loads (scripts, style sheets, images), a page with
  figures on a first visit (everything counted) and on a later one (the shared
  files already held), and the whole book with each shared file counted once.

Targets: each figure's HTML at most 150 kB; a page's own HTML at most 1 MB;
plotly.js counted once, loaded by the pages with figures and by no other page.

Run it with ``python3 tasks.py bench page_weight``.
"""

from __future__ import annotations

import argparse
import gzip
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import plotly

ROOT = Path(__file__).resolve().parents[1]
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
FIGURE_TARGET = 150_000
PAGE_TARGET = 1_000_000
MARKER = '<div class="explorable"'


class _Loads(HTMLParser):
    """The local files a page loads: scripts, style sheets, icons and images."""

    def __init__(self):
        super().__init__()
        self.files = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        source = {"script": "src", "img": "src", "link": "href"}.get(tag)
        if source and attributes.get(source) and (tag != "link" or attributes.get("rel") in {"stylesheet", "icon"}):
            self.files.append(attributes[source])


def loaded_files(page: Path) -> set[Path]:
    parser = _Loads()
    parser.feed(page.read_text(encoding="utf-8"))
    found = set()
    for reference in parser.files:
        url = urlparse(reference)
        if url.scheme or reference.startswith("//"):
            continue
        path = (page.parent / unquote(url.path)).resolve()
        if path.is_file():
            found.add(path)
    return found


def kilobytes(size: int) -> str:
    return f"{size / 1000:9.1f} kB"


def verdict(size: int, target: int) -> str:
    return "ok" if size <= target else "OVER"


def figures_in_chapters() -> list[tuple[str, str, int]]:
    """(chapter, figure id, bytes of its HTML) for every explorable output committed in a chapter."""
    found = []
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                html = output.get("data", {}).get("text/html", "")
                if html.startswith(MARKER):
                    name = html.split('class="plotly-graph-div"')[0].rsplit('id="', 1)[1].split('"')[0]
                    found.append((path.stem, name, len(html.encode())))
    return found


def default_figures() -> list[tuple[str, str, int]]:
    from pe_lib.course.display import explorable

    makers = (explorable.clock_hands, explorable.wavelength_series, explorable.dot_product_by_offset,
              explorable.rotary_query_key)
    return [("(defaults)", figure.name, len(figure.to_html().encode())) for figure in (make() for make in makers)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="a built book")
    args = parser.parse_args()

    script = PLOTLY_JS.read_bytes()
    print("plotly.js, shared by every explorable figure, counted once")
    print(f"  {PLOTLY_JS.name:<34}{kilobytes(len(script))}   gzipped {kilobytes(len(gzip.compress(script, 9)))}")

    figures = figures_in_chapters()
    if not figures:
        print("\nno chapter carries an explorable figure yet; the four figures at their default settings:")
        figures = default_figures()
    print(f"\n{'figure (its HTML: all its slider data)':<44}{'size':>12}   target <= {FIGURE_TARGET / 1000:g} kB")
    for chapter, name, size in figures:
        print(f"  {chapter + ': ' + name:<42}{kilobytes(size)}   {verdict(size, FIGURE_TARGET)}")

    html = args.html
    if not (html / "index.html").is_file():
        print(f"\nno built book at {html}: build it with `python3 tasks.py book` for the pages' weights")
        return
    pages = sorted(p for p in html.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)
    loads = {page: loaded_files(page) for page in pages}
    served = (html / "_static" / "explorable" / PLOTLY_JS.name).resolve()
    with_figures = [page for page in pages if MARKER in page.read_text(encoding="utf-8")]
    loading = [page for page in pages if served in loads[page]]
    print(f"\n{'page with figures':<34}{'its HTML':>12}{'first visit':>14}{'later visit':>14}   "
          f"target: HTML <= {PAGE_TARGET / 1000:g} kB")
    for page in with_figures:
        own = page.stat().st_size
        everything = own + sum(path.stat().st_size for path in loads[page])
        print(f"  {str(page.relative_to(html)):<32}{kilobytes(own)}{kilobytes(everything):>14}{kilobytes(own):>14}   "
              f"{verdict(own, PAGE_TARGET)}")
    shared = set().union(*loads.values()) if loads else set()
    book = sum(page.stat().st_size for page in pages) + sum(path.stat().st_size for path in shared)
    of_which = f", of which plotly.js {kilobytes(len(script)).strip()}" if served in shared else ""
    print(f"\nthe book's {len(pages)} pages and the files they load, each counted once: "
          f"{kilobytes(book).strip()}{of_which}")
    right = set(loading) == set(with_figures)
    print(f"plotly.js loaded by {len(loading)} pages, the {len(with_figures)} with figures and no other: "
          f"{'ok' if right else 'NOT met'}")


if __name__ == "__main__":
    main()
