"""The grader's parts on their own: reading imports, sending and decoding answers, judging, scoring."""

from __future__ import annotations

import base64
import fractions
import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from classroom import answers, compare, expect, runner
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
    cells = [(2, "import pe_lib"), (3, "x = pe_lib.angle_rates(4)"), (4, "y = pe_lib.course.lessons.rotation.rotation_matrix(1, 2)")]
    assert forbidden_uses(cells, ("pe_lib.course.lessons.rotation",)) == ["cell 4 uses pe_lib.course.lessons.rotation"]


def _array(dtype: str, shape: list, values: list) -> dict:
    """An array as the runner sends it, built here with struct, not with NumPy."""
    code = {"float64": "d", "float32": "f", "int64": "q", "bool": "?"}[dtype]
    data = struct.pack("<" + code * len(values), *values)
    return {"__ndarray__": [dtype, shape, base64.b64encode(data).decode()]}


def test_answers_are_decoded_into_arrays_and_errors():
    matrix = answers.decode(_array("float32", [2, 1], [0.5, 1.5]))
    assert matrix.dtype == np.float32 and matrix.shape == (2, 1) and matrix.tolist() == [[0.5], [1.5]]
    assert answers.decode({"__tuple__": [1, 2.5]}) == (1, 2.5)
    legacy = answers.decode({"__ndarray__": ["int64", [3], [1, 2, 3]]})  # builds made before
    assert legacy.tolist() == [1, 2, 3] and legacy.dtype == np.int64
    assert answers.decode({"__error__": ["ValueError", "the input was [[0.3, 0.1]]"]}) == answers.Raised("ValueError")
    assert answers.decode({"__error__": ["In_0_3", ""]}).kind == "an exception of its own class"
    report = answers.cell_errors({"cell_errors": [[3, "NameError", "bad\nline" + "y" * 500]]})
    assert report[0][:2] == (3, "NameError") and len(report[0][2]) == 80 and "\n" not in report[0][2]


@pytest.mark.parametrize("value, message", [
    ({"__ndarray__": ["object", [1], "AA=="]}, "does not hold numbers"),
    ({"__ndarray__": [">f8", [1], "AAAAAAAA8D8="]}, "does not hold numbers"),
    ({"__ndarray__": ["float64", [3], "AAAAAAAA8D8="]}, "wrong number of values"),
    ({"__ndarray__": ["float64", [10**6, 10**6], ""]}, "no valid shape"),
    ({"__ndarray__": ["float64", [1], "not base64!"]}, "runner's format"),
    ({"__reduce__": ["os.system", "true"]}, "runner's format"),
])
def test_malformed_answers_are_refused(value, message):
    with pytest.raises(answers.Malformed, match=message):
        answers.decode(value)


def test_a_line_that_would_take_much_memory_is_refused_before_it_is_parsed():
    """63 MB of empty lists took the grader to 3.5 GiB; now neither it nor a long line is parsed."""
    many = b'["rates_4_10000", [' + b"[]," * 3_000_000 + b"[]]]"
    began = time.perf_counter()
    with pytest.raises(answers.Malformed, match="larger than 4 MiB"):
        answers.parse_line(many)
    with pytest.raises(answers.Malformed, match="more than 20000 items"):
        answers.parse_line(b"[" + b"[]," * 30_000 + b"[]]")
    assert time.perf_counter() - began < 2
    assert answers.items(b'[[1, 2], {"a": [3]}]') == 6  # an upper bound: 1 + 2 + 1 + 1 + 1


@pytest.mark.parametrize("value, sent", [
    (np.longdouble(0.25), ("float64", [], [0.25])),
    (np.arange(3.0).astype(">f8"), ("float64", [3], [0.0, 1.0, 2.0])),
    (np.array([1, 2], dtype=">i4"), ("int32", [2], [1, 2])),
    (np.array([0.5, 2], dtype=object), ("float64", [2], [0.5, 2.0])),
    (np.float32(1.5), ("float32", [], [1.5])),
    (np.array([[True], [False]]), ("bool", [2, 1], [True, False])),
])
def test_honest_number_types_are_sent_as_standard_arrays(value, sent):
    dtype, shape, values = sent
    encoded = runner.encode(value)
    decoded = answers.decode(encoded)
    assert encoded["__ndarray__"][:2] == [dtype, shape]
    assert decoded.dtype == np.dtype(dtype) and decoded.ravel().tolist() == values


def test_python_numbers_and_sequences_are_sent_as_they_are():
    assert runner.encode([1, 2.5, fractions.Fraction(1, 4)]) == {"__list__": [1, 2.5, 0.25]}
    assert runner.encode((2**70, True)) == {"__tuple__": [float(2**70), True]}
    assert runner.encode({"a": None}) == {"__dict__": {"a": None}}


@pytest.mark.parametrize("value, code", [
    (np.array([1 + 2j]), "complex"), (complex(1, 2), "complex"), (np.array(["a"]), "dtype"),
    (np.array([np.finfo(np.longdouble).max]), "range"), (object(), "type"), (Ellipsis, "ellipsis"),
    (np.zeros(200_001), "size"), ([[]] * 30_000, "items"),
])
def test_what_is_not_real_numbers_is_refused_with_a_code_the_grader_explains(value, code):
    with pytest.raises(runner.NotData, match=f"^{code}$"):
        runner.encode(value)
    explained = expect.missing(answers.decode({"__error__": ["NotData", code]}))
    assert explained == answers.NOT_DATA[code] or (code == "ellipsis" and explained == "not answered")


def test_differences_are_explained_by_column_entry_and_shape():
    expected = np.arange(12.0).reshape(3, 4)
    wrong = expected.copy()
    wrong[1, 2] += 0.31
    assert expect.difference(wrong, expected) == "column 2 differs by up to 0.31"
    assert expect.difference(np.array([1.0, 0.1]), np.array([1.0, 0.01])) == "entry 1 differs by up to 0.09"
    assert expect.difference(np.zeros(3), expected) == "has the wrong shape (expected (3, 4))"
    assert expect.difference(answers.Raised("NameError"), expected) == "raised NameError"
    assert expect.difference(expected, expected) == ""


def test_nan_equals_nothing_and_infinity_only_itself():
    want = np.array([0.0, -np.inf])
    assert expect.difference(np.array([np.nan, -np.inf]), np.array([np.nan, -np.inf])) == "has NaN values"
    assert expect.difference(np.array([0.0, -np.inf]), want) == ""
    assert expect.difference(np.array([0.0, np.inf]), want) == "has finite values where infinite ones are expected"
    assert expect.difference(np.array([np.inf, -np.inf]), want) == \
        "has infinite values where finite ones are expected"
    assert expect.difference(np.array([0.0, -1e300]), want) == "has finite values where infinite ones are expected"


def test_no_reason_repeats_the_reference_or_the_answer():
    assert expect.difference(10, 11) == "is not the expected value"
    assert expect.difference("no error", "ValueError") == "is not the expected value"
    assert expect.difference((0, 0, 0.5), (11, 12, 0.25)) == "item 0 is not the expected value"
    assert expect.difference(3.5, 3.0) == "differs by 0.5"


def test_an_earlier_answer_is_built_on_only_when_it_is_plausible():
    right, mistake = np.array([1.0, 0.01]), np.array([1.0, 0.1])
    assert expect.plausible([1.0, 0.1], (2,), [right, mistake]).tolist() == [1.0, 0.1]
    for insane in ([np.nan, np.nan], [0.0, 0.0], [1.0, 0.5], [1.0], "1, 0.1", None):
        assert expect.plausible(insane, (2,), [right, mistake]) is None


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


def test_the_library_is_staged_once_and_a_killed_graders_copy_is_swept(tmp_path, monkeypatch):
    """The sandbox's copy of the library holds no compiled files; a dead grader's copy goes, a live one's stays."""
    import subprocess
    import sys

    from classroom import sandbox

    monkeypatch.setattr(sandbox.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(sandbox, "_STAGE", [])
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead, alive = int(ended.stdout), os.getppid()
    for pid in (dead, alive):
        (tmp_path / f"{sandbox.STAGE_PREFIX}{pid}-x").mkdir()
    (tmp_path / "pe-course-sandbox-not-a-pid").mkdir()
    stage = sandbox.staged()
    assert sandbox.staged() == stage and stage.parent == tmp_path
    assert (stage / "pe_lib" / "__init__.py").read_bytes() == (sandbox.LIBRARY / "__init__.py").read_bytes()
    assert not [path for path in stage.rglob("*") if path.suffix == ".pyc" or path.name == "__pycache__"]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [stage.name, f"{sandbox.STAGE_PREFIX}{alive}-x", "pe-course-sandbox-not-a-pid"])
