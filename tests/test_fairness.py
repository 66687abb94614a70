"""Typical mistakes earn the partial scores their weights give, with every lost point explained.

The weights are those of ``assignments/encoding_matrix/checks.py``:

- q1 (2 points): dtype 0.5, four value cases 1 each (4.5 in all);
- q2 (4 points): dtype 0.5, shape 0.5, four value cases 1 each (5); a matrix
  built correctly from the student's own ``angle_rates`` counts as right;
- q3 (2 points): table shape 0.5, norms 1, largest entry 1 (2.5), judged on
  the student's own table;
- q4 (3 points): four cases, 1 each.
"""

from __future__ import annotations

import os
import copy
import re

import nbformat
import pytest

from classroom import sandbox
from classroom.grade import grade_folder

# Skipped where bubblewrap cannot run, except under CI, where that is a failure.
pytestmark = pytest.mark.skipif(bool(sandbox.check()) and not os.environ.get("CI"), reason=sandbox.check() or "")

ASSIGNMENT = "encoding_matrix"

RATES_I = '''def angle_rates(depth, base=10000.0):
    pair_index = np.arange((depth + 1) // 2, dtype=np.float64)
    return base ** (-pair_index / depth)
'''
MATRIX_TEMPLATE = '''def encoding_matrix(length, depth, base=10000.0):
    angles = np.arange({start}, length + {start}, dtype=np.float64)[:, None] * angle_rates(depth, base)
    matrix = np.empty((length, depth), dtype={dtype})
    matrix[:, 0::2] = np.{even}(angles)
    matrix[:, 1::2] = np.{odd}(angles[:, : depth // 2])
    return matrix
'''
RATES_32 = '''def angle_rates(depth, base=10000.0):
    pair_index = np.arange((depth + 1) // 2, dtype=np.float32)
    return (base ** (-2.0 * pair_index / depth)).astype(np.float32)
'''
MATRIX_PE_LIB = '''def encoding_matrix(length, depth, base=10000.0):
    from pe_lib import sinusoidal_encoding
    return sinusoidal_encoding(length, depth, base=base, dtype="float64")
'''


def matrix(start=0, dtype="np.float64", even="sin", odd="cos"):
    return MATRIX_TEMPLATE.format(start=start, dtype=dtype, even=even, odd=odd)


#: student: (cells to replace, expected scores of q1..q4, text the reason must hold)
MISTAKES = {
    "i_instead_of_2i": ({"def angle_rates": RATES_I}, [2 * 0.5 / 4.5, 4, 2, 3],
                        "angle_rates(4, base=10000): entry 1 differs by up to 0.09"),
    "off_by_one": ({"def encoding_matrix": matrix(start=1)}, [2, 4 * 1 / 5, 2, 3],
                   "encoding_matrix(5, 7, base=10000): column"),
    "sin_cos_swapped": ({"def encoding_matrix": matrix(even="cos", odd="sin")}, [2, 4 * 1 / 5, 2, 3],
                        "encoding_matrix(5, 7, base=10000): column 0 differs by up to 1.3"),
    "float32": ({"def angle_rates": RATES_32, "def encoding_matrix": matrix(dtype="np.float32")},
                [2 * 4 / 4.5, 4 * 4.5 / 5, 2, 3], "encoding_matrix(5, 7) dtype: has dtype float32, expected float64"),
    "uses_pe_lib": ({"def encoding_matrix": MATRIX_PE_LIB}, [2, 0, 0, 3],
                    "raised ModuleNotFoundError: No module named 'pe_lib'"),
}


def _replace(notebook, replacements):
    notebook = copy.deepcopy(notebook)
    for marker, source in replacements.items():
        (cell,) = [cell for cell in notebook.cells if cell.cell_type == "code" and marker in cell.source]
        cell.source = source
    return notebook


@pytest.fixture(scope="module")
def rows(builds, tmp_path_factory):
    built = builds(ASSIGNMENT)
    folder = tmp_path_factory.mktemp("fairness")
    solutions = nbformat.read(built.solutions, as_version=4)
    for student, (replacements, _, _) in MISTAKES.items():
        nbformat.write(_replace(solutions, replacements), folder / f"{student}.ipynb")
    pasted = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.source)
                                             for cell in solutions.cells if cell.cell_type == "code"])
    nbformat.write(pasted, folder / "pasted_without_metadata.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), folder / "every_cell_deleted.ipynb")
    graded = grade_folder(folder, out=None, assignment=ASSIGNMENT, build=built.student.parents[2],
                          jobs=2, log=lambda line: None)
    return {row["student"]: row for row in graded}


@pytest.mark.parametrize("student", MISTAKES)
def test_a_typical_mistake_costs_what_its_checks_weigh_and_says_which_failed(rows, student):
    _, expected, reason = MISTAKES[student]
    row = rows[student]
    assert [float(row[q]) for q in ("q1", "q2", "q3", "q4")] == pytest.approx(expected, abs=1e-4)
    assert float(row["total"]) == pytest.approx(sum(expected), abs=1e-3)
    assert reason in row["reason"]


def test_one_mistake_costs_marks_once(rows):
    """A wrong angle_rates costs q1 only: q2 and q3 use the student's own rates and table."""
    assert rows["i_instead_of_2i"]["q2"] == "4" and rows["i_instead_of_2i"]["q3"] == "2"
    assert "q2:" not in rows["i_instead_of_2i"]["reason"]


def test_use_of_pe_lib_is_flagged(rows):
    assert re.fullmatch(r"cell \d+ imports pe_lib", rows["uses_pe_lib"]["flags"])
    assert all(not row["flags"] for student, row in rows.items() if student != "uses_pe_lib")


def test_a_correct_answer_pasted_into_a_fresh_notebook_earns_full_marks(rows):
    row = rows["pasted_without_metadata"]
    assert row["total"] == row["possible"] == "11" and row["reason"] == ""


def test_an_empty_notebook_scores_zero_with_a_reason(rows):
    row = rows["every_cell_deleted"]
    assert row["total"] == "0" and "the notebook has no code cells" in row["reason"]
