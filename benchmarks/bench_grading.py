"""Seconds per submission when grading in the sandbox, with 1 and 2 jobs.

Grades copies of the solutions of the NumPy-only Assignment 1 with one job
and with two, and copies of the Keras Assignment 3 with two jobs, each
submission in its own bubblewrap sandbox. Targets on a 2-core machine: at
most 4 s per NumPy submission with 2 jobs, at most 20 s per Keras submission.

Run it with ``python3 tasks.py bench grading``; ``--numpy N`` and ``--keras N``
set the number of copies. It reuses ``assignments/_build`` when it is there
(``python3 tasks.py assignments``) and is current, and builds into a temporary
folder otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from classroom import sandbox  # noqa: E402
from classroom.build import build_assignment, load_references  # noqa: E402
from classroom.grade import grade_folder  # noqa: E402
from classroom.masters import ASSIGNMENTS, BUILD, ClassroomError  # noqa: E402

TARGETS = {"encoding_matrix": 4.0, "keras_positions": 20.0}


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


def seconds_per_submission(name: str, copies: int, jobs: int, build: Path, scratch: Path) -> float:
    """Grade ``copies`` copies of the solutions with ``jobs`` jobs; seconds per submission."""
    folder = scratch / f"{name}-{copies}-{jobs}"
    folder.mkdir()
    solutions = nbformat.read(build / name / "autograder" / f"{name}.ipynb", as_version=4)
    for index in range(copies):
        nbformat.write(solutions, folder / f"student{index:02d}.ipynb")
    began = time.perf_counter()
    rows = grade_folder(folder, out=None, assignment=name, build=build, jobs=jobs, log=lambda line: None)
    elapsed = time.perf_counter() - began
    full = [row for row in rows if row["total"] == row["possible"]]
    if len(full) != copies:
        raise SystemExit(f"{name}: {copies - len(full)} copies of the solutions lost points")
    return elapsed / copies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--numpy", type=int, default=6, help="copies of Assignment 1 (default: 6)")
    parser.add_argument("--keras", type=int, default=2, help="copies of Assignment 3 (default: 2)")
    arguments = parser.parse_args(argv)
    problem = sandbox.check()
    if problem:
        print(f"cannot measure: {problem}")
        return 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"grading in the sandbox on {os.cpu_count()} cores (load average {load:.1f} at the start)")
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        scratch = Path(scratch)
        runs = [("encoding_matrix", arguments.numpy, 1), ("encoding_matrix", arguments.numpy, 2)]
        if arguments.keras:
            runs.append(("keras_positions", arguments.keras, 2))
        print(f"{'assignment':18} {'copies':>6} {'jobs':>4} {'s/submission':>13} {'target':>7}")
        for name, copies, jobs in runs:
            build = built(name, scratch)
            value = seconds_per_submission(name, copies, jobs, build, scratch)
            target = f"{TARGETS[name]:g}" if jobs == 2 else ""
            print(f"{name:18} {copies:6d} {jobs:4d} {value:13.2f} {target:>7}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
