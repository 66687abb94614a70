"""No internal label reaches a reader: an equation's label (``eq-bey-shaw``)
is how the source refers to it, not what the page shows. A docstring or a
comment that names an equation says it in words ("the score with a learned
vector per offset"), since the API pages print pe_lib's docstrings and a
chapter's visible code shows its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chapter_text import chapter_markdown

ROOT = Path(__file__).resolve().parents[1]
#: A label as the chapters write them: eq-, fig-, tab- or chapter- and a name.
LABEL = re.compile(r"(?<![\w{`-])(?:eq|fig|tab)-[a-z0-9]+(?:-[a-z0-9]+)+")
#: Cells whose source the page does not show.
REMOVED = {"remove-cell", "remove-input"}
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


def labels_in_python(source: str) -> list[str]:
    """Labels in the comments and strings of Python ``source``, not in code
    that passes a label to a function (``glue_figure("per-fig-wave", fig)``)."""
    found = []
    for line in source.splitlines():
        comment = line.partition("#")[2] if "#" in line else ""
        found += LABEL.findall(comment)
    for docstring in re.findall(r'"""(.*?)"""', source, flags=re.S):
        # an example of MyST markup may show a label where the markup takes one
        markup = re.sub(r":(?:label|name):\s*[\w-]+|\{numref\}`[^`]*`", " ", docstring)
        found += LABEL.findall(markup)
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_no_visible_code_cell_names_a_label(chapter):
    cells = json.loads(chapter.read_text(encoding="utf-8"))["cells"]
    shown = [(index, labels_in_python("".join(cell["source"]))) for index, cell in enumerate(cells)
             if cell["cell_type"] == "code" and not REMOVED & set(cell["metadata"].get("tags", []))]
    named = [(index, found) for index, found in shown if found]
    assert not named, f"{chapter.name}: visible cells name labels (say it in words): {named}"


def test_no_docstring_or_comment_of_pe_lib_names_a_label():
    named = {str(path.relative_to(ROOT)): found for path in sorted((ROOT / "pe_lib").rglob("*.py"))
             if (found := labels_in_python(path.read_text(encoding="utf-8")))}
    assert not named, f"pe_lib names labels in its docstrings or comments (say it in words): {named}"


def test_the_check_sees_a_label_in_a_docstring_and_not_a_figure_name():
    assert labels_in_python('def f():\n    """Scores of eq-bey-shaw."""\n') == ["eq-bey-shaw"]
    assert not labels_in_python('glue_figure("per-fig-wave", fig)  # drawn from sines\n')
    assert not labels_in_python('def f():\n    """Markup:\n\n    :label: fig-a-line\n    """\n')


#: A target label above a heading: ``(label)=`` then ``## Heading``.
TARGET = re.compile(r"^\(([\w-]+)\)=\s*\n(#+ .*)$", re.M)
#: A reference that takes its text from the target's heading.
BARE_REF = re.compile(r"\{ref\}`([\w-]+)`")


def pages_markdown() -> dict[str, str]:
    """Each page's Markdown: the chapters' Markdown cells and the book's .md files."""
    pages = {path.name: chapter_markdown(path) for path in CHAPTERS}
    pages.update({path.name: path.read_text(encoding="utf-8")
                  for path in [ROOT / "intro.md", *sorted((ROOT / "chapters").glob("*.md"))]})
    return pages


def bare_refs_to_math_headings(pages: dict[str, str]) -> list[tuple[str, str]]:
    """(page, label) for each ``{ref}`label` `` whose heading holds maths: Sphinx
    writes a heading's maths as raw LaTeX in the link, so such a link needs its
    own text (``{ref}`the rotation <label>` ``)."""
    headings = {label: heading for text in pages.values() for label, heading in TARGET.findall(text)}
    return [(page, label) for page, text in pages.items() for label in BARE_REF.findall(text)
            if "$" in headings.get(label, "")]


def test_no_link_prints_a_heading_s_raw_latex():
    found = bare_refs_to_math_headings(pages_markdown())
    assert not found, f"links that would print raw LaTeX (give them their own text): {found}"


def test_the_check_sees_a_bare_link_to_a_heading_with_maths():
    pages = {"a": "(moves)=\n## Moving by $\\Delta$\n", "b": "see {ref}`moves` and {ref}`the turn <moves>`"}
    assert bare_refs_to_math_headings(pages) == [("b", "moves")]
