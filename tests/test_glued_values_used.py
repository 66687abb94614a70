"""Every value a chapter glues by name is shown on its page: a glued number
the prose no longer quotes is a check without a claim, and reads as one to
whoever next edits the chapter.

The names are read from the glue calls in the code cells. A literal name
(``"wex_gap"``) must be shown itself. A loop that glues a table under built
names (``f"ed_exact_{method}_{length}"``) is a family: the page may quote any
of its members, but at least one. A page uses a name when its Markdown names
it in a glue or eval role or directive.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from chapter_text import cell_sources, chapter_markdown

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
#: ``{glue}`name` ``, ``{glue:text}`name:.2f` ``, ``{glue:figure} name``,
#: ``{eval}`name` `` and the like, as myst-nb reads them.
GLUE_USE = re.compile(r"\{(?:glue(?::\w+)?|eval)\}(?:`|\s+)([\w-]+)")


def glue_names_given(source: str) -> list[ast.expr]:
    """The first argument, the name, of every ``glue``, ``glue_number`` or ``glue_figure`` call."""
    return [node.args[0] for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and getattr(node.func, "id", "").startswith("glue") and node.args]


def glued_names(source: str) -> set[str]:
    """The literal names passed to the glue calls.

    >>> sorted(glued_names('glue_number("a", 1, "count")\\nfor m in ms: glue(f"b_{m}", m)'))
    ['a']
    """
    return {name.value for name in glue_names_given(source)
            if isinstance(name, ast.Constant) and isinstance(name.value, str)}


def glued_families(source: str) -> set[str]:
    """Patterns for the names built by f-strings in glue calls, each field a run of name characters.

    >>> glued_families('for m in ms: glue(f"b_{m}_low", m)') == {r"b_[\\w.-]+_low"}
    True
    """
    return {"".join(re.escape(part.value) if isinstance(part, ast.Constant) else r"[\w.-]+"
                    for part in name.values)
            for name in glue_names_given(source) if isinstance(name, ast.JoinedStr)}


def python_cells(chapter: Path) -> list[str]:
    """The chapter's code cells, less those that are shell or magic commands."""
    return [source for source in cell_sources(chapter, "code") if not source.lstrip().startswith(("%", "!"))]


def used_names(markdown: str) -> set[str]:
    """The names the page's Markdown shows.

    >>> sorted(used_names("{glue}`a`, {glue:text}`b_c:.2f`, {eval}`e`\\n```{glue:figure} fig-d\\n```"))
    ['a', 'b_c', 'e', 'fig-d']
    """
    return set(GLUE_USE.findall(markdown))


def test_glue_uses_are_read_in_every_form():
    text = "{glue}`a`, {glue:text}`b_c:.2f`, {eval}`e`\n```{glue:figure} fig-d\n:name: x\n```"
    assert used_names(text) == {"a", "b_c", "e", "fig-d"}
    assert glued_names('glue_number("a", 1)\nglue_figure("fig-d", f)\nglue(f"t_{n}", n)') == {"a", "fig-d"}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_every_value_glued_by_name_is_shown(chapter):
    glued = set().union(*(glued_names(source) for source in python_cells(chapter)))
    unused = sorted(glued - used_names(chapter_markdown(chapter)))
    assert not unused, f"{chapter.stem} glues values its page never shows: {unused}"


def test_a_family_is_recognised_by_its_members():
    family, = glued_families('glue_number(f"t_{n}_high", n)')
    assert re.fullmatch(family, "t_sinusoidal_high") and not re.fullmatch(family, "t_sinusoidal_low")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_every_family_of_glued_values_has_a_member_shown(chapter):
    used = used_names(chapter_markdown(chapter))
    families = set().union(*(glued_families(source) for source in python_cells(chapter)))
    unused = sorted(family for family in families if not any(re.fullmatch(family, name) for name in used))
    assert not unused, f"{chapter.stem} glues families of values its page never shows: {unused}"
