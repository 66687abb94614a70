"""The reference (api.md and its pages in api/) documents every public module of pe_lib.

The reference is split into pages (the position methods, the Keras layers, and
two of the course's helpers) so that no page of the built book is heavy to load;
api.md is their index. Modules are discovered by walking the package, so a
module added or moved fails here until a page of the reference names it. A module whose name has a part starting with ``_``
is private and needs no page. A module counts as documented when the reference has an
``automodule`` directive for it, or when it is one layer's file inside a package
that the reference documents with ``:members:`` and that package exports everything the
file defines (``pe_lib.layers`` documents its layers this way, so each layer is
described once, under the name users import it by).

The teaching helpers of ``pe_lib.course`` are documented too (the chapters call
them and a reader re-running one needs them), but on their own pages after the
user-facing modules, so a reader of the reference meets what they would import
first.
"""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pe_lib

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "api.md"
#: The reference's pages in the order of the book: the user's modules, then the course's.
PAGES = [API, ROOT / "api" / "methods.md", ROOT / "api" / "layers.md", ROOT / "api" / "course.md",
         ROOT / "api" / "course_experiments.md"]
COURSE_PAGES = PAGES[3:]
COURSE_HEADING = "What the course uses to teach"


def reference() -> str:
    return "\n".join(page.read_text() for page in PAGES)


def public_modules():
    names = ["pe_lib"]
    for info in pkgutil.walk_packages(pe_lib.__path__, prefix="pe_lib."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def directives(text):
    """``module name -> its options`` for every automodule directive of ``text``."""
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
    documented = directives(reference())
    missing = [
        name for name in public_modules()
        if name not in documented and not documented_through_package(name, documented)
    ]
    assert not missing, f"the reference does not document: {missing}"


def test_no_directive_names_a_module_that_does_not_exist():
    assert set(directives(reference())) <= set(public_modules())


def test_every_module_is_documented_once():
    names = [name for page in PAGES for name in directives(page.read_text())]
    assert len(names) == len(set(names))


def test_course_modules_have_their_own_pages():
    assert COURSE_HEADING in COURSE_PAGES[0].read_text()
    for page in PAGES:
        course = [name for name in directives(page.read_text()) if name.startswith("pe_lib.course")]
        if page in COURSE_PAGES:
            assert len(course) == len(directives(page.read_text())) > 0, page.name
        else:
            assert not course, page.name


def test_every_page_of_the_reference_is_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text()
    for page in PAGES:
        assert f"file: {page.relative_to(ROOT).with_suffix('').as_posix()}\n" in toc, page.name
