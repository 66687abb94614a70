"""A made-up class of Assignment 1, for the Classroom chapter.

:func:`sample_class` fills a submissions folder the way a teacher receives
one: a notebook per student, or whatever else a student handed in. The
notebooks are made from the master (the solutions) and from the student
notebook the book offers for download (the blank).

>>> sorted(STUDENTS)
['ada', 'ben', 'cy', 'dee', 'eve', 'fay', 'gus']
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from classroom.build import master_solutions
from classroom.masters import ASSIGNMENTS

NAME = "encoding_matrix"
#: Who hands in what.
STUDENTS = {
    "ada": "the solutions",
    "ben": "the blank student notebook, untouched",
    "cy": "the solutions, with i in place of 2i in the exponent of angle_rates",
    "dee": "a PDF",
    "eve": "the solutions, with a first cell that deletes Ada's notebook and one that rewrites the scores",
    "fay": "the solutions, pasted into a fresh notebook (no otter metadata)",
    "gus": "the solutions, with a first cell that imports the course's library",
}
#: Cy's angle_rates.
CY_RATES = '''def angle_rates(depth, base=10000.0):
    pair_index = np.arange((depth + 1) // 2, dtype=np.float64)
    return base ** (-pair_index / depth)'''


def _replace(notebook, marker: str, source: str):
    notebook = copy.deepcopy(notebook)
    (cell,) = [cell for cell in notebook.cells if marker in cell.source]
    cell.source = source
    return notebook


def sample_class(folder: Path, scores: Path) -> Path:
    """Write the submissions of :data:`STUDENTS` into ``folder``; Eve's code aims at ``scores``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    solutions = master_solutions(ASSIGNMENTS / NAME / f"{NAME}.ipynb")
    blank = nbformat.read(ASSIGNMENTS / NAME / "student" / f"{NAME}.ipynb", as_version=4)
    nbformat.write(solutions, folder / "ada.ipynb")
    nbformat.write(blank, folder / "ben.ipynb")
    nbformat.write(_replace(solutions, "def angle_rates", CY_RATES), folder / "cy.ipynb")
    (folder / "dee.pdf").write_bytes(b"%PDF-1.4\n")
    # Absolute paths, as a student who knew the teacher's folders would write them.
    eve = copy.deepcopy(solutions)
    eve.cells[1:1] = [
        nbformat.v4.new_code_cell(f"import os\nos.remove({str(folder.resolve() / 'ada.ipynb')!r})"),
        nbformat.v4.new_code_cell(f"open({str(Path(scores).resolve())!r}, 'w').write('eve,11')"),
    ]
    nbformat.write(eve, folder / "eve.ipynb")
    pasted = copy.deepcopy(solutions)
    pasted.metadata = {}
    nbformat.write(pasted, folder / "fay.ipynb")
    gus = copy.deepcopy(solutions)
    gus.cells[1:1] = [nbformat.v4.new_code_cell("import pe_lib  # to compare my matrix with")]
    nbformat.write(gus, folder / "gus.ipynb")
    return folder
