"""A folder of submissions: who handed in what, their code, and what it imports.

>>> cells = [(1, "import numpy as np"), (2, "from pe_lib import angle_rates")]
>>> forbidden_uses(cells, ("pe_lib",))
['cell 2 imports pe_lib']
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import hashlib
import json
import os
import re
import unicodedata
from pathlib import Path

import nbformat

from classroom import files
from classroom.answers import clean, items
from classroom.masters import ClassroomError

#: Lines that only drive otter in the student notebook; the grader skips them.
_OTTER_LINE = re.compile(r"^\s*(#.*|import otter\s*|grader\s*=\s*otter\.Notebook\(.*\)\s*|"
                         r"grader\.(check|check_all|export)\(.*\)\s*|)$")


#: Largest notebook read, in bytes.
NOTEBOOK_LIMIT = 32 << 20
#: Most lists, dictionaries and items in a notebook (counted before parsing).
NOTEBOOK_ITEMS = 250_000
#: Seconds reading one file may take.
READ_SECONDS = 30.0
#: Most characters of one code cell, and of all the code of a notebook. Longer
#: code is never transformed or parsed in the grader's process (that work grows
#: with the code: a million-line cell took gigabytes); the notebook is not graded.
CELL_LIMIT, CODE_LIMIT = 128 << 10, 512 << 10
#: Most the grader's memory grows while it reads, transforms and scans one
#: notebook at these caps (measured by the tests); it holds one per job.
READ_MEMORY = 160 << 20
#: Most entries in a submissions folder, and in one student's folder.
FOLDER_LIMIT, STUDENT_FOLDER_LIMIT = 5_000, 2_000


@dataclasses.dataclass(frozen=True)
class Submission:
    """One student's entry in a submissions folder.

    Attributes:
        student: the file name without ``.ipynb``, or the folder name; the
            entry's whole name when two entries would share one.
        path: the notebook to grade, or ``None`` if the entry holds no single notebook.
        problem: why it cannot be graded, if ``path`` is ``None``.
        note: what the CSV should say about the entry itself (a clash of names).
        flags: what the CSV's flags should say about its name (a look-alike of another).
    """

    student: str
    path: Path | None
    problem: str = ""
    note: str = ""
    flags: tuple = ()


#: Letters of Cyrillic and Greek that look like Latin ones (the common part of
#: Unicode's confusables, TR39), by their Unicode names.
_LOOKALIKES = {
    "CYRILLIC SMALL LETTER": {"A": "a", "IE": "e", "O": "o", "ER": "p", "ES": "c", "HA": "x", "U": "y",
                              "BYELORUSSIAN-UKRAINIAN I": "i", "JE": "j", "DZE": "s", "SHHA": "h"},
    "CYRILLIC CAPITAL LETTER": {"A": "A", "VE": "B", "IE": "E", "KA": "K", "EM": "M", "EN": "H", "O": "O",
                                "ER": "P", "ES": "C", "TE": "T", "HA": "X", "BYELORUSSIAN-UKRAINIAN I": "I",
                                "JE": "J", "DZE": "S"},
    "GREEK CAPITAL LETTER": {"ALPHA": "A", "BETA": "B", "EPSILON": "E", "ZETA": "Z", "ETA": "H", "IOTA": "I",
                             "KAPPA": "K", "MU": "M", "NU": "N", "OMICRON": "O", "RHO": "P", "TAU": "T",
                             "UPSILON": "Y", "CHI": "X"},
    "GREEK SMALL LETTER": {"OMICRON": "o", "NU": "v", "RHO": "p", "IOTA": "i"},
}
_CONFUSED_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")


def skeleton(name: str) -> str:
    """``name`` as it looks: normalised (NFKC), Cyrillic and Greek look-alikes as Latin letters.

    >>> skeleton("\u0430nna") == skeleton("anna") == "anna"
    True
    >>> skeleton("Jose\u0301") == skeleton("Jos\u00e9")
    True
    """
    letters = []
    for char in unicodedata.normalize("NFKC", name):
        described = unicodedata.name(char, "")
        prefix, _, letter = described.rpartition(" LETTER ")
        letters.append(_LOOKALIKES.get(prefix + " LETTER", {}).get(letter, char))
    return "".join(letters)


def mixed_scripts(name: str) -> list[str]:
    """The scripts of Latin, Cyrillic and Greek whose letters ``name`` mixes (none or one: not mixed).

    >>> mixed_scripts("\u0430nna"), mixed_scripts("anna"), mixed_scripts("\u0410\u043d\u043d\u0430")
    (['CYRILLIC', 'LATIN'], [], [])
    """
    found = {unicodedata.name(char, "").split(" ")[0] for char in name if char.isalpha()}
    mixed = sorted(found & set(_CONFUSED_SCRIPTS))
    return mixed if len(mixed) > 1 else []


def _notebooks_in(folder: Path) -> tuple[list[Path], list[str], bool]:
    """Regular ``.ipynb`` files under ``folder``, other things named so, and whether it was too large.

    Hidden folders (``.ipynb_checkpoints``) are skipped, and hidden notebooks
    (``.work.ipynb``) are taken only when the folder holds no other; links are
    never followed.
    """
    notebooks, hidden, others, seen = [], [], [], 0
    pending = [(folder, 0)]
    while pending:
        current, depth = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > STUDENT_FOLDER_LIMIT:
                return notebooks, others, True
            if entry.name == "__pycache__" or (entry.name.startswith(".") and not hidden_notebook(entry.name)):
                continue
            relative = Path(entry.path).relative_to(folder.parent)
            if entry.is_dir(follow_symlinks=False):
                if depth < 6:
                    pending.append((Path(entry.path), depth + 1))
            elif entry.name.endswith(".ipynb"):
                if entry.is_file(follow_symlinks=False):
                    (hidden if entry.name.startswith(".") else notebooks).append(Path(entry.path))
                else:
                    mode = entry.stat(follow_symlinks=False).st_mode
                    others.append(f"{clean(relative, 60)} is {files.kind(mode)}, not a regular file")
    return sorted(notebooks or hidden), others, False


#: Hidden entries that editors and systems leave, never a student's work.
SYSTEM_ENTRIES = frozenset([".DS_Store", ".ipynb_checkpoints", ".git", ".Trashes", ".localized", ".directory"])


def hidden_notebook(name: str) -> bool:
    """True for a notebook whose name starts with a dot (but not macOS's ``._`` copies of metadata).

    >>> hidden_notebook(".ada.ipynb"), hidden_notebook("._ada.ipynb"), hidden_notebook(".DS_Store")
    (True, False, False)
    """
    return name.startswith(".") and not name.startswith("._") and name.endswith(".ipynb") and name != ".ipynb"


def hidden_entries(folder: Path) -> list[str]:
    """Entries of ``folder`` that grading leaves out: hidden, and neither a notebook nor a system file.

    Grading names them, so that nothing handed in is left out unsaid.
    """
    try:
        with os.scandir(folder) as listing:
            names = [entry.name for entry in listing]
    except OSError:
        return []
    return sorted(clean(name, 60) for name in names
                  if name.startswith(".") and not hidden_notebook(name) and name not in SYSTEM_ENTRIES
                  and not name.startswith("._"))


def _entry(entry: os.DirEntry) -> Submission:
    name = clean(entry.name, 120)
    student = clean(entry.name[: -len(".ipynb")] if entry.name.endswith(".ipynb") else entry.name, 120)
    if entry.is_symlink():
        return Submission(student, None, f"not graded: {name} is a symbolic link; hand in the notebook itself")
    if entry.is_dir(follow_symlinks=False):
        notebooks, others, too_many = _notebooks_in(Path(entry.path))
        student = name
        if too_many:
            return Submission(student, None, f"not graded: the folder holds more than {STUDENT_FOLDER_LIMIT} files")
        if len(notebooks) == 1 and not others:
            return Submission(student, notebooks[0])
        if not notebooks and others:
            return Submission(student, None, f"not graded: {others[0]}")
        extra = f" ({others[0]})" if others else ""
        return Submission(student, None, f"not a notebook: the folder holds {len(notebooks) + len(others)} "
                                         f"notebooks, not one{extra}")
    if entry.is_file(follow_symlinks=False):
        return Submission(student, Path(entry.path))
    mode = entry.stat(follow_symlinks=False).st_mode
    return Submission(student, None, f"not graded: {name} is {files.kind(mode)}, not a regular file")


def find_submissions(folder: Path) -> list[Submission]:
    """One :class:`Submission` per file or folder in ``folder``.

    Hidden entries are skipped (:func:`hidden_entries` names them), except
    notebooks whose names start with a dot, which are graded and flagged.

    Every entry gets one, whatever it is: a link, a FIFO or a device is one
    with the reason it cannot be graded. Entries whose names would give the
    same student (``dup/`` and ``dup.ipynb``) keep their whole names, and a note.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ClassroomError(f"the submissions folder {str(folder)!r} does not exist or is not a folder")
    entries = []
    with os.scandir(folder) as listing:
        for entry in listing:
            if not entry.name.startswith(".") or hidden_notebook(entry.name):
                entries.append(entry)
            if len(entries) > FOLDER_LIMIT:
                raise ClassroomError(f"the submissions folder holds more than {FOLDER_LIMIT} entries")
    entries.sort(key=lambda entry: entry.name)
    found = [_entry(entry) for entry in entries]
    students = [submission.student for submission in found]
    whole = [clean(entry.name, 120) + ("/" if entry.is_dir(follow_symlinks=False) else "") for entry in entries]
    names = collections.Counter(students)
    for index, submission in enumerate(found):
        if names[students[index]] > 1:
            twins = [name for name, student in zip(whole, students) if student == students[index]]
            note = (f"{len(twins)} entries are named {students[index]!r} ({', '.join(twins)}): "
                    "each has its own row")
            found[index] = dataclasses.replace(submission, student=whole[index], note=note)
    seen, taken = set(), {submission.student for submission in found}
    for index, submission in enumerate(found):  # names that still clash once cleaned
        if submission.student in seen:
            student = numbered(submission.student, taken)
            found[index] = dataclasses.replace(
                submission, student=student,
                note=submission.note or "its name, made printable, is another entry's: numbered")
        seen.add(submission.student)
    for index, (entry, submission) in enumerate(zip(entries, found)):
        if entry.name.startswith("."):
            found[index] = dataclasses.replace(submission, flags=submission.flags + (
                "its name starts with a dot (hidden in most file browsers): graded as any other",))
    return _look_alikes(found)


def numbered(name: str, taken: set) -> str:
    """``name (2)``, or the first higher number that no name of ``taken`` is; added to ``taken``.

    >>> numbered("ann", {"ann", "ann (2)"})
    'ann (3)'
    """
    number = 2
    while f"{name} ({number})" in taken:
        number += 1
    taken.add(f"{name} ({number})")
    return f"{name} ({number})"


def _look_alikes(found: list[Submission]) -> list[Submission]:
    """Names a teacher could not tell apart, flagged and numbered: the same letters in
    another normal form (NFC, NFD), or look-alike letters of another script."""
    groups = collections.defaultdict(list)
    for index, submission in enumerate(found):
        groups[skeleton(submission.student)].append(index)
    taken = {submission.student for submission in found}
    for members in groups.values():
        for place, index in enumerate(members):
            submission = found[index]
            flags = list(submission.flags)
            mixed = mixed_scripts(submission.student)
            if mixed:
                flags.append(f"its name mixes {' and '.join(s.title() for s in mixed)} letters: "
                             f"{ascii(submission.student)}")
            student = submission.student
            if len(members) > 1:
                others = len(members) - 1
                whose = "entry's" if others == 1 else "entries'"
                flags.append(f"its name looks like {others} other {whose}: it is {ascii(submission.student)}")
                if place > 0:
                    student = numbered(submission.student, taken)
            if flags != list(submission.flags):
                found[index] = dataclasses.replace(submission, student=student, flags=tuple(flags))
    return found


def read_submission(path: Path) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook at ``path``, or ``None`` and the reason it is not a readable notebook.

    The file is read only if it is a regular file, of at most
    :data:`NOTEBOOK_LIMIT` bytes, within :data:`READ_SECONDS`, and parsed only
    if it holds at most :data:`NOTEBOOK_ITEMS` items.
    """
    notebook, problem, _ = read_notebook(path)
    return notebook, problem


def read_notebook(path: Path) -> tuple[nbformat.NotebookNode | None, str, str]:
    """:func:`read_submission`, and the SHA-256 of the bytes read (``""`` when none were).

    Grading keys its record on the bytes it graded, not on those of an earlier look.
    """
    path = Path(path)
    if path.suffix != ".ipynb":
        try:  # read all the same, for the digest the record keys its row on
            digest = hashlib.sha256(files.read(path, limit=NOTEBOOK_LIMIT, seconds=READ_SECONDS)).hexdigest()
        except files.NotReadable:
            digest = ""
        return None, f"not a notebook: {clean(path.name, 60)} is not an .ipynb file", digest
    try:
        raw = files.read(path, limit=NOTEBOOK_LIMIT, seconds=READ_SECONDS)
    except files.NotReadable as error:
        return None, f"not graded: {clean(path.name, 60)} {error}", ""
    digest = hashlib.sha256(raw).hexdigest()
    if items(raw) > NOTEBOOK_ITEMS:
        return None, (f"not graded: {clean(path.name, 60)} holds more than {NOTEBOOK_ITEMS} items; "
                      "clear its outputs and hand it in again"), digest
    try:
        data = json.loads(raw)  # UTF-8, -16 or -32; a byte-order mark, which some editors write, is fine
    except (ValueError, RecursionError):
        data = None
    try:
        if isinstance(data, dict) and isinstance(data.get("cells"), list) and data.get("nbformat", 4) == 4:
            del raw
            return _cells_only(data), "", digest
        if isinstance(data, dict):
            # Outputs are never graded: dropped before nbformat copies and checks them.
            _drop_outputs(data)
            text = json.dumps(data)
        else:  # nbformat says what is wrong with it
            text = raw.decode("utf-8-sig", errors="replace")
        del raw, data
        notebook = nbformat.reads(text, as_version=4)
        del text
        nbformat.validate(notebook)
    except Exception as error:  # a broken file is a reason to report, never a crash
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, f"not a notebook: {clean(message, 80)}", digest
    return notebook, "", digest


def _cells_only(data: dict) -> nbformat.NotebookNode:
    """A notebook of nbformat 4 (any minor version) as grading needs it: each cell's type and source.

    What an editor adds or leaves out beside them (outputs, execution counts,
    cell ids, attachments, its own metadata) changes nothing: a code cell
    whose ``outputs`` were stripped is as much a notebook as any. Only
    otter's record of the assignment is kept of the metadata.

    >>> _cells_only({"cells": [{"cell_type": "code", "source": ["x = ", "1"]}]}).cells[0].source
    'x = 1'
    """
    # Built as plain dicts and checked once as a whole: nbformat's new_*_cell checks
    # each cell against the schema, which costs seconds at the grader's item cap.
    extra = {"code": {"execution_count": None, "outputs": []}, "markdown": {}, "raw": {}}
    cells = []
    for cell in data["cells"]:
        if not (isinstance(cell, dict) and cell.get("cell_type") in extra):
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if isinstance(source, str):
            kind = cell["cell_type"]
            cells.append({"id": f"cell-{len(cells)}", "cell_type": kind, "metadata": {}, "source": source,
                          **extra[kind]})
    notebook = nbformat.from_dict({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
    nbformat.validate(notebook)
    metadata = data.get("metadata")
    otter = metadata.get("otter") if isinstance(metadata, dict) else None
    if isinstance(otter, dict) and isinstance(otter.get("assignment_name"), str):
        notebook.metadata["otter"] = {"assignment_name": otter["assignment_name"]}
    return notebook


def _drop_outputs(data: dict) -> None:
    """Empty the outputs and attachments of every cell in a parsed notebook's worksheets (nbformat 2 and 3).

    Notebooks of nbformat 4 are read by :func:`_cells_only`, and nbformat
    rebuilds the cells of version 1 without their outputs.
    """
    sheets = data.get("worksheets")
    for sheet in sheets if isinstance(sheets, list) else []:
        cells = sheet.get("cells") if isinstance(sheet, dict) else None
        for cell in cells if isinstance(cells, list) else []:
            if isinstance(cell, dict):
                if "outputs" in cell:
                    cell["outputs"] = []
                cell.pop("attachments", None)


def assignment_name(notebook: nbformat.NotebookNode) -> str | None:
    """The assignment a student notebook belongs to, as ``otter assign`` recorded it."""
    otter = notebook.metadata.get("otter")
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    return clean(name, 60) if isinstance(name, str) and name else None


def _python(source: str) -> str:
    """A cell's source with IPython's magics turned into plain calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:
        return source


class TooMuchCode(ValueError):
    """A cell, or the notebook's code, is longer than the grader reads; the message says which."""


def code_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(number, source)`` of each code cell to run, numbered among all cells from 1.

    Cells that only drive otter (``grader.check("q1")``) are left out. A cell
    longer than :data:`CELL_LIMIT` characters, or code longer than
    :data:`CODE_LIMIT` in all, raises :class:`TooMuchCode` before any of it
    is transformed.
    """
    sources, total = [], 0
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        if len(cell.source) > CELL_LIMIT:
            raise TooMuchCode(f"cell {number} holds more than {CELL_LIMIT >> 10} KiB of code")
        total += len(cell.source)
        if total > CODE_LIMIT:
            raise TooMuchCode(f"its code cells hold more than {CODE_LIMIT >> 10} KiB of code")
        sources.append((number, cell.source))
    return [(number, _python(source)) for number, source in sources
            if not all(_OTTER_LINE.match(line) for line in source.splitlines())]


def _names(node: ast.AST) -> str:
    """``a.b.c`` for an attribute chain, ``""`` for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return ""


def forbidden_uses(cells: list[tuple[int, str]], forbidden: tuple[str, ...]) -> list[str]:
    """What the code imports or calls from a forbidden module, read from its syntax tree.

    ``forbidden`` holds module names such as ``"pe_lib"`` or ``"pe_lib.layers"``.
    Imports, ``from`` imports, attribute chains (``pe_lib.layers.X``),
    ``__import__`` and ``importlib.import_module`` are found; a dynamic import
    whose name is not a literal is reported as such.
    """
    if not forbidden:
        return []

    def hits(module: str) -> bool:
        return any(module == name or module.startswith(name + ".") for name in forbidden)

    found = []
    for number, source in cells:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # not Python: the cell will say so when it runs
        except (RecursionError, MemoryError):
            # Nested too deeply for the parser (thousands of terms or signs in a
            # row): what it imports cannot be told, and the teacher is told so.
            found.append(f"cell {number} is nested too deeply to be read for imports")
            continue
        for node in ast.walk(tree):
            used = []
            if isinstance(node, ast.Import):
                used = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                used = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Attribute):
                used = [_names(node)]
            elif isinstance(node, ast.Call):
                called = _names(node.func)
                if called.split(".")[-1] in ("__import__", "import_module"):
                    argument = node.args[0] if node.args else None
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                        used = [argument.value]
                    else:
                        found.append(f"cell {number} imports a module by a computed name")
            for module in used:
                if module and hits(module):
                    name = next(n for n in forbidden if module == n or module.startswith(n + "."))
                    found.append(f"cell {number} {'imports' if not isinstance(node, ast.Attribute) else 'uses'} {name}")
                    break
    return list(dict.fromkeys(found))
