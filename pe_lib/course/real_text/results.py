r"""The real-text results as the chapter shows them: means over seeds, a table, two figures.

The rows come from :func:`pe_lib.course.real_text.training.run_real_text` (the live
run) or from the CSV that ``python3 tasks.py experiment real-text`` writes
(:func:`pe_lib.course.real_text.experiment.read_results`); both are lists of
dicts with ``method``, ``seed``, ``length`` and ``bits_per_character``.

>>> rows = [{"method": "alibi", "seed": s, "length": 8, "bits_per_character": b}
...         for s, b in [(0, 2.0), (1, 2.5), (2, 3.0)]]
>>> summarise(rows)[("alibi", 8)]
(2.5, 0.5, 3)
"""

from __future__ import annotations

import math
import statistics

import numpy as np

from pe_lib.course.display.style import PALETTE, RECIPE_COLOURS
from pe_lib.course.display.tables import markdown_table

#: How the chapter names each method.
LABELS = {
    "none": "no positions", "sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE",
    "alibi": "ALiBi", "t5": "T5 bias", "rope_pi": "RoPE + PI", "rope_ntk": "RoPE + NTK",
    "rope_yarn": "RoPE + YaRN", "rope_yarn_paper": "RoPE + YaRN (paper)", "rope_dynamic": "RoPE + dynamic NTK", "rope_llama3": "RoPE + Llama 3",
    "rope_nope": "hybrid", "rope_yarn_no_factor": "RoPE + YaRN, factor 1",
}

#: A line style per method, so that the figures read in greyscale too.
_STYLES = {"none": ":", "sinusoidal": "-", "learned": "-", "rope": "--", "alibi": "-", "t5": "-."}

#: One colour per method in every figure. The trained methods take black (no
#: positions), a colour of Matplotlib's colour-blind-safe ``tableau-colorblind10``
#: palette, or (T5, away from the sinusoidal model's orange) the course's teal,
#: which no recipe uses; the stretching recipes take the colours Longer contexts
#: gives them.
COLORS = {"none": "#000000", "sinusoidal": "#FF800E", "learned": "#898989", "rope": "#595959",
          "alibi": "#5F9ED1", "t5": PALETTE[7],
          **{m: RECIPE_COLOURS[m] for m in ("rope_pi", "rope_ntk", "rope_yarn", "rope_yarn_paper")}}


def _look(method: str) -> dict:
    look = {"linestyle": _STYLES.get(method, (0, (3, 1, 1, 1)))}
    if method in COLORS:
        look["color"] = COLORS[method]
    return look


def label(method: str) -> str:
    """The chapter's name for ``method``.

    >>> label("rope_pi"), label("rope_new")
    ('RoPE + PI', 'rope_new')
    """
    return LABELS.get(method, method)


def summarise(rows) -> dict[tuple[str, int], tuple[float, float, int] | None]:
    """``{(method, length): (mean, spread, seeds)}`` of bits per character over the seeds.

    The spread is the sample standard deviation over the seeds (0 for one
    seed). A (method, length) the model could not read (``None`` in every
    row) maps to ``None``.
    """
    values: dict[tuple[str, int], list] = {}
    for row in rows:
        values.setdefault((row["method"], int(row["length"])), []).append(row["bits_per_character"])
    summary = {}
    for key, found in values.items():
        numbers = [float(value) for value in found if value is not None]
        if not numbers:
            summary[key] = None
            continue
        if len(numbers) != len(found):
            raise ValueError(f"{key}: some seeds have a result and others none: {found!r}")
        spread = statistics.stdev(numbers) if len(numbers) > 1 else 0.0
        summary[key] = (statistics.fmean(numbers), spread, len(numbers))
    return summary


def results_table(rows, methods, lengths, *, train_length: int, spread: bool = True,
                  header_lengths: bool = True) -> str:
    """A Markdown table: one row per method, bits per character at each length.

    Cells read ``mean ±spread`` (two decimals) when ``spread``, with no
    space after ``±``, so that a narrow column breaks a cell into ``mean``
    over ``±spread``, never between ``±`` and its number, and a column is no
    wider than ``±0.00``: four of them fit a phone's column; the mean
    alone otherwise; a length the method cannot read is ``—``. The header
    names each length as a multiple of ``train_length`` and, when
    ``header_lengths``, in characters too (``2L = 8``); without, the columns
    are narrow enough for a phone, and the caption must say what :math:`L` is.

    >>> rows = [{"method": "learned", "seed": 0, "length": 4, "bits_per_character": 2.345},
    ...         {"method": "learned", "seed": 0, "length": 8, "bits_per_character": None}]
    >>> print(results_table(rows, ["learned"], [4, 8], train_length=4, spread=False))
    | method | L = 4 | 2L = 8 |
    | --- | --- | --- |
    | learned | 2.35 | — |
    >>> rows.append({"method": "learned", "seed": 1, "length": 4, "bits_per_character": 2.445})
    >>> results_table(rows, ["learned"], [4], train_length=4).splitlines()[-1]
    '| learned | 2.40 ±0.07 |'
    >>> results_table(rows, ["learned"], [4, 8], train_length=4, header_lengths=False).splitlines()[0]
    '| method | L | 2L |'
    """
    summary = summarise(rows)
    header = ["method"] + [f"{'' if n == train_length else n // train_length}L" + (f" = {n}" if header_lengths else "")
                           for n in lengths]
    body = []
    for method in methods:
        cells = [label(method)]
        for length in lengths:
            found = summary.get((method, length))
            if found is None:
                cells.append("—")
            elif spread:
                cells.append(f"{found[0]:.2f} ±{found[1]:.2f}")
            else:
                cells.append(f"{found[0]:.2f}")
        body.append(cells)
    return markdown_table(header, body)


def draw_bits_by_length(ax, rows, methods, *, train_length: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Bits per character against the test length, one line per method: the ALiBi paper's Figure 1.

    Each point is the mean over the seeds, with a bar of one spread either
    side when there are several; a method with one length (a learned
    table) is a large hollow diamond drawn on top, so that a point beneath
    it shows. A dotted vertical line marks the training length. The length axis is logarithmic.

    Returns:
        ``{method: (lengths, means)}``, the data of each line drawn.
    """
    summary = summarise(rows)
    drawn = {}
    for method in methods:
        points = sorted((length, found) for (name, length), found in summary.items()
                        if name == method and found is not None)
        if not points:
            continue
        lengths = np.array([length for length, _ in points], dtype=float)
        means = np.array([found[0] for _, found in points])
        spreads = np.array([found[1] for _, found in points])
        look = _look(method)
        if len(points) == 1:  # a hollow diamond on top: a point under it shows
            ax.plot(lengths, means, "D", color=look.get("color"), markersize=11, markerfacecolor="none",
                    markeredgewidth=2, zorder=5, label=label(method))
        elif np.any(spreads > 0):
            ax.errorbar(lengths, means, yerr=spreads, marker="o", capsize=3, label=label(method), **look)
        else:
            ax.plot(lengths, means, marker="o", label=label(method), **look)
        drawn[method] = (lengths, means)
    ax.axvline(train_length, color="0.4", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    every = sorted({int(length) for lengths, _ in drawn.values() for length in lengths})
    ax.set_xticks(every, [str(length) for length in every])
    ax.minorticks_off()
    ax.set(xlabel="test length (characters)", ylabel="bits per character")
    return drawn


def draw_position_losses(ax, curves: dict[str, np.ndarray], *, train_length: int, width: int,
                         faint: bool = False) -> dict:
    """Mean loss against the position in the window, averaged over runs of ``width`` positions.

    Args:
        ax: a Matplotlib axes.
        curves: ``{method: per-position losses}`` (bits).
        train_length: where a dotted vertical line goes.
        width: positions per point.
        faint: draw thin, pale, unlabelled lines (one seed among several,
            behind the lines a legend names), and no vertical line.

    Returns:
        ``{method: (centres, means)}``, the data of each line drawn.
    """
    drawn = {}
    for method, curve in curves.items():
        curve = np.asarray(curve, dtype=np.float64)
        if curve.size % width:
            raise ValueError(f"width must divide the {curve.size} positions of {method!r}, got {width}")
        means = curve.reshape(-1, width).mean(axis=1)
        centres = np.arange(means.size) * width + (width - 1) / 2
        if faint:
            ax.plot(centres, means, color=_look(method).get("color"), linewidth=0.8, alpha=0.35,
                    label="_nolegend_")
        else:
            ax.plot(centres, means, label=label(method), **_look(method))
        drawn[method] = (centres, means)
    if not faint:
        ax.axvline(train_length - 0.5, color="0.4", linestyle=":", linewidth=1)
    ax.set(xlabel="position in the window", ylabel="bits per character")
    return drawn


def rows_by(rows, **where) -> list[dict]:
    """The rows whose fields equal ``where``.

    >>> rows_by([{"method": "t5", "seed": 0}, {"method": "t5", "seed": 1}], seed=1)
    [{'method': 't5', 'seed': 1}]
    """
    return [row for row in rows if all(row.get(key) == value for key, value in where.items())]


def curves_from_positions(rows, *, seeds=None) -> dict[str, np.ndarray]:
    """Per-method binned position losses from a positions file, averaged over the seeds.

    Returns ``{method: means}``, one value per bin in position order.
    """
    gathered: dict[str, dict[int, list[float]]] = {}
    for row in rows:
        if seeds is not None and row["seed"] not in seeds:
            continue
        gathered.setdefault(row["method"], {}).setdefault(int(row["start"]), []).append(
            float(row["bits_per_character"]))
    return {method: np.array([math.fsum(v) / len(v) for _, v in sorted(bins.items())])
            for method, bins in gathered.items()}
