"""How long the course takes to run, beside its targets.

Prints each chapter's execution time (top to bottom in a fresh kernel, outputs
discarded), their total, the time of `tasks.py test --quick` (the unit, property
and doc tests), and the time of the whole test command.

Targets on a 2-core machine: 40 s for a chapter that trains models, 60 s for
the real-text chapter, 15 s for any other; the whole test command, as
`tasks.py test` runs it (every test on two workers, then the layer tests on
JAX), within 8 minutes; `test --quick` within 2 minutes.

Run it with ``python3 tasks.py bench`` (or this file directly, from the
environment that tasks.py creates).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tasks import SLOW_TESTS  # noqa: E402  (what `test --quick` leaves out)
TRAINING_TARGET_S = 40.0
CHAPTER_TARGET_S = 15.0
SUITE_TARGET_S = 480.0
#: `tasks.py test --quick`: the unit, property and doc tests, for the edit-test loop.
QUICK_TARGET_S = 120.0
#: The chapters that train Keras models, and so have the larger budget.
TRAINING_CHAPTERS = {"attention_scores", "beyond_sinusoids", "encoder_decoder",
                     "learned_vs_fixed", "rope"}
#: Chapters with a budget of their own.
OWN_TARGETS_S = {"real_text": 60.0}


def chapter_time(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    began = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - began


def pytest_time(*arguments: str, **environment: str) -> tuple[float, int]:
    began = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *arguments],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, **environment})
    if result.returncode:
        # the figures alone do not say what to fix: show pytest's summary of the failures
        summary = result.stdout.partition("short test summary info")[2] or result.stdout[-3000:]
        print(summary.strip(), flush=True)
    return time.perf_counter() - began, result.returncode


def verdict(seconds: float, target: float) -> str:
    return "ok" if seconds <= target else "OVER"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-suite", action="store_true", help="do not time the whole test suite")
    args = parser.parse_args()

    print(f"{'chapter':<34}{'seconds':>9}   target")
    total = 0.0
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        seconds = chapter_time(path)
        total += seconds
        target = OWN_TARGETS_S.get(
            path.stem, TRAINING_TARGET_S if path.stem in TRAINING_CHAPTERS else CHAPTER_TARGET_S
        )
        print(f"{path.stem:<34}{seconds:9.1f}   {target:g} s: {verdict(seconds, target)}", flush=True)
    print(f"{'all chapters':<34}{total:9.1f}")

    quick, code = pytest_time("-n", "2", "--dist", "loadscope", *[f"--ignore={path}" for path in SLOW_TESTS])
    print(f"{'test --quick (two workers)':<34}{quick:9.1f}   target {QUICK_TARGET_S:g} s: "
          f"{verdict(quick, QUICK_TARGET_S)}, {'passed' if code == 0 else 'FAILED'}")
    if not args.skip_suite:
        suite, code = pytest_time("-n", "2", "--dist", "loadscope")
        print(f"{'every test, two workers':<34}{suite:9.1f}   {'passed' if code == 0 else 'FAILED'}")
        jax, jax_code = pytest_time("tests/test_layers.py", "pe_lib/layers", KERAS_BACKEND="jax")
        print(f"{'layer tests on JAX':<34}{jax:9.1f}   {'passed' if jax_code == 0 else 'FAILED'}")
        whole = suite + jax
        print(f"{'whole test command':<34}{whole:9.1f}   target {SUITE_TARGET_S:g} s: "
              f"{verdict(whole, SUITE_TARGET_S)}, {'passed' if code == jax_code == 0 else 'FAILED'}")


if __name__ == "__main__":
    main()
