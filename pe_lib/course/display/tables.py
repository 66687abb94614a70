"""Small tables a reader can check by hand: the wavelength of each pair, and Markdown.

The worked examples of the course print short tables of rates, wavelengths and
encoding values. :func:`wavelength_rows` gives the numbers and
:func:`markdown_table` lays any such rows out as a Markdown table with a fixed
number of decimals, so that the same table reads the same on every machine.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pe_lib._checks import require_int
from pe_lib.frequencies import angle_rates


class WavelengthRow(NamedTuple):
    """One sine-cosine pair: its index, angle rate (radians per position) and wavelength."""

    pair: int
    rate: float
    wavelength: float


def wavelength_rows(
    depth: int, *, base: float = 10000.0, pairs: Iterable[int] | None = None
) -> list[WavelengthRow]:
    r"""Pair index, angle rate :math:`N^{-2i/D}` and wavelength :math:`2\pi N^{2i/D}`.

    Args:
        depth: encoding width :math:`D`, ``>= 1``.
        base: the constant :math:`N`; ``10000`` in the paper.
        pairs: the pair indices to list, in the order wanted; all
            ``ceil(depth / 2)`` pairs when left out.

    Returns:
        One :class:`WavelengthRow` of plain Python numbers per pair.

    Example:
        >>> [(row.pair, row.rate, round(row.wavelength, 3)) for row in wavelength_rows(4)]
        [(0, 1.0, 6.283), (1, 0.01, 628.319)]
        >>> round(wavelength_rows(512, pairs=[50])[0].wavelength, 2)
        37.97
    """
    rates = angle_rates(depth, base=base)
    count = len(rates)
    if pairs is None:
        chosen = list(range(count))
    else:
        chosen = [require_int("pairs", pair, minimum=0) for pair in pairs]
        for pair in chosen:
            if pair >= count:
                raise ValueError(f"pairs must be < {count} for depth {depth}, got {pair}")
    return [WavelengthRow(pair, float(rates[pair]), 2.0 * math.pi / float(rates[pair])) for pair in chosen]


def _format_cell(value, decimals: int, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{where} must be a string or a real number, got {value!r} ({type(value).__name__})")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{where} must be finite, got {value!r}")
    text = f"{value:.{decimals}f}"
    # A value that rounds to zero prints without a sign, whichever side it came from.
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]
    return text


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence], *, decimals: int | Sequence[int] = 4
) -> str:
    """Lay ``rows`` out as a Markdown table under ``header``.

    Strings are written as they are, integers in full, and other real numbers
    with a fixed number of decimals (``-0.0000`` is written ``0.0000``).
    Numeric columns are right-aligned.

    Args:
        header: the column titles.
        rows: one sequence per row, each as long as ``header``.
        decimals: decimals for every column, or one number per column.

    Example:
        >>> print(markdown_table(["p", "sin p"], [[0, 0.0], [1, 0.8414709]], decimals=3))
        | p | sin p |
        | --: | --: |
        | 0 | 0.000 |
        | 1 | 0.841 |
    """
    header = list(header)
    if not header or not all(isinstance(title, str) for title in header):
        raise ValueError(f"header must be a non-empty sequence of strings, got {header!r}")
    width = len(header)
    if isinstance(decimals, Sequence):
        places = [require_int("decimals", places, minimum=0) for places in decimals]
        if len(places) != width:
            raise ValueError(f"decimals must give one number per column ({width}), got {len(places)}")
    else:
        places = [require_int("decimals", decimals, minimum=0)] * width

    body = []
    numeric = [True] * width
    for number, row in enumerate(rows):
        row = list(row)
        if len(row) != width:
            raise ValueError(f"rows[{number}] must have {width} cells like the header, got {len(row)}")
        for column, value in enumerate(row):
            numeric[column] &= not isinstance(value, str)
        body.append([_format_cell(value, places[column], f"rows[{number}][{column}]") for column, value in enumerate(row)])

    rule = ["--:" if is_numeric and body else "---" for is_numeric in numeric]
    lines = [header, rule, *body]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)
