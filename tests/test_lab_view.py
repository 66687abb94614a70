"""The chapters read in JupyterLab as on their pages: collapsed where the book hides, numbers as {eval}."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pe_lib.course.display.lab_view import for_the_lab, lab_view

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
FIX = "python -m pe_lib.course.display.lab_view chapters/*.ipynb (or python3 tasks.py notebooks)"


def _cells(path):
    return json.loads(path.read_text())["cells"]


@pytest.mark.parametrize(("tags", "expected"), [
    ([], {}),
    (["remove-cell"], {"source_hidden": True}),
    (["remove-input", "nbval-ignore-output"], {"source_hidden": True}),
    (["hide-input"], {"source_hidden": True}),
    (["hide-cell"], {"source_hidden": True, "outputs_hidden": True}),
    (["remove-output"], {"outputs_hidden": True}),
    (["nbval-ignore-output", "machine-dependent"], {}),
])
def test_what_each_tag_collapses(tags, expected):
    assert lab_view(tags) == expected


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_collapsed_cells_are_in_step_with_the_tags(path):
    """JupyterLab's jupyter.source_hidden/outputs_hidden say what the book's tags say."""
    wrong = []
    for index, cell in enumerate(_cells(path)):
        jupyter = cell["metadata"].get("jupyter", {})
        shown = {key: jupyter[key] for key in ("source_hidden", "outputs_hidden") if jupyter.get(key)}
        if shown != lab_view(cell["metadata"].get("tags", ())):
            wrong.append(f"cell {index} tags {cell['metadata'].get('tags', [])}: jupyter {jupyter}")
    assert not wrong, f"out of step with the tags; run {FIX}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_removed_cells_show_nothing_but_figures_in_the_lab(path):
    """A removed cell's outputs stay open in JupyterLab: only a figure may show there."""
    shown = []
    for index, cell in enumerate(_cells(path)):
        if "remove-cell" not in cell["metadata"].get("tags", ()):
            continue
        for output in cell.get("outputs", ()):
            kinds = set(output.get("data", {})) - {"text/plain"}
            glued = all(kind.startswith("application/papermill.record/") for kind in output.get("data", {"": 0}))
            figure = any(kind.startswith("image/") for kind in kinds)
            if output["output_type"] == "stream" or not (glued or figure):
                shown.append(f"cell {index}: {output['output_type']} {sorted(output.get('data', {})) or ''}")
    assert not shown, "\n".join(shown)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_glued_numbers_are_quoted_as_eval(path):
    """{glue:text} of a number glued by glue_number would show raw in JupyterLab: quote it with {eval}."""
    cells = _cells(path)
    code = "".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    prose = "".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    numbers = set(re.findall(r"""glue_number\(\s*["'](\w+)["']""", code))
    left = sorted(set(re.findall(r"\{glue:text\}`(\w+)`", prose)) & numbers)
    assert not left, f"quote these with {{eval}}`name` ({FIX}): {left}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_saved_expressions_are_the_glued_numbers(path):
    """What JupyterLab shows for {eval}`name` before a run is the text the book pastes."""
    cells = _cells(path)
    glued = {}
    for cell in cells:
        for output in cell.get("outputs", ()):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            text = output.get("data", {}).get("application/papermill.record/text/plain")
            if name and text:
                glued[name] = text
    wrong = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        quoted = list(dict.fromkeys(re.findall(r"\{eval\}`(\w+)`", "".join(cell["source"]))))
        saved = {e["expression"]: e["result"]["data"]["text/plain"]
                 for e in cell["metadata"].get("user_expressions", ())}
        if list(saved) != quoted or any(saved[name] != glued.get(name) for name in quoted):
            wrong.append(f"cell {index}: {quoted} saved as {saved}")
    assert not wrong, f"run {FIX}:\n" + "\n".join(wrong[:10])


def _record(name, kind, value):
    """An output as myst-nb's glue saves it."""
    prefix = "application/papermill.record/"
    return {"output_type": "display_data", "data": {prefix + kind: value},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}}}


def _markdown(source):
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def test_the_lab_copy_captions_a_glued_figure():
    source = ("Before.\n\n```{glue:figure} fig-a\n:alt: Two lines.\n:name: fig-a-lines\n:figclass: wide\n\n"
              "Two lines, {eval}`a_count` of them.\n```\n\nAfter, see {numref}`fig-a-lines`.")
    (cell,) = for_the_lab({"cells": [_markdown(source)]})["cells"]
    assert cell["source"] == ("Before.\n\n```{figure}\n:label: fig-a-lines\n\nTwo lines, {eval}`a_count` of them.\n"
                              "```\n\nAfter, see {numref}`fig-a-lines`.")


def test_the_lab_copy_captions_a_figure_whose_fence_ends_with_the_cell():
    (cell,) = for_the_lab({"cells": [_markdown("```{glue:figure} fig-b\n:name: fig-b\n\nA caption.")]})["cells"]
    assert cell["source"] == "```{figure}\n:label: fig-b\n\nA caption.\n```"


def test_the_lab_copy_pastes_glued_tables_and_text(tmp_path):
    other = {"cells": [{"id": "c1", "cell_type": "code", "metadata": {}, "source": "", "execution_count": 1,
                        "outputs": [_record("acc", "text/plain", "'0.98'")]}],
             "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "other.ipynb").write_text(json.dumps(other))
    code = {"cell_type": "code", "metadata": {}, "source": "", "execution_count": 1, "outputs": [
        _record("a_table", "text/markdown", "| a | b |\n| --- | --- |\n| 1 | 2 |\n"),
        _record("a_version", "text/plain", "'0.8.0'"),
        _record("a-figure", "image/png", "iVBORw0KGgo="),
    ]}
    prose = _markdown("```{glue:md} a_table\n:format: myst\n```\n\nVersion {glue:text}`a_version`, "
                      "accuracy {glue:text}`other.ipynb::acc:s`, {glue:text}`missing` left.")
    notebook = for_the_lab({"cells": [code, prose]}, tmp_path)
    assert notebook["cells"][1]["source"] == ("| a | b |\n| --- | --- |\n| 1 | 2 |\n\nVersion 0.8.0, "
                                              "accuracy 0.98, {glue:text}`missing` left.")


def test_the_lab_copy_opens_the_output_of_a_figure_cell_the_book_shows_elsewhere():
    png = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}, "metadata": {}}
    figure_cell = {"cell_type": "code", "source": "", "execution_count": 1,
                   "metadata": {"tags": ["hide-input", "remove-output"],
                                "jupyter": {"source_hidden": True, "outputs_hidden": True}},
                   "outputs": [_record("fig-c", "image/png", "iVBORw0KGgo="), png]}
    other_cell = {"cell_type": "code", "source": "", "execution_count": 2,
                  "metadata": {"tags": ["remove-output"], "jupyter": {"outputs_hidden": True}},
                  "outputs": [png]}
    notebook = for_the_lab({"cells": [figure_cell, other_cell]})
    assert notebook["cells"][0]["metadata"]["jupyter"] == {"source_hidden": True}
    assert notebook["cells"][1]["metadata"]["jupyter"] == {"outputs_hidden": True}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_lab_copy_leaves_no_glue_for_jupyterlab(path):
    """Every glue directive and role of a chapter becomes something JupyterLab's MyST renderer draws."""
    notebook = for_the_lab(json.loads(path.read_text()), path.parent)
    left = sorted({match for cell in notebook["cells"] if cell["cell_type"] == "markdown"
                   for match in re.findall(r"\{glue[:\w]*\}`?[^`\n]*", "".join(cell["source"]))})
    assert not left, f"glue that JupyterLab would show raw or as an unknown directive: {left}"


def test_the_lab_copy_shows_included_code_as_the_code_itself(tmp_path):
    """A ``{literalinclude}`` becomes the object's source, read here with ``inspect``, not with Sphinx."""
    import inspect
    import textwrap

    from pe_lib.course.order import mixing

    cell = {"cell_type": "markdown", "metadata": {}, "source":
            "Its call:\n\n```{literalinclude} ../pe_lib/course/order/mixing.py\n:language: python\n"
            ":pyobject: ConcatenatedPositions.call\n:dedent: 4\n```\n\nThen more."}
    source = for_the_lab({"cells": [cell]}, Path("chapters"))["cells"][0]["source"]
    expected = textwrap.dedent(inspect.getsource(mixing.ConcatenatedPositions.call)).rstrip()
    assert source == f"Its call:\n\n```python\n{expected}\n```\n\nThen more."


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_lab_copy_includes_no_file_jupyterlab_cannot_open(path):
    notebook = for_the_lab(json.loads(path.read_text()), path.parent)
    assert not any("{literalinclude}" in "".join(cell["source"]) for cell in notebook["cells"])
