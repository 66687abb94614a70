"""The grader's parts on their own: reading imports, decoding answers, judging, scoring."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from classroom import answers, compare, expect
from classroom.submissions import forbidden_uses


@pytest.mark.parametrize("source, found", [
    ("import pe_lib", ["cell 1 imports pe_lib"]),
    ("import pe_lib.layers as layers", ["cell 1 imports pe_lib"]),
    ("from pe_lib.frequencies import angle_rates", ["cell 1 imports pe_lib"]),
    ("from pe_lib import sinusoidal_encoding as s", ["cell 1 imports pe_lib"]),
    ("m = __import__('pe_lib')", ["cell 1 imports pe_lib"]),
    ("import importlib\nm = importlib.import_module('pe_lib.rope')", ["cell 1 imports pe_lib"]),
    ("name = 'pe' + '_lib'\nm = __import__(name)", ["cell 1 imports a module by a computed name"]),
    ("import numpy as np\nx = np.sin(1.0)  # pe_lib is not used", []),
    ("this is not python", []),
])
def test_forbidden_imports_are_found_in_the_syntax_tree(source, found):
    assert forbidden_uses([(1, source)], ("pe_lib",)) == found


def test_a_forbidden_submodule_is_found_through_attribute_chains():
    cells = [(2, "import pe_lib"), (3, "x = pe_lib.angle_rates(4)"), (4, "y = pe_lib.course.rotation.rotation_matrix(1, 2)")]
    assert forbidden_uses(cells, ("pe_lib.course.rotation",)) == ["cell 4 uses pe_lib.course.rotation"]


def _write(path, data) -> None:
    path.write_text(json.dumps(data))


def test_answers_are_decoded_into_arrays_and_errors(tmp_path):
    _write(tmp_path / "a.json", {"cell_errors": [[3, "NameError", "x"]], "answers": {
        "m": {"__ndarray__": ["float32", [2, 1], [0.5, 1.5]]},
        "t": {"__tuple__": [1, 2.5]},
        "e": {"__error__": ["ValueError", "bad\nline" + "y" * 500]}}})
    data = answers.read(tmp_path / "a.json")
    assert data["answers"]["m"].dtype == np.float32 and data["answers"]["m"].shape == (2, 1)
    assert data["answers"]["t"] == (1, 2.5)
    assert data["answers"]["e"].kind == "ValueError" and len(data["answers"]["e"].message) == 80
    assert "\n" not in data["answers"]["e"].message and data["cell_errors"] == [(3, "NameError", "x")]


@pytest.mark.parametrize("content, message", [
    ({"answers": {}}, "not in the runner's format"),
    ({"cell_errors": [], "answers": {"m": {"__ndarray__": ["object", [1], [1]]}}}, "not numeric"),
    ({"cell_errors": [], "answers": {"m": {"__ndarray__": ["float64", [3], [1]]}}}, "wrong number"),
    ({"cell_errors": [], "answers": {"m": {"__reduce__": ["os.system", "true"]}}}, "runner's format"),
])
def test_malformed_answers_are_refused(tmp_path, content, message):
    _write(tmp_path / "a.json", content)
    with pytest.raises(answers.Malformed, match=message):
        answers.read(tmp_path / "a.json")


def test_a_link_or_a_folder_in_place_of_the_answers_is_refused(tmp_path):
    _write(tmp_path / "secret.json", {"cell_errors": [], "answers": {"x": 1}})
    os.symlink(tmp_path / "secret.json", tmp_path / "answers.json")
    with pytest.raises(answers.Malformed, match="no answers were written"):
        answers.read(tmp_path / "answers.json")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(answers.Malformed):
        answers.read(tmp_path / "folder.json")


def test_differences_are_explained_by_column_entry_and_shape():
    expected = np.arange(12.0).reshape(3, 4)
    wrong = expected.copy()
    wrong[1, 2] += 0.31
    assert expect.difference(wrong, expected) == "column 2 differs by up to 0.31"
    assert expect.difference(np.array([1.0, 0.1]), np.array([1.0, 0.01])) == "entry 1 differs by up to 0.09"
    assert expect.difference(np.zeros(3), expected) == "has shape (3,), expected (3, 4)"
    assert expect.difference(answers.Raised("NameError", "name 'f' is not defined"), expected) == \
        "raised NameError: name 'f' is not defined"
    assert expect.difference(expected, expected) == ""


def test_a_score_is_weighted_and_capped_at_the_points():
    checks = [expect.Check("cheap", 0.5, lambda a, r: ""), expect.Check("values", 1.5, lambda a, r: "wrong")]
    result = compare.score_question(4.0, checks, {}, {})
    assert result.score == 1.0 and result.failures == ["values: wrong"]
    greedy = [expect.Check("one", 1.0, lambda a, r: "")] * 3
    assert compare.score_question(2.0, greedy, {}, {}).score == 2.0


@pytest.mark.skipif(bool(__import__("classroom.sandbox").sandbox.check()) and not os.environ.get("CI"),
                    reason="no bubblewrap")
def test_the_sandbox_sees_the_library_alone_and_nothing_of_the_course():
    from classroom import execute
    from classroom.masters import ROOT

    paths = [ROOT / "README.md", ROOT / "assignments", ROOT / "classroom", ROOT / "pe_lib",
             Path("/etc/passwd"), Path("/work/main/pe_lib"), Path("/work/main/README.md")]
    probes = {"visible": f"import os\nanswer = [os.path.exists(p) for p in {[str(p) for p in paths]!r}]",
              "library": "import pe_lib\nanswer = pe_lib.__file__"}
    seen = execute.run([], probes, library=True, timeout=60, cell_seconds=20)
    assert seen.answers["visible"] == [False] * len(paths)
    assert seen.answers["library"] == "/opt/course/pe_lib/__init__.py"
    hidden = execute.run([], probes, library=False, timeout=60, cell_seconds=20)
    assert hidden.answers["library"].kind == "ModuleNotFoundError"
