"""api.md documents every public module of pe_lib.

Modules are discovered by walking the package, so a module added or moved fails
here until api.md names it. A module whose name has a part starting with ``_``
is private and needs no page. A module counts as documented when api.md has an
``automodule`` directive for it, or when it is one layer's file inside a package
that api.md documents with ``:members:`` and that package exports everything the
file defines (``pe_lib.layers`` documents its layers this way, so each layer is
described once, under the name users import it by).

The teaching helpers of ``pe_lib.course`` are documented too (the chapters call
them and a reader re-running one needs them), but in their own section after the
user-facing modules, so a reader of the reference meets what they would import
first.
"""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pe_lib

API = Path(__file__).resolve().parents[1] / "api.md"
COURSE_HEADING = "What the course uses to teach"


def public_modules():
    names = ["pe_lib"]
    for info in pkgutil.walk_packages(pe_lib.__path__, prefix="pe_lib."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def directives(text):
    """``module name -> its options`` for every automodule directive of api.md."""
    found = {}
    for match in re.finditer(r"^\.\. automodule:: (\S+)\n((?:[ \t]+:.*\n)*)", text, re.MULTILINE):
        found[match.group(1)] = match.group(2)
    return found


def defined_here(module):
    """The names a module is responsible for: its ``__all__``, or the classes and
    functions it defines itself."""
    if hasattr(module, "__all__"):
        return set(module.__all__)
    return {
        name for name, value in vars(module).items()
        if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    }


def documented_through_package(name, documented):
    package_name = name.rpartition(".")[0]
    if ":members:" not in documented.get(package_name, ""):
        return False
    package, module = importlib.import_module(package_name), importlib.import_module(name)
    exported = set(getattr(package, "__all__", ()))
    classes = {n for n in defined_here(module) if inspect.isclass(getattr(module, n))}
    # A layer's file: its classes are exported by the package; helper functions
    # beside them are documented only if the package exports them too.
    return bool(classes) and classes <= exported


def test_the_walk_finds_the_modules_we_know():
    modules = public_modules()
    assert {"pe_lib", "pe_lib.sinusoidal", "pe_lib.layers", "pe_lib.course"} <= set(modules)
    assert not [name for name in modules if "._" in name]


def test_every_public_module_is_documented():
    documented = directives(API.read_text())
    missing = [
        name for name in public_modules()
        if name not in documented and not documented_through_package(name, documented)
    ]
    assert not missing, f"api.md does not document: {missing}"


def test_no_directive_names_a_module_that_does_not_exist():
    assert set(directives(API.read_text())) <= set(public_modules())


def test_course_modules_have_their_own_section():
    text = API.read_text()
    assert COURSE_HEADING in text
    user_part, course_part = text.split(COURSE_HEADING, 1)
    assert not [name for name in directives(user_part) if name.startswith("pe_lib.course")]
    assert not [name for name in directives(course_part) if not name.startswith("pe_lib.course")]
