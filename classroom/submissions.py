"""A folder of submissions: who handed in what, their code, and what it imports.

>>> cells = [(1, "import numpy as np"), (2, "from pe_lib import angle_rates")]
>>> forbidden_uses(cells, ("pe_lib",))
['cell 2 imports pe_lib']
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import nbformat

from classroom.masters import ClassroomError

#: Lines that only drive otter in the student notebook; the grader skips them.
_OTTER_LINE = re.compile(r"^\s*(#.*|import otter\s*|grader\s*=\s*otter\.Notebook\(.*\)\s*|"
                         r"grader\.(check|check_all|export)\(.*\)\s*|)$")


@dataclasses.dataclass(frozen=True)
class Submission:
    """One student's entry in a submissions folder.

    Attributes:
        student: the file name without ``.ipynb``, or the folder name.
        path: the notebook to grade, or ``None`` if the entry holds no single notebook.
        problem: why it cannot be graded, if ``path`` is ``None``.
    """

    student: str
    path: Path | None
    problem: str = ""


def find_submissions(folder: Path) -> list[Submission]:
    """One :class:`Submission` per file or folder in ``folder`` (hidden names are skipped)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ClassroomError(f"the submissions folder {str(folder)!r} does not exist or is not a folder")
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir():
            notebooks = sorted(
                path for path in entry.rglob("*.ipynb")
                if ".ipynb_checkpoints" not in path.parts and not path.name.startswith(".")
                and not path.is_symlink()
            )
            if len(notebooks) == 1:
                found.append(Submission(entry.name, notebooks[0]))
            else:
                found.append(Submission(entry.name, None,
                                        f"not a notebook: the folder holds {len(notebooks)} notebooks, not one"))
        elif entry.is_file():
            found.append(Submission(entry.stem if entry.suffix == ".ipynb" else entry.name, entry))
    return found


def read_submission(path: Path) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook at ``path``, or ``None`` and the reason it is not a readable notebook."""
    path = Path(path)
    if path.suffix != ".ipynb":
        return None, f"not a notebook: {path.name[:60]} is not an .ipynb file"
    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # a broken file is a reason to report, never a crash
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, f"not a notebook: {message[:80]}"
    return notebook, ""


def assignment_name(notebook: nbformat.NotebookNode) -> str | None:
    """The assignment a student notebook belongs to, as ``otter assign`` recorded it."""
    otter = notebook.metadata.get("otter", {})
    return otter.get("assignment_name") if isinstance(otter, dict) else None


def _python(source: str) -> str:
    """A cell's source with IPython's magics turned into plain calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:
        return source


def code_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(number, source)`` of each code cell to run, numbered among all cells from 1.

    Cells that only drive otter (``grader.check("q1")``) are left out.
    """
    cells = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        if all(_OTTER_LINE.match(line) for line in cell.source.splitlines()):
            continue
        cells.append((number, _python(cell.source)))
    return cells


def _names(node: ast.AST) -> str:
    """``a.b.c`` for an attribute chain, ``""`` for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return ""


def forbidden_uses(cells: list[tuple[int, str]], forbidden: tuple[str, ...]) -> list[str]:
    """What the code imports or calls from a forbidden module, read from its syntax tree.

    ``forbidden`` holds module names such as ``"pe_lib"`` or ``"pe_lib.layers"``.
    Imports, ``from`` imports, attribute chains (``pe_lib.layers.X``),
    ``__import__`` and ``importlib.import_module`` are found; a dynamic import
    whose name is not a literal is reported as such.
    """
    if not forbidden:
        return []

    def hits(module: str) -> bool:
        return any(module == name or module.startswith(name + ".") for name in forbidden)

    found = []
    for number, source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            used = []
            if isinstance(node, ast.Import):
                used = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                used = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Attribute):
                used = [_names(node)]
            elif isinstance(node, ast.Call):
                called = _names(node.func)
                if called.split(".")[-1] in ("__import__", "import_module"):
                    argument = node.args[0] if node.args else None
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                        used = [argument.value]
                    else:
                        found.append(f"cell {number} imports a module by a computed name")
            for module in used:
                if module and hits(module):
                    name = next(n for n in forbidden if module == n or module.startswith(n + "."))
                    found.append(f"cell {number} {'imports' if not isinstance(node, ast.Attribute) else 'uses'} {name}")
                    break
    return list(dict.fromkeys(found))
