"""Honest notebook habits score what the answers earn: a catalogue.

Each notebook below is Assignment 1's solutions as a student might hand them
in: with IPython's cell and line magics (``%%time``, ``%%capture``,
``%timeit``, ``%matplotlib``, ``%autoreload``, ``?``, ``!``), with
``display``, with large prints, saved by a tool that strips outputs and
execution counts or adds its own metadata, with cells in another order,
with attachments, in every minor version of nbformat 4, or under a hidden
name. Each must earn full marks, as it does in Jupyter, where the magics run
through IPython's own shell.
"""

from __future__ import annotations

import copy
import json
import os

import nbformat
import pytest

from classroom import sandbox
from classroom.build import build_to_grade
from classroom.grade import grade_folder

pytestmark = pytest.mark.skipif(bool(sandbox.check()) and not os.environ.get("CI"), reason=sandbox.check() or "")

ASSIGNMENT = "encoding_matrix"
#: Markers of the solutions' answer cells: the rates, the matrix, the table, the closest rows.
RATES, MATRIX, TABLE, CLOSEST = "def angle_rates", "def encoding_matrix", "table = encoding_matrix", "def closest_rows"


def _with(notebook, changes: dict):
    """A copy of ``notebook`` whose cell holding each marker is passed through ``changes[marker]``."""
    notebook = copy.deepcopy(notebook)
    for marker, change in changes.items():
        (cell,) = [cell for cell in notebook.cells if cell.cell_type == "code" and marker in cell.source]
        cell.source = change(cell.source)
    return notebook


def _added(notebook, *sources):
    notebook = copy.deepcopy(notebook)
    notebook.cells += [nbformat.v4.new_code_cell(source) for source in sources]
    return notebook


def _json(notebook, minor: int | None = None, strip: bool = False, foreign: bool = False,
          scrambled: bool = False) -> str:
    """``notebook`` as the JSON another tool writes: another minor version, keys stripped or added."""
    data = json.loads(nbformat.writes(notebook))
    if minor is not None:
        data["nbformat_minor"] = minor
        for cell in data["cells"]:
            if minor < 5:
                cell.pop("id", None)
    for number, cell in enumerate(data["cells"]):
        if cell["cell_type"] != "code":
            continue
        if strip:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
        if scrambled:
            cell["execution_count"] = [7, 3, 12, 1, 40, 5, 9][number % 7]
        if foreign:
            cell["metadata"].update({"colab": {"base_uri": "https://localhost:8080/"}, "id": "x1y2",
                                     "outputId": "abc", "vscode": {"languageId": "python"}})
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["done\n"]}]
    if foreign:
        data["metadata"].update({"colab": {"provenance": []}, "accelerator": "GPU",
                                 "widgets": {"application/vnd.jupyter.widget-state+json": {}}})
    return json.dumps(data, indent=1)


def catalogue(solutions) -> dict:
    """Each honest habit: the notebook, as text, that a student with that habit hands in."""
    timed = lambda source: "%%time\n" + source  # noqa: E731
    out_of_order = copy.deepcopy(solutions)
    (closest,) = [cell for cell in out_of_order.cells if CLOSEST in cell.source]
    out_of_order.cells.remove(closest)
    out_of_order.cells.insert(1, closest)  # q4 first, after the imports
    attached = copy.deepcopy(solutions)
    figure = nbformat.v4.new_markdown_cell("![my sketch](attachment:sketch.png)")
    figure.attachments = {"sketch.png": {"image/png": "iVBORw0KGgo="}}
    attached.cells.insert(1, figure)
    notebooks = {
        "cell_magic_time": _with(solutions, {RATES: timed, MATRIX: timed, CLOSEST: timed}),
        "cell_magic_capture": _with(solutions, {CLOSEST: lambda source: "%%capture captured\n" + source}),
        "line_magic_time": _with(solutions, {TABLE: lambda source: "%time " + source}),
        "display": _with(solutions, {TABLE: lambda source: source + "\ndisplay(table[:3])"}),
        "display_imported": _added(solutions, "from IPython.display import Markdown, display\n"
                                              "display(Markdown(f'largest entry: **{largest_entry}**'))"),
        "timeit": _added(solutions, "%timeit -n 2 -r 1 encoding_matrix(50, 16)"),
        "matplotlib": _added(solutions, "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                                        "plt.plot(table[:, 0])\nplt.show()"),
        "autoreload": _with(solutions, {"import numpy": lambda source: "%load_ext autoreload\n"
                                                                      "%autoreload 2\n" + source}),
        "help": _added(solutions, "angle_rates?", "help(encoding_matrix)"),
        "shell_command": _added(solutions, "!echo done"),
        "large_print": _added(solutions, "print(encoding_matrix(2000, 512))\nencoding_matrix(500, 64)"),
        "out_of_order": out_of_order,
        "attachments": attached,
    }
    texts = {name: nbformat.writes(notebook) for name, notebook in notebooks.items()}
    texts["outputs_stripped"] = _json(solutions, strip=True)
    texts["foreign_metadata"] = _json(solutions, foreign=True)
    texts["execution_counts_out_of_order"] = _json(solutions, scrambled=True)
    for minor in range(6):
        texts[f"nbformat_4_{minor}"] = _json(solutions, minor=minor)
    texts[".hidden"] = nbformat.writes(solutions)
    return texts


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    build = tmp_path_factory.mktemp("habits-build")
    built = build_to_grade(ASSIGNMENT, build)
    solutions = nbformat.read(built.solutions, as_version=4)
    folder = tmp_path_factory.mktemp("habits")
    for student, text in catalogue(solutions).items():
        (folder / f"{student}.ipynb").write_text(text)
    graded = grade_folder(folder, out=None, assignment=ASSIGNMENT, build=build, jobs=2, log=lambda line: None)
    return {row["student"]: row for row in graded}


def _students():
    return [name for name in catalogue(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(marker) for marker in ("import numpy", RATES, MATRIX, TABLE, CLOSEST)]))]


@pytest.mark.parametrize("student", _students())
def test_an_honest_habit_earns_full_marks(rows, student):
    row = rows[student]
    assert (row["total"], row["possible"], row["reason"]) == ("11", "11", ""), row


def test_a_hidden_notebook_gets_a_row_and_a_flag(rows):
    assert rows[".hidden"]["flags"] == "its name starts with a dot (hidden in most file browsers): graded as any other"
    assert all(not row["flags"] for student, row in rows.items() if student != ".hidden")
