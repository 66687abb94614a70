"""Code a chapter shows from the library starts at its ``def``: no body without its inputs.

A ``{literalinclude}`` of a function (``:pyobject:``) shows the signature, so that
every name the body reads is on the page. With ``:lines:`` it may leave out the
docstring and argument checks (:func:`is_check`), nothing else.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from pe_lib.course.display.lab_view import _LITERAL_INCLUDE, _OPTION
from pe_lib.course.display.reading_time import _line_numbers

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTERS.glob("*.ipynb"))

#: Calls that only check an argument: they return it, or raise.
_CHECK_CALL = re.compile(r"^_?(require|check)")


def includes(notebook: Path):
    """Each ``{literalinclude}`` of a Markdown cell: (cell index, file, options)."""
    cells = json.loads(notebook.read_text())["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        for match in _LITERAL_INCLUDE.finditer("".join(cell["source"])):
            options = {m["name"]: m["value"].strip() for m in _OPTION.finditer(match["options"])}
            yield index, (notebook.parent / match["path"]).resolve(), options


def function_node(path: Path, dotted: str):
    scope = ast.parse(path.read_text(encoding="utf-8")).body
    node = None
    for part in dotted.split("."):
        node = next(n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part)
        scope = node.body
    return node


def is_check(statement: ast.stmt, parameters: set[str]) -> bool:
    """An argument check: ``if ...: raise``, a call such as ``_check(...)`` or
    ``require_multiple(...)``, or a parameter rebound to a checked or converted
    copy of itself (``x = require_int("x", x)``, ``x = np.asarray(x)``). A
    statement that names a new variable is not one: the body reads the name."""
    if isinstance(statement, ast.If):
        return all(isinstance(s, ast.Raise) for s in statement.body) and not statement.orelse
    if isinstance(statement, ast.For):  # a check of each item
        return all(is_check(s, parameters) for s in statement.body) and not statement.orelse
    value = getattr(statement, "value", None)
    if not isinstance(statement, (ast.Assign, ast.Expr)) or not isinstance(value, ast.Call):
        return False
    called = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
    if isinstance(statement, ast.Expr):
        return bool(_CHECK_CALL.match(called))
    if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return False
    name = statement.targets[0].id
    reads = {node.id for node in ast.walk(value) if isinstance(node, ast.Name)}
    return name in parameters and name in reads


def omissible_lines(node: ast.FunctionDef) -> set[int]:
    """Lines of ``node`` (1-based within it) that may be left off the page: its
    docstring and its argument checks."""
    arguments = node.args
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    lines = set()

    def visit(body: list[ast.stmt], top: bool) -> None:
        for index, statement in enumerate(body):
            docstring = (top and index == 0 and isinstance(statement, ast.Expr)
                         and isinstance(statement.value, ast.Constant))
            if docstring or is_check(statement, parameters):
                lines.update(range(statement.lineno, statement.end_lineno + 1))
            else:  # a check may sit inside another statement
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(statement, field, None)
                    if isinstance(inner, list) and not isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                        visit(inner, top=False)

    visit(node.body, top=True)
    return {line - node.lineno + 1 for line in lines}


def expected_lines(node: ast.FunctionDef) -> str | None:
    """The ``:lines:`` that show the signature and leave out the docstring and every
    argument check, or None if there is nothing to leave out."""
    count = node.end_lineno - node.lineno + 1
    dropped = omissible_lines(node)
    if not dropped:
        return None
    kept = [line for line in range(1, count + 1) if line not in dropped]
    ranges, start = [], kept[0]
    for previous, line in zip(kept, [*kept[1:], None]):
        if line != previous + 1:
            ranges.append(f"{start}-{previous}" if previous != start else f"{start}")
            start = line
    last = ranges[-1]
    ranges[-1] = f"{last.split('-')[0]}-" if kept[-1] == count else last
    return ",".join(ranges)


def chosen(spec: str, count: int) -> list[int]:
    """The 1-based lines that a Sphinx ``:lines:`` option such as ``1-3,9-`` keeps of ``count``."""
    return [index + 1 for index in _line_numbers(spec, count)]


def test_expected_lines_drop_the_docstring_and_the_checks():
    source = ('def f(a,\n      b):\n    """Doc.\n\n    More."""\n    a = require_int("a", a)\n'
              '    if b < 0:\n        raise ValueError("b")\n    total = a + b\n    b = np.asarray(b)\n'
              '    return total + b\n')
    node = ast.parse(source).body[0]
    assert expected_lines(node) == "1-2,9,11-"
    assert chosen("1-2,9,11-", 11) == [1, 2, 9, 11]
    assert expected_lines(ast.parse("def g(x):\n    return x\n").body[0]) is None
    # A check that makes a new name stays on the page: the body reads the name.
    node = ast.parse('def h(m):\n    entry = require_method("m", m)\n    return entry\n').body[0]
    assert expected_lines(node) is None
    assert chosen("1,3-", 5) == chosen("1-1,3-", 5) == [1, 3, 4, 5]
    # Checks inside other statements, and a loop that checks each item, may go too.
    source = ('def k(xs, o):\n    if o:\n        if xs:\n            raise ValueError\n        y = 1\n'
              '    for x in xs:\n        if x < 0:\n            raise ValueError\n    return y\n')
    assert omissible_lines(ast.parse(source).body[0]) == {3, 4, 6, 7, 8}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_shown_functions_start_at_their_def(notebook):
    wrong = []
    for index, path, options in includes(notebook):
        if "pyobject" not in options:
            continue
        node = function_node(path, options["pyobject"])
        text = path.read_text(encoding="utf-8").splitlines()[node.lineno - 1:node.end_lineno]
        blank = {number for number, line in enumerate(text, 1) if not line.strip()}
        if isinstance(node, ast.ClassDef):
            continue
        where = f"cell {index}: {options['pyobject']}"
        if "start-at" in options or "start-after" in options:
            wrong.append(f"{where} starts inside the body ({'start-at' if 'start-at' in options else 'start-after'})")
            continue
        if "lines" in options:
            count = node.end_lineno - node.lineno + 1
            shown = chosen(options["lines"], count)
            signature = range(1, node.body[0].lineno - node.lineno + 1)
            left_out = set(range(1, count + 1)) - set(shown) - omissible_lines(node) - blank
            if not set(signature) <= set(shown) or left_out or shown != sorted(set(shown)):
                wrong.append(f"{where} shows :lines: {options['lines']}, which leaves out "
                             f"{'its signature' if not set(signature) <= set(shown) else sorted(left_out)}; "
                             f"only the docstring and argument checks may go: :lines: {expected_lines(node)}")
    assert not wrong, "\n".join(wrong)
