"""The master notebooks and the grading spec beside each.

An assignment is a folder ``assignments/<name>/`` with the master notebook
``<name>.ipynb`` (otter-grader's format, plus a ``classroom`` entry in its
metadata) and ``checks.py``, the grading spec: what to ask the student's
code (``PROBES``), how to judge the answers (``QUESTIONS``), whether the
sandbox may see the library (``LIBRARY``) and which of its modules the
student must not use (``FORBIDDEN``), and the limits of one cell (``SECONDS``),
of the sandbox's memory, its processes and files together (``MEMORY_GIB``), and
of one process's address space (``ADDRESS_GIB``, by default the same). The
spec is read by the grader only.

>>> sorted(path.stem for path in master_paths())[:2]
['attention_biases', 'encoding_matrix']
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: Where the master notebooks live, one folder per assignment.
ASSIGNMENTS = ROOT / "assignments"
#: Where ``build`` writes student notebooks, bundles and references (ignored by git).
BUILD = ASSIGNMENTS / "_build"


class ClassroomError(Exception):
    """A problem with the command as given (a missing build, an unknown folder)."""


@dataclasses.dataclass(frozen=True)
class AssignmentInfo:
    """What a master notebook says about itself.

    Attributes:
        name: the folder and file name, e.g. ``"encoding_matrix"``.
        number: the assignment's number in the course.
        title: a short title.
        minutes: the time a student should plan for it.
        chapters: labels of the chapters it practises.
        points: points of each question, in order.
        extras: extras of the course's package that its Gradescope bundle
            installs besides the package (``("tensorflow",)``: Keras and its backend).
    """

    name: str
    number: int
    title: str
    minutes: int
    chapters: tuple[str, ...]
    points: dict[str, float]
    extras: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        """Points for the whole assignment."""
        return sum(self.points.values())


def master_paths(root: Path = ASSIGNMENTS) -> list[Path]:
    """Every master notebook ``<root>/<name>/<name>.ipynb``, sorted by name."""
    root = Path(root)
    if not root.is_dir():
        raise ClassroomError(f"root must be a folder of assignments, got {str(root)!r}")
    return sorted(
        path for path in root.glob("*/*.ipynb")
        if path.stem == path.parent.name and not path.parent.name.startswith(("_", "."))
    )


def describe(master: Path) -> AssignmentInfo:
    """Read a master's title, time, chapters and extras (its ``classroom`` metadata) and its questions.

    >>> info = describe(ASSIGNMENTS / "encoding_matrix" / "encoding_matrix.ipynb")
    >>> info.name, list(info.points)
    ('encoding_matrix', ['q1', 'q2', 'q3', 'q4'])
    """
    notebook = nbformat.read(Path(master), as_version=4)
    about = notebook.metadata.get("classroom", {})
    points = {}
    for cell in notebook.cells:
        first, _, rest = cell.source.lstrip().partition("\n")
        if cell.cell_type == "raw" and first.strip().upper() == "# BEGIN QUESTION":
            config = yaml.safe_load(rest) or {}
            value = config.get("points", 1)
            points[config["name"]] = float(sum(value) if isinstance(value, list) else value)
    return AssignmentInfo(
        name=Path(master).stem,
        number=int(about.get("number", 0)),
        title=str(about.get("title", Path(master).stem)),
        minutes=int(about.get("minutes", 0)),
        chapters=tuple(about.get("chapters", ())),
        points=points,
        extras=tuple(about.get("extras", ())),
    )


@dataclasses.dataclass(frozen=True)
class Spec:
    """An assignment's grading spec, read from its ``checks.py``."""

    name: str
    probes: dict[str, str]
    questions: dict[str, list]
    library: bool
    forbidden: tuple[str, ...]
    seconds: float
    memory_gib: float
    address_gib: float


def load_spec(name: str, root: Path = ASSIGNMENTS) -> Spec:
    """The spec of assignment ``name``; an unknown name is a :class:`ClassroomError`.

    >>> spec = load_spec("encoding_matrix")
    >>> list(spec.questions), spec.library
    (['q1', 'q2', 'q3', 'q4'], False)
    """
    path = Path(root) / str(name) / "checks.py"
    if not (isinstance(name, str) and name.isidentifier() and path.is_file()):
        known = ", ".join(p.stem for p in master_paths(root))
        raise ClassroomError(f"assignment must be one of {known}, got {name!r}")
    module_spec = importlib.util.spec_from_file_location(f"_checks_{name}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return Spec(name=name, probes=dict(module.PROBES), questions=dict(module.QUESTIONS),
                library=bool(getattr(module, "LIBRARY", True)),
                forbidden=tuple(getattr(module, "FORBIDDEN", ())),
                seconds=float(getattr(module, "SECONDS", 60.0)),
                memory_gib=float(getattr(module, "MEMORY_GIB", 4.0)),
                address_gib=float(getattr(module, "ADDRESS_GIB", getattr(module, "MEMORY_GIB", 4.0))))
