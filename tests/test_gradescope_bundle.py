"""otter's Gradescope bundles, run as Gradescope runs them, and the two graders compared.

Gradescope installs a bundle's environment from the ``pip`` list of its
``environment.yml`` and nothing else. So does this test: a fresh virtual
environment gets that list, with one change: the course's wheel is named by
its path on Gradescope, ``/autograder/source/files/``, which here is where the
test unpacked the bundle. uv installs the list (pinned, the rest resolved to
the newest versions allowed, as pip does) and links the files from its cache,
where pip would download TensorFlow again (the environment has a fresh home)
and copy every file. conda's own part of the environment (Python,
pip, ``jupyter_server``) is this machine's Python 3.11. ``otter run`` from that
environment then grades Assignment 1 (installed alone first) and Assignment 3
(whose list holds Assignment 1's and adds Keras and TensorFlow, so that the
environment is then its list alone too).

Assignment 1's solutions, its blank, the catalogue of honest habits
(``test_grading_habits.py``), the typical mistakes and odd answers of
``test_fairness.py``, the red-team attacks of ``test_red_team.py`` that are safe
to run outside a sandbox, and the two forgeries otter cannot stop are graded
by both graders, otter's in one loop in one process. They agree on every case
but those of ``DIFFERENCES``, each with its reason (stated in the Classroom
chapter and on ``grading_sandbox.md``): the forgeries, the partial scores of
typical mistakes, and three honest habits otter cannot grade in full (a
function defined under ``%%time``, a notebook without otter's metadata, a
hidden file name).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

import tasks
from classroom import bundle, compare, sandbox
from classroom.build import load_references, master_solutions
from classroom.grade import grade_folder
from classroom.masters import ASSIGNMENTS, ROOT, describe, load_spec
from test_fairness import GAMES, MISTAKES, NUMBER_TYPES, _pasted, _replace
from test_grading_habits import catalogue
from test_red_team import ATTACKS, DEFINE_FUNCTIONS

ASSIGNMENT, KERAS = "encoding_matrix", "keras_positions"
ASSIGNMENT_MASTER = ASSIGNMENTS / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"

# The course's grader needs bubblewrap: skipped where it cannot run, except under CI.
needs_sandbox = pytest.mark.skipif(bool(sandbox.check()) and not os.environ.get("CI"), reason=sandbox.check() or "")

#: Attacks of the red team that harm nothing outside a sandbox. The others kill
#: every process, delete notebooks, fill the memory or the disk, fork, or never
#: end (otter has no sandbox: only Gradescope's container would hold them), and
#: two leave otter waiting for ever on a kernel that no longer answers (Gradescope's
#: time limit would end them, with no score): ``deep_sum`` and ``patches_the_checks``
#: (whose ``__import__`` is the kernel's too: its messaging stops).
SAFE_ATTACKS = ("links_the_references", "leaks_hidden_files", "steals_the_probes", "huge_answer_in_a_probe",
                "forged_huge_numbers", "unary_minus", "long_line", "reads_the_host")

#: Forgeries of otter's checks from inside the notebook, which share otter's process.
FORGERIES = {
    "forges_doctest_summary": "import doctest\n"
                              "doctest.DocTestRunner.summarize = lambda *args, **kwargs: doctest.TestResults(0, 1)",
    "forges_numpy_allclose": "import numpy\nnumpy.allclose = lambda *args, **kwargs: True",
}

#: Why the graders differ, by kind of case, as the pages' tables say it (their prose explains it).
REASONS = {
    "forgery": "one process",
    "weights": "equal cases",
    "pe_lib": "pe_lib installed",
    "timed": "no source",
    "metadata": "no metadata",
    "other": "another assignment",
    "hidden": "hidden name",
}
#: Where the graders differ on Assignment 1: case -> (course's total, otter's total, why).
#: otter's total is None where ``otter run`` refuses the notebook and grades nothing.
DIFFERENCES = {
    "forges_doctest_summary": (0, 11, "forgery"),
    "forges_numpy_allclose": (0, 1.67, "forgery"),
    "i_instead_of_2i": (9.67, 8, "weights"),
    "off_by_one": (7.8, 7.67, "weights"),
    "sin_cos_swapped": (7.8, 7.67, "weights"),
    "float32": (10.38, 8.67, "weights"),
    "rates_wrong_for_odd_depth": (10.11, 9.17, "weights"),
    "all_nan": (4.42, 5.33, "weights"),
    "all_zeros": (4.42, 5.33, "weights"),
    "zero_rates": (6.02, 7.33, "weights"),
    "zero_table": (9.4, 9, "weights"),
    "uses_pe_lib": (5, 10.33, "pe_lib"),
    "cell_magic_time": (11, 9.83, "timed"),
    "pasted_without_metadata": (11, None, "metadata"),
    "every_cell_deleted": (0, None, "metadata"),
    "another_assignments_solutions": (0, None, "other"),
    ".hidden": (11, None, "hidden"),
}


def _mistakes() -> dict:
    """Typical mistakes and odd answers of Assignment 1: case -> (replacements, course's total)."""
    cases = {name: (replacements, sum(expected)) for name, (replacements, expected, _) in {**MISTAKES, **GAMES}.items()}
    cases.update({name: ({"table = encoding_matrix(200, 16)": source}, 11) for name, source in NUMBER_TYPES.items()})
    return cases


def _attacked(blank, code: str, last: bool) -> nbformat.NotebookNode:
    notebook = copy.deepcopy(blank)
    first = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells.insert(len(notebook.cells) if last else first + 1, nbformat.v4.new_code_cell(code))
    return notebook


def class_of_assignment_1(built, folder: Path) -> None:
    """Write every case of Assignment 1 into ``folder``, one notebook each."""
    solutions = master_solutions(ASSIGNMENT_MASTER)  # as the habits and fairness tests write them
    blank = nbformat.read(built.student, as_version=4)
    nbformat.write(solutions, folder / "solutions.ipynb")
    nbformat.write(blank, folder / "blank.ipynb")
    for name, text in catalogue(solutions).items():
        (folder / f"{name}.ipynb").write_text(text)
    for name, (replacements, _) in _mistakes().items():
        nbformat.write(_replace(solutions, replacements), folder / f"{name}.ipynb")
    nbformat.write(_pasted(solutions), folder / "pasted_without_metadata.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), folder / "every_cell_deleted.ipynb")
    nbformat.write(master_solutions(ASSIGNMENTS / "attention_biases" / "attention_biases.ipynb"),
                   folder / "another_assignments_solutions.ipynb")
    values = dict(references=built.references, ada=folder / "solutions.ipynb", cleo=folder / "solutions.ipynb",
                  course=ROOT, assignment=ASSIGNMENT, scores=folder / "never.csv", mark="0", port=9,
                  scratch_guess="/nonexistent/answers.json")
    for name in SAFE_ATTACKS:
        nbformat.write(_attacked(blank, ATTACKS[name].format(**values), name in DEFINE_FUNCTIONS),
                       folder / f"{name}.ipynb")
    for name, code in FORGERIES.items():
        nbformat.write(_attacked(blank, code, last=False), folder / f"{name}.ipynb")


def course_totals() -> dict[str, float]:
    """What the course's grader gives each case of Assignment 1, as the other test files assert it."""
    totals = {"solutions": 11, "blank": 0, "pasted_without_metadata": 11, "every_cell_deleted": 0,
              "another_assignments_solutions": 0}
    totals.update({name.removesuffix(".ipynb"): 11 for name in catalogue(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(marker) for marker in
        ("import numpy", "def angle_rates", "def encoding_matrix", "table = encoding_matrix", "def closest_rows")]))})
    totals.update({name: total for name, (_, total) in _mistakes().items()})
    totals.update({name: 0 for name in (*SAFE_ATTACKS, *FORGERIES)})
    return totals


#: Run in the bundle's environment: otter run on each notebook, in one process.
DRIVER = """
import contextlib, io, json, sys, time
from otter.run import main as otter_run
bundle, out, notebooks = sys.argv[1], sys.argv[2], sys.argv[3:]
results = {}
for path in notebooks:
    name = path.rsplit('/', 1)[-1].removesuffix('.ipynb')
    began = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            graded = otter_run(path, autograder=bundle, output_dir=None, no_logo=True)
        results[name] = dict(total=graded.total, possible=graded.possible,
                             scores={q: result.score for q, result in graded.results.items()})
    except Exception as error:
        results[name] = dict(error=f'{type(error).__name__}: {error}'[:300])
    results[name]['seconds'] = time.perf_counter() - began
open(out, 'w').write(json.dumps(results))
"""


#: uv, from the course's environment.
UV = str(Path(sys.executable).parent / "uv")


@functools.cache
def uv_cache() -> str:
    """The tester's uv cache, which outlives the test."""
    return subprocess.run([UV, "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()


class Gradescope:
    """A fresh virtual environment that installs bundles' pip lists and runs ``otter run`` in it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.python = folder / "venv" / "bin" / "python"
        self.home = folder / "home"
        self.home.mkdir()
        subprocess.run([UV, "venv", "--quiet", "--python", sys.executable, str(folder / "venv")],
                       check=True, env=self.uv_env())

    def uv_env(self) -> dict[str, str]:
        """The plain environment, with the tester's uv cache and certificates (uv's, not the bundle's)."""
        passed = {name: os.environ[name] for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "UV_INDEX_URL",
                                                      "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")
                  if name in os.environ}
        return {**self.env(), **passed, "UV_CACHE_DIR": uv_cache()}

    def env(self) -> dict[str, str]:
        """A plain environment: no PYTHONPATH (the course's folder), no Keras setting, a fresh home."""
        return {"PATH": f"{self.python.parent}:/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home),
                "LANG": "C.UTF-8", "TMPDIR": os.environ.get("TMPDIR", "/tmp")}

    def install(self, autograder: Path) -> list[str]:
        """Install the bundle's pip list, the wheel's path on Gradescope read as where it was unpacked."""
        source = self.folder / autograder.parent.parent.name / "source"
        with zipfile.ZipFile(autograder) as archive:
            archive.extractall(source)
        lines = [line.replace(f"file://{bundle.GRADESCOPE_FILES}/", f"file://{source}/files/")
                 for line in bundle.installed(autograder)]
        requirements = source / "pip-requirements.txt"
        requirements.write_text("\n".join(lines) + "\n")
        done = subprocess.run([UV, "pip", "install", "--quiet", "--python", str(self.python), "-r", str(requirements)],
                              capture_output=True, text=True, env=self.uv_env())
        assert done.returncode == 0, done.stdout + done.stderr
        return lines

    def modules(self, *names: str) -> dict[str, str]:
        """Where the environment imports each module from, and its version."""
        code = ("import importlib, json, sys\nprint(json.dumps({n: [importlib.import_module(n).__file__, "
                "getattr(importlib.import_module(n), '__version__', '')] for n in sys.argv[1:]}))")
        done = subprocess.run([str(self.python), "-c", code, *names], capture_output=True, text=True,
                              env=self.env(), cwd=self.home, check=True)
        return json.loads(done.stdout)

    def run(self, autograder: Path, notebooks: list[Path]) -> dict:
        """``otter run`` on each notebook, in one process; the results and the time each took."""
        driver, out = self.folder / "driver.py", self.folder / f"results-{len(notebooks)}.json"
        driver.write_text(DRIVER)
        began = time.perf_counter()
        with open(self.folder / "otter.log", "a") as log:  # the kernels' own messages
            subprocess.run([str(self.python), str(driver), str(autograder), str(out), *map(str, notebooks)],
                           check=True, env=self.env(), cwd=self.home, timeout=1800, stdout=log, stderr=log)
        results = json.loads(out.read_text())
        results["_seconds"] = time.perf_counter() - began
        return results


@pytest.fixture(scope="module")
def gradescope(tmp_path_factory):
    return Gradescope(tmp_path_factory.mktemp("gradescope"))


@pytest.fixture(scope="module")
def first(builds, gradescope, tmp_path_factory):
    """Assignment 1's class, graded by otter in an environment of its bundle's list alone."""
    built = builds(ASSIGNMENT)
    gradescope.install(built.autograder)
    modules = gradescope.modules("pe_lib", "numpy", "otter")
    folder = tmp_path_factory.mktemp("assignment-1-class")
    class_of_assignment_1(built, folder)
    notebooks = sorted(folder.glob("*.ipynb"))
    return dict(built=built, modules=modules, folder=folder,
                otter=gradescope.run(built.autograder, notebooks))


@pytest.fixture(scope="module")
def keras_results(first, builds, gradescope, tmp_path_factory):
    """Assignment 3's solutions, blank and a layer without its length check, graded by otter."""
    built = builds(KERAS)
    gradescope.install(built.autograder)
    folder = tmp_path_factory.mktemp("assignment-3-class")
    solutions = nbformat.read(built.solutions, as_version=4)
    nbformat.write(solutions, folder / "solutions.ipynb")
    (folder / "blank.ipynb").write_bytes(built.student.read_bytes())
    nbformat.write(_replace(solutions, {"class SinusoidalPositions": NO_LENGTH_CHECK}), folder / "no_length_check.ipynb")
    return dict(built=built, modules=gradescope.modules("keras", "tensorflow", "pe_lib"),
                otter=gradescope.run(built.autograder, sorted(folder.glob("*.ipynb"))))


NO_LENGTH_CHECK = '''class SinusoidalPositions(keras.layers.Layer):
    def __init__(self, max_length, **kwargs):
        super().__init__(**kwargs)
        self.max_length = max_length

    def build(self, input_shape):
        self.table = keras.ops.convert_to_tensor(pe_lib.sinusoidal_encoding(self.max_length, input_shape[-1]))

    def call(self, inputs):
        return inputs + keras.ops.cast(self.table[: keras.ops.shape(inputs)[1]], inputs.dtype)

    def get_config(self):
        return {**super().get_config(), "max_length": self.max_length}
'''


# ---------------------------------------------------------------- what the bundles install


@pytest.mark.parametrize("name, extras", [(ASSIGNMENT, ()), (KERAS, ("keras", "tensorflow"))])
def test_each_bundle_installs_the_courses_wheel_and_the_locked_versions(builds, name, extras):
    built = builds(name)
    locked = bundle.locked_versions()
    lines = bundle.installed(built.autograder)
    with zipfile.ZipFile(built.autograder) as archive:
        (wheel,) = [n for n in archive.namelist() if n.startswith("files/") and n.endswith(".whl")]
        environment = archive.read("environment.yml").decode()
    assert "python=3.11\n" in environment and tasks.LOCK_PYTHON.startswith(bundle.PYTHON + ".")
    assert lines[0] == f"otter-grader[grading,plugins]=={locked['otter-grader']}"
    assert lines[1].endswith(f" @ file://{bundle.GRADESCOPE_FILES}/{wheel.removeprefix('files/')}")
    expected = ["numpy", "matplotlib", *extras]
    assert lines[2:] == [f"{package}=={locked[package]}" for package in expected]


def test_assignment_3s_list_holds_assignment_1s(builds):
    """So the shared environment, once Assignment 3's list is installed, is that list alone."""
    without_extras = lambda lines: {re.sub(r"\[[^\]]*\]", "", line) for line in lines}  # noqa: E731
    first, keras = (bundle.installed(builds(name).autograder) for name in (ASSIGNMENT, KERAS))
    assert without_extras(first) < without_extras(keras)


def test_the_bundle_pins_only_versions_within_the_courses_bounds():
    with pytest.raises(bundle.ClassroomError, match=r"the locked numpy==1.0 is outside the course's bounds"):
        bundle.requirements_text("w.whl", ["numpy>=1.26,<3"], {"numpy": "1.0"})
    with pytest.raises(bundle.ClassroomError, match="rich-text is not in requirements.lock"):
        bundle.requirements_text("w.whl", ["rich-text"], {})


def test_a_master_that_sets_what_the_build_sets_is_refused(builds, tmp_path):
    master = tmp_path / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(ASSIGNMENT_MASTER, as_version=4)
    notebook.cells[0].source += "\nrequirements: mine.txt\n"
    nbformat.write(notebook, master)
    with pytest.raises(bundle.ClassroomError, match=r"sets \['requirements'\]: the build sets them"):
        bundle.prepare(master, builds.wheel or bundle.build_wheel(tmp_path / "wheel"))


def test_the_environment_imports_the_bundles_copies_not_the_courses(first):
    modules = first["modules"]
    assert all(str(ROOT) not in path for path, _ in modules.values())
    assert "site-packages" in modules["pe_lib"][0] and modules["numpy"][1] == bundle.locked_versions()["numpy"]


# ---------------------------------------------------------------- Assignment 1: otter as Gradescope runs it


def test_the_solutions_earn_full_marks_under_otter(first):
    result = first["otter"]["solutions"]
    assert result["total"] == result["possible"] == describe(ASSIGNMENT_MASTER).total == 11


def test_the_blank_earns_zero_under_otter(first):
    result = first["otter"]["blank"]
    assert result["total"] == 0 and result["possible"] == 11



def _otter_total(result: dict):
    """otter's total to 2 decimals, or None where it refused the notebook."""
    return None if "error" in result else round(result["total"], 2)


def test_otter_and_the_course_agree_on_every_case_but_the_stated_ones(first):
    expected = course_totals()
    otter = {name: result for name, result in first["otter"].items() if not name.startswith("_")}
    assert sorted(otter) == sorted(expected)
    disagree = {name: (round(expected[name], 2), _otter_total(result)) for name, result in otter.items()
                if _otter_total(result) is None or abs(_otter_total(result) - expected[name]) > 0.005}
    assert disagree == {name: (course, otter) for name, (course, otter, _) in DIFFERENCES.items()}


def test_otter_refuses_with_its_reason(first):
    otter = first["otter"]
    assert "No gradable files found" in otter[".hidden"]["error"]
    for name in ("pasted_without_metadata", "every_cell_deleted"):
        assert "Received submission for assignment 'None'" in otter[name]["error"]
    assert "Received submission for assignment 'attention_biases'" in otter["another_assignments_solutions"]["error"]


def _stated(text: str) -> dict:
    """The rows ``| `case` | course | otter | why |`` of a page's table of differences."""
    rows = re.findall(r"^\| `([^`]+)` \| ([\d.]+) \| ([\d.]+|refused) \| (.+?) \|$", text, re.M)
    return {case: (float(course), None if otter == "refused" else float(otter), why.strip())
            for case, course, otter, why in rows}


def test_the_differences_are_stated_with_their_reasons_on_the_sandbox_page():
    stated = _stated((ROOT / "grading_sandbox.md").read_text())
    assert stated == {case: (course, otter, REASONS[why]) for case, (course, otter, why) in DIFFERENCES.items()}


def test_the_classroom_chapter_states_one_case_of_each_kind_of_difference():
    chapter = nbformat.read(ROOT / "chapters" / "classroom.ipynb", as_version=4)
    stated = _stated("\n".join(cell.source for cell in chapter.cells if cell.cell_type == "markdown"))
    assert {DIFFERENCES[case][2] for case in stated} == set(REASONS)
    assert stated == {case: (DIFFERENCES[case][0], DIFFERENCES[case][1], REASONS[DIFFERENCES[case][2]])
                      for case in stated}


@needs_sandbox
def test_the_course_grades_the_same_class_as_the_other_tests_say(first):
    """The course's totals above are those its grader gives this very folder."""
    build = first["built"].references.parents[1]
    rows = grade_folder(first["folder"], out=None, assignment=ASSIGNMENT, build=build, jobs=2,
                        log=lambda line: None)
    assert {row["student"]: float(row["total"]) for row in rows} == pytest.approx(course_totals(), abs=1e-3)


def test_a_typical_mistake_costs_twice_under_otter(first):
    """Positions from 1: under otter q3's hidden test fails too (the table is compared with pe_lib's),
    where the course judges q3 on the student's own table (7.8 in all)."""
    assert first["otter"]["off_by_one"]["scores"] == pytest.approx({"q1": 2, "q2": 4 / 3, "q3": 4 / 3, "q4": 3})
    assert course_totals()["off_by_one"] == pytest.approx(7.8)


def test_every_honest_habit_earns_full_marks_under_otter_too(first):
    honest = [name for name, total in course_totals().items() if total == 11 and name not in DIFFERENCES]
    assert len(honest) > 20
    assert {name: _otter_total(first["otter"][name]) for name in honest} == {name: 11 for name in honest}


# ---------------------------------------------------------------- Assignment 3: Keras in the bundle


def test_the_keras_bundle_installs_keras_on_tensorflow(keras_results):
    modules = keras_results["modules"]
    locked = bundle.locked_versions()
    assert modules["keras"][1] == locked["keras"] and modules["tensorflow"][1] == locked["tensorflow"]


def test_the_keras_solutions_earn_full_marks_and_the_blank_zero_under_otter(keras_results):
    otter = keras_results["otter"]
    possible = describe(ASSIGNMENTS / KERAS / f"{KERAS}.ipynb").total
    assert otter["solutions"]["total"] == otter["solutions"]["possible"] == possible == 10
    assert otter["blank"]["total"] == 0


def test_a_layer_without_its_length_check_costs_a_case_under_otter_and_a_weight_under_the_course(keras_results):
    """otter: one of q1's four equal test cases fails (4 x 3/4 = 3); the course: the check weighs
    1 of 5 (4 x 4/5 = 3.2). The course's score is its comparison of this notebook's answers, which are
    the solutions' (the build's references) except that a too long input raises no ValueError."""
    built = keras_results["built"]
    references = load_references(built.references.parents[1], KERAS)
    spec, info = load_spec(KERAS), describe(ASSIGNMENTS / KERAS / f"{KERAS}.ipynb")
    answers = {**references, "too_long": "no error"}
    course = compare.score_all(spec.questions, info.points, answers, references)
    assert {q: round(result.score, 4) for q, result in course.items()} == {"q1": 3.2, "q2": 2, "q3": 4}
    assert keras_results["otter"]["no_length_check"]["scores"] == {"q1": 3, "q2": 2, "q3": 4}
