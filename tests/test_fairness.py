"""Typical mistakes earn the partial scores their weights give, with every lost point explained.

No submission scores more than its honest effort, and none less: one
mistake costs marks once, degenerate answers (all NaN, all zeros) make no
later check pass, honest answers in unusual number types earn full marks, and
a notebook of another assignment is graded as its own. The weights are those
of ``assignments/encoding_matrix/checks.py`` (and of the other specs where
named):

- q1 (2 points): dtype 0.5, four value cases 1 each (4.5 in all); the base
  case is judged on the student's own formula with that base;
- q2 (4 points): dtype 0.5, shape 0.5, four value cases 1 each (5); a matrix
  built correctly from the student's own ``angle_rates`` counts as right;
- q3 (2 points): table shape 0.5, norms 1, largest entry 1 (2.5), judged on
  the student's own table when it is right or their own encoding;
- q4 (3 points): four cases, 1 each.
"""

from __future__ import annotations

import os
import copy
import re

import nbformat
import pytest

from classroom import sandbox
from classroom.build import build_to_grade
from classroom.grade import grade_folder
from classroom.masters import ClassroomError

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
RATES_ODD = '''def angle_rates(depth, base=10000.0):
    pair_index = np.arange((depth + 1) // 2, dtype=np.float64)
    return base ** (-2.0 * pair_index / (depth + depth % 2))
'''
MATRIX_PE_LIB = '''def encoding_matrix(length, depth, base=10000.0):
    from pe_lib import sinusoidal_encoding
    return sinusoidal_encoding(length, depth, base=base, dtype="float64")
'''


def matrix(start=0, dtype="np.float64", even="sin", odd="cos"):
    return MATRIX_TEMPLATE.format(start=start, dtype=dtype, even=even, odd=odd)


#: student: (cells to replace, expected scores of q1..q4, text the reason must hold)
MISTAKES = {
    # The exponent is wrong in every formula case; the base case, which checks that
    # ``base`` is used, is judged on the student's own formula and passes.
    "i_instead_of_2i": ({"def angle_rates": RATES_I}, [2 * 1.5 / 4.5, 4, 2, 3],
                        "angle_rates(4, base=10000): entry 1 differs by up to 0.09"),
    "off_by_one": ({"def encoding_matrix": matrix(start=1)}, [2, 4 * 1 / 5, 2, 3],
                   "encoding_matrix(5, 7, base=10000): column"),
    "sin_cos_swapped": ({"def encoding_matrix": matrix(even="cos", odd="sin")}, [2, 4 * 1 / 5, 2, 3],
                        "encoding_matrix(5, 7, base=10000): column 0 differs by up to 1.3"),
    "float32": ({"def angle_rates": RATES_32, "def encoding_matrix": matrix(dtype="np.float32")},
                [2 * 4 / 4.5, 4 * 4.5 / 5, 2, 3], "encoding_matrix(5, 7) dtype: has dtype float32, expected float64"),
    "uses_pe_lib": ({"def encoding_matrix": MATRIX_PE_LIB}, [2, 0, 0, 3],
                    "raised ModuleNotFoundError: No module named 'pe_lib'"),
    # Rates wrong for an odd depth only (the depth rounded up to even): q1's two odd cases
    # fail; q2's matrix code is right, built on those rates, and costs nothing.
    "rates_wrong_for_odd_depth": ({"def angle_rates": RATES_ODD}, [2 * 2.5 / 4.5, 4, 2, 3],
                                  "angle_rates(3, base=10000): entry 1 differs"),
}

#: Finding 2 of the classroom's review: degenerate answers that made later checks pass.
#: Each now scores what its honest parts earn: dtype and shape checks, and values that are right.
GAMES = {
    # NaN rates: dtype of q1; dtype and shape of q2; the table's shape; q4 untouched.
    "all_nan": ({"def angle_rates": "def angle_rates(depth, base=10000.0):\n"
                                    "    return np.full((depth + 1) // 2, np.nan)"},
                [2 * 0.5 / 4.5, 4 * 1 / 5, 2 * 0.5 / 2.5, 3], "has NaN values"),
    # Zero rates give rows [0, 1, 0, 1, ...], right for no case (none is a single
    # position, whose row that is); its table has the right norms (8) and largest entry (1).
    "zero_rates": ({"def angle_rates": "def angle_rates(depth, base=10000.0):\n"
                                       "    return np.zeros((depth + 1) // 2)"},
                   [2 * 0.5 / 4.5, 4 * 1 / 5, 2, 3], "encoding_matrix(5, 7, base=10000): column 1 differs"),
    # Every answer zeros: the dtype and shape checks only (and q4, left right).
    "all_zeros": ({"def angle_rates": "def angle_rates(depth, base=10000.0):\n"
                                      "    return np.zeros((depth + 1) // 2)",
                   "def encoding_matrix": "def encoding_matrix(length, depth, base=10000.0):\n"
                                          "    return np.zeros((length, depth))",
                   "table = encoding_matrix(200, 16)": "table = np.zeros((200, 16))\n"
                                                       "norms_squared = np.zeros(200)\n"
                                                       "largest_entry = 0.0"},
                  [2 * 0.5 / 4.5, 4 * 1 / 5, 2 * 0.5 / 2.5, 3], "q3: norms_squared: entry 0 differs by up to 8"),
    # A table of zeros: its norms and largest entry are those of a table that is no encoding.
    "zero_table": ({"table = encoding_matrix(200, 16)": "table = np.zeros((200, 16))\n"
                                                        "norms_squared = (table**2).sum(axis=1)\n"
                                                        "largest_entry = np.abs(table).max()"},
                   [2, 4, 2 * 0.5 / 2.5, 3], "q3: norms_squared: entry 0 differs by up to 8"),
}

#: Finding 3: honest answers in unusual number types earn full marks.
NUMBER_TYPES = {
    "longdouble": "table = encoding_matrix(200, 16)\nnorms_squared = (table**2).sum(axis=1)\n"
                  "largest_entry = np.longdouble(np.abs(table).max())",
    "big_endian": "table = encoding_matrix(200, 16).astype('>f8')\nnorms_squared = (table**2).sum(axis=1)\n"
                  "largest_entry = np.abs(table).max()",
    "lists_and_int": "table = encoding_matrix(200, 16).tolist()\n"
                     "norms_squared = (np.array(table)**2).sum(axis=1).tolist()\n"
                     "largest_entry = int(np.abs(np.array(table)).max().round())",
}

#: Typical mistakes of the other assignments, each graded in its own folder as the teacher names it.
#: student: (assignment, cells to replace, expected scores, text the reason must hold)
OTHERS = {
    # All NaN and offset_gap = 0: the dtype and shape checks only.
    "alibi_all_nan": ("attention_biases", {
        "def alibi_slopes": "def alibi_slopes(heads):\n    return np.full(heads, np.nan)",
        "def rope_rotate": "def rope_rotate(x, positions, base=10000.0):\n    return np.full(np.shape(x), np.nan)",
        "offset_gap = max": "q = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75])\nk = q\n"
                            "def rope_score(q, k, m, n):\n"
                            "    return float(rope_rotate(q[None, :], [m])[0] @ rope_rotate(k[None, :], [n])[0])\n"
                            "offset_gap = 0"},
        [2 * 0.5 / 4.5, 3 * 1 / 4, 3 * 1 / 4, 0], "q4: rope_score(q, k, 0, 4): has NaN values"),
    # Heads counted from 0: q1's values fail; the bias built from those slopes is right.
    "alibi_heads_from_0": ("attention_biases", {
        "def alibi_slopes": "def alibi_slopes(heads):\n    head = np.arange(heads, dtype=np.float64)\n"
                            "    return 2.0 ** (-8.0 * head / heads)"},
        [2 * 0.5 / 4.5, 3, 3, 2], "alibi_slopes(1): entry 0 differs by up to 1"),
    # Zero blocks and a zero matrix: the shape checks only; q4 and q5 are right.
    "rotation_zeros": ("relative_positions", {
        "def rotation_block": "def rotation_block(angle):\n    return np.zeros((2, 2))",
        "def shift_matrix": "def shift_matrix(offset, depth, base=10000.0):\n    return np.zeros((depth, depth))"},
        [2 * 0.5 / 4.5, 3 * 0.5 / 4.5, 2 * 0.5 / 2.5, 3, 2], "shifted: column"),
    # A block that turns the other way: q1 only; q2 and q3 follow from the student's own blocks.
    "rotation_transposed": ("relative_positions", {
        "def rotation_block": "def rotation_block(angle):\n    cos, sin = np.cos(angle), np.sin(angle)\n"
                              "    return np.array([[cos, -sin], [sin, cos]])"},
        [2 * 0.5 / 4.5, 3, 2, 3, 2], "rotation_block(0.3): column 0 differs by up to 0.59"),
}


def _replace(notebook, replacements):
    notebook = copy.deepcopy(notebook)
    for marker, source in replacements.items():
        (cell,) = [cell for cell in notebook.cells if cell.cell_type == "code" and marker in cell.source]
        cell.source = source
    return notebook


def _pasted(notebook):
    """The notebook's code pasted into a fresh notebook: no otter metadata."""
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.source)
                                           for cell in notebook.cells if cell.cell_type == "code"])


@pytest.fixture(scope="module")
def materials(tmp_path_factory):
    """What grading needs of the three NumPy assignments, in one build folder."""
    build = tmp_path_factory.mktemp("fairness-build")
    return {name: build_to_grade(name, build)
            for name in (ASSIGNMENT, "attention_biases", "relative_positions")}


@pytest.fixture(scope="module")
def rows(materials, tmp_path_factory):
    others, built = materials, materials[ASSIGNMENT]
    build = built.references.parents[1]
    folder = tmp_path_factory.mktemp("fairness")
    solutions = nbformat.read(built.solutions, as_version=4)
    for student, (replacements, _, _) in {**MISTAKES, **GAMES}.items():
        nbformat.write(_replace(solutions, replacements), folder / f"{student}.ipynb")
    for student, source in NUMBER_TYPES.items():
        nbformat.write(_replace(solutions, {"table = encoding_matrix(200, 16)": source}), folder / f"{student}.ipynb")
    nbformat.write(_pasted(solutions), folder / "pasted_without_metadata.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), folder / "every_cell_deleted.ipynb")
    # Handed in to Assignment 1 with Assignment 4's metadata (its solutions are public).
    nbformat.write(nbformat.read(others["attention_biases"].solutions, as_version=4),
                   folder / "another_assignments_solutions.ipynb")
    graded = grade_folder(folder, out=None, assignment=ASSIGNMENT, build=build, jobs=2, log=lambda line: None)
    for name in ("attention_biases", "relative_positions"):
        own = tmp_path_factory.mktemp(f"fairness-{name}")
        for student, (assignment, replacements, _, _) in OTHERS.items():
            if assignment == name:
                other = nbformat.read(others[name].solutions, as_version=4)
                nbformat.write(_replace(other, replacements), own / f"{student}.ipynb")
        graded += grade_folder(own, out=None, assignment=name, build=build, jobs=2, log=lambda line: None)
    return {row["student"]: row for row in graded}


@pytest.mark.parametrize("student", MISTAKES)
def test_a_typical_mistake_costs_what_its_checks_weigh_and_says_which_failed(rows, student):
    _, expected, reason = MISTAKES[student]
    row = rows[student]
    assert [float(row[q]) for q in ("q1", "q2", "q3", "q4")] == pytest.approx(expected, abs=1e-4)
    assert float(row["total"]) == pytest.approx(sum(expected), abs=1e-3)
    assert reason in row["reason"]


def test_one_mistake_costs_marks_once(rows):
    """A wrong exponent costs q1's formula cases only: q2 and q3 use the student's own rates and table."""
    assert rows["i_instead_of_2i"]["q2"] == "4" and rows["i_instead_of_2i"]["q3"] == "2"
    assert rows["i_instead_of_2i"]["total"] == "9.6667"
    assert "q2:" not in rows["i_instead_of_2i"]["reason"]
    assert "angle_rates(12, base=100)" not in rows["i_instead_of_2i"]["reason"]


@pytest.mark.parametrize("student", GAMES)
def test_a_degenerate_answer_earns_only_what_its_honest_parts_earn(rows, student):
    _, expected, reason = GAMES[student]
    row = rows[student]
    assert [float(row[q]) for q in ("q1", "q2", "q3", "q4")] == pytest.approx(expected, abs=1e-4)
    assert reason in row["reason"]


@pytest.mark.parametrize("student", NUMBER_TYPES)
def test_an_honest_answer_in_an_unusual_number_type_earns_full_marks(rows, student):
    assert rows[student]["total"] == "11" and rows[student]["reason"] == ""


@pytest.mark.parametrize("student", OTHERS)
def test_a_typical_mistake_of_another_assignment_costs_what_its_checks_weigh(rows, student):
    name, _, expected, reason = OTHERS[student]
    row = rows[student]
    assert row["assignment"] == name and not row["flags"], row
    assert [float(row[f"q{i + 1}"]) for i in range(len(expected))] == pytest.approx(expected, abs=1e-4), row
    assert reason in row["reason"], row


def test_the_teacher_not_the_notebook_decides_the_assignment(rows):
    """Assignment 4's public solutions handed in to Assignment 1 earn Assignment 1's marks for them: none."""
    row = rows["another_assignments_solutions"]
    assert row["assignment"] == ASSIGNMENT and row["possible"] == "11" and row["total"] == "0"
    assert row["flags"] == ("its metadata names attention_biases, not encoding_matrix: graded as "
                            "encoding_matrix, the assignment you named")


def test_use_of_pe_lib_is_flagged(rows):
    assert re.fullmatch(r"cell \d+ imports pe_lib", rows["uses_pe_lib"]["flags"])
    assert all(not row["flags"] for student, row in rows.items()
               if student not in ("uses_pe_lib", "pasted_without_metadata", "every_cell_deleted",
                                  "another_assignments_solutions"))


def test_a_correct_answer_pasted_into_a_fresh_notebook_earns_full_marks(rows):
    row = rows["pasted_without_metadata"]
    assert row["total"] == row["possible"] == "11" and row["reason"] == ""
    assert row["flags"] == "its metadata names no assignment: graded as encoding_matrix, the assignment you named"


def test_an_empty_notebook_scores_zero_with_a_reason(rows):
    row = rows["every_cell_deleted"]
    assert row["total"] == "0" and "the notebook has no code cells" in row["reason"]


def _saved_by(notebook, editor):
    """``notebook`` as VS Code or Colab save it: their own metadata, otter's gone."""
    saved = _pasted(notebook)
    saved.metadata = copy.deepcopy(SAVED_METADATA[editor])
    return saved


#: The metadata VS Code and Colab write into a notebook they save (otter's is not kept).
SAVED_METADATA = {
    "vscode": {"kernelspec": {"display_name": ".venv", "language": "python", "name": "python3"},
               "language_info": {"name": "python", "version": "3.12.3", "mimetype": "text/x-python",
                                 "file_extension": ".py", "codemirror_mode": {"name": "ipython", "version": 3},
                                 "nbconvert_exporter": "python", "pygments_lexer": "ipython3"},
               "vscode": {"interpreter": {"hash": "3f1e9c2d0b7a"}}},
    "colab": {"colab": {"provenance": [], "toc_visible": True}, "accelerator": "GPU",
              "kernelspec": {"display_name": "Python 3", "name": "python3"},
              "language_info": {"name": "python"}},
}


def test_without_the_teachers_assignment_a_notebook_without_metadata_is_graded_by_its_code(materials, tmp_path):
    """Honest notebooks saved without otter's metadata earn full marks, flagged; the odd one is graded
    as the folder's assignment, which most of its notebooks are, and flagged."""
    built, other = materials[ASSIGNMENT], materials["relative_positions"]
    solutions = nbformat.read(built.solutions, as_version=4)
    nbformat.write(_pasted(solutions), tmp_path / "ada.ipynb")
    nbformat.write(_saved_by(solutions, "vscode"), tmp_path / "vs_code.ipynb")
    nbformat.write(_saved_by(solutions, "colab"), tmp_path / "colab.ipynb")
    nbformat.write(nbformat.read(other.solutions, as_version=4), tmp_path / "odd_one.ipynb")
    graded = {row["student"]: row for row in grade_folder(tmp_path, out=None, build=built.references.parents[1],
                                                          jobs=2, log=lambda line: None)}
    odd = graded["odd_one"]
    assert odd["assignment"] == ASSIGNMENT and odd["total"] == "0" and odd["possible"] == "11"
    assert odd["flags"].startswith("its metadata names relative_positions, not encoding_matrix: graded as "
                                   "encoding_matrix, the assignment of this folder's notebooks; ")
    for student in ("ada", "vs_code", "colab"):
        row = graded[student]
        assert row["assignment"] == ASSIGNMENT and row["total"] == row["possible"] == "11"
        assert row["flags"] == ("its metadata names no assignment: graded as encoding_matrix, "
                                "whose functions its code defines")


def test_a_notebook_without_metadata_among_named_ones_is_graded_as_theirs(materials, tmp_path):
    """A notebook whose code defines nothing graded is graded as every other notebook's assignment."""
    built = materials[ASSIGNMENT]
    solutions = nbformat.read(built.solutions, as_version=4)
    nbformat.write(solutions, tmp_path / "ada.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), tmp_path / "bo.ipynb")
    graded = {row["student"]: row for row in grade_folder(tmp_path, out=None, build=built.references.parents[1],
                                                          log=lambda line: None)}
    assert graded["bo"]["assignment"] == ASSIGNMENT and graded["bo"]["total"] == "0"
    assert graded["bo"]["flags"] == ("its metadata names no assignment: graded as encoding_matrix, "
                                     "the assignment of every other notebook")


def test_a_folder_named_after_an_assignment_is_graded_as_that_one(materials, tmp_path):
    """Assignment 1's solutions handed in to a folder named for Assignment 4 earn Assignment 4's marks."""
    built = materials[ASSIGNMENT]
    folder = tmp_path / "attention_biases"
    folder.mkdir()
    nbformat.write(nbformat.read(built.solutions, as_version=4), folder / "ada.ipynb")
    (row,) = grade_folder(folder, out=None, build=built.references.parents[1], log=lambda line: None)
    assert row["assignment"] == "attention_biases" and row["total"] == "0"
    assert row["flags"] == ("its metadata names encoding_matrix, not attention_biases: graded as "
                            "attention_biases, the assignment of this folder's notebooks")


def test_a_folder_whose_assignment_cannot_be_told_is_refused_before_grading(materials, tmp_path):
    built, other = materials[ASSIGNMENT], materials["relative_positions"]
    nbformat.write(nbformat.read(built.solutions, as_version=4), tmp_path / "ada.ipynb")
    nbformat.write(nbformat.read(other.solutions, as_version=4), tmp_path / "bo.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), tmp_path / "cy.ipynb")
    lines = []
    with pytest.raises(ClassroomError, match=r"cannot tell which assignment 1 notebook\(s\) are \(cy\)"):
        grade_folder(tmp_path, out=tmp_path.parent / "never.csv", build=built.references.parents[1], log=lines.append)
    assert lines == [] and not (tmp_path.parent / "never.csv").exists()
