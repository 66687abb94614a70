"""Which assignment each notebook is, decided for the whole folder before anything runs.

The teacher, not the notebook, decides which assignment is graded. The
whole folder is graded as one assignment (:func:`class_assignment`):

1. the one the teacher named (``--assignment``), else
2. the folder's own name, when it is an assignment's, else
3. the one more than half of the notebooks that tell are, by their metadata (what
   otter's student notebook records) or, where an editor dropped it (VS Code,
   Colab, answers pasted into a fresh notebook), by the graded functions and
   names their code defines.

A notebook whose metadata names another assignment is flagged and graded as
the class's; one whose metadata names none says how its assignment was told.
When the class's assignment cannot be told, grading refuses before anything
runs, naming the notebooks. The look at each notebook here is
bounded: its bytes are read as grading reads them, its JSON parsed, and its
code searched with a regular expression only (nothing is transformed or parsed
as Python).

>>> sorted(defined_names(["import numpy as np", "def angle_rates(d):\\n    x = 1", "table: list = []"]))
['angle_rates', 'np', 'table']
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import json
import re
from pathlib import Path

from classroom import files
from classroom.answers import clean, items
from classroom.submissions import CELL_LIMIT, NOTEBOOK_ITEMS, NOTEBOOK_LIMIT, READ_SECONDS

#: Names defined at the top level of a cell: functions, classes, assignments, imports.
_DEFINED = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)"
                      r"|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)"
                      r"|^import[ \t]+[\w.]+[ \t]+as[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_]\w*")
#: Share of an assignment's graded names a notebook must define to be taken for it.
ENOUGH = 0.5


@dataclasses.dataclass(frozen=True)
class Look:
    """What a first look at one notebook found: its metadata's assignment, its names, its digest."""

    named: str | None
    defined: frozenset
    digest: str
    readable: bool


def defined_names(sources: list[str]) -> set[str]:
    """The names the cells define at their top level, found by a regular expression."""
    found = set()
    for source in sources:
        for match in _DEFINED.finditer(source):
            found.update(name for name in match.groups() if name)
    return found


def graded_names(probes: dict[str, str], master_sources: list[str]) -> frozenset:
    """The names an assignment's probes read that its master defines: what a student must define."""
    used = {name for code in probes.values() for name in _NAME.findall(code)}
    return frozenset((used & defined_names(master_sources)) - set(vars(builtins)))


def _sources(notebook) -> list[str]:
    """The code cells' sources of a parsed notebook (nbformat 4, or 3's worksheets), capped."""
    if not isinstance(notebook, dict):
        return []
    cells = notebook.get("cells")
    if cells is None:  # nbformat 3
        sheets = notebook.get("worksheets")
        cells = sheets[0].get("cells") if isinstance(sheets, list) and sheets and isinstance(sheets[0], dict) else []
    sources = []
    for cell in cells if isinstance(cells, list) else []:
        if not (isinstance(cell, dict) and cell.get("cell_type") == "code"):
            continue
        source = cell.get("source", cell.get("input"))
        if isinstance(source, list):
            source = "".join(part for part in source[:CELL_LIMIT] if isinstance(part, str))
        if isinstance(source, str) and len(source) <= CELL_LIMIT:
            sources.append(source)
    return sources


def metadata_name(notebook) -> str | None:
    """The assignment a parsed notebook's metadata names, as ``otter assign`` records it."""
    metadata = notebook.get("metadata") if isinstance(notebook, dict) else None
    otter = metadata.get("otter") if isinstance(metadata, dict) else None
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    return clean(name, 60) if isinstance(name, str) and name else None


def look(path: Path | None) -> Look:
    """A first look at the notebook at ``path`` (bounded as :func:`read_submission` is)."""
    if path is None:
        return Look(None, frozenset(), "", False)
    try:
        raw = files.read(path, limit=NOTEBOOK_LIMIT, seconds=READ_SECONDS)
    except files.NotReadable:
        return Look(None, frozenset(), "", False)
    digest = hashlib.sha256(raw).hexdigest()
    if items(raw) > NOTEBOOK_ITEMS:
        return Look(None, frozenset(), digest, False)
    try:
        notebook = json.loads(raw)  # UTF-8, -16 or -32, a byte-order mark allowed, as grading reads it
    except (ValueError, RecursionError, MemoryError):
        return Look(None, frozenset(), digest, False)
    return Look(metadata_name(notebook), frozenset(defined_names(_sources(notebook))), digest, True)


def by_code(defined: frozenset, catalog: dict[str, frozenset]) -> str | None:
    """The one assignment whose graded names ``defined`` holds most of (at least :data:`ENOUGH`).

    >>> by_code(frozenset({"f", "g"}), {"a": frozenset({"f", "g"}), "b": frozenset({"h"})})
    'a'
    >>> by_code(frozenset({"f"}), {"a": frozenset({"f", "g"}), "b": frozenset({"f", "h"})}) is None
    True
    """
    shares = sorted(((len(defined & names) / len(names), name) for name, names in catalog.items() if names),
                    reverse=True)
    if not shares or shares[0][0] < ENOUGH or (len(shares) > 1 and shares[1][0] == shares[0][0]):
        return None
    return shares[0][1]


def class_assignment(looks: dict[str, Look], teacher: str | None, catalog: dict[str, frozenset],
                     folder: str = "") -> str | None:
    """The assignment the whole folder is graded as, or ``None`` when it cannot be told.

    The teacher's (``--assignment``) first; else the folder's own name when it
    is an assignment's; else the assignment more than half of the notebooks
    that tell are, by their metadata or else by their code.

    >>> catalog = {"a": frozenset({"f"}), "b": frozenset({"g"})}
    >>> seen = {s: Look("a", frozenset(), "", True) for s in ("x", "y")}
    >>> seen["z"] = Look(None, frozenset({"g"}), "", True)
    >>> [class_assignment(seen, None, catalog), class_assignment(seen, "b", catalog),
    ...  class_assignment(seen, None, catalog, folder="b"), class_assignment(dict(seen, u=Look("b", frozenset(), "", True)), None, catalog)]
    ['a', 'b', 'b', None]
    """
    if teacher is not None:
        return teacher
    if folder in catalog:
        return folder
    counts: dict[str, int] = {}
    for seen in looks.values():  # an unreadable look names and defines nothing: it counts for none
        name = seen.named if seen.named in catalog else by_code(seen.defined, catalog)
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    best = max(counts, key=counts.get, default=None)
    return best if best is not None and 2 * counts[best] > sum(counts.values()) else None


def decide(looks: dict[str, Look], assignment: str | None, catalog: dict[str, frozenset],
           teacher: bool = True) -> dict[str, tuple]:
    """For each readable notebook: ``(assignment, why)``, where ``why`` is the flag its row carries.

    Every notebook is graded as ``assignment`` (the class's, from
    :func:`class_assignment`; ``teacher`` says whether the teacher named it).
    A notebook whose metadata names another is flagged; one whose metadata
    names none says how its assignment was told. With no ``assignment``,
    each gets ``(None, "")``: the caller refuses to grade.
    """
    named = {seen.named for seen in looks.values() if seen.named}
    whose = "the assignment you named" if teacher else "the assignment of this folder's notebooks"
    decided = {}
    for student, seen in looks.items():
        if not seen.readable:
            continue
        if assignment is None:
            decided[student] = (None, "")
        elif seen.named:
            decided[student] = (assignment, "" if seen.named == assignment else
                                f"its metadata names {seen.named}, not {assignment}: graded as {assignment}, "
                                f"{whose}")
        elif teacher:
            decided[student] = (assignment, f"its metadata names no assignment: graded as {assignment}, {whose}")
        elif by_code(seen.defined, catalog) == assignment:
            decided[student] = (assignment, f"its metadata names no assignment: graded as {assignment}, "
                                            "whose functions its code defines")
        elif named == {assignment}:
            decided[student] = (assignment, f"its metadata names no assignment: graded as {assignment}, "
                                            "the assignment of every other notebook")
        else:
            decided[student] = (assignment, f"its metadata names no assignment: graded as {assignment}, {whose}")
    return decided
