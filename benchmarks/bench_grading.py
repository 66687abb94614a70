"""Grading a class: seconds per submission with 1 and 2 jobs, and the grader's peak memory.

Generates a class of Assignment 1 (300 students by default), a quarter each
the solutions, the solutions with the typical mistake of ``i`` in place of
``2i`` in the exponent, the blank student notebook and the solutions pasted
into a fresh notebook (no otter metadata), and grades it with ``--jobs 1``
and with ``--jobs 2``, each in a fresh process, every submission in its own
bubblewrap sandbox. The grader's peak memory is that process's own (its
``VmHWM``); the sandboxes are other processes, each bounded by its
assignment's budget. Every row must hold the score its notebook earns.

Targets on a 2-core machine: at most :data:`SECONDS_TARGET` s per submission
with each number of jobs, and a grader of at most :data:`MEMORY_TARGET_MIB`
MiB. ``--keras N`` also grades N copies of the Keras Assignment 3 with two
jobs (at most 20 s each).

Run it with ``python3 tasks.py bench grading``; ``--students N`` sets the size
of the class. It reuses ``assignments/_build`` when it is there
(``python3 tasks.py assignments``) and is current, and builds into a
temporary folder otherwise.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from classroom import demo, sandbox  # noqa: E402
from classroom.build import build_assignment, load_references  # noqa: E402
from classroom.masters import ASSIGNMENTS, BUILD, ClassroomError  # noqa: E402

#: Seconds per submission, by jobs, on 2 cores; and the grader's memory.
SECONDS_TARGET = {1: 0.5, 2: 0.5}
MEMORY_TARGET_MIB = 100
KERAS_TARGET = 20.0
#: What each kind of generated student earns, out of 11.
EARNS = {"solutions": "11", "mistake": "9.6667", "blank": "0", "pasted": "11"}

GRADE = """
import json, re, sys, time
from pathlib import Path
from classroom.grade import grade_folder
folder, name, build, jobs = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
began = time.perf_counter()
rows = grade_folder(folder, out=None, assignment=name, build=build, jobs=jobs, log=lambda line: None)
seconds = time.perf_counter() - began
peak = int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024
print(json.dumps({"seconds": seconds, "peak_mib": peak, "totals": {row["student"]: row["total"] for row in rows}}))
"""


def built(name: str, scratch: Path) -> Path:
    """A build folder holding ``name``: the course's own if it is there and current, else a fresh one."""
    if (BUILD / name / "references.json").is_file() and (BUILD / name / "autograder" / f"{name}.ipynb").is_file():
        try:
            load_references(BUILD, name)
            return BUILD
        except ClassroomError:  # older than the assignment's checks.py
            pass
    build_assignment(ASSIGNMENTS / name / f"{name}.ipynb", scratch / "build", run_tests=False)
    return scratch / "build"


def generated_class(folder: Path, students: int, build: Path) -> dict[str, str]:
    """Write ``students`` notebooks of Assignment 1 into ``folder``; what each should earn."""
    name = demo.NAME
    solutions = nbformat.read(build / name / "autograder" / f"{name}.ipynb", as_version=4)
    blank = nbformat.read(ASSIGNMENTS / name / "student" / f"{name}.ipynb", as_version=4)
    mistake = copy.deepcopy(solutions)
    (cell,) = [cell for cell in mistake.cells if "def angle_rates" in cell.source]
    cell.source = demo.CY_RATES
    pasted = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.source)
                                             for cell in solutions.cells if cell.cell_type == "code"])
    kinds = {"solutions": solutions, "mistake": mistake, "blank": blank, "pasted": pasted}
    folder.mkdir(parents=True)
    expected = {}
    for index in range(students):
        kind = list(kinds)[index % len(kinds)]
        nbformat.write(kinds[kind], folder / f"student{index:03d}.ipynb")
        expected[f"student{index:03d}"] = EARNS[kind]
    return expected


def grade_in_a_fresh_process(folder: Path, name: str, build: Path, jobs: int) -> dict:
    """Grade ``folder`` in a process of its own: seconds, the grader's peak memory and the totals."""
    done = subprocess.run([sys.executable, "-c", GRADE, str(folder), name, str(build), str(jobs)],
                          capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if done.returncode:
        raise SystemExit(f"grading failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=300, help="size of the class (default: 300)")
    parser.add_argument("--keras", type=int, default=0, help="copies of Assignment 3 (default: 0)")
    arguments = parser.parse_args(argv)
    problem = sandbox.check()
    if problem:
        print(f"cannot measure: {problem}")
        return 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"grading in the sandbox on {os.cpu_count()} cores (load average {load:.1f} at the start)")
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        scratch = Path(scratch)
        build = built(demo.NAME, scratch)
        folder = scratch / "class"
        expected = generated_class(folder, arguments.students, build)
        print(f"{'assignment':18} {'students':>8} {'jobs':>4} {'s/submission':>13} {'target':>7} "
              f"{'grader MiB':>10} {'target':>7}")
        for jobs in (1, 2):
            result = grade_in_a_fresh_process(folder, demo.NAME, build, jobs)
            wrong = sorted(student for student, total in result["totals"].items() if total != expected[student])
            if wrong or len(result["totals"]) != len(expected):
                raise SystemExit(f"{len(wrong)} students did not earn what their notebooks earn: {wrong[:5]}")
            per = result["seconds"] / arguments.students
            failed |= per > SECONDS_TARGET[jobs] or result["peak_mib"] > MEMORY_TARGET_MIB
            print(f"{demo.NAME:18} {arguments.students:8d} {jobs:4d} {per:13.2f} {SECONDS_TARGET[jobs]:7g} "
                  f"{result['peak_mib']:10.0f} {MEMORY_TARGET_MIB:7d}", flush=True)
        if arguments.keras:
            name = "keras_positions"
            build = built(name, scratch)
            folder = scratch / name
            folder.mkdir()
            solutions = nbformat.read(build / name / "autograder" / f"{name}.ipynb", as_version=4)
            for index in range(arguments.keras):
                nbformat.write(solutions, folder / f"student{index:02d}.ipynb")
            result = grade_in_a_fresh_process(folder, name, build, 2)
            per = result["seconds"] / arguments.keras
            failed |= per > KERAS_TARGET
            print(f"{name:18} {arguments.keras:8d} {2:4d} {per:13.2f} {KERAS_TARGET:7g} "
                  f"{result['peak_mib']:10.0f}", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} at the end; {'some targets missed' if failed else 'every target met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
