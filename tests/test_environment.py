"""The environment files agree with each other: requirements.txt, requirements.lock, pyproject.toml."""

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def ranges():
    """The requirements of requirements.txt (the editable ``-e .`` aside)."""
    lines = (line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines())
    return [Requirement(line) for line in lines if line and not line.startswith("-")]


def pins():
    found = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(\S+)", line)
        if match:
            found[canonicalize_name(match.group(1))] = match.group(3)
    return found


def test_every_requirement_is_pinned_inside_its_range():
    pinned = pins()
    for requirement in ranges():
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is in requirements.txt but not in requirements.lock: run tasks.py lock"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"requirements.lock pins {name}=={pinned[name]}, outside {requirement.specifier}: "
            "run python3 tasks.py lock"
        )


def test_cpu_jax_comes_with_its_matching_jaxlib():
    pinned = pins()
    assert pinned["jaxlib"] == pinned["jax"]


def test_the_lock_installs_the_course_library_and_says_how_it_was_made():
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    assert "-e ." in lines
    assert "#    python3 tasks.py lock" in lines


def test_keras_extra_leaves_the_backend_to_the_user():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {extra: {canonicalize_name(Requirement(r).name) for r in reqs} for extra, reqs in extras.items()}
    assert names["keras"] == {"keras"}
    assert "tensorflow" in names["tensorflow"] and "jax" in names["jax"]


def test_library_dependencies_agree_with_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {canonicalize_name(r.name): r.specifier for r in ranges()}
    for line in project["dependencies"]:
        dependency = Requirement(line)
        assert required[canonicalize_name(dependency.name)] == dependency.specifier


def test_other_cpu_settings_change_the_arithmetic_numpy_and_openblas_use():
    """`tasks.py test --other-cpu` must really compute as another processor would here."""
    import importlib.util
    import json
    import os
    import subprocess
    import sys

    spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    assert tasks.other_cpu_environment({"avx2", "avx512f"})["OPENBLAS_CORETYPE"] == "Haswell"
    assert "X86_V4" in tasks.other_cpu_environment({"avx2", "avx512f"})["NPY_DISABLE_CPU_FEATURES"]
    assert tasks.other_cpu_environment({"avx2"})["OPENBLAS_CORETYPE"] == "Sandybridge"

    probe = (
        "import json, numpy\n"
        "from numpy._core._multiarray_umath import __cpu_features__ as f\n"
        "print(json.dumps({k: bool(f.get(k)) for k in ('X86_V3', 'X86_V4')}))"
    )

    settings = tasks.other_cpu_environment()
    # The processor's own groups: without the settings, even when this test itself runs
    # under them (`tasks.py test --other-cpu` sets them for the whole session).
    own_environment = {key: value for key, value in os.environ.items() if key not in settings}

    def groups(environment):
        out = subprocess.run([sys.executable, "-c", probe], env={**own_environment, **environment},
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    own = groups({})
    other = groups(settings)
    highest = "X86_V4" if own["X86_V4"] else "X86_V3"
    if not own[highest]:
        return  # a processor below AVX2: NumPy has no wider loops to leave out
    assert not other[highest], f"NumPy still dispatches {highest} under the other-cpu settings"


def test_the_lowest_lock_pins_each_requirement_at_its_lower_bound():
    """`tasks.py test --lowest` tests what requirements.txt promises at its low end."""
    lowest = {}
    for line in (ROOT / "requirements-lowest.lock").read_text().splitlines():
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(\S+)", line)
        if match:
            lowest[canonicalize_name(match.group(1))] = Version(match.group(3))
    for requirement in ranges():
        name = canonicalize_name(requirement.name)
        floors = [Version(spec.version) for spec in requirement.specifier if spec.operator == ">="]
        assert floors, f"{name} has no lower bound in requirements.txt"
        pinned = lowest[name]
        assert requirement.specifier.contains(pinned, prereleases=True)
        # the lowest release of the bound's own series (1.26 -> 1.26.x): a newer series would mean
        # the bound is not installable as written, and should be raised
        assert pinned.release[:len(floors[0].release)] == floors[0].release, (
            f"requirements-lowest.lock pins {name}=={pinned}, not at its lower bound {floors[0]}: "
            "raise the bound in requirements.txt, or run python3 tasks.py lock"
        )
