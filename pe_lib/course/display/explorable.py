r"""Figures a reader moves: sliders drawn in the browser by plotly.js, with no kernel.

Each function below computes its figure's data with :mod:`pe_lib` for every
setting of its sliders and returns an :class:`Explorable`. Shown in a notebook,
that is a Plotly figure whose slider steps carry the precomputed data, so moving
a slider in the built book needs no kernel and no network, only plotly.js,
which the book serves once from its ``_static`` folder
(``_ext/explorable_figures.py``). :meth:`Explorable.fallback` draws the same
data at the sliders' first setting with matplotlib, for print and for readers
without JavaScript.

- :func:`clock_hands`: one position's encoding as clock hands, one per
  sine-cosine pair, beside its neighbour's; a slider moves the position.
- :func:`wavelength_series`: the wavelength of every pair; sliders for the
  depth and the base.
- :func:`dot_product_by_offset`: :math:`PE(p) \cdot PE(p + k)` against the
  offset :math:`k`; sliders for the offset and the depth.
- :func:`rotary_query_key`: a query and a key turned by RoPE; one slider moves
  both positions, the other the offset between them, and the score changes
  only with the offset.

Two sliders never touch the same attribute: one switches which precomputed
traces are visible, the other restyles the coordinates of all of them, so they
compose in either order with no code of the page's own. The HTML is the same
on every run and every processor: the element ids are fixed, and every number
is rounded (coordinates to four decimals, wavelengths to six significant
digits) with negative zeros made positive.

>>> figure = wavelength_series(depths=(8, 16), bases=(100.0, 10000.0))
>>> figure.name, len(figure.data), [len(s["steps"]) for s in figure.layout["sliders"]]
('explorable-wavelengths', 3, [2, 2])
"""

from __future__ import annotations

import dataclasses
import html
import math
import numbers
from typing import Callable

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

import pe_lib
from pe_lib._checks import require_even, require_int, require_positive_float
from pe_lib.course.display.style import book_figure, course_style
from pe_lib.similarity import offset_similarity
from pe_lib.rope import apply_rope

#: The colours of matplotlib's "tableau-colorblind10" cycle, which the course
#: style uses: the interactive figure and its fallback look alike.
COLOURS = ("#006BA4", "#FF800E", "#595959", "#5F9ED1", "#C85200", "#898989", "#A2C8EC", "#FFBC79")

#: What every figure passes to ``Plotly.newPlot``: no tool bar (on a phone it
#: covers the figure), no zoom by scrolling or double tap, and a width that
#: follows the column.
CONFIG = {"displayModeBar": False, "responsive": True, "scrollZoom": False, "doubleClick": False}

#: The most settings one slider offers; more would weigh the page down and
#: could not be picked one by one on a phone.
MAX_STEPS = 400

_FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif", "size": 14, "color": "#222"}
#: Slider text large enough to read at 390 px; the ticks lengthen the strip a
#: finger can press (plotly.js makes the whole strip under the rail draggable).
_SLIDER = {"font": {"size": 13}, "ticklen": 10, "minorticklen": 5, "len": 1.0, "x": 0.0, "xanchor": "left",
           "y": 0.0, "yanchor": "top", "bgcolor": "#dde3ea", "activebgcolor": "#9fb3c8"}


@dataclasses.dataclass(frozen=True)
class Explorable:
    """A figure with sliders, ready to be shown in a notebook and in the book.

    Attributes:
        name: the id of the figure's element on the page, fixed so that the
            notebook's output is the same on every run.
        description: one sentence saying what the figure shows, read aloud
            by screen readers (``aria-label``).
        data: Plotly's traces, as plain dictionaries.
        layout: Plotly's layout, with the sliders; each slider step carries the
            data of its setting.
        draw_fallback: draws the static version (:meth:`fallback`).
    """

    name: str
    description: str
    data: list = dataclasses.field(repr=False)
    layout: dict = dataclasses.field(repr=False)
    draw_fallback: Callable = dataclasses.field(repr=False, compare=False)

    def figure(self) -> dict:
        """The figure as Plotly's JSON: ``data``, ``layout`` and ``config``."""
        return {"data": self.data, "layout": self.layout, "config": CONFIG}

    def to_html(self) -> str:
        """The figure's HTML: a ``div`` and the one ``Plotly.newPlot`` call that plotly writes.

        plotly.js itself is not included: the page loads it from ``_static``.
        """
        import plotly.io

        body = plotly.io.to_html(
            {"data": self.data, "layout": self.layout}, config=CONFIG, include_plotlyjs=False,
            full_html=False, div_id=self.name, validate=True,
        )
        label = html.escape(self.description, quote=True)
        return f'<div class="explorable" role="figure" aria-label="{label}">{body}</div>'

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        # The book renders text/html; JupyterLab's plotly renderer prefers its own type.
        return {
            "text/html": self.to_html(),
            "application/vnd.plotly.v1+json": self.figure(),
            "text/plain": f"Explorable figure {self.name!r}: {self.description}",
        }

    def fallback(self) -> Figure:
        """The same data at the sliders' first setting, drawn by matplotlib in the course style.

        The figure is already closed, so it is shown only where it is glued.
        """
        return self.draw_fallback()


# --- Checks and rounding -------------------------------------------------------


def _settings(name: str, values, check) -> list:
    """``values`` as a list of distinct settings, each passed through ``check``."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of settings, got {values!r}")
    found = [check(name, value) for value in values]
    if not found:
        raise ValueError(f"{name} must hold at least one setting, got {values!r}")
    if len(found) > MAX_STEPS:
        raise ValueError(f"{name} must hold at most {MAX_STEPS} settings, got {len(found)}")
    if len(set(found)) != len(found):
        raise ValueError(f"{name} must not repeat a setting, got {values!r}")
    return found


def _non_negative_int(name: str, value) -> int:
    return require_int(name, value, minimum=0)


def _even_depth(name: str, value) -> int:
    return require_even(name, value, reason="the encoding's columns pair up as sines and cosines")


def _initial(name: str, value, choices: list, plural: str) -> int:
    """The index of ``value`` among a slider's ``choices``, or an error naming both."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value not in choices:
        raise ValueError(f"{name} must be one of {plural}, {choices}; got {value!r}")
    return choices.index(value)


def _rounded(values, decimals: int = 4) -> list:
    """Plain floats rounded to ``decimals``, with ``-0.0`` made ``0.0``."""
    return (np.round(np.asarray(values, dtype=np.float64), decimals) + 0.0).tolist()


def _significant(values, digits: int = 6) -> list:
    """Plain floats rounded to ``digits`` significant digits."""
    return [float(f"{value:.{digits - 1}e}") for value in np.asarray(values, dtype=np.float64).ravel()]


def _number(value: float) -> str:
    """A setting written for a slider's label: ``10000`` or ``0.5``."""
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


def _slider(prefix: str, labels: list[str], steps_args: list, method: str, active: int, pad_top: int) -> dict:
    return {
        **_SLIDER,
        "active": active,
        "currentvalue": {"prefix": prefix, "font": {"size": 15}, "xanchor": "left"},
        "pad": {"t": pad_top, "b": 10, "l": 10, "r": 10},
        "steps": [{"method": method, "label": label, "args": args} for label, args in zip(labels, steps_args)],
    }


def _base_layout(height: int, margin_bottom: int) -> dict:
    """What every figure's layout shares. Its ``meta`` (set by each figure) names the
    figure and its fixed parameters, so that a test in the browser can recompute what
    each setting must draw."""
    return {
        "template": "none",
        "height": height,
        "autosize": True,
        "font": _FONT,
        "margin": {"l": 56, "r": 16, "t": 36, "b": margin_bottom},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "dragmode": False,
        "hovermode": False,
        "showlegend": True,
        "legend": {"orientation": "h", "x": 0.0, "xanchor": "left", "y": 1.02, "yanchor": "bottom",
                   "font": {"size": 13}, "itemwidth": 30},
    }


def _dial_axes(domain: tuple[float, float], anchor: str) -> tuple[dict, dict]:
    """An x and a y axis for a circle of radius 1 drawn round, with no ticks."""
    hidden = {"visible": False, "range": [-1.15, 1.15], "fixedrange": True}
    return ({**hidden, "domain": list(domain), "anchor": anchor.replace("x", "y")},
            {**hidden, "domain": [0.0, 1.0], "anchor": anchor, "scaleanchor": anchor, "scaleratio": 1})


def _dial(x_ref: str, y_ref: str) -> list[dict]:
    """A clock face: its rim and a mark at twelve o'clock."""
    grey = "#9a9a9a"
    return [
        {"type": "circle", "xref": x_ref, "yref": y_ref, "x0": -1, "y0": -1, "x1": 1, "y1": 1,
         "line": {"color": grey, "width": 1.5}, "layer": "below"},
        {"type": "line", "xref": x_ref, "yref": y_ref, "x0": 0, "y0": 1.0, "x1": 0, "y1": 1.1,
         "line": {"color": grey, "width": 2}, "layer": "below"},
    ]


# --- Periodicity: clock hands ----------------------------------------------------


def clock_hands(positions=range(101), depth: int = 8, *, base: float = 10000.0, neighbour: int = 1,
                position: int | None = None) -> Explorable:
    r"""Position :math:`p`'s encoding as clock hands, beside position :math:`p + \text{neighbour}`'s.

    Pair :math:`i` of the encoding, :math:`(\sin p\omega_i, \cos p\omega_i)`, is
    drawn as a hand with its tip at :math:`x = \sin p\omega_i`,
    :math:`y = \cos p\omega_i` (times the hand's length): at position 0 every
    hand points to twelve o'clock, and each turns clockwise by
    :math:`\omega_i` radians per position. The fastest pair has the longest
    hand. The slider moves :math:`p`; the neighbour's hands are always turned
    by the same :math:`\text{neighbour} \cdot \omega_i` from :math:`p`'s,
    whatever :math:`p` is.

    Args:
        positions: the slider's positions, distinct non-negative integers.
        depth: the encoding's size, even, at most 16 (eight hands).
        base: the constant :math:`N` of the encoding.
        neighbour: how far the second clock's position is ahead, at least 1.
        position: the first position shown (the first of ``positions`` by default).

    Returns:
        An :class:`Explorable` named ``"explorable-clocks"``; the first
        ``depth / 2`` traces are :math:`p`'s hands, the next its neighbour's.

    Example:
        >>> figure = clock_hands(range(3), 4, base=100.0)
        >>> hand = figure.data[0]                 # pair 0 at position 0
        >>> hand["x"], hand["y"]
        ([0.0, 0.0], [0.0, 1.0])
    """
    positions = _settings("positions", positions, _non_negative_int)
    depth = _even_depth("depth", depth)
    if depth > 16:
        raise ValueError(f"depth must be at most 16 (eight hands on one clock face), got {depth}")
    base = require_positive_float("base", base)
    neighbour = require_int("neighbour", neighbour, minimum=1)
    active = _initial("position", position, positions, "the positions")

    pairs = depth // 2
    table = pe_lib.sinusoidal_encoding(max(positions) + neighbour + 1, depth, base=base, dtype="float64")
    lengths = 1.0 - 0.55 * np.arange(pairs) / max(pairs - 1, 1)
    wavelengths = pe_lib.wavelengths(depth, base=base)

    def hands(p: int) -> tuple[list, list]:
        """The x and y lists of every hand of the clocks at p and p + neighbour."""
        xs, ys = [], []
        for row in (p, p + neighbour):
            tip_x, tip_y = table[row, 0::2] * lengths, table[row, 1::2] * lengths
            xs += [[0.0, x] for x in _rounded(tip_x)]
            ys += [[0.0, y] for y in _rounded(tip_y)]
        return xs, ys

    first_x, first_y = hands(positions[active])
    data = []
    for clock, (axis_x, axis_y) in enumerate((("x", "y"), ("x2", "y2"))):
        for i in range(pairs):
            trace = clock * pairs + i
            data.append({
                "type": "scatter", "mode": "lines+markers", "xaxis": axis_x, "yaxis": axis_y,
                "x": first_x[trace], "y": first_y[trace],
                "name": f"pair {i}: λ = {wavelengths[i]:.1f}", "legendgroup": f"pair {i}",
                "showlegend": clock == 0,
                "line": {"color": COLOURS[i], "width": 4},
                "marker": {"color": COLOURS[i], "size": [0, 9]},
            })
    left_x, left_y = _dial_axes((0.0, 0.47), "x")
    right_x, right_y = _dial_axes((0.53, 1.0), "x2")

    def titles(p: int) -> dict:
        return {"annotations[0].text": f"position {p}", "annotations[1].text": f"position {p + neighbour}"}

    layout = _base_layout(height=440, margin_bottom=20)
    layout["meta"] = {"figure": "clock_hands", "depth": depth, "base": base, "neighbour": neighbour}
    layout.update({
        "xaxis": left_x, "yaxis": left_y, "xaxis2": right_x, "yaxis2": right_y,
        "shapes": _dial("x", "y") + _dial("x2", "y2"),
        "annotations": [
            {"xref": "paper", "yref": "paper", "x": x, "y": 0.0, "xanchor": "center", "yanchor": "top",
             "showarrow": False, "font": {"size": 15}, "text": text}
            for x, text in zip((0.235, 0.765), titles(positions[active]).values())
        ],
        "sliders": [_slider(
            "position p = ", [str(p) for p in positions],
            [[{"x": hands(p)[0], "y": hands(p)[1]}, titles(p)] for p in positions],
            "update", active, pad_top=40,
        )],
    })

    def draw() -> Figure:
        p = positions[active]
        with course_style():
            fig, ax = book_figure(panel_height=3.6)
            for clock, centre in enumerate(_DIAL_CENTRES):
                row = p + clock * neighbour
                _draw_dial(ax, centre, [1.0], f"position {row}", twelve=True)
                for i in range(pairs):
                    tip = centre + lengths[i] * table[row, 2 * i], lengths[i] * table[row, 2 * i + 1]
                    ax.plot([centre, tip[0]], [0, tip[1]], color=COLOURS[i], linewidth=3,
                            label=f"pair {i}: λ = {wavelengths[i]:.1f}" if clock == 0 else None)
                    ax.plot(*tip, "o", color=COLOURS[i], markersize=5)
            fig.legend(loc="outside lower center", ncols=2)
        plt.close(fig)
        return fig

    return Explorable("explorable-clocks", (
        f"Two clock faces, for position p and position p + {neighbour}, each with one hand per "
        f"sine-cosine pair of a {depth}-wide encoding; a slider moves p from {positions[0]} to "
        f"{positions[-1]}, and every hand turns at its own speed."
    ), data, layout, draw)


#: Where the static drawings put their two dials, side by side in one panel (x, in radii).
_DIAL_CENTRES = (-1.25, 1.25)


def _draw_dial(ax, centre: float, radii: list[float], label: str, twelve: bool = False) -> None:
    """Circles of ``radii`` round ``(centre, 0)``, labelled below, on square axes with no frame."""
    from matplotlib.patches import Circle

    for radius in radii:
        ax.add_patch(Circle((centre, 0), radius, fill=False, edgecolor="0.6", linewidth=1.2,
                            linestyle="-" if twelve else ":"))
    if twelve:
        ax.plot([centre, centre], [1.0, 1.1], color="0.6", linewidth=2)
    top = max(radii)
    ax.text(centre, -1.12 * top, label, ha="center", va="top")
    ax.set_xlim(-2.5 * top, 2.5 * top)
    ax.set_ylim(-1.45 * top, 1.15 * top)
    ax.set_aspect("equal")
    ax.set_axis_off()


# --- The equations: wavelengths ---------------------------------------------------


def wavelength_series(depths=(8, 16, 32, 64, 128, 256, 512), bases=(100.0, 1000.0, 10000.0, 100000.0, 500000.0),
                      *, depth: int | None = None, base: float | None = None) -> Explorable:
    r"""The wavelength :math:`\lambda_i = 2\pi N^{2i/D}` of every pair, with sliders for :math:`D` and :math:`N`.

    The values come from :func:`pe_lib.frequencies.wavelengths`. A dashed line marks
    :math:`2\pi N`, which the wavelengths approach but never reach; the
    vertical axis is logarithmic, so the series is a straight line whose slope
    the depth sets and whose top the base sets.

    Args:
        depths: the depth slider's settings, even.
        bases: the base slider's settings, positive.
        depth: the first depth shown (the first of ``depths`` by default).
        base: the first base shown (the first of ``bases`` by default).

    Returns:
        An :class:`Explorable` named ``"explorable-wavelengths"``: one trace per
        depth (only the chosen one visible), then the line at :math:`2\pi N`.

    Example:
        >>> figure = wavelength_series((4,), (100.0,))
        >>> figure.data[0]["y"]                  # 2 pi and 2 pi * 10
        [6.28319, 62.8319]
    """
    depths = _settings("depths", depths, _even_depth)
    bases = _settings("bases", bases, require_positive_float)
    active_depth = _initial("depth", depth, depths, "the depths")
    active_base = _initial("base", base, bases, "the bases")
    widest = max(depths) // 2

    def heights(n: float) -> list:
        """The y lists of every trace at base n: each depth's wavelengths, then the bound."""
        return [_significant(pe_lib.wavelengths(d, base=n)) for d in depths] + [_significant([2 * math.pi * n] * 2)]

    first = heights(bases[active_base])
    data = [
        {"type": "scatter", "mode": "lines+markers", "x": list(range(d // 2)), "y": first[j],
         "visible": j == active_depth, "name": "wavelength λ<sub>i</sub>", "legendgroup": "wavelengths",
         "line": {"color": COLOURS[0], "width": 1.5}, "marker": {"color": COLOURS[0], "size": 7}}
        for j, d in enumerate(depths)
    ] + [
        {"type": "scatter", "mode": "lines", "x": [0, widest - 1], "y": first[-1], "name": "2πN, never reached",
         "line": {"color": COLOURS[1], "dash": "dash", "width": 2}},
    ]
    top = _rounded([math.log10(2 * math.pi * max(bases)) + 0.35])[0]
    layout = _base_layout(height=560, margin_bottom=20)
    layout["meta"] = {"figure": "wavelength_series"}
    layout.update({
        "xaxis": {"title": {"text": "pair i"}, "range": [-0.03 * widest, widest], "fixedrange": True,
                  "zeroline": False, "showline": True, "ticks": "outside", "automargin": True},
        "yaxis": {"title": {"text": "wavelength (positions)"}, "type": "log", "range": [0.5, top],
                  "fixedrange": True, "showline": True, "ticks": "outside", "dtick": 1,
                  "exponentformat": "power", "automargin": True},
        "sliders": [
            _slider("depth D = ", [str(d) for d in depths],
                    [[{"visible": [k == j for k in range(len(depths))] + [True]}] for j in range(len(depths))],
                    "restyle", active_depth, pad_top=70),
            _slider("base N = ", [_number(n) for n in bases], [[{"y": heights(n)}] for n in bases],
                    "restyle", active_base, pad_top=175),
        ],
    })

    def draw() -> Figure:
        d, n = depths[active_depth], bases[active_base]
        with course_style():
            fig, ax = book_figure(panel_height=3.4)
            ax.semilogy(np.arange(d // 2), pe_lib.wavelengths(d, base=n), ".-", color=COLOURS[0],
                        markersize=6, linewidth=1, label=r"wavelength $\lambda_i$")
            ax.axhline(2 * math.pi * n, color=COLOURS[1], linestyle="--", label=r"$2\pi N$, never reached")
            ax.set_xlabel("pair $i$")
            ax.set_ylabel("wavelength (positions)")
            ax.set_title(f"depth $D = {d}$, base $N = {_number(n)}$")
            ax.legend(loc="lower right")
        plt.close(fig)
        return fig

    return Explorable("explorable-wavelengths", (
        "The wavelength of every sine-cosine pair on a logarithmic scale, rising in a straight line from "
        "2 pi towards a dashed line at 2 pi N; sliders set the depth D and the base N."
    ), data, layout, draw)


# --- Properties: the dot product against the offset -----------------------------------


def dot_product_by_offset(offsets=range(101), depths=(4, 8, 16, 32, 64, 128, 512), *, base: float = 10000.0,
                          offset: int | None = None, depth: int | None = None) -> Explorable:
    r"""The dot product of two encodings :math:`k` apart, divided by its largest value :math:`D/2`.

    The curve is :math:`PE(p) \cdot PE(p + k) / (D/2)` for every offset of the
    slider, from :func:`pe_lib.similarity.offset_similarity`; it does not
    depend on :math:`p`. A marker and its label follow the offset slider;
    the depth slider chooses the curve.

    Args:
        offsets: the offset slider's settings, distinct non-negative integers.
        depths: the depth slider's settings, even.
        base: the constant :math:`N` of the encoding.
        offset: the first offset shown (the first of ``offsets`` by default).
        depth: the first depth shown (the first of ``depths`` by default).

    Returns:
        An :class:`Explorable` named ``"explorable-dot-product"``: one curve per
        depth, then one marker per depth; only the chosen depth's are visible.

    Example:
        >>> figure = dot_product_by_offset(range(3), (4,))
        >>> figure.data[0]["y"]                  # (cos k + cos(k/100)) / 2
        [1.0, 0.7701, 0.2918]
    """
    offsets = _settings("offsets", offsets, _non_negative_int)
    depths = _settings("depths", depths, _even_depth)
    base = require_positive_float("base", base)
    active_offset = _initial("offset", offset, offsets, "the offsets")
    active_depth = _initial("depth", depth, depths, "the depths")
    curves = [offset_similarity(offsets, d, base=base) / (d / 2) for d in depths]

    low, high = min(offsets), max(offsets)

    def label_side(k: int) -> str:
        """Where the label goes: away from the nearer end of the axis, so that a
        phone's narrow plot does not cut it off."""
        fraction = (k - low) / (high - low) if high > low else 0.5
        return "top right" if fraction < 0.2 else "top left" if fraction > 0.8 else "top center"

    def marker(k_index: int) -> dict:
        """The x, y, text and label side of every depth's marker at the offset offsets[k_index]."""
        values = [_rounded([curve[k_index]])[0] for curve in curves]
        return {"x": [[offsets[k_index]]] * len(depths), "y": [[v] for v in values],
                "text": [[f"{v:.4f}".replace("-", "−")] for v in values],
                "textposition": label_side(offsets[k_index])}  # one value: every depth's marker

    first = marker(active_offset)
    count = len(depths)
    data = [
        {"type": "scatter", "mode": "lines", "x": offsets, "y": _rounded(curve), "visible": j == active_depth,
         "name": "PE(p)·PE(p+k) ÷ (D/2)", "legendgroup": "curve", "line": {"color": COLOURS[0], "width": 2}}
        for j, curve in enumerate(curves)
    ] + [
        {"type": "scatter", "mode": "markers+text", "x": first["x"][j], "y": first["y"][j],
         "text": first["text"][j], "visible": j == active_depth, "showlegend": False,
         "textposition": first["textposition"], "textfont": {"size": 14, "color": COLOURS[4]},
         "marker": {"color": COLOURS[4], "size": 12, "line": {"color": "white", "width": 1.5}}}
        for j in range(count)
    ]
    lowest = _rounded([min(float(curve.min()) for curve in curves)], 2)[0]
    layout = _base_layout(height=560, margin_bottom=20)
    layout["meta"] = {"figure": "dot_product_by_offset", "base": base}
    layout.update({
        "xaxis": {"title": {"text": "offset k"}, "range": [min(offsets) - 1, max(offsets) + 1],
                  "fixedrange": True, "zeroline": False, "showline": True, "ticks": "outside",
                  "automargin": True},
        "yaxis": {"title": {"text": "dot product ÷ (D/2)"}, "range": _rounded([min(lowest, 0.0) - 0.1, 1.15], 2),
                  "fixedrange": True, "showline": True, "ticks": "outside", "zeroline": True,
                  "zerolinecolor": "#bbbbbb", "automargin": True},
        "sliders": [
            _slider("offset k = ", [str(k) for k in offsets],
                    [[{name: values for name, values in marker(i).items()}, list(range(count, 2 * count))]
                     for i in range(len(offsets))],
                    "restyle", active_offset, pad_top=70),
            _slider("depth D = ", [str(d) for d in depths],
                    [[{"visible": [k == j for k in range(count)] * 2}] for j in range(count)],
                    "restyle", active_depth, pad_top=175),
        ],
    })

    def draw() -> Figure:
        j, k = active_depth, offsets[active_offset]
        with course_style():
            fig, ax = book_figure(panel_height=3.2)
            ax.plot(offsets, curves[j], color=COLOURS[0], linewidth=1.5)
            ax.plot([k], [curves[j][active_offset]], "o", color=COLOURS[4], markersize=8)
            ax.annotate(f"{curves[j][active_offset]:.4f}".replace("-", "−"), (k, curves[j][active_offset]),
                        textcoords="offset points", xytext=(6, 9), ha="left", color=COLOURS[4],
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
            ax.set_xlabel("offset $k$")
            ax.set_ylabel(r"$PE(p)\cdot PE(p+k)\,/\,(D/2)$")
            ax.set_title(f"depth $D = {depths[j]}$")
            ax.set_ylim(min(lowest, 0.0) - 0.1, 1.15)
        plt.close(fig)
        return fig

    return Explorable("explorable-dot-product", (
        "The dot product of the encodings of two positions k apart, divided by D/2, against the offset k: "
        "1 at k = 0 and smaller, with ripples, as k grows; sliders set k and the depth D."
    ), data, layout, draw)


# --- RoPE: a query and a key turning ---------------------------------------------------


def rotary_query_key(query=(1.0, 0.0), key=(0.7, 0.0), *, rate: float = 0.2, shifts=range(41),
                     offsets=range(11), shift: int | None = None, offset: int | None = None) -> Explorable:
    r"""A query at position :math:`m` and a key at :math:`n = m + k`, rotated by RoPE, and their score.

    Both 2-D vectors are turned by :func:`pe_lib.rope.apply_rope` with the one
    angle rate ``rate`` (:math:`\theta_i` of one pair): the query by
    :math:`m\theta`, the key by :math:`n\theta`. The score
    :math:`(R_m q) \cdot (R_n k)` is computed at each offset; moving
    :math:`m` turns both arrows together and leaves it unchanged.

    Args:
        query: the query before rotation, two numbers.
        key: the key before rotation, two numbers.
        rate: the angle :math:`\theta` in radians per position.
        shifts: the settings of the slider for the query's position :math:`m`.
        offsets: the settings of the slider for :math:`k = n - m`.
        shift: the first :math:`m` shown (the first of ``shifts`` by default).
        offset: the first :math:`k` shown (the first of ``offsets`` by default).

    Returns:
        An :class:`Explorable` named ``"explorable-rope"``: the query's arrow,
        then one key arrow per offset (only the chosen one visible); the score
        is the layout's first annotation.

    Example:
        >>> figure = rotary_query_key((1.0, 0.0), (1.0, 0.0), rate=math.pi / 2, shifts=[0, 1], offsets=[1])
        >>> figure.data[0]["x"], figure.data[0]["y"], figure.data[1]["x"], figure.data[1]["y"]
        ([0.0, 1.0], [0.0, 0.0], [0.0, 0.0], [0.0, 1.0])
    """
    query, key = (_vector(name, value) for name, value in (("query", query), ("key", key)))
    rate = require_positive_float("rate", rate)
    shifts = _settings("shifts", shifts, _non_negative_int)
    offsets = _settings("offsets", offsets, _non_negative_int)
    active_shift = _initial("shift", shift, shifts, "the shifts")
    active_offset = _initial("offset", offset, offsets, "the offsets")

    def turned(vector: np.ndarray, positions) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int64)
        return apply_rope(np.tile(vector, (len(positions), 1)), positions, rates=[rate])

    queries = turned(query, shifts)                                  # (shifts, 2)
    keys = np.stack([turned(key, np.asarray(shifts) + k) for k in offsets], axis=1)   # (shifts, offsets, 2)
    scores = [float(queries[active_shift] @ keys[active_shift, j]) for j in range(len(offsets))]

    def arrows(s: int) -> dict:
        """The x and y lists of the query's arrow and every key's at the shift shifts[s]."""
        tips = [queries[s]] + [keys[s, j] for j in range(len(offsets))]
        return {"x": [[0.0, x] for x in _rounded([t[0] for t in tips])],
                "y": [[0.0, y] for y in _rounded([t[1] for t in tips])]}

    def score_text(j: int) -> str:
        return f"score (R<sub>m</sub>q)·(R<sub>n</sub>k) = {scores[j]:.3f}".replace("= -", "= −")

    first = arrows(active_shift)
    arrow = {"type": "scatter", "mode": "lines+markers", "cliponaxis": False}
    data = [
        {**arrow, "x": first["x"][0], "y": first["y"][0], "name": "query q at m",
         "line": {"color": COLOURS[0], "width": 4},
         "marker": {"color": COLOURS[0], "size": [0, 18], "symbol": "arrow", "angleref": "previous"}}
    ] + [
        {**arrow, "x": first["x"][j + 1], "y": first["y"][j + 1], "name": "key k at n = m + k",
         "visible": j == active_offset, "legendgroup": "key", "showlegend": True,
         "line": {"color": COLOURS[1], "width": 4},
         "marker": {"color": COLOURS[1], "size": [0, 18], "symbol": "arrow", "angleref": "previous"}}
        for j in range(len(offsets))
    ]
    dial_x, dial_y = _dial_axes((0.0, 1.0), "x")
    radius = _rounded([max(np.linalg.norm(query), np.linalg.norm(key)) * 1.15])[0] / 1.15
    for axis in (dial_x, dial_y):
        axis["range"] = _rounded([-1.15 * radius, 1.15 * radius])
    layout = _base_layout(height=560, margin_bottom=20)
    layout["meta"] = {"figure": "rotary_query_key", "query": _rounded(query, 6), "key": _rounded(key, 6),
                      "rate": _significant([rate], 10)[0]}
    layout.update({
        "xaxis": dial_x, "yaxis": dial_y,
        "shapes": [{"type": "circle", "xref": "x", "yref": "y", "x0": -r, "y0": -r, "x1": r, "y1": r,
                    "line": {"color": "#9a9a9a", "width": 1.2, "dash": "dot"}, "layer": "below"}
                   for r in sorted({round(float(np.linalg.norm(v)), 4) for v in (query, key)})],
        "annotations": [{"xref": "paper", "yref": "paper", "x": 0.5, "y": -0.02, "yanchor": "top",
                         "showarrow": False, "font": {"size": 15}, "text": score_text(active_offset)}],
        "sliders": [
            _slider("query at m = ", [str(m) for m in shifts],
                    [[arrows(s), list(range(len(offsets) + 1))] for s in range(len(shifts))],
                    "restyle", active_shift, pad_top=40),
            _slider("offset n − m = ", [str(k) for k in offsets],
                    [[{"visible": [True] + [i == j for i in range(len(offsets))]},
                      {"annotations[0].text": score_text(j)}] for j in range(len(offsets))],
                    "update", active_offset, pad_top=145),
        ],
    })

    def draw() -> Figure:
        j, k = active_offset, offsets[active_offset]
        later = len(shifts) - 1 if len(shifts) > 1 else active_shift
        radii = sorted({float(np.linalg.norm(v)) for v in (query, key)})
        with course_style():
            fig, ax = book_figure(panel_height=3.6)
            for side, (centre, s) in enumerate(zip(_DIAL_CENTRES, (active_shift, later))):
                centre = centre * radii[-1]
                score = float(queries[s] @ keys[s, j])
                _draw_dial(ax, centre, radii, f"m = {shifts[s]}, n = {shifts[s] + k}\n"
                           f"score {score:.3f}".replace(" -", " −"))
                for tip, colour, label in ((queries[s], COLOURS[0], "query"), (keys[s, j], COLOURS[1], "key")):
                    ax.annotate("", (centre + tip[0], tip[1]), (centre, 0),
                                arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2.5, "mutation_scale": 16})
                    if side == 0:
                        ax.plot([], [], color=colour, linewidth=2.5, label=label)
            fig.legend(loc="outside lower center", ncols=2)
        plt.close(fig)
        return fig

    return Explorable("explorable-rope", (
        "A query arrow and a key arrow on a circle, turned by RoPE by their positions m and n; one slider "
        "moves m, turning both arrows together, the other sets n − m; the score printed below changes only "
        "with n − m."
    ), data, layout, draw)


def _vector(name: str, value) -> np.ndarray:
    array = np.asarray(value)
    if array.shape != (2,) or not np.issubdtype(array.dtype, np.number) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be two finite numbers, got {value!r}")
    if not np.any(array):
        raise ValueError(f"{name} must not be the zero vector, got {value!r}")
    return array.astype(np.float64)
