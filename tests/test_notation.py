"""One notation for the whole book: a symbol of the introduction's table means
the same thing on every page.

``chapters/symbols.toml`` records each symbol, its meaning and the words that
may follow a definition of it. A page *defines* a symbol where its prose says
"$i$ is the ...", "where $i$ is a ...", "$m$ and $n$ are the ...", "$i$
denotes ..." or "write $i$ for ..."; the words after it must include one of the
symbol's words, or the page has given the symbol a second meaning (pairs were
once $i$ in five chapters and $\\ell$ in two, where $i$ was the query's
position). A box that quotes a source's own letters is marked
``:class: paper-notation`` and is skipped: there a paper's $m$ may be ALiBi's
slope.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from chapter_text import chapter_markdown

ROOT = Path(__file__).resolve().parents[1]
RECORD = tomllib.loads((ROOT / "chapters" / "symbols.toml").read_text(encoding="utf-8"))
SYMBOLS, RETIRED = RECORD["symbol"], RECORD.get("retired", [])
PAGES = [ROOT / "intro.md", *sorted((ROOT / "chapters").glob("*.ipynb"))]
#: The words read after "is" in a definition, at most.
WINDOW_WORDS = 12

_FENCE = re.compile(r"^\s{0,3}(`{3,}|:{3,})\s*(\{[\w:.-]+\})?(.*)$")
_MATH = r"\$(?!\$)[^$]+?\$"
#: Where a definition's subject starts: a sentence, a clause, or "where", "and", "let".
#: Words after which a symbol is the object of a phrase ("the code of position
#: $p$ is a vector"), not the subject of a definition.
_NOT_AFTER = ("of", "at", "to", "from", "by", "for", "in", "on", "as", "than", "times", "plus", "minus",
              "position", "positions", "pair", "pairs", "column", "columns", "row", "rows", "entry", "head",
              "heads", "width", "length", "base", "offset", "rate", "query", "key", "slope", "factor")
_START = "".join(rf"(?<!\b{word} )" for word in _NOT_AFTER) + r"(?<![\w$])"
_DEFINITIONS = [
    # $x$ is the ..., $x$ and $y$ are the ..., $x$, $y$ are a ... (a definition names a kind of thing)
    re.compile(rf"{_START}(?P<symbols>{_MATH}(?:\s*(?:,|,?\s+and|,?\s+or)\s*{_MATH})*)\s+(?:is|are)\s+"
               rf"(?:(?:always|also|now|here|still|then|just|simply)\s+)?(?=(?P<rest>(?:the|a|an|one)\s(?!same\b).*))", re.S | re.I),
    re.compile(rf"{_START}(?P<symbols>{_MATH}(?:\s*(?:,|,?\s+and)\s*{_MATH})*)\s+(?:denotes?|stands? for|numbers?|counts?|indexes|labels?)\s+"
               rf"(?=(?P<rest>.*))", re.S | re.I),
    re.compile(rf"\bwrites?\s+(?P<symbols>{_MATH})\s+for\s+(?=(?P<rest>.*))", re.S | re.I),
]


def normal(latex: str) -> str:
    """A symbol as written between dollars, without spaces or braces."""
    return re.sub(r"[\s{}]", "", latex)


BY_FORM = {normal(entry["symbol"]): entry for entry in SYMBOLS}


def prose(markdown: str) -> str:
    """The Markdown a reader reads as text: code fences, display mathematics and
    boxes marked ``paper-notation`` removed, every run of spaces made one."""
    kept, lines, index = [], markdown.splitlines(), 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            kept.append(lines[index])
            index += 1
            continue
        fence = opening.group(1)
        close = re.compile(rf"^\s{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = next((j for j in range(index + 1, len(lines)) if close.match(lines[j])), len(lines))
        body = lines[index + 1:end]
        is_code = not opening.group(2) or opening.group(2) in ("{code-cell}", "{code-block}", "{code}", "{math}")
        options = [line for line in body if re.match(r"^\s*:[\w-]+:", line)]
        if not is_code and not any("paper-notation" in line for line in options if ":class:" in line):
            kept.append(prose("\n".join(body)))
        index = end + 1
    text = re.sub(r"\$\$.*?\$\$", " ", "\n".join(kept), flags=re.S)
    return re.sub(r"\s+", " ", text)


def page_prose(path: Path) -> str:
    if path.suffix == ".md":
        return prose(path.read_text(encoding="utf-8"))
    return prose(chapter_markdown(path, separator="\n\n"))


def definitions(text: str) -> list[tuple[str, str, str]]:
    """``(symbol, the words after it, the sentence)`` for each definition of a
    symbol of the table in ``text``."""
    found = []
    for pattern in _DEFINITIONS:
        for match in pattern.finditer(text):
            rest = re.split(r"[.;:!?,]\s|\$\$|\sand \$", match.group("rest"), maxsplit=1)[0]
            rest = " ".join(rest.split()[:WINDOW_WORDS]).lower()
            for symbol in re.findall(_MATH, match.group("symbols")):
                entry = BY_FORM.get(normal(symbol[1:-1]))
                if entry:
                    found.append((entry["symbol"], rest, text[match.start():match.start() + 160]))
    return found


def misdefinitions(text: str) -> list[str]:
    wrong = []
    for symbol, rest, sentence in definitions(text):
        entry = BY_FORM[normal(symbol)]
        if not any(word.lower() in rest for word in entry["words"]):
            wrong.append(f"${symbol}$ is defined as '{rest}' ({sentence!r}); "
                         f"the book's ${symbol}$ is {entry['meaning']}")
    return wrong


def misuses(text: str) -> list[str]:
    """Uses of a symbol after a word it may not follow ("position $i$"), and
    retired letters, outside paper-notation boxes."""
    wrong = []
    for entry in SYMBOLS:
        for word in entry.get("not_after", []):
            for match in re.finditer(rf"\b{word}\s+{_MATH}", text, flags=re.I):
                if normal(match.group(0).split("$")[1]) == normal(entry["symbol"]):
                    wrong.append(f"{match.group(0)!r}: the book's ${entry['symbol']}$ is {entry['meaning']}")
    for entry in RETIRED:
        for match in re.finditer(_MATH, text):
            if normal(entry["symbol"]) in normal(match.group(0)[1:-1]):
                wrong.append(f"{match.group(0)!r}: write ${entry['instead']}$ ({entry['why']})")
    return wrong


def test_the_record_holds_the_introductions_symbols_once_each():
    forms = [normal(entry["symbol"]) for entry in SYMBOLS]
    assert len(forms) == len(set(forms)), "a symbol is recorded twice"
    for entry in SYMBOLS:
        assert entry["meaning"] and entry["words"], entry["symbol"]
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\|\s*(\$[^|]+?)\s*\|", intro, flags=re.M)
    table = {normal(symbol[1:-1]) for row in rows for symbol in re.findall(_MATH, row)}
    assert table == set(forms), (
        f"the introduction's table of symbols and chapters/symbols.toml differ: "
        f"only in the table {sorted(table - set(forms))}, only in the record {sorted(set(forms) - table)}")


@pytest.mark.parametrize("page", PAGES, ids=[page.stem for page in PAGES])
def test_no_page_gives_a_symbol_another_meaning(page):
    text = page_prose(page)
    wrong = misdefinitions(text) + misuses(text)
    assert not wrong, f"{page.name}:\n" + "\n".join(wrong)


def test_the_check_finds_a_second_meaning_and_passes_the_right_one():
    assert misdefinitions(prose("Here $i$ and $j$ are the positions of the query and the key."))
    assert misdefinitions(prose("where $k$ is the offset and $N$ is the length of the text"))
    assert misdefinitions(prose("We write $\\Delta$ for the width of a head."))
    assert not misdefinitions(prose("where $i$ is the number of a sine-cosine pair and $\\omega_i$ its rate."))
    assert not misdefinitions(prose("$m$ and $n$ are the positions of a query and a key; $D$ is even."))
    assert not misdefinitions(prose("$d$ denotes the width of one head, and $p$ is the same in both."))
    assert [symbol for symbol, _, _ in definitions(prose("$\\mathbf{q}_m$ is the query"))] == ["\\mathbf{q}_m"]


def test_the_check_finds_a_pair_number_used_as_a_position_and_a_retired_letter():
    assert misuses(prose("when query $i$ looks at key $j$"))
    assert misuses(prose("the rate $\\theta_i$ of pair $i$"))
    assert not misuses(prose("pair $i$ turns by $p\\,\\omega_i$ at position $p$"))


def test_a_box_that_quotes_a_papers_letters_is_not_checked():
    box = (":::{admonition} The paper's letters\n:class: note paper-notation\n"
           "In the paper, $m$ is the slope of a head.\n:::\n")
    assert not misdefinitions(prose(box))
    assert misdefinitions(prose(box.replace("paper-notation", "tip")))
    rotary = ":::{note}\n:class: paper-notation\nRoFormer writes $\\theta_i$ for $\\omega_i$.\n:::\n"
    assert not misuses(prose(rotary)) and misuses(prose(rotary.replace("paper-notation", "tip")))
