"""Build an assignment: otter's student notebook and bundle, and the reference answers.

Building turns each master ``assignments/<name>/<name>.ipynb`` into

- ``<build>/<name>/student/<name>.ipynb``: what students get, with the
  solutions replaced by ``...`` and only the public tests;
- ``<build>/<name>/autograder/autograder.zip``: otter's bundle, for Gradescope,
  which installs a wheel of the course's package, built with it, and the
  locked versions of what the tests import (:mod:`classroom.bundle`);
- ``<build>/<name>/autograder/<name>.ipynb``: the solutions, without otter's markup;
- ``<build>/<name>/references.json``: the answers of the solutions to the
  spec's probes, which grading compares students' answers with.

and copies each student notebook to ``assignments/<name>/student/``, the
committed copy that the book offers for download.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import numpy as np

from classroom import bundle, execute, sandbox
from classroom.answers import Raised, Unreadable, decode
from classroom.masters import ASSIGNMENTS, BUILD, ClassroomError, describe, load_spec, master_paths
from classroom.submissions import code_cells


@dataclasses.dataclass(frozen=True)
class Built:
    """The files ``build_assignment`` made for one assignment (:func:`build_to_grade`: no bundle)."""

    name: str
    student: Path
    autograder: Path | None
    solutions: Path
    references: Path


def student_notebook_text(path: Path) -> str:
    """The student notebook at ``path`` as text, with cell ids numbered in order.

    ``otter assign`` gives the cells it adds random ids; numbering them makes
    two builds of the same master byte for byte identical.
    """
    notebook = nbformat.read(Path(path), as_version=4)
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index:02d}"
    return nbformat.writes(notebook) + "\n"


def master_solutions(master: Path) -> nbformat.NotebookNode:
    """The master's code cells without its tests: the solutions, made without otter.

    Otter's autograder notebook runs the same code (the master's cells, tests
    left out); this is quicker to make when only the references are wanted.
    """
    cells, testing = [], False
    for cell in nbformat.read(Path(master), as_version=4).cells:
        head = cell.source.strip().upper()
        if cell.cell_type == "raw" and head.startswith(("# BEGIN TESTS", "# END TESTS")):
            testing = head.startswith("# BEGIN TESTS")
        elif cell.cell_type == "code" and not testing:
            cells.append(nbformat.v4.new_code_cell(cell.source))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["otter"] = {"assignment_name": Path(master).stem}
    return notebook


def write_references(name: str, build: Path = BUILD, *, confined: bool | None = None) -> Path:
    """Compute ``name``'s references from its master and write ``build/<name>/references.json``.

    What ``python3 tasks.py assignments`` writes, without running ``otter assign``.
    """
    load_spec(name)  # an unknown name stops here
    notebook = master_solutions(ASSIGNMENTS / name / f"{name}.ipynb")
    path = Path(build) / name / "references.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(compute_references(name, notebook, confined=confined)))
    return path


def build_to_grade(name: str, build: Path = BUILD, *, confined: bool | None = None) -> Built:
    """What grading needs of ``name``, from its master, without ``otter assign``.

    Writes the references and the solutions (:func:`master_solutions`) into
    ``build/<name>/``; the student notebook is the committed copy in
    ``assignments/<name>/student/``, which a test keeps equal to otter's.
    There is no autograder bundle.
    """
    references = write_references(name, build, confined=confined)
    solutions = references.parent / "autograder" / f"{name}.ipynb"
    solutions.parent.mkdir(exist_ok=True)
    nbformat.write(master_solutions(ASSIGNMENTS / name / f"{name}.ipynb"), solutions)
    return Built(name=name, student=ASSIGNMENTS / name / "student" / f"{name}.ipynb", autograder=None,
                 solutions=solutions, references=references)


def compute_references(name: str, solutions: Path | nbformat.NotebookNode, *,
                       confined: bool | None = None) -> dict:
    """The solutions' answers to every probe of ``name``'s spec, as the runner encodes them."""
    spec = load_spec(name)
    if confined is None:
        confined = not sandbox.check()
    notebook = solutions if isinstance(solutions, dict) else nbformat.read(Path(solutions), as_version=4)
    outcome = execute.run(code_cells(notebook), spec.probes, library=spec.library,
                          timeout=10 * spec.seconds, cell_seconds=spec.seconds, confined=confined,
                          memory_bytes=int(spec.memory_gib * (1 << 30)),
                          address_bytes=int(spec.address_gib * (1 << 30)))
    if outcome.problem or outcome.cell_errors:
        raise ClassroomError(f"the solutions of {name} do not run: {outcome.problem or outcome.cell_errors}")
    failed = {key: value for key, value in outcome.answers.items()
              if isinstance(value, (Raised, Unreadable)) or _has_nan(value)}
    if failed or set(outcome.answers) != set(spec.probes):
        lost = sorted(set(spec.probes) - set(outcome.answers))
        raise ClassroomError(f"the solutions of {name} fail probes (a reference may not be NaN): "
                             f"{failed or lost}")
    return outcome.raw


def _has_nan(value) -> bool:
    """True if ``value`` holds a NaN anywhere: a reference must equal something."""
    if isinstance(value, (list, tuple)):
        return any(_has_nan(item) for item in value)
    if isinstance(value, dict):
        return any(_has_nan(item) for item in value.values())
    if isinstance(value, float):
        return value != value
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return bool(np.isnan(value).any())
    return False


def load_references(build: Path, name: str) -> dict:
    """The reference answers of a built assignment, decoded; every probe of its spec must have one."""
    path = Path(build) / name / "references.json"
    if not path.is_file():
        raise ClassroomError(f"no reference answers for {name!r} at {path}: "
                             "run `python3 tasks.py assignments` first")
    references = {key: decode(value) for key, value in json.loads(path.read_text()).items()}
    missing = sorted(set(load_spec(name).probes) - set(references))
    if missing:
        raise ClassroomError(f"the reference answers at {path} are older than {name}'s checks.py "
                             f"(no answer to {', '.join(missing[:3])}): run `python3 tasks.py assignments`")
    return references


def build_assignment(master: Path, build: Path = BUILD, *, run_tests: bool = True,
                     confined: bool | None = None, wheel: Path | None = None) -> Built:
    """Run ``otter assign`` on ``master``, then compute the references, into ``build/<name>/``.

    The bundle installs ``wheel`` (the course's package; built here when not
    given) and the locked versions of what the tests import. Only the
    ``student`` and ``autograder`` subfolders and ``references.json`` of
    ``build/<name>`` are replaced; nothing else there is touched.
    """
    master, build = Path(master), Path(build)
    name = master.stem
    with tempfile.TemporaryDirectory(prefix=f"assign-{name}-") as scratch:
        scratch = Path(scratch)
        source = scratch / "master" / master.name
        source.parent.mkdir()
        shutil.copyfile(master, source)
        bundle.prepare(source, wheel or bundle.build_wheel(source.parent), describe(master).extras)
        command = [sys.executable, "-m", "otter", "assign", str(source), str(scratch / "dist")]
        if not run_tests:
            command.append("--no-run-tests")
        # From the master's folder: otter names the autograder files relative to it.
        done = subprocess.run(command, cwd=source.parent, capture_output=True, text=True)
        if done.returncode:
            raise ClassroomError(f"otter assign failed on {master}:\n{done.stdout}{done.stderr}")
        dist = scratch / "dist"
        bundles = sorted((dist / "autograder").glob("*.zip"))
        if len(bundles) != 1:
            raise ClassroomError(f"otter assign made {len(bundles)} autograder zips for {master}, expected 1")
        references = compute_references(name, dist / "autograder" / master.name, confined=confined)

        staging = scratch / "staging"
        (staging / "student").mkdir(parents=True)
        (staging / "autograder").mkdir()
        (staging / "student" / master.name).write_text(student_notebook_text(dist / "student" / master.name))
        shutil.copyfile(bundles[0], staging / "autograder" / "autograder.zip")
        shutil.copyfile(dist / "autograder" / master.name, staging / "autograder" / master.name)
        (staging / "references.json").write_text(json.dumps(references))

        target = build / name
        target.mkdir(parents=True, exist_ok=True)
        for part in ("student", "autograder", "references.json"):
            if (target / part).is_dir():
                shutil.rmtree(target / part)
            shutil.move(str(staging / part), str(target / part))
    return Built(name=name, student=target / "student" / master.name,
                 autograder=target / "autograder" / "autograder.zip",
                 solutions=target / "autograder" / master.name,
                 references=target / "references.json")


def publish(built: Built, root: Path = ASSIGNMENTS) -> Path:
    """Copy a built student notebook to ``root/<name>/student/``, the copy the book links to."""
    target = Path(root) / built.name / "student" / built.student.name
    text = built.student.read_text()
    if not target.exists() or target.read_text() != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return target


def question_points(autograder: Path) -> dict[str, float]:
    """Points of each question in otter's autograder bundle, in question order."""
    import re
    import zipfile

    from otter.test_files import OKTestFile

    points = {}
    with zipfile.ZipFile(autograder) as bundle, tempfile.TemporaryDirectory() as scratch:
        for name in sorted(n for n in bundle.namelist() if n.startswith("tests/") and n.endswith(".py")):
            test = OKTestFile.from_file(bundle.extract(name, scratch))
            points[test.name] = float(test.possible)
    key = lambda item: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", item[0])]
    return dict(sorted(points.items(), key=key))


def build_all(build: Path = BUILD, *, run_tests: bool = True, root: Path = ASSIGNMENTS,
              publish_students: bool = True, log=print) -> list[Built]:
    """Build every master under ``root`` and (by default) publish the student notebooks.

    One wheel of the course's package goes into every bundle.
    """
    built = []
    with tempfile.TemporaryDirectory(prefix="course-wheel-") as scratch:
        wheel = bundle.build_wheel(Path(scratch))
        for master in master_paths(root):
            log(f"building {master.stem} ...")
            result = build_assignment(master, build, run_tests=run_tests, wheel=wheel)
            if publish_students:
                publish(result, root)
            log(f"  student notebook: {result.student}\n  references:       {result.references}")
            built.append(result)
    return built
