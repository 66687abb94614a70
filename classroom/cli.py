"""The command line: ``python -m classroom build`` and ``python -m classroom grade FOLDER``.

``python3 tasks.py assignments`` and ``python3 tasks.py grade`` call it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from classroom.build import build_all
from classroom.grade import DEFAULT_TIMEOUT, UNSAFE_FLAG, OutputError, grade_folder
from classroom.masters import BUILD, ClassroomError


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m classroom``."""
    main = argparse.ArgumentParser(prog="python -m classroom",
                                   description="Build the assignments and grade submissions in a sandbox.")
    commands = main.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build every student notebook, bundle and reference")
    build.add_argument("--build", type=Path, default=BUILD, help="build folder (default: assignments/_build)")
    build.add_argument("--no-run-tests", action="store_true", help="skip otter's run of the solutions")
    grade = commands.add_parser("grade", help="grade a folder of submissions into a CSV")
    grade.add_argument("folder", type=Path, help="one notebook, or one folder with a notebook, per student")
    grade.add_argument("--out", type=Path, default=Path("scores.csv"), help="CSV to write (default: scores.csv)")
    grade.add_argument("--feedback", type=Path, default=None, help="folder for one feedback file per student")
    grade.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                       help=f"seconds per submission (default: {DEFAULT_TIMEOUT:g})")
    grade.add_argument("--cell-timeout", type=float, default=None,
                       help="seconds one cell may run (default: the assignment's)")
    grade.add_argument("--assignment", help="assignment of the notebooks whose metadata names none "
                                            "(a notebook whose metadata names one is graded as that one)")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default: 1)")
    grade.add_argument("--build", type=Path, default=BUILD, help="build folder (default: assignments/_build)")
    grade.add_argument("--regrade", action="store_true",
                       help="grade every student again, even those an earlier run with the same --out "
                            "graded and whose notebooks are unchanged")
    grade.add_argument(UNSAFE_FLAG, dest="unsafe", action="store_true",
                       help="run student code WITHOUT the sandbox, with your rights (trusted code only)")
    return main


def main(argv: list[str] | None = None) -> int:
    """Run the command; a problem with the command as given exits with status 2.

    An output that could not be written after grading exits with status 3,
    an interruption (Ctrl-C) with 130; each says in one line what to do.
    """
    arguments = parser().parse_args(argv)
    try:
        if arguments.command == "build":
            build_all(arguments.build, run_tests=not arguments.no_run_tests)
        else:
            grade_folder(arguments.folder, out=arguments.out, assignment=arguments.assignment,
                         build=arguments.build, timeout=arguments.timeout,
                         cell_timeout=arguments.cell_timeout, jobs=arguments.jobs,
                         feedback=arguments.feedback, unsafe_no_sandbox=arguments.unsafe,
                         regrade=arguments.regrade)
    except OutputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    except ClassroomError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the scores file is as it was", file=sys.stderr)
        return 130
    return 0
