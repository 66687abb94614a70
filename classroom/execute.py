"""Run a student's cells and the probes in the sandbox; bring back the answers only.

The job (cells and probes) and the runner are written to a fresh scratch
folder, which is the only place the sandbox can write. The grader waits at
most ``timeout`` seconds, then kills the sandbox's whole process group; its
own processes cannot outlive it (bubblewrap's process namespace dies with
it). Whatever happened, the answers file is read with
:func:`classroom.answers.read`, which trusts nothing in it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from classroom import answers as answers_file
from classroom import sandbox

RUNNER = Path(__file__).with_name("runner.py")
#: Address-space cap of one sandbox, unless the spec sets its own (MEMORY_GIB).
MEMORY_BYTES = 4 << 30


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What came back from one run: answers, cell errors, or why there are none."""

    answers: dict
    cell_errors: list
    problem: str = ""
    raw: dict | None = None


def run(cells: list, probes: dict, *, library: bool, timeout: float, cell_seconds: float,
        confined: bool = True, memory_bytes: int = MEMORY_BYTES) -> Outcome:
    """Execute ``cells`` then ``probes`` in a fresh scratch folder and read the answers."""
    scratch = Path(tempfile.mkdtemp(prefix="sandbox-"))
    try:
        os.chmod(scratch, 0o700)  # inside, the sandbox user maps to the grader
        (scratch / "runner.py").write_bytes(RUNNER.read_bytes())
        job = {"cells": cells, "probes": list(probes.items()), "cell_seconds": cell_seconds}
        (scratch / "job.json").write_text(json.dumps(job))
        argv = [sandbox.PYTHON, "-s", "runner.py", "job.json", "answers.json"]
        if confined:
            command, env, cwd = sandbox.bwrap_command(scratch, argv, library=library), None, scratch
        else:
            command, cwd = argv, scratch
            env = dict(sandbox.ENVIRONMENT, HOME=str(scratch), TMPDIR=str(scratch),
                       PYTHONPATH=str(sandbox.LIBRARY.parent) if library else "")
        process = subprocess.Popen(command, cwd=cwd, env=env if env is not None else {},
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True,
                                   preexec_fn=sandbox.limits(memory_bytes))
        try:
            process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            return Outcome({}, [], f"timed out: still running after {timeout:g} s, stopped")
        _kill(process)  # anything it left behind in its group goes too
        try:
            data = answers_file.read(scratch / "answers.json")
        except answers_file.Malformed as error:
            if process.returncode < 0:
                name = signal.Signals(-process.returncode).name
                return Outcome({}, [], f"the run was killed ({name}): {error}")
            if process.returncode:
                return Outcome({}, [], f"the run failed (exit status {process.returncode}): {error}")
            return Outcome({}, [], str(error))
        return Outcome(data["answers"], data["cell_errors"], raw=data["raw"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _kill(process: subprocess.Popen) -> None:
    """Kill the process group of ``process`` and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError):
        pass
