"""The nbval set-up itself: it must catch a changed output or an error, and forgive only
memory addresses and stderr.

Each test writes a small notebook, executes it to record its outputs, optionally
breaks it, and runs ``pytest --nbval`` on it in a subprocess with this
repository's ``conftest.py`` and sanitizer.
"""

import base64
import copy
import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # imported here: pytester forgets modules imported during a test
import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]

CELLS = [
    "import os, sys\nprint(6 * 7)",
    "print(object())  # a memory address, different on every run",
    "print('process', os.getpid(), file=sys.stderr)  # stderr, different on every run",
    "print(6 * 7)  # Cell 3: its committed output is changed below",
    "print('fine')  # Cell 4: replaced below by a cell that raises",
    "print(6 * 7)  # Cell 5: its committed output is removed below",
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


def test_nbval_forgives_addresses_and_stderr_and_nothing_else(pytester, recorded):
    # One nbval run (one kernel) checks every case: a kernel start costs seconds.
    recorded.cells[3].outputs[0]["text"] = "43\n"  # a changed printed number
    recorded.cells[4].source = "raise RuntimeError('broken cell')"  # a cell that raises
    recorded.cells[5].outputs = []  # a missing output
    result = run_nbval(pytester, recorded)
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(["*RuntimeError*broken cell*"])
    for cell in (3, 4, 5):
        result.stdout.fnmatch_lines([f"FAILED chapter.ipynb::Cell {cell}*"])


# --- glued figures --------------------------------------------------------------------------
# A chapter glues each figure with myst-nb; the record holds the PNG bytes beside the figure's
# text form. The bytes are compared only in the locked environment (see conftest.py); the
# numbers glued beside them always are. A figure glued with glue_figure(..., rtol=...) is
# compared by the data it draws, within rtol, and never by its bytes. One notebook holds every case, so that nbval starts
# one kernel per setting.

FIGURE = (
    "figure, axes = plt.subplots(figsize=(3, 2))\naxes.plot([0, 1, 2], [0, 1, 4])\n"
    "glue('{name}', figure, display=False)\nplt.close(figure)"
)
WAVE = (
    "with course_style():\n    figure, axes = book_figure()\n"
    "    axes.plot(range(5), [math.sin(x) for x in range(5)])\n"
    "glue_figure('{name}', figure, rtol=1e-6)"
)
GLUED_CELLS = [
    "import math\nimport matplotlib.pyplot as plt\nfrom myst_nb import glue\n"
    "from pe_lib.course.display.style import book_figure, course_style, glue_figure",
    FIGURE.format(name="unchanged"),  # Cell 1
    FIGURE.format(name="redrawn"),  # Cell 2: other PNG bytes, same figure
    FIGURE.format(name="resized"),  # Cell 3: the figure's text form changed
    "glue('largest', 4, display=False)",  # Cell 4: a changed number
    "glue('smallest', 0, display=False)",  # Cell 5: an unchanged number
    WAVE.format(name="wave"),  # Cell 6: drawn from sines; other bytes, data within its rtol
    WAVE.format(name="moved"),  # Cell 7: drawn from sines; data moved past its rtol
]
PNG = "application/papermill.record/image/png"
FIGURE_DATA = "application/papermill.record/application/vnd.pe-course.figure-data+json"
TEXT = "application/papermill.record/text/plain"


def redrawn_png():
    """The figure as a patch release of the plotting stack could write it: the same
    plot, other bytes (here: another resolution)."""
    figure, axes = plt.subplots(figsize=(3, 2))
    axes.plot([0, 1, 2], [0, 1, 4])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=50)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def glued_executed():
    """The notebook of GLUED_CELLS executed once for the module."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in GLUED_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(notebook, kernel_name="python3", timeout=60).execute()
    return notebook


@pytest.fixture
def glued(pytester, glued_executed):
    """The executed notebook, changed as the comments on GLUED_CELLS say."""
    pytester.makeconftest((ROOT / "conftest.py").read_text())
    notebook = copy.deepcopy(glued_executed)
    records = [cell.outputs[0]["data"] for cell in notebook.cells[1:]]
    assert all(PNG in record for record in records[:3])
    assert records[1][PNG] != redrawn_png()
    records[1][PNG] = redrawn_png()
    records[2][TEXT] = "<Figure size 640x320 with 1 Axes>"
    records[3][TEXT] = "5"
    wave, moved = notebook.cells[6].outputs, notebook.cells[7].outputs
    wave[0]["data"][PNG] = redrawn_png()
    for record, factor in ((wave[1]["data"][FIGURE_DATA], 1 + 1e-9), (moved[1]["data"][FIGURE_DATA], 1 + 1e-3)):
        drawn = json.loads(record["data"])
        drawn["axes"][0]["lines"][0][1][1] *= factor
        record["data"] = json.dumps(drawn)
    return notebook


@pytest.mark.parametrize(("compare", "failing"), [("0", [3, 4, 7]), ("1", [2, 3, 4, 7])])
def test_figure_bytes_count_only_in_the_locked_environment(pytester, glued, monkeypatch, compare, failing):
    monkeypatch.setenv("PE_COURSE_COMPARE_FIGURES", compare)
    result = run_nbval(pytester, glued)
    result.assert_outcomes(passed=len(GLUED_CELLS) - len(failing), failed=len(failing))
    result.stdout.fnmatch_lines([f"FAILED chapter.ipynb::Cell {cell}*" for cell in failing])


def test_the_lock_check_reads_pins(tmp_path):
    import importlib.util
    from importlib import metadata

    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"-e .\nnumpy=={metadata.version('numpy')}\n    # via -r requirements.txt\n")
    assert conftest.environment_matches_lock(lock)
    assert not conftest.environment_matches_lock(tmp_path / "missing.lock")
    lock.write_text("-e .\nnumpy==0.0.1\n")
    conftest.environment_matches_lock.cache_clear()
    assert not conftest.environment_matches_lock(lock)
