r"""Figures a reader moves: native sliders that redraw a figure in the browser, with no kernel.

Each function below computes its figure's data with :mod:`pe_lib` for every
setting of its sliders and returns an :class:`Explorable`. Shown in a notebook
or in the built book, that is the figure drawn by matplotlib as SVG at the
sliders' first setting, one native range input (``<input type="range">``) per
slider, and the data of every setting; a short script inside the output moves
the drawn lines and rewrites the drawn text when a slider moves. No plotting
library is loaded in the browser and nothing is fetched from a network.

Native range inputs are what a keyboard, a screen reader, a mouse and a finger
all know: Tab reaches each one, the arrow keys, Page Up and Down, Home and End
move it, its value is announced in words (``aria-valuetext``, "depth 64"), and
a live region says what the figure now shows. The script finds its figure from
its own position in the output, never by an element id, so an output drawn
twice (a cell re-run in JupyterLab) works as the first one did.

:meth:`Explorable.fallback` draws the same figure at the sliders' first
setting as a still picture, for print and for readers without JavaScript.

- :func:`clock_hands`: one position's encoding as clock hands, one per
  sine-cosine pair, beside its neighbour's; a slider moves the position.
- :func:`wavelength_series`: the wavelength of every pair; sliders for the
  depth and the base.
- :func:`rotary_query_key`: a query and a key turned by RoPE; one slider moves
  both positions, the other the offset between them, and the score changes
  only with the offset.

A figure is made of :class:`Part` s: each names one drawn element (a line with
its markers, a piece of text, or the live region) and gives what it shows at
every setting of the sliders it depends on. The HTML is the same on every run
and every processor: every number is rounded (coordinates to four decimals)
with negative zeros made positive.

>>> figure = wavelength_series(depths=(8, 16), bases=(100.0, 10000.0))
>>> figure.name, [slider.labels for slider in figure.sliders]
('explorable-wavelengths', [['8', '16'], ['100', '10,000']])
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import io
import json
import math
import numbers
import re
from typing import Callable

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import pe_lib
from pe_lib._checks import require_even, require_int, require_positive_float
from pe_lib.course.display.style import PALETTE, book_figure, course_style
from pe_lib.similarity import offset_similarity
from pe_lib.rope import apply_rope

#: The course's colours, :data:`pe_lib.course.display.style.PALETTE`, each at
#: least 3 to 1 against the white page and against the dark theme's background.
COLOURS = PALETTE

#: The most settings one slider offers; more would weigh the page down and
#: could not be picked one by one on a phone.
MAX_STEPS = 400

#: The colour the figure's text and axes are drawn in before they are handed to
#: the page, where it becomes the page's own text colour (``currentColor``), so
#: that the figure follows the light or dark theme.
_INK = "#010203"
_THEMABLE = {
    "text.color": _INK, "axes.labelcolor": _INK, "axes.edgecolor": _INK, "xtick.color": _INK,
    "ytick.color": _INK, "grid.color": _INK, "legend.labelcolor": _INK,
    "figure.facecolor": "none", "axes.facecolor": "none", "savefig.facecolor": "none",
    "svg.fonttype": "none", "svg.hashsalt": "pe-course",
}
#: A grey for dials and guides, 4.5:1 on white and 4:1 on the dark theme.
_GUIDE = PALETTE[4]

#: The colours of the clock's hands, pair 0 first, eight of :data:`COLOURS` in an
#: order where neighbouring pairs differ most for readers with a colour deficiency.
HAND_COLOURS = tuple(PALETTE[i] for i in (0, 1, 2, 3, 5, 6, 7, 4))
#: The shape of each hand's tip, so that no pair is told from another by colour alone.
HAND_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

_FIGURE_TYPE = "explorable-figure"


@dataclasses.dataclass(frozen=True)
class Slider:
    """One slider: its name as spoken (``"depth"``), its symbol, its settings, and the first one shown."""

    name: str
    symbol: str
    values: tuple
    active: int

    @property
    def labels(self) -> list[str]:
        """Each setting as the reader sees it, such as ``"10000"`` or ``"0.5"``."""
        return [_number(value) for value in self.values]


@dataclasses.dataclass(frozen=True)
class Part:
    """One element of a figure that changes with its sliders.

    Attributes:
        name: the element's name in the drawing (``gid="part-NAME"``), or
            ``"summary"`` for the sentence of the live region.
        kind: ``"xy"`` (a line and its markers: a list of ``[x, y]`` in data
            units), ``"text"`` (a string) or ``"shown"`` (whether it is visible).
        on: the indices of the sliders it depends on, in order.
        values: what it shows, nested one list per slider of ``on``.
    """

    name: str
    kind: str
    on: tuple
    values: list = dataclasses.field(repr=False)

    def at(self, setting) -> object:
        """What the part shows when the sliders are at ``setting`` (one index per slider)."""
        value = self.values
        for slider in self.on:
            value = value[setting[slider]]
        return value


@dataclasses.dataclass(frozen=True)
class Explorable:
    """A figure with sliders, ready to be shown in a notebook and in the book.

    Attributes:
        name: what the figure is called in the page (``data-explorable``).
        description: one sentence saying what the figure shows, read aloud
            by screen readers.
        sliders: its :class:`Slider` s.
        parts: its :class:`Part` s; one of them is the ``"summary"``.
        meta: the figure's kind and fixed parameters, for tests that recompute
            what each setting must draw.
        draw: draws the figure with matplotlib at a setting (one index per
            slider), every part drawn and named by its ``gid``.
        still: draws the static version instead of ``draw`` where a picture
            on paper should show more than one setting (``None``: ``draw``).
    """

    name: str
    description: str
    sliders: tuple
    parts: tuple = dataclasses.field(repr=False)
    meta: dict = dataclasses.field(repr=False)
    draw: Callable = dataclasses.field(repr=False, compare=False)
    still: Callable | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def setting(self) -> tuple:
        """The first setting, made of each slider's ``active`` index."""
        return tuple(slider.active for slider in self.sliders)

    def part(self, name: str, kind: str) -> Part:
        """The part called ``name`` of kind ``kind``."""
        return next(p for p in self.parts if p.name == name and p.kind == kind)

    def summary(self, setting=None) -> str:
        """The sentence the live region says at ``setting`` (the first by default)."""
        return self.part("summary", "text").at(self.setting if setting is None else setting)

    def fallback(self) -> Figure:
        """The figure at the sliders' first setting, drawn by matplotlib in the course style.

        Parts hidden at that setting are left out. The figure is already
        closed, so it is shown only where it is glued.
        """
        with course_style():
            fig = (self.still or self.draw)(self.setting)
        for part in self.parts:
            if part.kind == "shown" and not part.at(self.setting):
                for artist in _artists(fig, part.name):
                    artist.remove()
        plt.close(fig)
        return fig

    def svg(self) -> tuple[str, dict]:
        """The drawing at the first setting as inline SVG, and for each part of kind
        ``"xy"`` the map ``[a, b, c, d]`` from data units to the SVG's units
        (``X = a + b x``, ``Y = c + d y``)."""
        with course_style(), plt.rc_context(_THEMABLE):
            fig = self.draw(self.setting)
            buffer = io.StringIO()
            fig.savefig(buffer, format="svg", metadata={"Date": None})
        width, height = fig.get_size_inches() * 72
        maps = {}
        for part in self.parts:
            if part.kind == "xy":
                (artist,) = _artists(fig, part.name)
                to_figure = artist.axes.transData + fig.transFigure.inverted()
                (x0, y0), (x1, _), (_, y1) = to_figure.transform([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
                maps[part.name] = _rounded([x0 * width, (x1 - x0) * width, (1 - y0) * height, -(y1 - y0) * height], 6)
        plt.close(fig)
        hidden = {p.name for p in self.parts if p.kind == "shown" and not p.at(self.setting)}
        return _page_svg(buffer.getvalue(), hidden), maps

    def to_html(self) -> str:
        """The figure's HTML: the drawing, the sliders, the live region, the data and the script."""
        drawing, maps = self.svg()
        data = {
            "sliders": [{"name": s.name, "labels": s.labels} for s in self.sliders],
            "parts": [{"name": p.name, "kind": p.kind, "on": list(p.on), "values": p.values,
                       **({"map": maps[p.name]} if p.kind == "xy" else {})} for p in self.parts],
            "meta": self.meta,
        }
        # Each value is as wide as the figure's longest label: no value runs under
        # its slider's thumb, and the sliders start level.
        value_width = max(len(label) for s in self.sliders for label in s.labels)
        controls = "".join(
            f'<label class="explorable-control"><span class="explorable-name">{html.escape(s.name)} '
            f'<i>{html.escape(s.symbol)}</i> =</span> <output class="explorable-value" '
            f'style="min-width: {value_width}ch">'
            f'{html.escape(s.labels[s.active])}</output>'
            f'<input class="explorable-slider" type="range" min="0" max="{len(s.values) - 1}" step="1" '
            f'value="{s.active}" aria-label="{html.escape(s.name)}" '
            f'aria-valuetext="{html.escape(s.name)} {html.escape(s.labels[s.active])}"></label>'
            for s in self.sliders
        )
        payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
        return (
            f'<div class="explorable" data-explorable="{self.name}">'
            f'<div class="explorable-drawing" role="img" aria-label="{html.escape(self.description)}">'
            f'{drawing}</div>'
            f'<div class="explorable-controls" hidden>{controls}</div>'
            f'<p class="explorable-status" data-part="summary" aria-live="polite">'
            f'{html.escape(self.summary())}</p>'
            f'<script type="application/json" class="explorable-data">{payload}</script>'
            f'<script>{_SCRIPT}</script></div>'
        )

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(),
                "text/plain": f"Explorable figure {self.name!r}: {self.description}"}


#: The script inside every figure's output. It finds its figure from its own
#: element (``document.currentScript``), reads the data beside it, and on every
#: move of a slider sets each part to its value at the new setting. The keys
#: that move a slider stop at the slider: JupyterLab reads keys as they bubble
#: up to the document, and would also take them as notebook shortcuts.
_SCRIPT = """(function (script) {
var root = script.parentElement;
var data = JSON.parse(root.querySelector('script.explorable-data').textContent);
var inputs = Array.prototype.slice.call(root.querySelectorAll('input.explorable-slider'));
var values = root.querySelectorAll('output.explorable-value');
function pick(part, at) { return part.on.reduce(function (v, s) { return v[at[s]]; }, part.values); }
function place(part, p) {
  return (part.map[0] + part.map[1] * p[0]).toFixed(2) + ' ' + (part.map[2] + part.map[3] * p[1]).toFixed(2);
}
function draw() {
  var at = inputs.map(function (input) { return Number(input.value); });
  data.sliders.forEach(function (slider, k) {
    var label = slider.labels[at[k]];
    inputs[k].setAttribute('aria-valuetext', slider.name + ' ' + label);
    values[k].textContent = label;
  });
  data.parts.forEach(function (part) {
    var element = root.querySelector('[data-part="' + part.name + '"]'), value = pick(part, at);
    if (part.kind === 'shown') { element.style.visibility = value ? 'visible' : 'hidden'; return; }
    if (part.kind === 'text') {
      var target = element.querySelector('text') || element;
      if (target.textContent !== value) target.textContent = value;
      return;
    }
    var points = value.map(function (p) { return place(part, p); });
    var line = element.querySelector('path[clip-path], :scope > path');
    if (line) line.setAttribute('d', 'M ' + points.join(' L '));
    element.querySelectorAll('use').forEach(function (use, i) {
      var xy = points[i].split(' ');
      use.setAttribute('x', xy[0]);
      use.setAttribute('y', xy[1]);
    });
  });
}
// The keys that move a slider move only the slider: in JupyterLab, a key pressed on
// an output is otherwise also a notebook shortcut (ArrowRight selects the next cell).
var moves = /^(Arrow(Left|Right|Up|Down)|Page(Up|Down)|Home|End)$/;
inputs.forEach(function (input) {
  input.addEventListener('input', draw);
  input.addEventListener('keydown', function (event) { if (moves.test(event.key)) event.stopPropagation(); });
});
root.querySelector('.explorable-controls').hidden = false;
draw();
root.classList.add('explorable-ready');
})(document.currentScript);"""


def _artists(fig: Figure, name: str) -> list:
    return fig.findobj(lambda artist: artist.get_gid() == f"part-{name}")


def _page_svg(svg: str, hidden: set) -> str:
    """Matplotlib's SVG made fit to sit inside a page: no prologue or metadata, as wide as
    its column, no ids but those it refers to, parts named by ``data-part``, its text
    and axes in the page's colour, and the parts hidden at the first setting hidden."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    # Matplotlib's style sheet would apply to the whole page; the page's own CSS sets it.
    svg = re.sub(r"\s*<style type=\"text/css\">.*?</style>", "", svg, flags=re.S)
    svg = re.sub(r'width="[\d.]+pt" height="[\d.]+pt"', 'width="100%"', svg, count=1)
    svg = re.sub(r'<g id="part-([\w-]+)"', lambda m: f'<g data-part="{m.group(1)}"'
                 + (' style="visibility: hidden"' if m.group(1) in hidden else ""), svg)
    referenced = set(re.findall(r"#([\w-]+)", svg))
    svg = re.sub(r' id="([^"]+)"', lambda m: m.group(0) if m.group(1) in referenced else "", svg)
    svg = svg.replace(_INK, "currentColor")
    svg = re.sub(r"\n\s*", "\n", svg).strip()
    return svg.replace("<svg ", '<svg aria-hidden="true" focusable="false" ', 1)


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


def _number(value: float, digits: int = 6) -> str:
    """A number as the figures print it: ``digits`` significant figures, never an exponent.

    From 1,000 on, a number that is whole, or whose whole part already has
    ``digits`` figures, is printed whole with thousands separators. Slider labels
    use six figures, so that no two settings read the same; readouts use four.

    >>> _number(10000.0), _number(0.5), _number(1.5)
    ('10,000', '0.5', '1.5')
    >>> _number(628.3185, 4), _number(19869.18, 4), _number(3141592.65, 4)
    ('628.3', '19,869', '3,141,593')
    """
    if abs(value) >= 1000 and (value == round(value) or abs(value) >= 10 ** (digits - 1)):
        return f"{round(value):,}"
    return f"{value:.{digits}g}"


def _minus(text: str) -> str:
    """Text with its minus signs as the typographic minus."""
    return text.replace("-", "−")


def _degrees(x: float, y: float) -> int:
    """The angle of a hand with its tip at (x, y), clockwise from twelve o'clock, in whole degrees."""
    return round(math.degrees(math.atan2(x, y))) % 360


#: Where the drawings put their two dials, side by side in one panel (x, in radii).
_DIAL_CENTRES = (-1.25, 1.25)


def _draw_dial(ax, centre: float, radii: list[float], twelve: bool = False) -> None:
    """Circles of ``radii`` round ``(centre, 0)`` on square axes with no frame."""
    from matplotlib.patches import Circle

    for radius in radii:
        ax.add_patch(Circle((centre, 0), radius, fill=False, edgecolor=_GUIDE, linewidth=1.2,
                            linestyle="-" if twelve else ":"))
    if twelve:
        ax.plot([centre, centre], [1.0, 1.1], color=_GUIDE, linewidth=2)
    ax.set_aspect("equal")
    ax.set_axis_off()


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
        An :class:`Explorable` named ``"explorable-clocks"``; its parts
        ``hand-C-I`` and ``tip-C-I`` are hand ``I`` of clock ``C`` (0 for
        :math:`p`, 1 for its neighbour), relative to the clock's centre.

    Example:
        >>> figure = clock_hands(range(3), 4, base=100.0)
        >>> figure.part("tip-0-1", "xy").at((0,))       # pair 1 at position 0
        [[-1.25, 0.45]]
        >>> figure.summary()
        'Position 0: hands at 0° and 0°. Position 1: hands at 57° and 6°.'
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
    # Each tip relative to its clock's centre, rounded once: what the page and the picture draw.
    tips = [[_rounded(np.stack([table[p + clock * neighbour, 0::2] * lengths,
                                table[p + clock * neighbour, 1::2] * lengths], axis=1))
             for clock in range(2)] for p in positions]

    def hand(p_index: int, clock: int, i: int) -> list:
        x, y = tips[p_index][clock][i]
        centre = _DIAL_CENTRES[clock]
        return [[centre, 0.0], [_rounded([centre + x])[0], y]]

    def summary(p_index: int) -> str:
        p = positions[p_index]
        said = []
        for clock, row in enumerate((p, p + neighbour)):
            angles = [f"{_degrees(x, y)}°" for x, y in tips[p_index][clock]]
            listed = ", ".join(angles[:-1]) + " and " + angles[-1] if len(angles) > 1 else angles[0]
            said.append(f"Position {row}: hands at {listed}.")
        return " ".join(said)

    sliders = (Slider("position", "p", tuple(positions), active),)
    parts = [Part("summary", "text", (0,), [summary(k) for k in range(len(positions))])]
    for clock in range(2):
        parts.append(Part(f"title-{clock}", "text", (0,),
                          [f"position {p + clock * neighbour}" for p in positions]))
        for i in range(pairs):
            parts.append(Part(f"hand-{clock}-{i}", "xy", (0,), [hand(k, clock, i) for k in range(len(positions))]))
            parts.append(Part(f"tip-{clock}-{i}", "xy", (0,), [hand(k, clock, i)[1:] for k in range(len(positions))]))

    def draw(setting) -> Figure:
        (k,) = setting
        fig, ax = book_figure(panel_height=3.6)
        for clock, centre in enumerate(_DIAL_CENTRES):
            _draw_dial(ax, centre, [1.0], twelve=True)
            ax.text(centre, -1.12, f"position {positions[k] + clock * neighbour}", ha="center", va="top",
                    gid=f"part-title-{clock}")
            for i in range(pairs):
                (x0, y0), (x1, y1) = hand(k, clock, i)
                ax.plot([x0, x1], [y0, y1], color=HAND_COLOURS[i], linewidth=3, gid=f"part-hand-{clock}-{i}")
                ax.plot([x1], [y1], HAND_MARKERS[i], color=HAND_COLOURS[i], markersize=8,
                        markeredgecolor="white", markeredgewidth=0.8, gid=f"part-tip-{clock}-{i}")
        ax.set_xlim(-2.5, 2.5)
        ax.set_ylim(-1.45, 1.15)
        # Each pair by its colour and by the shape of its tip, in reading order, row by row.
        handles = [Line2D([], [], color=HAND_COLOURS[i], linewidth=3, marker=HAND_MARKERS[i], markersize=8,
                          markeredgecolor="white", markeredgewidth=0.8) for i in range(pairs)]
        labels = [f"pair {i}: λ = {wavelengths[i]:.1f}" for i in range(pairs)]
        order = [i for column in range(2) for i in range(column, pairs, 2)]
        fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside lower center", ncols=2)
        return fig

    return Explorable("explorable-clocks", (
        f"Two clock faces, for position p and position p + {neighbour}, each with one hand per "
        f"sine-cosine pair of a {depth}-wide encoding; a slider moves p from {positions[0]} to "
        f"{positions[-1]}, and every hand turns at its own speed."
    ), sliders, tuple(parts), {"figure": "clock_hands", "depth": depth, "base": base, "neighbour": neighbour,
                               "centres": list(_DIAL_CENTRES)}, draw)


# --- The equations: wavelengths ---------------------------------------------------


def wavelength_series(depths=(8, 16, 32, 64, 128, 256, 512),
                      bases=(100.0, 1000.0, 10000.0, 100000.0, 500000.0, 1000000.0),
                      *, depth: int | None = None, base: float | None = None) -> Explorable:
    r"""The wavelength :math:`\lambda_i = 2\pi N^{2i/D}` of every pair, with sliders for :math:`D` and :math:`N`.

    The values come from :func:`pe_lib.frequencies.wavelengths`. A dashed line marks
    :math:`2\pi N`, which the wavelengths approach but never reach; the
    vertical axis is logarithmic (it draws :math:`\log_{10}\lambda_i`). The
    horizontal axis is the pair's place in the encoding, :math:`2i/D` (pair
    :math:`i` of :math:`D/2`), so every depth spans the same width: the points
    of every depth lie on one straight line from :math:`2\pi` towards
    :math:`2\pi N` (drawn faintly), the base sets its slope, and the depth only
    sets how many points sample it, each :math:`N^{2/D}` times the last.

    Args:
        depths: the depth slider's settings, even.
        bases: the base slider's settings, positive.
        depth: the first depth shown (the first of ``depths`` by default).
        base: the first base shown (the first of ``bases`` by default).

    Returns:
        An :class:`Explorable` named ``"explorable-wavelengths"``: a part
        ``series-J`` for each depth ``depths[J]`` (shown only at that depth),
        the part ``bound``, the line at :math:`2\pi N`, the part ``trend``,
        the line :math:`2\pi N^x` the points lie on, and the text ``step``.

    Example:
        >>> figure = wavelength_series((4,), (100.0,))
        >>> figure.part("series-0", "xy").at((0, 0))   # at 2i/D: log10 of 2 pi and 2 pi * 10
        [[0.0, 0.79818], [0.5, 1.79818]]
    """
    depths = _settings("depths", depths, _even_depth)
    bases = _settings("bases", bases, require_positive_float)
    active_depth = _initial("depth", depth, depths, "the depths")
    active_base = _initial("base", base, bases, "the bases")
    widest = max(depths) // 2

    def series(d: int, n: float) -> list:
        places = _rounded(2 * np.arange(d // 2) / d, 6)
        return [list(point) for point in zip(places, _rounded(np.log10(pe_lib.wavelengths(d, base=n)), 6))]

    def bound(n: float) -> list:
        top = _rounded([math.log10(2 * math.pi * n)], 6)[0]
        return [[0, top], [1, top]]

    def trend(n: float) -> list:
        return [[0, _rounded([math.log10(2 * math.pi)], 6)[0]], bound(n)[1]]

    def step(d: int, n: float) -> str:
        return f"each λ is N^(2/D) = {n ** (2 / d):.4g} × the last"

    def summary(j: int, b: int) -> str:
        d, n = depths[j], bases[b]
        longest = float(pe_lib.wavelengths(d, base=n)[-1])
        return (f"Width {d}, base {_number(n, 4)}: {d // 2} wavelengths from 6.28 to {_number(longest, 4)} positions, "
                f"all below 2πN = {_number(2 * math.pi * n, 4)}; {step(d, n)}.")

    sliders = (Slider("width", "D", tuple(depths), active_depth), Slider("base", "N", tuple(bases), active_base))
    parts = [Part("summary", "text", (0, 1), [[summary(j, b) for b in range(len(bases))]
                                             for j in range(len(depths))]),
             Part("title", "text", (0, 1), [[f"width D = {d}, base N = {_number(n)}" for n in bases]
                                           for d in depths]),
             Part("step", "text", (0, 1), [[step(d, n) for n in bases] for d in depths]),
             Part("bound", "xy", (1,), [bound(n) for n in bases]),
             Part("trend", "xy", (1,), [trend(n) for n in bases])]
    for j, d in enumerate(depths):
        parts.append(Part(f"series-{j}", "shown", (0,), [k == j for k in range(len(depths))]))
        parts.append(Part(f"series-{j}", "xy", (1,), [series(d, n) for n in bases]))
    lowest = 0.5
    # a decade above the highest dashed line, for the note in the top left corner
    top = math.ceil(math.log10(2 * math.pi * max(bases)) + 0.7)

    def draw(setting) -> Figure:
        j, b = setting
        fig, ax = book_figure(panel_height=3.4)
        (x0, y0), (x1, y1) = trend(bases[b])
        # Drawn over the points, which shrink as they crowd, in the text's colour (the page's, in the book),
        # so that the line stays in sight at every depth.
        ax.plot([x0, x1], [y0, y1], color=plt.rcParams["text.color"], linewidth=1.2, linestyle=":",
                gid="part-trend", zorder=3, label="2πNˣ, x = 2i/D")
        for k, d in enumerate(depths):
            points = np.array(series(d, bases[b]), dtype=float)
            ax.plot(points[:, 0], points[:, 1], "o", color=COLOURS[0], markersize=_marker_size(d),
                    gid=f"part-series-{k}", label="wavelength λᵢ" if k == j else None)
        (x0, y0), (x1, y1) = bound(bases[b])
        ax.plot([x0, x1], [y0, y1], color=COLOURS[1], linestyle="--", gid="part-bound",
                label="2πN, never reached")
        ax.text(0.02, 0.97, step(depths[j], bases[b]), transform=ax.transAxes, ha="left", va="top",
                gid="part-step")
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(lowest, top)
        ax.set_yticks(range(1, top + 1), [f"10{_superscript(e)}" for e in range(1, top + 1)])
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "¼", "½", "¾", "1"])
        ax.set_xlabel("place of pair i in the encoding, 2i/D")
        ax.set_ylabel("wavelength (positions)")
        ax.set_title(f"depth D = {depths[j]}, base N = {_number(bases[b])}", gid="part-title")
        # Below the axes, where no setting of the sliders puts a point or a line.
        fig.legend(loc="outside lower center", ncols=2, markerscale=5.0 / _marker_size(depths[j]),
                   handlelength=1.5, columnspacing=1.0)
        return fig

    return Explorable("explorable-wavelengths", (
        "The wavelength of every sine-cosine pair on a logarithmic scale against the pair's place 2i/D in the "
        "encoding, on one straight line from 2 pi towards a dashed line at 2 pi N; the depth slider sets how "
        "many pairs sample that line, the base slider its slope."
    ), sliders, tuple(parts), {"figure": "wavelength_series", "widest": widest}, draw)


def _marker_size(depth: int) -> float:
    """The size of the wavelength figure's points at this depth: 5 points up to depth 16, then smaller
    as they crowd, so that they never hide the line they lie on.

    >>> [_marker_size(d) for d in (8, 16, 64, 256, 512)]
    [5.0, 5.0, 2.5, 1.25, 1.0]
    """
    return max(1.0, min(5.0, 5.0 * math.sqrt(16 / depth)))


def _superscript(number: int) -> str:
    return str(number).translate(str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"))


# --- RoPE: a query and a key turning ---------------------------------------------------


def rotary_query_key(query=(1.0, 0.0), key=(0.7, 0.0), *, rate: float = 0.2, shifts=range(41),
                     offsets=range(11), shift: int | None = None, offset: int | None = None) -> Explorable:
    r"""A query at position :math:`m` and a key at :math:`n = m + k`, rotated by RoPE, and their score.

    Both 2-D vectors are turned by :func:`pe_lib.rope.apply_rope` with the one
    angle rate ``rate`` (:math:`\theta_i` of one pair): the query by
    :math:`m\theta`, the key by :math:`n\theta`. The score
    :math:`(R_m q) \cdot (R_n k)` is computed at each offset, and printed with
    the angle from the query to the key; moving :math:`m` turns both arrows
    together and leaves both unchanged.

    Args:
        query: the query before rotation, two numbers.
        key: the key before rotation, two numbers.
        rate: the angle :math:`\theta` in radians per position.
        shifts: the settings of the slider for the query's position :math:`m`.
        offsets: the settings of the slider for :math:`k = n - m`; a negative
            one puts the key before the query, as in a causal model. No key may
            fall before position 0.
        shift: the first :math:`m` shown (the first of ``shifts`` by default).
        offset: the first :math:`k` shown (the first of ``offsets`` by default).

    Returns:
        An :class:`Explorable` named ``"explorable-rope"``: the parts
        ``query`` and ``key`` are arrows drawn as lines from the centre to the
        tip (their second point) and back along the head; ``score`` is the
        text of the angle from query to key and of the score.

    Example:
        >>> figure = rotary_query_key((1.0, 0.0), (1.0, 0.0), rate=math.pi / 2, shifts=[0, 1], offsets=[1])
        >>> figure.part("query", "xy").at((0, 0))[:2], figure.part("key", "xy").at((0, 0))[:2]
        ([[0.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]])
    """
    query, key = (_vector(name, value) for name, value in (("query", query), ("key", key)))
    rate = require_positive_float("rate", rate)
    shifts = _settings("shifts", shifts, _non_negative_int)
    offsets = _settings("offsets", offsets, require_int)
    earliest_key = min(shifts) + min(offsets)
    if earliest_key < 0:
        raise ValueError(f"offsets must keep every key at position 0 or later: the shift {min(shifts)} "
                         f"with the offset {min(offsets)} puts one at {earliest_key}")
    active_shift = _initial("shift", shift, shifts, "the shifts")
    active_offset = _initial("offset", offset, offsets, "the offsets")

    def turned(vector: np.ndarray, positions) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int64)
        return apply_rope(np.tile(vector, (len(positions), 1)), positions, rates=[rate])

    queries = turned(query, shifts)                                  # (shifts, 2)
    keys = np.stack([turned(key, np.asarray(shifts) + k) for k in offsets], axis=1)   # (shifts, offsets, 2)
    scores = [float(queries[active_shift] @ keys[active_shift, j]) for j in range(len(offsets))]
    # The angle from the query to the key, in whole degrees from -180 to 180: like the score, it depends
    # on the offset alone.
    turns = [math.atan2(keys[active_shift, j][1], keys[active_shift, j][0])
             - math.atan2(queries[active_shift][1], queries[active_shift][0]) for j in range(len(offsets))]
    angles = [round(math.degrees(math.remainder(t, 2 * math.pi))) for t in turns]
    radius = max(float(np.linalg.norm(query)), float(np.linalg.norm(key)))
    head = 0.12 * radius

    def arrow(tip) -> list:
        """The centre, the tip, and the two corners of the head, each back at the tip."""
        x, y = _rounded(tip)
        length = math.hypot(x, y) or 1.0
        ux, uy = x / length, y / length
        left = _rounded([x - head * ux - 0.45 * head * uy, y - head * uy + 0.45 * head * ux])
        right = _rounded([x - head * ux + 0.45 * head * uy, y - head * uy - 0.45 * head * ux])
        return [[0.0, 0.0], [x, y], left, [x, y], right]

    def score_text(j: int) -> str:
        return _minus(f"angle {angles[j]}°, score = {scores[j]:.3f}")

    sliders = (Slider("both positions, query at", "m", tuple(shifts), active_shift),
               Slider("offset", "n − m", tuple(offsets), active_offset))
    parts = (
        Part("summary", "text", (0, 1), [[_minus(f"Query at m = {m}, key at n = {m + k}: score {scores[j]:.3f}.")
                                          for j, k in enumerate(offsets)] for m in shifts]),
        Part("positions", "text", (0, 1), [[f"m = {m}, n = {m + k}" for k in offsets] for m in shifts]),
        Part("score", "text", (1,), [score_text(j) for j in range(len(offsets))]),
        Part("query", "xy", (0,), [arrow(queries[s]) for s in range(len(shifts))]),
        Part("key", "xy", (0, 1), [[arrow(keys[s, j]) for j in range(len(offsets))] for s in range(len(shifts))]),
    )
    radii = sorted({round(float(np.linalg.norm(v)), 4) for v in (query, key)})

    def draw(setting) -> Figure:
        s, j = setting
        fig, ax = book_figure(panel_height=3.6)
        _draw_dial(ax, 0.0, radii)
        for name, points, colour in (("query", arrow(queries[s]), COLOURS[0]),
                                     ("key", arrow(keys[s, j]), COLOURS[1])):
            xs, ys = zip(*points)
            ax.plot(xs, ys, color=colour, linewidth=2.5, solid_joinstyle="miter", gid=f"part-{name}",
                    label=name, clip_on=False)
        ax.text(0.0, 1.08 * radii[-1], f"m = {shifts[s]}, n = {shifts[s] + offsets[j]}", ha="center",
                va="bottom", gid="part-positions")
        ax.text(0.0, -1.12 * radii[-1], score_text(j), ha="center", va="top", gid="part-score")
        ax.set_xlim(-1.6 * radii[-1], 1.6 * radii[-1])
        ax.set_ylim(-1.45 * radii[-1], 1.3 * radii[-1])
        fig.legend(loc="outside lower center", ncols=2)
        return fig

    def still(setting) -> Figure:
        """On paper: the first setting beside the last shift, the same offset, the same score."""
        active, j = setting
        later = len(shifts) - 1 if len(shifts) > 1 else active
        fig, ax = book_figure(panel_height=3.6)
        for side, (centre, s) in enumerate(zip(_DIAL_CENTRES, (active, later))):
            centre = centre * radii[-1]
            _draw_dial(ax, centre, radii)
            ax.text(centre, -1.12 * radii[-1], _minus(f"m = {shifts[s]}, n = {shifts[s] + offsets[j]}\n"
                                                      f"angle {angles[j]}°, score {scores[j]:.3f}"), ha="center", va="top")
            for name, points, colour in (("query", arrow(queries[s]), COLOURS[0]),
                                         ("key", arrow(keys[s, j]), COLOURS[1])):
                xs, ys = zip(*points)
                ax.plot([centre + x for x in xs], ys, color=colour, linewidth=2.5, solid_joinstyle="miter",
                        label=name if side == 0 else None)
        ax.set_xlim(-2.5 * radii[-1], 2.5 * radii[-1])
        ax.set_ylim(-1.45 * radii[-1], 1.15 * radii[-1])
        fig.legend(loc="outside lower center", ncols=2)
        return fig

    return Explorable("explorable-rope", (
        "A query arrow and a key arrow on a circle, turned by RoPE by their positions m and n; one slider "
        "moves m, turning both arrows together, the other sets n − m; the score printed below changes only "
        "with n − m."
    ), sliders, parts, {"figure": "rotary_query_key", "query": _rounded(query, 6), "key": _rounded(key, 6),
                        "rate": _significant([rate], 10)[0]}, draw, still)


def _vector(name: str, value) -> np.ndarray:
    array = np.asarray(value)
    if array.shape != (2,) or not np.issubdtype(array.dtype, np.number) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be two finite numbers, got {value!r}")
    if not np.any(array):
        raise ValueError(f"{name} must not be the zero vector, got {value!r}")
    return array.astype(np.float64)
