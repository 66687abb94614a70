r"""More figures a reader moves, built on :mod:`pe_lib.course.display.explorable`.

Each function computes its figure's data with :mod:`pe_lib` for every setting
of its sliders and returns an :class:`~pe_lib.course.display.explorable.Explorable`,
shown in the book with native range inputs over a matplotlib drawing.

- :func:`dot_product_by_pair`: :math:`PE(p) \cdot PE(p + \Delta) / (D/2)` against
  the offset :math:`\Delta`, and above it the term :math:`\cos \Delta\omega_i` each pair
  adds, whose mean it is; sliders for the offset and the depth.
- :func:`context_extension_rates`: for each context-extension method of
  :mod:`pe_lib.rope_scaling`, how far each pair turns over the stretched
  context against how far it turned in training; a slider for the scale.

>>> figure = context_extension_rates(scales=(2.0, 4.0))
>>> figure.name, figure.sliders[0].labels
('explorable-context-extension', ['2', '4'])
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from pe_lib import rope_scaling
from pe_lib._checks import require_int, require_positive_float
from pe_lib.course.display.explorable import (
    COLOURS, Explorable, Part, Slider, _even_depth, _GUIDE, _initial, _minus, _non_negative_int, _number,
    _rounded, _settings,
)
from pe_lib.course.display.style import RECIPE_COLOURS, book_figure
from pe_lib.frequencies import angle_rates
from pe_lib.similarity import offset_similarity

# --- Properties: the dot product, pair by pair -------------------------------------------


def dot_product_by_pair(offsets=range(101), depths=(4, 8, 16, 32), *, base: float = 10000.0,
                        offset: int | None = None, depth: int | None = None) -> Explorable:
    r"""The dot product of two encodings :math:`\Delta` apart, and what each pair adds to it.

    Moving from position :math:`p` to :math:`p + \Delta` turns pair :math:`i` by the
    angle :math:`\Delta\omega_i`, and the pair adds :math:`\cos \Delta\omega_i` to the dot
    product, so :math:`PE(p) \cdot PE(p + \Delta) / (D/2)` is the mean of these
    :math:`D/2` cosines. The top panel draws them against the pair's place
    :math:`2i/D` (fast pairs on the left), with their mean as a line; the bottom
    panel the mean against the offset (from
    :func:`pe_lib.similarity.offset_similarity`), a marker at :math:`\Delta`. The
    offset slider shows the fast pairs' terms swinging while the slow ones stay
    near 1; the depth slider how many pairs share the mean.

    Args:
        offsets: the offset slider's settings, distinct non-negative integers.
        depths: the depth slider's settings, even.
        base: the constant :math:`N` of the encoding.
        offset: the first offset shown (the first of ``offsets`` by default).
        depth: the first depth shown (the first of ``depths`` by default).

    Returns:
        An :class:`~pe_lib.course.display.explorable.Explorable` named ``"explorable-dot-product"``:
        ``curve-J``, the mean against the offset for each depth ``depths[J]``
        (shown only at that depth), the ``marker`` and its ``value`` at the
        offset, ``pairs-J``, the terms of depth ``depths[J]``, and ``mean``,
        their mean.

    Example:
        >>> figure = dot_product_by_pair(range(3), (4,))
        >>> figure.part("pairs-0", "xy").at((2, 0))   # cos 2 and cos 0.02, at 2i/D = 0 and 1/2
        [[0.0, -0.416], [0.5, 1.0]]
        >>> figure.part("mean", "xy").at((2, 0))
        [[0, 0.2918], [1, 0.2918]]
    """
    offsets = _settings("offsets", offsets, _non_negative_int)
    depths = _settings("depths", depths, _even_depth)
    base = require_positive_float("base", base)
    active_offset = _initial("offset", offset, offsets, "the offsets")
    active_depth = _initial("depth", depth, depths, "the depths")
    curves = [_rounded(offset_similarity(offsets, d, base=base) / (d / 2)) for d in depths]
    # Three decimals: a tenth of a pixel, and a page a third lighter than with four.
    terms = [_rounded(np.cos(np.outer(offsets, angle_rates(d, base=base))), 3) for d in depths]
    places = [_rounded(2 * np.arange(d // 2) / d) for d in depths]

    def said(j: int, k: int) -> str:
        return _minus(f"{curves[j][k]:.4f}")

    sliders = (Slider("offset", "Δ", tuple(offsets), active_offset), Slider("depth", "D", tuple(depths), active_depth))
    parts = [
        Part("summary", "text", (0, 1), [[f"Offset {offsets[k]}, depth {d}: dot product ÷ (D/2) = {said(j, k)}."
                                          for j, d in enumerate(depths)] for k in range(len(offsets))]),
        Part("title", "text", (1,), [f"depth D = {d}: {d // 2} pairs" for d in depths]),
        Part("value", "text", (0, 1), [[f"Δ = {offsets[k]}: {said(j, k)}" for j in range(len(depths))]
                                       for k in range(len(offsets))]),
        Part("marker", "xy", (0, 1), [[[[offsets[k], curves[j][k]]] for j in range(len(depths))]
                                      for k in range(len(offsets))]),
        Part("mean", "xy", (0, 1), [[[[0, curves[j][k]], [1, curves[j][k]]] for j in range(len(depths))]
                                    for k in range(len(offsets))]),
    ]
    for j in range(len(depths)):
        parts.append(Part(f"curve-{j}", "shown", (1,), [k == j for k in range(len(depths))]))
        parts.append(Part(f"curve-{j}", "xy", (), [[x, y] for x, y in zip(offsets, curves[j])]))
        parts.append(Part(f"pairs-{j}", "shown", (1,), [k == j for k in range(len(depths))]))
        parts.append(Part(f"pairs-{j}", "xy", (0,), [[[x, y] for x, y in zip(places[j], terms[j][k])]
                                                      for k in range(len(offsets))]))
    lowest = min(min(curve) for curve in curves)

    def draw(setting) -> Figure:
        k, j = setting
        fig, (top, bottom) = book_figure(2, panel_height=2.9)
        for c in range(len(depths)):
            top.plot(places[c], terms[c][k], "o", color=COLOURS[0], markersize=5, gid=f"part-pairs-{c}",
                     label="cos Δωᵢ, one per pair" if c == j else None)
        top.plot([0, 1], [curves[j][k]] * 2, color=COLOURS[1], linewidth=2, gid="part-mean",
                 label="their mean")
        top.set_xlim(-0.03, 1.03)
        # Room above cos = 1 for the legend, so that it never covers a pair's point.
        top.set_ylim(-1.15, 1.85)
        top.set_yticks([-1, 0, 1])
        top.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "0.25", "0.5", "0.75", "1"])
        top.set_xlabel("pair's place 2i/D (fast → slow)")
        top.set_ylabel("cos Δωᵢ")
        top.set_title(f"depth D = {depths[j]}: {depths[j] // 2} pairs", gid="part-title")
        top.legend(loc="upper center", ncol=2, fontsize=11, borderaxespad=0.2)
        for c, curve in enumerate(curves):
            bottom.plot(offsets, curve, color=COLOURS[0], linewidth=1.5, gid=f"part-curve-{c}")
        bottom.plot([offsets[k]], [curves[j][k]], "o", color=COLOURS[1], markersize=8, gid="part-marker")
        bottom.text(0.98, 0.97, f"Δ = {offsets[k]}: {said(j, k)}", transform=bottom.transAxes, ha="right",
                    va="top", color=COLOURS[1], gid="part-value")
        bottom.set_xlabel("offset Δ")
        bottom.set_ylabel("PE(p)·PE(p+Δ) ÷ (D/2)")
        bottom.set_xlim(min(offsets) - 1, max(offsets) + 1)
        bottom.set_ylim(min(lowest, 0.0) - 0.1, 1.15)
        return fig

    return Explorable("explorable-dot-product", (
        "Top: the cosine of the angle Delta omega_i by which the offset Delta turns each sine-cosine pair, "
        "fast pairs on the left, and their mean as a line. Bottom: that mean, the dot product of two "
        "encodings Delta apart divided by D/2, against Delta, with a marker at Delta; sliders set Delta and "
        "the depth D."
    ), sliders, tuple(parts), {"figure": "dot_product_by_pair", "base": base}, draw)


# --- RoPE: context extension, pair by pair ----------------------------------------------------


#: The methods the figure draws, with their labels, colours and line styles.
_METHODS = tuple((method, label, RECIPE_COLOURS[method], style) for method, label, style in (
    ("rope", "RoPE unchanged", ":"),
    ("rope_pi", "position interpolation", "-"),
    ("rope_ntk", "NTK-aware", "--"),
    ("rope_dynamic", "dynamic NTK", (0, (1, 1.5))),
    ("rope_yarn", "YaRN, as shipped", "-"),
    ("rope_yarn_paper", "YaRN, paper", (0, (5, 1.5, 1, 1.5))),
    ("rope_llama3", "Llama 3.1", (0, (3, 1.2))),
))


def _scale(name: str, value) -> float:
    value = require_positive_float(name, value)
    if value <= 1.0:
        raise ValueError(f"{name} must be > 1 (the factor by which the context grows), got {value!r}")
    return value


def context_extension_rates(scales=(1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 32.0), *, depth: int = 128,
                            base: float = 10000.0, original_length: int = 4096,
                            scale: float | None = None) -> Explorable:
    r"""How far each pair turns over a stretched context, for each context-extension method.

    A model trained on :math:`L` positions saw pair :math:`i` turn through the
    angles :math:`[0, L\theta_i)`. Run at :math:`sL` positions with the rates
    :math:`\theta'_i` of a method (from :func:`pe_lib.rope_scaling.scaled_rates`,
    Hugging Face's ``factor`` :math:`s`), the pair reaches :math:`sL\theta'_i`.
    The figure draws the ratio :math:`s\theta'_i / \theta_i` of the two, on a
    logarithmic scale, for every pair. Pairs that turned at least once in
    training (:math:`L\theta_i \ge 2\pi`, shaded) have seen every angle; any
    other pair above the line at 1 meets angles it never met in training. Dynamic
    NTK is drawn at the length :math:`n = sL` with ``factor`` :math:`s`, so its
    scale is :math:`s_n = s^2 - s + 1`. The slider sets :math:`s`.

    Args:
        scales: the slider's settings, each > 1.
        depth: the number of rotated features (a head's size), even.
        base: the base :math:`N` of the rates.
        original_length: the trained context :math:`L`.
        scale: the first scale shown (the first of ``scales`` by default).

    Returns:
        An :class:`~pe_lib.course.display.explorable.Explorable` named ``"explorable-context-extension"``: a part
        named after each method (``rope``, ``rope_pi``, ...), the line of its
        ratios, and the text ``title``.

    Example:
        >>> figure = context_extension_rates((2.0,), depth=4, original_length=64)
        >>> figure.part("rope_pi", "xy").at((0,))     # log2 of 2 * (1/2): every pair at 1
        [[0, 0.0], [1, 0.0]]
        >>> figure.part("rope", "xy").at((0,))        # unchanged rates: log2 of 2
        [[0, 1.0], [1, 1.0]]
    """
    scales = _settings("scales", scales, _scale)
    depth = _even_depth("depth", depth)
    base = require_positive_float("base", base)
    original_length = require_int("original_length", original_length, minimum=1)
    active = _initial("scale", scale, scales, "the scales")
    pairs = depth // 2
    plain = angle_rates(depth, base=base)
    turned_once = original_length * plain >= 2 * math.pi        # every angle seen in training

    def ratios(method: str, s: float) -> np.ndarray:
        """s theta'_i / theta_i: the angle reached at sL over the angle reached at L."""
        options = {"original_length": original_length} if method in rope_scaling.NEED_ORIGINAL_LENGTH else {}
        if method == "rope_dynamic":
            options["length"] = round(s * original_length)
        rates = rope_scaling.scaled_rates(method, depth, scale=s, base=base, **options)
        return s * rates / plain

    table = {method: [ratios(method, s) for s in scales] for method, *_ in _METHODS}

    def line(method: str, b: int) -> list:
        return [[i, y] for i, y in enumerate(_rounded(np.log2(table[method][b]), 4))]

    def beyond(method: str, b: int) -> int:
        """How many pairs meet angles they never met in training."""
        return int(np.sum(~turned_once & (table[method][b] > 1.0 + 1e-9)))

    def reach(method: str, b: int) -> str:
        """The most a slow pair reaches, as a multiple of what it reached in training."""
        farthest = float(np.max(table[method][b][~turned_once])) if not turned_once.all() else 0.0
        past = beyond(method, b)
        return f"{farthest:.3g}" + (f" ({past} pair{'s' if past > 1 else ''} past 1)" if past else "")

    def title(b: int) -> str:
        return f"s = {_number(scales[b])}: trained on {original_length}, run on {round(scales[b] * original_length)}"

    def summary(b: int) -> str:
        reaches = "; ".join(f"{label} {reach(method, b)}" for method, label, *_ in _METHODS)
        return (f"Scale {_number(scales[b])}, run on {round(scales[b] * original_length)} positions. The pairs "
                f"that did not turn once in training now reach at most this multiple of the angle they reached "
                f"then: {reaches}.")

    sliders = (Slider("scale", "s", tuple(scales), active),)
    parts = [Part("summary", "text", (0,), [summary(b) for b in range(len(scales))]),
             Part("title", "text", (0,), [title(b) for b in range(len(scales))])]
    for method, *_ in _METHODS:
        parts.append(Part(method, "xy", (0,), [line(method, b) for b in range(len(scales))]))
    top = math.ceil(math.log2(max(scales)))
    step = 2 if top > 3 else 1
    end = step * math.ceil(top / step)  # the axis ends on a tick of the even spacing
    seen = np.flatnonzero(turned_once)

    def draw(setting) -> Figure:
        (b,) = setting
        fig, ax = book_figure(panel_height=4.4)
        if seen.size:
            ax.axvspan(-0.5, seen[-1] + 0.5, color=_GUIDE, alpha=0.15, linewidth=0, zorder=0)
            ax.text(seen[-1] / 2, -end - 0.55, "turned ≥ once\nin training", ha="center", va="bottom",
                    fontsize=11)
        # the line at 1: a pair above it meets angles it never met in training
        ax.axhline(0.0, color="0.25", linewidth=1.4)
        for method, label, colour, style in _METHODS:
            points = np.array(line(method, b), dtype=float)
            ax.plot(points[:, 0], points[:, 1], linestyle=style, color=colour, linewidth=2, label=label,
                    gid=f"part-{method}")
        ax.set_xlim(-0.5, pairs - 0.5)
        ax.set_ylim(-end - 0.7, end + 1.0)  # room above the line at s: RoPE unchanged
        # evenly spaced powers of 2 with 1 among them, ending at or past every
        # setting's lines; and s, where RoPE unchanged lies, with none crowding it
        at_s = math.log2(scales[b])
        ticks = [t for t in range(-end, end + 1, step) if t == 0 or abs(t - at_s) >= 0.5]
        labels = [str(2 ** t) if t >= 0 else f"1/{2 ** -t}" for t in ticks]
        if at_s not in ticks:
            ticks.append(at_s)
            labels.append(_number(scales[b]))
        ax.set_yticks(ticks, labels)
        ax.minorticks_off()
        ax.set_xlabel("pair i (fast → slow)")
        ax.set_ylabel("angle reached at sL ÷ at L")
        ax.set_title(title(b), gid="part-title", fontsize=12)
        fig.legend(loc="outside lower center", ncols=2, fontsize=11)
        return fig

    return Explorable("explorable-context-extension", (
        f"For each of the {pairs} pairs of a RoPE head of size {depth} trained on {original_length} positions, "
        "the largest angle it reaches over the stretched context divided by the largest it reached in training, "
        "on a logarithmic scale, for each context-extension method; a shaded band marks the pairs that turned "
        "at least once in training; a slider sets the scale s."
    ), sliders, tuple(parts), {"figure": "context_extension_rates", "depth": depth, "base": base,
                               "original_length": original_length}, draw)
