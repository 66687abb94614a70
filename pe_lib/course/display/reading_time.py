r"""How long a page of the book takes to read, counted from its source.

A page is a chapter notebook or a Markdown page such as ``intro.md``. What a
reader spends time on is counted from what the page shows:

- **prose words**: the words of its Markdown (admonitions, captions and
  tables included), leaving out display mathematics, fenced code, directive
  options (``:alt:``, ``:name:``, ``:class:``), labels and comments. A role (a
  glued number, a link, a citation), a span of inline code and a piece of
  inline mathematics count as one word each, a link that gives its own text as
  the words of that text;
- **display equations**: each ``$$ ... $$`` block and ``{math}`` directive;
- **visible code lines**: the non-blank lines of the code cells the book shows
  (neither removed nor folded: no ``remove-cell``, ``remove-input``,
  ``hide-input`` or ``hide-cell`` tag), of code fences in the Markdown, and of
  the code a ``literalinclude`` puts on the page;
- **figures**: each ``{glue:figure}``, ``{pasted-figure}``, ``{figure}`` and
  ``{image}``, and each glued table (``{glue:md}``), whose words the prose
  count does not see;
- **exercises**: each admonition whose title starts with "Exercise", the
  page's core exercises, which practise its central idea;
- **further exercises**: each admonition whose title starts with "Going
  further", which a reader may leave for later.

The time to read a page is

.. math::

   \frac{\text{words}}{100\ \text{per minute}}
   + \text{equations} \times 30\ \text{s}
   + \text{code lines} \times 8\ \text{s}
   + \text{figures} \times 60\ \text{s},

and with its exercises, 10 minutes more for each core exercise (to try it and
read its solution, whose words are already counted); with all its exercises,
10 minutes more for each further exercise too. Every exercise's words and
code count in the reading time, whether core or further. 100 words a minute
is a pace for studying, not for reading through: the slow end of the rates
usually given for reading to learn, 100 to 200 words a minute, against about
240 for reading non-fiction (Brysbaert, 2019). A student stops at an equation, reads a
line of code twice and looks for what a figure shows.

>>> text = '''(chapter-x)=
... # A title
...
... The rate $\\omega_i$ of pair {eval}`pair` turns:
...
... $$
... \\omega_i = N^{-2i/D}
... $$ (eq-rate)
... '''
>>> prose_words(text)
9
>>> counts = PageCounts(words=1200, code_lines=30, figures=4, exercises=1,
...                     further_exercises=2, equations=6)
>>> counts.reading_minutes(), counts.minutes_with_exercises()
(23.0, 33.0)
>>> counts.minutes_with_all_exercises()
53.0
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

#: A pace for studying technical prose, in words per minute.
WORDS_PER_MINUTE = 100
#: Time to work through one display equation, in seconds.
SECONDS_PER_EQUATION = 30
#: Time to read one visible line of code, in seconds.
SECONDS_PER_CODE_LINE = 8
#: Time to look at one figure or glued table, in seconds.
SECONDS_PER_FIGURE = 60
#: Time to try one exercise and read its solution, in minutes.
MINUTES_PER_EXERCISE = 10

#: Times are stated to the nearest this many minutes.
ROUNDING_MINUTES = 5
#: No page on the reader's path holds more prose words than this.
PAGE_WORD_LIMIT = 3000
#: The reader's path (introduction, core and deep dives) holds fewer prose words than this.
PATH_WORD_LIMIT = 30000
#: The core path, its core exercises included, takes at most this many minutes at
#: the studying pace above: one afternoon. A change may lower this limit, never
#: raise it.
CORE_MINUTES_LIMIT = 180

#: The parts of ``_toc.yml`` that make the reader's path, in order.
CORE_PART = "Core path"
DEEP_DIVES_PART = "Deep dives"

#: How the title of a core exercise's admonition starts (in any case).
EXERCISE_TITLE = "exercise"
#: How the title of a further exercise's admonition starts (in any case).
FURTHER_EXERCISE_TITLE = "going further"

#: Cell tags that keep a code cell's source off the page, or folded.
HIDDEN_CODE_TAGS = frozenset({"remove-cell", "remove-input", "hide-input", "hide-cell"})
#: Directives whose body is code, data or options, never prose.
CODE_DIRECTIVES = frozenset({"code", "code-block", "code-cell", "sourcecode", "literalinclude", "math", "raw",
                             "eval-rst", "glue", "glue:any", "glue:md", "glue:text", "glue:math", "bibliography",
                             "tableofcontents", "toctree", "include"})
#: Directives drawn as a figure or a table.
FIGURE_DIRECTIVES = frozenset({"glue:figure", "pasted-figure", "figure", "image", "glue:md"})
#: Directives whose argument is a title the reader reads.
TITLED_DIRECTIVES = frozenset({"admonition", "topic", "sidebar", "dropdown", "exercise", "solution"})

_WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")
# A backtick fence's info string holds no backtick (CommonMark); a colon fence's
# may, as in a dropdown titled with code.
_FENCE = re.compile(r"^\s{0,3}(?:(?P<fence>`{3,})(?P<info>[^`]*)|(?P<colons>:{3,})(?P<title>.*))$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<argument>.*)$")
_OPTION = re.compile(r"^\s*:[\w-]+:")


@dataclass(frozen=True)
class PageCounts:
    """What one page asks of its reader: words, code lines, figures, core
    exercises, further exercises and display equations.

    >>> PageCounts(words=300, code_lines=0, figures=0, exercises=1).minutes_with_exercises()
    13.0
    """

    words: int
    code_lines: int
    figures: int
    exercises: int
    further_exercises: int = 0
    equations: int = 0

    def reading_minutes(self) -> float:
        """Minutes to read the page: its words, equations, code lines and figures."""
        return (self.words / WORDS_PER_MINUTE + self.equations * SECONDS_PER_EQUATION / 60
                + self.code_lines * SECONDS_PER_CODE_LINE / 60 + self.figures * SECONDS_PER_FIGURE / 60)

    def minutes_with_exercises(self) -> float:
        """Minutes to read the page and do its core exercises."""
        return self.reading_minutes() + self.exercises * MINUTES_PER_EXERCISE

    def minutes_with_all_exercises(self) -> float:
        """Minutes to read the page and do all its exercises, the further ones too."""
        return self.minutes_with_exercises() + self.further_exercises * MINUTES_PER_EXERCISE

    def __add__(self, other: PageCounts) -> PageCounts:
        return PageCounts(self.words + other.words, self.code_lines + other.code_lines,
                          self.figures + other.figures, self.exercises + other.exercises,
                          self.further_exercises + other.further_exercises, self.equations + other.equations)


@dataclass
class _Tally:
    prose: list[str]
    code_lines: int = 0
    figures: int = 0
    exercises: int = 0
    further_exercises: int = 0
    equations: int = 0


def prose_words(markdown: str) -> int:
    """The number of prose words in ``markdown`` (see the module's rules).

    >>> prose_words("See {ref}`chapter-rope` and `pe_lib.rope`, or $x_i + 1$.")
    6
    >>> prose_words(":::{admonition} Exercise 1\\n:class: dropdown\\nTwo words.\\n:::")
    4
    >>> prose_words(":::{admonition} Going further 2 (by hand)\\nTwo words.\\n:::")
    7
    """
    tally = _Tally(prose=[])
    _read_markdown(markdown.splitlines(), tally, folder=None)
    return _count_words("\n".join(tally.prose))


def page_counts(path: str | Path) -> PageCounts:
    """Count the words, visible code lines, figures and exercises (core and further) of one page.

    ``path`` is a notebook (``.ipynb``) or a Markdown page (``.md``); files
    named by ``literalinclude`` are read relative to its folder.
    """
    path = Path(path)
    tally = _Tally(prose=[])
    if path.suffix == ".md":
        _read_markdown(path.read_text(encoding="utf-8").splitlines(), tally, folder=path.parent)
    elif path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            source = "".join(cell["source"])
            if cell["cell_type"] == "markdown":
                _read_markdown(source.splitlines(), tally, folder=path.parent)
            elif cell["cell_type"] == "code" and not HIDDEN_CODE_TAGS & set(cell["metadata"].get("tags", [])):
                tally.code_lines += _non_blank(source.splitlines())
    else:
        raise ValueError(f"path must be a .ipynb notebook or a .md page, got {str(path)!r}")
    prose = "\n".join(tally.prose)
    return PageCounts(words=_count_words(prose), code_lines=tally.code_lines,
                      figures=tally.figures, exercises=tally.exercises,
                      further_exercises=tally.further_exercises,
                      equations=tally.equations + len(_DISPLAY_MATH.findall(prose)))


def rounded_minutes(minutes: float) -> int:
    """``minutes`` to the nearest :data:`ROUNDING_MINUTES`: a page's time as the
    introduction states it, and what its totals add.

    >>> rounded_minutes(42.4), rounded_minutes(187.6), rounded_minutes(2.4)
    (40, 190, 0)
    """
    return ROUNDING_MINUTES * round(minutes / ROUNDING_MINUTES)


def format_minutes(minutes: float, *, unit_space: str = " ") -> str:
    """``minutes`` to the nearest :data:`ROUNDING_MINUTES`, as the introduction states it.

    ``unit_space`` goes between a number and its unit: the introduction's
    tables give a no-break space, so that a narrow column breaks a time
    between its hours and its minutes, never inside "10 min".

    >>> format_minutes(42.4), format_minutes(187.6), format_minutes(120)
    ('40 min', '3 h 10 min', '2 h')
    >>> format_minutes(70, unit_space="\N{NO-BREAK SPACE}").split(" ")
    ['1\xa0h', '10\xa0min']
    """
    hours, rest = divmod(rounded_minutes(minutes), 60)
    if not hours:
        return f"{rest}{unit_space}min"
    return f"{hours}{unit_space}h" + (f" {rest}{unit_space}min" if rest else "")


def parse_minutes(text: str) -> int:
    """The minutes of a time written as :func:`format_minutes` writes it.

    >>> parse_minutes("3 h 10 min"), parse_minutes("40 min"), parse_minutes("2 h")
    (190, 40, 120)
    """
    match = re.fullmatch(r"\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*min)?\s*", text)
    if not match or not any(match.groups()):
        raise ValueError(f"text must be a time such as '1 h 5 min' or '40 min', got {text!r}")
    return 60 * int(match.group(1) or 0) + int(match.group(2) or 0)


def reader_path(root: str | Path) -> dict[str, list[str]]:
    """The pages of the reader's path, from ``root/_toc.yml``, by part.

    Returns ``{"Core path": [...], "Deep dives": [...]}``, each a list of page
    names as the table of contents writes them (``chapters/rope``), in order.
    Lines commented out in ``_toc.yml`` are not pages.
    """
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf-8"))
    parts = {part.get("caption"): [chapter["file"] for chapter in part.get("chapters", [])]
             for part in toc.get("parts", [])}
    missing = [name for name in (CORE_PART, DEEP_DIVES_PART) if name not in parts]
    if missing:
        raise ValueError(f"_toc.yml has no part captioned {missing}; its parts are {sorted(map(str, parts))}")
    return {CORE_PART: parts[CORE_PART], DEEP_DIVES_PART: parts[DEEP_DIVES_PART]}


def page_file(root: str | Path, name: str) -> Path:
    """The file of a page named as in ``_toc.yml`` (``chapters/rope`` or ``intro``)."""
    for suffix in (".ipynb", ".md"):
        candidate = Path(root) / f"{name}{suffix}"
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"_toc.yml names {name!r}, but neither {name}.ipynb nor {name}.md exists")


_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$(?:[ \t]*\([\w:-]+\))?", re.S)


def _count_words(text: str) -> int:
    text = _DISPLAY_MATH.sub(" ", text)  # display mathematics: counted as equations
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"^\s*\([\w:-]+\)=\s*$", " ", text, flags=re.M)  # labels
    text = re.sub(r"^\s*%.*$", " ", text, flags=re.M)  # MyST comments
    text = re.sub(r"\{[\w:.-]+\}`([^`]*?)\s*<[^<>`]+>`", r" \1 ", text)  # a role with its own text
    text = re.sub(r"\{[\w:.-]+\}`[^`]*`", " ROLE ", text)  # any other role: one word
    text = re.sub(r"`[^`]+`", " CODE ", text)  # inline code: one word
    text = re.sub(r"(?<![\\$])\$(?!\$)[^$]+?(?<!\\)\$", " MATH ", text, flags=re.S)  # inline mathematics: one word
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)  # an image's alt text
    text = re.sub(r"\]\([^)]*\)", "] ", text)  # a link's address
    text = re.sub(r"\]\{[^}]*\}", "] ", text)  # a span's classes
    text = re.sub(r"<[^>\n]+>", " ", text)  # HTML tags
    return len(_WORD.findall(text))


def _non_blank(lines: list[str]) -> int:
    return sum(1 for line in lines if line.strip())


def _read_markdown(lines: list[str], tally: _Tally, folder: Path | None) -> None:
    """Add the prose, code lines, figures and exercises of Markdown ``lines`` to ``tally``."""
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            tally.prose.append(lines[index])
            index += 1
            continue
        fence = opening.group("fence") or opening.group("colons")
        info = opening.group("info") if opening.group("fence") else opening.group("title")
        close = re.compile(rf"^\s{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = next((j for j in range(index + 1, len(lines)) if close.match(lines[j])), len(lines))
        _read_block(info.strip(), lines[index + 1:end], tally, folder)
        index = end + 1


def _read_block(info: str, body: list[str], tally: _Tally, folder: Path | None) -> None:
    directive = _DIRECTIVE.match(info)
    if not directive:  # a code fence: ```python, ```bash, or none
        tally.code_lines += _non_blank(body)
        return
    name, argument = directive.group("name"), directive.group("argument").strip()
    options, content = _split_options(body)
    if name in FIGURE_DIRECTIVES:
        tally.figures += 1
    if name == "admonition" and argument.lower().startswith(EXERCISE_TITLE):
        tally.exercises += 1
    if name == "admonition" and argument.lower().startswith(FURTHER_EXERCISE_TITLE):
        tally.further_exercises += 1
    if name == "math":
        tally.equations += 1
    if name == "literalinclude":
        tally.code_lines += _non_blank(_included_lines(argument, options, folder))
    if name in CODE_DIRECTIVES:
        return
    if name in TITLED_DIRECTIVES and argument:
        tally.prose.append(argument)
    _read_markdown(content, tally, folder)


def _split_options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's options (``:key: value`` lines, or a ``---`` block) and its content."""
    options: dict[str, str] = {}
    if body and body[0].strip() == "---":
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), 0)
        for line in body[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        return options, body[end + 1:]
    index = 0
    while index < len(body) and _OPTION.match(body[index]):
        key, _, value = body[index].strip()[1:].partition(":")
        options[key] = value.strip()
        index += 1
    return options, body[index:]


def _included_lines(argument: str, options: dict[str, str], folder: Path | None) -> list[str]:
    """The lines a ``literalinclude`` shows, as Sphinx selects them: ``pyobject``,
    then ``start-at``/``start-after``, ``end-at``/``end-before``, then ``lines``."""
    if folder is None:
        raise ValueError(f"a literalinclude of {argument!r} needs the page's folder to find its file")
    path = (folder / argument).resolve()
    if not path.exists():
        raise FileNotFoundError(f"literalinclude names {argument!r}, which is not a file ({path})")
    lines = path.read_text(encoding="utf-8").splitlines()
    if "pyobject" in options:
        first, last = _object_lines(path, options["pyobject"])
        lines = lines[first - 1:last]
    for key, keep_match in (("start-at", True), ("start-after", False)):
        if key in options:
            found = next((j for j, line in enumerate(lines) if options[key] in line), None)
            if found is None:
                raise ValueError(f"literalinclude {argument!r}: {key} {options[key]!r} is not in the lines shown")
            lines = lines[found if keep_match else found + 1:]
    for key, keep_match in (("end-at", True), ("end-before", False)):
        if key in options:
            found = next((j for j, line in enumerate(lines) if options[key] in line), None)
            if found is None:
                raise ValueError(f"literalinclude {argument!r}: {key} {options[key]!r} is not in the lines shown")
            lines = lines[:found + 1 if keep_match else found]
    if "lines" in options:
        lines = [lines[j] for j in _line_numbers(options["lines"], len(lines))]
    return lines


def _object_lines(path: Path, dotted: str) -> tuple[int, int]:
    """First and last line (1-based) of the class or function ``dotted`` in ``path``."""
    scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    node = None
    for part in dotted.split("."):
        node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise ValueError(f"literalinclude: {dotted!r} is not defined in {path.name}")
        scope = node.body
    return node.lineno, node.end_lineno


def _line_numbers(spec: str, count: int) -> list[int]:
    """0-based indices of a Sphinx ``:lines:`` option such as ``1,3-`` among ``count`` lines."""
    chosen = []
    for piece in spec.split(","):
        piece = piece.strip()
        if "-" in piece:
            start, _, stop = piece.partition("-")
            chosen += range(int(start or 1) - 1, int(stop) if stop else count)
        else:
            chosen.append(int(piece) - 1)
    return [j for j in chosen if 0 <= j < count]
