"""What otter's Gradescope bundle installs: the course's wheel and the locked versions it needs.

Gradescope builds a bundle's environment from the ``pip`` list of its
``environment.yml``: otter-grader, then the lines of the ``requirements.txt``
the assignment names. The tests of every assignment import ``pe_lib``, so
the bundle ships a wheel of the course's package, built with the bundle from
this checkout (otter's ``autograder_files``: Gradescope unpacks them under
``/autograder/source/files``) and named by that path. The wheel's own
dependencies, and those of the extras an assignment asks for in its master's
``classroom`` metadata (``tensorflow``: Keras on its TensorFlow backend, the
backend Keras picks when none is set), are pinned at their versions in
``requirements.lock``. The bundle's Python is the lock's.

>>> print(requirements_text("pe_lib-0.1.0-py3-none-any.whl", ["numpy>=1.26,<3"], {"numpy": "2.4.6"}))
pe_lib @ file:///autograder/source/files/pe_lib-0.1.0-py3-none-any.whl
numpy==2.4.6
<BLANKLINE>
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from classroom.masters import ROOT, ClassroomError

#: Where Gradescope unpacks the bundle's ``files/`` (otter's ``autograder_files``).
GRADESCOPE_FILES = "/autograder/source/files"
#: The Python of ``requirements.lock`` (``tasks.py``'s ``LOCK_PYTHON``), for the bundle's conda.
PYTHON = "3.11"
#: The lock the bundle's versions come from.
LOCK = ROOT / "requirements.lock"
#: What ``pip wheel`` needs of the course to build its package.
_SOURCES = ("pyproject.toml", "README.md", "pe_lib", "classroom")


def build_wheel(folder: Path) -> Path:
    """Build the course's package into ``folder`` (``pip wheel --no-deps``) and return the wheel.

    The sources are copied first, so that the build leaves nothing in the
    course's folder.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-wheel-") as scratch:
        source = Path(scratch) / "course"
        source.mkdir()
        for name in _SOURCES:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, source / name,
                                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            else:
                shutil.copyfile(ROOT / name, source / name)
        out = Path(scratch) / "wheel"
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                               "--quiet", "--wheel-dir", str(out), str(source)],
                              capture_output=True, text=True)
        wheels = sorted(out.glob("*.whl"))
        if done.returncode or len(wheels) != 1:
            raise ClassroomError(f"pip wheel could not build the course's package:\n{done.stdout}{done.stderr}")
        return Path(shutil.copy(wheels[0], folder / wheels[0].name))


def locked_versions(lock: Path = LOCK) -> dict[str, str]:
    """``{name: version}`` of every ``name==version`` line of the lock, names canonical."""
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;#]+)", Path(lock).read_text(), re.M)
    return {canonicalize_name(name): version for name, version in pins}


def wheel_dependencies(wheel: Path, extras=()) -> list[str]:
    """The wheel's ``Requires-Dist`` entries that apply with ``extras`` (and none of the others)."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        message = Parser().parsestr(archive.read(metadata).decode())
        offered = set(message.get_all("Provides-Extra") or ())
    unknown = sorted(set(extras) - offered)
    if unknown:
        raise ClassroomError(f"extras must be among {sorted(offered)}, got {unknown}")
    applying = []
    for line in message.get_all("Requires-Dist") or ():
        requirement = Requirement(line)
        if requirement.marker is None or any(requirement.marker.evaluate({"extra": extra}) for extra in extras):
            applying.append(line)
    return applying


def requirements_text(wheel_name: str, dependencies: list[str], locked: dict[str, str],
                      extras=()) -> str:
    """The bundle's ``requirements.txt``: the wheel by its path on Gradescope, then exact pins.

    Each dependency is pinned at its locked version, which must meet the
    wheel's own bounds.
    """
    named = "pe_lib" + (f"[{','.join(extras)}]" if extras else "")
    lines = [f"{named} @ file://{GRADESCOPE_FILES}/{wheel_name}"]
    seen = set()
    for line in dependencies:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        if name not in locked:
            raise ClassroomError(f"{requirement.name} is not in requirements.lock: the bundle pins "
                                 "only locked versions")
        if not requirement.specifier.contains(locked[name], prereleases=True):
            raise ClassroomError(f"the locked {requirement.name}=={locked[name]} is outside the course's "
                                 f"bounds {requirement.specifier}")
        lines.append(f"{requirement.name}=={locked[name]}")
    return "\n".join(lines) + "\n"


def prepare(master: Path, wheel: Path, extras=()) -> Path:
    """Make the copy of a master at ``master`` build a bundle that installs what its tests import.

    Writes ``requirements.txt`` and copies ``wheel`` beside it, and adds to its
    ASSIGNMENT CONFIG the requirements, the wheel as an autograder file and
    the lock's Python. Returns the requirements file.
    """
    import nbformat

    master, wheel = Path(master), Path(wheel)
    folder = master.parent
    if wheel.parent != folder:
        wheel = Path(shutil.copy(wheel, folder / wheel.name))
    text = requirements_text(wheel.name, wheel_dependencies(wheel, extras), locked_versions(), extras)
    (folder / "requirements.txt").write_text(text)
    notebook = nbformat.read(master, as_version=4)
    (config,) = [cell for cell in notebook.cells[:1]
                 if cell.cell_type == "raw" and cell.source.lstrip().upper().startswith("# ASSIGNMENT CONFIG")]
    settings = yaml.safe_load(config.source.lstrip().partition("\n")[2]) or {}
    clashing = sorted({"requirements", "autograder_files", "python_version", "overwrite_requirements"} & set(settings))
    if clashing:
        raise ClassroomError(f"{master.name}'s ASSIGNMENT CONFIG sets {clashing}: the build sets them")
    settings.update(requirements="requirements.txt", autograder_files=[wheel.name], python_version=PYTHON)
    config.source = "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(settings, sort_keys=False)
    nbformat.write(notebook, master)
    return folder / "requirements.txt"


def installed(bundle: Path) -> list[str]:
    """The ``pip`` list of a built bundle's ``environment.yml``: what Gradescope installs with pip."""
    with zipfile.ZipFile(bundle) as archive:
        environment = yaml.safe_load(archive.read("environment.yml"))
    (pip,) = [entry["pip"] for entry in environment["dependencies"] if isinstance(entry, dict)]
    return list(pip)
