"""The nbval set-up itself: it must catch a changed output or an error, and forgive only
memory addresses and stderr.

Each test writes a small notebook, executes it to record its outputs, optionally
breaks it, and runs ``pytest --nbval`` on it in a subprocess with this
repository's ``conftest.py`` and sanitizer.
"""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]

CELLS = [
    "import os, sys\nprint(6 * 7)",
    "print(object())  # a memory address, different on every run",
    "print('process', os.getpid(), file=sys.stderr)  # stderr, different on every run",
]


@pytest.fixture
def recorded(pytester):
    """A notebook executed once, with its outputs saved, in a pytester folder."""
    pytester.makeconftest((ROOT / "conftest.py").read_text())
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(notebook, kernel_name="python3", timeout=60).execute()
    return notebook


def run_nbval(pytester, notebook):
    nbformat.write(notebook, pytester.path / "chapter.ipynb")
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
        f"--nbval-sanitize-with={ROOT / 'tests' / 'nbval_sanitize.cfg'}", "chapter.ipynb",
    )


def test_an_unchanged_notebook_passes_despite_addresses_and_stderr(pytester, recorded):
    run_nbval(pytester, recorded).assert_outcomes(passed=len(CELLS))


def test_a_changed_printed_number_fails(pytester, recorded):
    recorded.cells[0].outputs[0]["text"] = "43\n"
    run_nbval(pytester, recorded).assert_outcomes(passed=len(CELLS) - 1, failed=1)


def test_a_cell_that_raises_fails(pytester, recorded):
    recorded.cells[1].source = "raise RuntimeError('broken cell')"
    result = run_nbval(pytester, recorded)
    result.assert_outcomes(passed=len(CELLS) - 1, failed=1)
    result.stdout.fnmatch_lines(["*RuntimeError*broken cell*"])


def test_a_missing_output_fails(pytester, recorded):
    recorded.cells[0].outputs = []
    run_nbval(pytester, recorded).assert_outcomes(passed=len(CELLS) - 1, failed=1)
