"""What a reader downloads for each page of the built book, beside its targets.

Every page of a built book (``python3 tasks.py book``, or ``--html DIR``) is
opened in headless Chromium from disk, as a reader would open it, and every
file the browser reads for it is counted: the page, its scripts and style
sheets, the scripts those load (MathJax's parts), fonts and images. For each
page it prints the bytes uncompressed and gzipped (as a web server would send
them), and its own HTML. Then the largest shared files, and each explorable
figure's share of its page.

Targets: no page above 5 MB uncompressed; the median page at or below 3.5 MB;
no page's own HTML above 400 kB.

Run it with ``python3 tasks.py bench page_weight``; ``--json FILE`` also writes
the numbers. Without Chromium it says so and counts only what each page's HTML
names (scripts, style sheets, images).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parents[1]
PAGE_TARGET = 5_000_000
MEDIAN_TARGET = 3_500_000
HTML_TARGET = 400_000
MARKER = '<div class="explorable"'
BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]


class _Loads(HTMLParser):
    """The local files a page's HTML names: scripts, style sheets, icons and images."""

    def __init__(self):
        super().__init__()
        self.files = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        source = {"script": "src", "img": "src", "link": "href"}.get(tag)
        if source and attributes.get(source) and (tag != "link" or attributes.get("rel") in {"stylesheet", "icon"}):
            self.files.append(attributes[source])


def named_files(page: Path) -> set[Path]:
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


def read_in_browser(pages: list[Path]) -> dict[Path, set[Path]] | None:
    """Each page and every local file Chromium reads to show it (None without Chromium)."""
    executable = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    if executable is None:
        return None
    from playwright.sync_api import sync_playwright

    found = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--headless=new", "--no-sandbox"])
        for page_path in pages:
            if 'http-equiv="Refresh"' in page_path.read_text(encoding="utf-8")[:500]:
                found[page_path] = set()   # a redirect to another page, counted there
                continue
            context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
            page = context.new_page()
            files = set()
            page.on("request", lambda r: files.add(Path(unquote(urlparse(r.url).path)).resolve())
                    if r.url.startswith("file:") else None)
            page.goto(page_path.as_uri(), wait_until="load")
            # MathJax loads its parts and fonts once it starts typesetting.
            page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.wait_for_timeout(300)
            context.close()
            found[page_path] = {path for path in files if path.is_file() and path != page_path.resolve()}
        browser.close()
    return found


@lru_cache(maxsize=None)
def sizes(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, 9))


def kilobytes(size: float) -> str:
    return f"{size / 1000:9.1f} kB"


def verdict(ok: bool) -> str:
    return "ok" if ok else "OVER"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="a built book")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    html = args.html
    if not (html / "index.html").is_file():
        raise SystemExit(f"no built book at {html}: build it with `python3 tasks.py book`")
    pages = sorted(p for p in html.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts
                   and "_build" not in p.relative_to(html).parts)
    loads = read_in_browser(pages)
    how = "every file Chromium reads to show it"
    if loads is None:
        loads = {page: named_files(page) for page in pages}
        how = "the files its HTML names (no Chromium found: fonts and MathJax's parts are not counted)"
    print(f"Each page of {html}: its own HTML, and with {how}.")
    print(f"{'page':<36}{'its HTML':>12}{'everything':>14}{'gzipped':>13}   targets: HTML <= "
          f"{HTML_TARGET / 1000:g} kB, everything <= {PAGE_TARGET / 1e6:g} MB")
    rows = []
    for page in pages:
        own, own_gz = sizes(page)
        total = own + sum(sizes(path)[0] for path in loads[page])
        total_gz = own_gz + sum(sizes(path)[1] for path in loads[page])
        figures = page.read_text(encoding="utf-8").count(MARKER)
        rows.append({"page": str(page.relative_to(html)), "html": own, "bytes": total, "gzipped": total_gz,
                     "figures": figures})
        ok = own <= HTML_TARGET and total <= PAGE_TARGET
        print(f"  {rows[-1]['page']:<34}{kilobytes(own)}{kilobytes(total):>14}{kilobytes(total_gz):>13}   "
              f"{verdict(ok)}{'   (' + str(figures) + ' explorable)' if figures else ''}")
    median = statistics.median(row["bytes"] for row in rows)
    largest = max(rows, key=lambda row: row["bytes"])
    print(f"\nmedian page {kilobytes(median).strip()} (target <= {MEDIAN_TARGET / 1e6:g} MB): "
          f"{verdict(median <= MEDIAN_TARGET)}")
    print(f"largest page {largest['page']}, {kilobytes(largest['bytes']).strip()} "
          f"(target <= {PAGE_TARGET / 1e6:g} MB): {verdict(largest['bytes'] <= PAGE_TARGET)}")
    largest_html = max(rows, key=lambda row: row["html"])
    print(f"largest HTML {largest_html['page']}, {kilobytes(largest_html['html']).strip()} "
          f"(target <= {HTML_TARGET / 1000:g} kB): {verdict(largest_html['html'] <= HTML_TARGET)}")
    shared = {}
    for files in loads.values():
        for path in files:
            shared[path] = shared.get(path, 0) + 1
    print("\nthe largest files pages share (bytes, gzipped, pages that load it):")
    for path in sorted(shared, key=lambda p: -sizes(p)[0])[:8]:
        name = str(path.relative_to(html.resolve())) if path.is_relative_to(html.resolve()) else str(path)
        print(f"  {name:<60}{kilobytes(sizes(path)[0])}{kilobytes(sizes(path)[1])}{shared[path]:>5}")
    book = sum(sizes(page)[0] for page in pages) + sum(sizes(path)[0] for path in shared)
    print(f"\nthe book's {len(pages)} pages and the files they load, each counted once: {kilobytes(book).strip()}")
    if args.json:
        args.json.write_text(json.dumps({"pages": rows, "median": median}, indent=1))


if __name__ == "__main__":
    main()
