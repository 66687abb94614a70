"""Print the whole book as one PDF: the single-page HTML book, printed by Chromium.

``python3 tasks.py pdf`` builds the book with Sphinx's ``singlehtml`` builder
(every chapter on one page, numbered as in the web book) and then runs this
script, which opens that page in headless Chromium from disk, with the network
off, and prints it with the book's print style sheet (``_static/course.css``):
no folded code or buttons, explorable figures as their static drawings,
captions kept with their figures, code wrapped to the page. Before printing it
adds a table of contents of the numbered chapters and their sections, linked
to them; the PDF also carries them as bookmarks, with page numbers in the
footer.

    .venv/bin/python _ext/book_pdf.py _build/singlehtml/index.html _build/pdf/book.pdf
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]

#: The table of contents: every numbered chapter ("2.") and section ("2.1."),
#: in order, linked to its heading, placed after the book's first heading.
_ADD_CONTENTS = r"""() => {
  const main = document.querySelector('article.bd-article') || document.querySelector('main');
  const entries = [];
  main.querySelectorAll('h1, h2, h3').forEach(heading => {
    const number = heading.querySelector('.section-number');
    const section = heading.closest('section[id]');
    if (!number || !section) return;
    const depth = number.textContent.trim().replace(/\.$/, '').split('.').length;
    if (depth > 2) return;
    const title = heading.textContent.replace(number.textContent, '').replace(/#$/, '').trim();
    entries.push({depth, number: number.textContent.trim(), title, id: section.id});
  });
  const nav = document.createElement('nav');
  nav.className = 'book-contents';
  nav.setAttribute('aria-label', 'Contents');
  nav.innerHTML = '<h2>Contents</h2>' + entries.map(e =>
    `<p class="book-contents-${e.depth}"><a href="#${e.id}">${e.number} ${e.title}</a></p>`).join('');
  const first = main.querySelector('h1');
  const after = first.closest('section') ? first.nextElementSibling : first;
  after.parentNode.insertBefore(nav, after);
  return entries.length;
}"""

_CONTENTS_STYLE = """
#jb-print-docs-body { display: none !important; }
nav.book-contents { break-after: page; }
nav.book-contents p { margin: 0.1rem 0; }
nav.book-contents p.book-contents-1 { font-weight: 600; margin-top: 0.5rem; }
nav.book-contents p.book-contents-2 { margin-left: 1.5rem; font-size: 0.9rem; }
nav.book-contents a { color: inherit; text-decoration: none; }
section > h1, section > h2 { break-before: auto; }
"""

_FOOTER = ('<div style="font-size: 8px; width: 100%; text-align: center; color: #555;">'
           '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def print_book(html: Path, pdf: Path) -> int:
    """Print ``html`` to ``pdf``; return how many chapters and sections the contents list."""
    from playwright.sync_api import sync_playwright

    executable = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    if executable is None:
        raise SystemExit("No Chromium found to print the book with: install it (Debian: apt-get install "
                         "chromium); python3 tasks.py pdf does this itself when run as root.")
    pdf.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--headless=new", "--no-sandbox"])
        page = browser.new_context(viewport={"width": 1000, "height": 1400}, offline=True).new_page()
        page.goto(html.resolve().as_uri(), wait_until="load")
        page.wait_for_function("() => !document.querySelector('script[src*=\"mathjax\"]')"
                               " || (window.MathJax && MathJax.startup && MathJax.startup.promise)")
        page.evaluate("() => window.MathJax && MathJax.startup.promise")
        # Every image loaded before printing, the last ones too.
        page.evaluate("() => Promise.all(Array.from(document.images).map(i => i.complete ? null :"
                      " new Promise(r => { i.onload = i.onerror = r; })))")
        entries = page.evaluate(_ADD_CONTENTS)
        page.add_style_tag(content=_CONTENTS_STYLE)
        page.emulate_media(media="print")
        page.pdf(path=str(pdf), format="A4", print_background=False, outline=True, tagged=True,
                 margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
                 display_header_footer=True, header_template="<span></span>", footer_template=_FOOTER)
        browser.close()
    return entries


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit(__doc__)
    entries = print_book(Path(argv[0]), Path(argv[1]))
    print(f"Wrote {argv[1]}: {entries} chapters and sections in its contents", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
