"""A chapter in JupyterLab reads like its page: what the book hides is collapsed there.

The book hides cells by their tags (``remove-cell``, ``hide-input``, ...);
JupyterLab collapses a cell by its ``jupyter.source_hidden`` and
``jupyter.outputs_hidden`` metadata. :func:`lab_view` says which metadata each
set of tags calls for, and :func:`sync_lab_view` writes it, so the two stay in
step (``tests/test_lab_view.py`` fails when they do not). A removed cell keeps
its outputs open: what it shows is a figure that the book places with
``{glue:figure}`` (everything else it computes is glued, which shows nothing).

Run as a script, it brings chapters up to date; ``python3 tasks.py notebooks``
does the same to each chapter it runs::

    python -m pe_lib.course.display.lab_view chapters/*.ipynb

It also rewrites the prose's ``{glue:text}`name``` as ``{eval}`name```, which
both the book (``_ext/glued_expressions.py``) and JupyterLab's MyST renderer
show, for every name the chapter glues with ``glue_number`` (text glued with
myst-nb's ``glue`` itself, and other chapters' values, keep ``{glue:text}``); and glues the
static drawing of an explorable figure without showing it (``display=False``),
since the live figure stands for it when the chapter runs. Each Markdown cell keeps
the values of its ``{eval}`` roles in its metadata (:func:`store_expressions`),
so that the numbers show as soon as a chapter opens.

What the book pastes from glue and JupyterLab cannot (a figure's caption, a
table, text glued by ``glue`` itself) is written for JupyterLab in the
learner's copy that ``python3 tasks.py lab`` makes (:func:`for_the_lab`); the
course's chapters keep the glue the book reads.

>>> lab_view(["hide-input"])
{'source_hidden': True}
>>> lab_view(["hide-cell", "nbval-ignore-output"])
{'source_hidden': True, 'outputs_hidden': True}
>>> to_eval_roles("is {glue:text}`per_ratio` times")
'is {eval}`per_ratio` times'
"""

from __future__ import annotations

import ast
import re
import sys

#: What JupyterLab collapses for each tag the book hides by.
COLLAPSED_BY_TAG = {
    "remove-cell": ("source_hidden",),
    "remove-input": ("source_hidden",),
    "hide-input": ("source_hidden",),
    # An exercise's solution: hidden until the reader asks for it, as on the page.
    "hide-cell": ("source_hidden", "outputs_hidden"),
    "remove-output": ("outputs_hidden",),
    "hide-output": ("outputs_hidden",),
}
_KEYS = ("source_hidden", "outputs_hidden")
_GLUE_PREFIX = "application/papermill.record/"
_EVAL = re.compile(r"\{eval\}`([A-Za-z_][A-Za-z0-9_]*)`")

_GLUE_TEXT = re.compile(r"\{glue:text\}`([A-Za-z_][A-Za-z0-9_]*)`")
# Text glued by myst-nb's glue() itself, not by glue_number: the kernel has no such name.
_GLUED_ELSEWISE = re.compile(r"""(?<![\w.])glue\(\s*f?["']([A-Za-z_][A-Za-z0-9_]*)""")
_FALLBACK_GLUE = re.compile(r"(glue_figure\([^()]*\.fallback\(\)[^()]*?)\)")


def lab_view(tags) -> dict[str, bool]:
    """The ``jupyter`` cell metadata that collapses in JupyterLab what ``tags`` hide in the book."""
    hidden = {key for tag in tags for key in COLLAPSED_BY_TAG.get(tag, ())}
    return {key: True for key in _KEYS if key in hidden}


def sync_lab_view(notebook) -> bool:
    """Set every cell's ``jupyter`` metadata to :func:`lab_view` of its tags; True if any changed."""
    changed = False
    for cell in notebook["cells"]:
        metadata = cell["metadata"]
        wanted = lab_view(metadata.get("tags", ()))
        current = dict(metadata.get("jupyter", {}))
        updated = {key: value for key, value in current.items() if key not in _KEYS} | wanted
        if updated != current:
            changed = True
            if updated:
                metadata["jupyter"] = updated
            else:
                metadata.pop("jupyter", None)
    return changed


def glued_elsewise(notebook) -> tuple[str, ...]:
    """The names (or the start of names) a notebook glues with ``glue`` rather than ``glue_number``."""
    return tuple(name for cell in notebook["cells"] if cell["cell_type"] == "code"
                 for name in _GLUED_ELSEWISE.findall(_text(cell["source"])))


def to_eval_roles(text: str, skip=()) -> str:
    """``{glue:text}`name``` as ``{eval}`name```, but for names starting with one of ``skip``."""
    return _GLUE_TEXT.sub(lambda m: m[0] if m[1].startswith(tuple(skip)) else f"{{eval}}`{m[1]}`", text)


def convert(notebook) -> bool:
    """Rewrite a notebook's glued numbers as ``{eval}`` and its fallbacks' glue; sync its metadata."""
    changed = False
    skip = glued_elsewise(notebook)
    for cell in notebook["cells"]:
        source = _text(cell["source"])
        if cell["cell_type"] == "markdown":
            new = to_eval_roles(source, skip)
        elif cell["cell_type"] == "code":
            new = _FALLBACK_GLUE.sub(lambda m: m[0] if "display=" in m[1] else f"{m[1]}, display=False)",
                                     source)
        else:
            continue
        if new != source:
            cell["source"] = new
            changed = True
    changed = store_expressions(notebook) or changed
    return sync_lab_view(notebook) or changed


def glued_texts(notebook) -> dict[str, str]:
    """The text glued under each name in a notebook's saved outputs (what the book pastes)."""
    texts = {}
    for cell in notebook["cells"]:
        for output in cell.get("outputs", ()):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            text = output.get("data", {}).get(_GLUE_PREFIX + "text/plain")
            if name and isinstance(text, str):
                try:
                    value = ast.literal_eval(text)  # the repr of the glued str
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str):
                    texts[name] = value
    return texts


def store_expressions(notebook) -> bool:
    """Save each ``{eval}`name```'s value in its Markdown cell, as JupyterLab's MyST renderer does.

    The renderer keeps what the kernel returned for each expression in the cell's
    ``user_expressions`` metadata and shows it when the notebook opens, before
    anything runs; running the cell evaluates it again. The value of ``name`` in the
    kernel is the text ``glue_number`` glued, so it is read from the saved outputs.
    True if any cell changed.
    """
    texts = glued_texts(notebook)
    changed = False
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        names = [name for name in dict.fromkeys(_EVAL.findall(_text(cell["source"]))) if name in texts]
        stored = [{"expression": name,
                   "result": {"status": "ok", "data": {"text/plain": repr(texts[name])}, "metadata": {}}}
                  for name in names]
        if stored and cell["metadata"].get("user_expressions") != stored:
            cell["metadata"]["user_expressions"] = stored
            changed = True
        elif not stored and "user_expressions" in cell["metadata"]:
            del cell["metadata"]["user_expressions"]
            changed = True
    return changed


# What the book pastes from glue that JupyterLab's MyST renderer cannot: a figure with its
# caption, a table of glued Markdown, text glued by myst-nb's glue itself or in another chapter.
_GLUE_FIGURE = re.compile(r"^```\{glue:figure\}[ \t]+(?P<name>\S+)[ \t]*\n(?P<options>(?::[^\n]*\n)*)"
                          r"(?P<caption>.*?)(?:^```[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_LITERAL_INCLUDE = re.compile(r"^```\{literalinclude\}[ \t]+(?P<path>\S+)[ \t]*\n(?P<options>(?::[^\n]*\n)*)```[ \t]*$",
                              re.MULTILINE)
_OPTION = re.compile(r"^:(?P<name>[\w-]+):[ \t]*(?P<value>.*)$", re.MULTILINE)


def included_source(match, folder) -> str:
    """A ``{literalinclude}`` block as the fenced code the book shows, read by Sphinx's own reader.

    JupyterLab cannot open the file a chapter includes, so the learner's copy
    holds the code itself: the lines the book shows (``:pyobject:``,
    ``:start-at:``, ``:dedent:``), read from ``folder``, the chapters' folder.
    """
    from pathlib import Path
    from types import SimpleNamespace

    from sphinx.directives.code import LiteralIncludeReader

    options = {m["name"]: m["value"].strip() for m in _OPTION.finditer(match["options"])}
    if "dedent" in options:
        options["dedent"] = int(options["dedent"]) if options["dedent"] else None
    reader = LiteralIncludeReader(str(Path(folder) / match["path"]), options, SimpleNamespace(source_encoding="utf-8"))
    code, _ = reader.read()
    return f"```{options.get('language', '')}\n{code.rstrip()}\n```"


_GLUE_MD = re.compile(r"^```\{glue:md\}[ \t]+(?P<name>\S+)[ \t]*\n(?::[^\n]*\n)*```[ \t]*$", re.MULTILINE)
_GLUE_TEXT_ANY = re.compile(r"\{glue(?::text|:any)?\}`(?:(?P<notebook>[^`:]+\.ipynb)::)?(?P<name>[\w-]+)"
                            r"(?::(?P<format>[^`]*))?`")
_FIGURE_OPTION = re.compile(r"^:name:[ \t]*(\S+)", re.MULTILINE)


def glued_records(notebook, kind: str) -> dict[str, str]:
    """What a notebook's saved outputs glue under each name as ``kind`` (``text/plain``, ...)."""
    records = {}
    for cell in notebook["cells"]:
        for output in cell.get("outputs", ()):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            value = output.get("data", {}).get(_GLUE_PREFIX + kind)
            if name and value is not None:
                records[name] = _text(value)
    return records


def glues_a_figure(cell) -> bool:
    """True if a code cell glues a figure for ``{glue:figure}`` and shows it under itself."""
    outputs = cell.get("outputs", ())
    return (any(_GLUE_PREFIX + "image/png" in output.get("data", {}) for output in outputs)
            and any("image/png" in output.get("data", {}) for output in outputs))


def for_the_lab(notebook, chapters=None) -> dict:
    r"""The learner's copy of a chapter: what the book pastes from glue, written as JupyterLab shows it.

    Made by ``python3 tasks.py lab`` when it copies a chapter into the learner's
    folder; the course's notebooks keep the glue the book reads. In the copy:

    - a ``{glue:figure}`` becomes a MyST ``{figure}`` holding its caption and its
      ``:name:`` as ``:label:`` (so ``{numref}`` still finds it). The figure itself
      is the output of the cell that glues it, just above the caption: running
      the cell draws it again, and the caption reads under the new drawing;
    - a cell whose figure the book shows at its caption (``remove-output``) keeps its
      output open, so the figure shows when the cell runs;
    - a ``{literalinclude}`` becomes the fenced code it shows (:func:`included_source`);
    - a ``{glue:md}`` table and text glued by myst-nb's ``glue`` (in this chapter,
      or in another chapter ``name.ipynb::``, found in ``chapters``) are pasted as
      the text the book shows; a run does not change them.

    Numbers quoted with ``{eval}`` are left as they are: the kernel computes them.
    Returns ``notebook``, changed in place.

    >>> cell = {"cell_type": "markdown", "metadata": {}, "source":
    ...         "```{glue:figure} fig-a\n:alt: A line.\n:name: fig-a-line\n\nA line.\n```"}
    >>> print(for_the_lab({"cells": [cell]})["cells"][0]["source"])
    ```{figure}
    :label: fig-a-line
    <BLANKLINE>
    A line.
    ```
    """
    from pathlib import Path

    others: dict[str, dict[str, str]] = {}

    def other(name: str) -> dict[str, str]:
        if name not in others:
            import nbformat

            if chapters is None:
                raise ValueError(f"the chapter quotes {name}, but no chapters folder was given to read it from")
            others[name] = glued_records(nbformat.read(Path(chapters) / name, as_version=4), "text/plain")
        return others[name]

    texts = glued_records(notebook, "text/plain")
    tables = glued_records(notebook, "text/markdown")

    def text(match) -> str:
        glued = other(match["notebook"]) if match["notebook"] else texts
        if match["name"] not in glued:
            return match[0]
        value = ast.literal_eval(glued[match["name"]])
        return format(value, match["format"]) if match["format"] else str(value)

    def figure(match) -> str:
        label = _FIGURE_OPTION.search(match["options"])
        head = "```{figure}\n" + (f":label: {label[1]}\n" if label else "")
        return head + "\n" + match["caption"].strip("\n") + "\n```"

    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            if glues_a_figure(cell) and cell["metadata"].get("jupyter", {}).get("outputs_hidden"):
                del cell["metadata"]["jupyter"]["outputs_hidden"]
            continue
        if cell["cell_type"] != "markdown":
            continue
        source = _GLUE_FIGURE.sub(figure, _text(cell["source"]))
        if chapters is not None:
            source = _LITERAL_INCLUDE.sub(lambda m: included_source(m, chapters), source)
        source = _GLUE_MD.sub(lambda m: tables.get(m["name"], m[0]).strip("\n"), source)
        cell["source"] = _GLUE_TEXT_ANY.sub(text, source)
    return notebook


def _text(source) -> str:
    return source if isinstance(source, str) else "".join(source)


def copy_for_the_lab(chapters: str, folder: str, names: list[str]) -> None:
    """Write :func:`for_the_lab` of each chapter ``names`` of ``chapters`` into ``folder``."""
    from pathlib import Path

    import nbformat

    for name in names:
        notebook = for_the_lab(nbformat.read(Path(chapters) / name, as_version=4), chapters)
        target = Path(folder) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)


def main(paths: list[str]) -> int:
    import nbformat

    if paths[:1] == ["--for-the-lab"]:  # used by `tasks.py lab`: CHAPTERS FOLDER NAME.ipynb ...
        copy_for_the_lab(paths[1], paths[2], paths[3:])
        return 0
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        if convert(notebook):
            nbformat.write(notebook, path)
            print(f"{path}: updated", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
