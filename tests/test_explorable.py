"""pe_lib.course.display.explorable: every slider step carries the right data, checked against
values computed here with mpmath and plain trigonometry, never the module's own code;
the HTML is byte-stable; bad settings are refused by name.

The figures are also driven in a browser, on the chapters that carry them, by tests/test_book.py.
"""

from __future__ import annotations

import json
import math
import re

import matplotlib.pyplot as plt
import mpmath
import pytest

from pe_lib.course.display import explorable, explorable_figures
from pe_lib.course.display.explorable import clock_hands, rotary_query_key, wavelength_series

TWO_PI = 2 * math.pi


def turn(angle: float) -> float:
    """An angle brought into [0, 2 pi)."""
    return angle % TWO_PI


def same_angle(a: float, b: float, tolerance: float) -> bool:
    difference = turn(a - b)
    return min(difference, TWO_PI - difference) < tolerance


def hand_angle(x: float, y: float) -> float:
    """Clockwise from twelve o'clock, as a clock hand is read."""
    return turn(math.atan2(x, y))


def rate(i: int, depth: int, base: float) -> float:
    return float(mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / depth))


# --- The clock hands ------------------------------------------------------------


def hand_tip(figure, clock: int, i: int, setting) -> tuple[float, float]:
    """A hand's tip relative to its clock's centre, read from the part that draws it."""
    (cx, cy), (x, y) = figure.part(f"hand-{clock}-{i}", "xy").at(setting)
    return x - cx, y - cy


def test_clock_hands_at_a_hand_checked_setting():
    # Depth 4, base 100: rates 1 and 1/10. At p = 0 both hands point up.
    figure = clock_hands(range(3), 4, base=100.0)
    assert [hand_tip(figure, 0, i, (0,)) for i in range(2)] == [(0.0, 1.0), (0.0, 0.45)]
    # The neighbour, position 1: the fast hand has turned by 1 radian clockwise.
    assert hand_tip(figure, 1, 0, (0,)) == pytest.approx((round(math.sin(1.0), 4), round(math.cos(1.0), 4)),
                                                       abs=1e-12)
    assert figure.summary((0,)) == "Position 0: hands at 0° and 0°. Position 1: hands at 57° and 6°."


@pytest.mark.parametrize("depth, base, neighbour", [(8, 100.0, 1), (16, 10000.0, 3), (2, 10.0, 5)])
def test_every_step_turns_each_hand_by_its_rate(depth, base, neighbour):
    positions = list(range(0, 60, 7))
    figure = clock_hands(positions, depth, base=base, neighbour=neighbour)
    pairs = depth // 2
    (slider,) = figure.sliders
    assert slider.labels == [str(p) for p in positions]
    for k, p in enumerate(positions):
        assert [figure.part(f"title-{c}", "text").at((k,)) for c in range(2)] == [f"position {p}",
                                                                                  f"position {p + neighbour}"]
        for clock, row in enumerate((p, p + neighbour)):
            for i in range(pairs):
                tip = hand_tip(figure, clock, i, (k,))
                assert same_angle(hand_angle(*tip), row * rate(i, depth, base), 1e-3)
                # The dot at the hand's end is where the hand ends.
                assert figure.part(f"tip-{clock}-{i}", "xy").at((k,)) == [figure.part(
                    f"hand-{clock}-{i}", "xy").at((k,))[1]]
        # The lesson of the figure: the neighbour's hands are turned by neighbour * rate, at every p.
        for i in range(pairs):
            ahead, here = hand_angle(*hand_tip(figure, 1, i, (k,))), hand_angle(*hand_tip(figure, 0, i, (k,)))
            assert same_angle(ahead - here, neighbour * rate(i, depth, base), 2e-3)


def test_clock_hands_start_at_the_chosen_position_and_the_fastest_hand_is_longest():
    figure = clock_hands(range(0, 50), 8, base=100.0, position=17)
    assert figure.setting == (17,)
    assert figure.part("title-0", "text").at(figure.setting) == "position 17"
    lengths = [math.hypot(*hand_tip(figure, 0, i, (17,))) for i in range(4)]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] == pytest.approx(1.0, abs=1e-4)
    # What a screen reader hears: each hand's angle in whole degrees, clockwise from twelve.
    angles = [round(math.degrees(17 * rate(i, 8, 100.0))) % 360 for i in range(4)]
    assert figure.summary().startswith(f"Position 17: hands at {angles[0]}°, {angles[1]}°, {angles[2]}° and ")


# --- The wavelengths --------------------------------------------------------------


def test_wavelengths_follow_the_geometric_series_for_every_base():
    depths, bases = (8, 16, 64), (100.0, 10000.0, 500000.0)
    figure = wavelength_series(depths, bases, depth=16, base=10000.0)
    assert figure.setting == (1, 1)
    assert figure.sliders[1].labels == ["100", "10,000", "500,000"]
    for b, base in enumerate(bases):
        for j, depth in enumerate(depths):
            points = figure.part(f"series-{j}", "xy").at((j, b))
            exact = [2 * mpmath.pi * mpmath.power(base, mpmath.mpf(2 * i) / depth) for i in range(depth // 2)]
            # Each pair at its place 2i/D, so every depth spans the same width.
            assert [x for x, _ in points] == pytest.approx([2 * i / depth for i in range(depth // 2)], abs=1e-6)
            assert [10 ** y for _, y in points] == pytest.approx([float(e) for e in exact], rel=1e-5)
        bound = figure.part("bound", "xy").at((0, b))
        assert [10 ** y for _, y in bound] == [pytest.approx(TWO_PI * base, rel=1e-5)] * 2
        # The line every depth's points lie on: 2 pi at 0, 2 pi N at 1.
        trend = figure.part("trend", "xy").at((0, b))
        assert [(x, 10 ** y) for x, y in trend] == [(0, pytest.approx(TWO_PI, rel=1e-5)),
                                                    (1, pytest.approx(TWO_PI * base, rel=1e-5))]
        assert figure.part("title", "text").at((0, b)) == f"width D = 8, base N = {base:,.0f}"


def test_the_depth_slider_shows_one_depth():
    figure = wavelength_series((8, 16, 64), (100.0,))
    for j in range(3):
        assert [figure.part(f"series-{k}", "shown").at((j, 0)) for k in range(3)] == [k == j for k in range(3)]
    assert figure.summary((2, 0)) == ("Width 64, base 100: 32 wavelengths from 6.28 to "
                                      f"{TWO_PI * 100 ** (62 / 64):.4g} positions, all below 2πN = 628.3; "
                                      "each λ is N^(2/D) = 1.155 × the last.")


def test_the_wavelength_readout_writes_large_numbers_plainly():
    figure = wavelength_series((16,), (10000.0, 500000.0))
    longest = [round(TWO_PI * base ** (14 / 16)) for base in (10000.0, 500000.0)]
    assert figure.summary((0, 0)).startswith(
        f"Width 16, base 10,000: 8 wavelengths from 6.28 to {longest[0]:,} positions, all below 2πN = 62,832;")
    assert figure.summary((0, 1)).startswith(
        f"Width 16, base 500,000: 8 wavelengths from 6.28 to {longest[1]:,} positions, all below 2πN = 3,141,593;")
    assert "e+" not in figure.summary((0, 0)) + figure.summary((0, 1))


# --- The dot product against the offset ----------------------------------------------


# --- RoPE: the query and the key --------------------------------------------------------


def rotated(vector, angle):
    """Counter-clockwise rotation, written out."""
    x, y = vector
    return (x * math.cos(angle) - y * math.sin(angle), x * math.sin(angle) + y * math.cos(angle))


def test_rope_at_a_hand_checked_setting():
    # A quarter turn per position: the query at m = 0 is (1, 0), the key at n = 1 is (0, 1).
    figure = rotary_query_key((1.0, 0.0), (1.0, 0.0), rate=math.pi / 2, shifts=[0, 1], offsets=[1])
    assert figure.part("query", "xy").at((0, 0))[:2] == [[0.0, 0.0], [1.0, 0.0]]
    assert figure.part("key", "xy").at((0, 0))[:2] == [[0.0, 0.0], [0.0, 1.0]]
    assert figure.part("score", "text").at((0, 0)).endswith("= 0.000")


def test_rope_arrows_turn_with_their_positions_and_the_score_stays():
    query, key, theta = (0.9, 0.3), (-0.2, 0.7), 0.3
    # Negative offsets put the key before the query, as a causal model's keys are.
    shifts, offsets = list(range(6, 36, 3)), [-5, -2, 0, 1, 2, 5]
    figure = rotary_query_key(query, key, rate=theta, shifts=shifts, offsets=offsets, shift=12, offset=2)
    assert figure.setting == (2, 4)
    for s, m in enumerate(shifts):
        for j, k in enumerate(offsets):
            q_tip = figure.part("query", "xy").at((s, j))[1]
            k_tip = figure.part("key", "xy").at((s, j))[1]
            assert q_tip == pytest.approx(rotated(query, m * theta), abs=1e-4)
            assert k_tip == pytest.approx(rotated(key, (m + k) * theta), abs=1e-4)
            # The score of q and k rotated k positions apart: |q||k| cos(angle between them after the turn).
            angle = math.atan2(key[1], key[0]) + k * theta - math.atan2(query[1], query[0])
            score = math.hypot(*query) * math.hypot(*key) * math.cos(angle)
            shown = float(re.search(r"= (−?[0-9.]+)$", figure.part("score", "text").at((s, j))).group(1)
                          .replace("−", "-"))
            assert shown == pytest.approx(score, abs=5e-4)
            # ... and it is the dot product of the arrows drawn, at every m.
            assert q_tip[0] * k_tip[0] + q_tip[1] * k_tip[1] == pytest.approx(score, abs=5e-4)
            assert figure.part("positions", "text").at((s, j)) == f"m = {m}, n = {m + k}"


# --- What the notebook shows -------------------------------------------------------------

FIGURES = {
    "clocks": lambda: clock_hands(range(21), 8, base=100.0),
    "wavelengths": lambda: wavelength_series(),
    "rope": lambda: rotary_query_key(),
    "dot-product-by-pair": lambda: explorable_figures.dot_product_by_pair(),
    "context-extension": lambda: explorable_figures.context_extension_rates(),
}


def figure_json(html: str) -> dict:
    """The data the figure's script reads."""
    found = re.search(r'<script type="application/json" class="explorable-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def svg_points(html: str, part: str) -> list[list[float]]:
    """The points matplotlib drew for a part: its line, or its markers when it has no line."""
    group = re.search(rf'<g data-part="{part}"[^>]*>(.*?)\n</g>', html, re.S).group(1)
    line = re.search(r'<path d="([^"]+)"[^>]*clip-path|<path d="([^"]+)" style', group)
    if line and "<use" not in group.split("<defs>")[0]:
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", line.group(1) or line.group(2))]
        return [numbers[i:i + 2] for i in range(0, len(numbers), 2)]
    return [[float(x), float(y)] for x, y in re.findall(r'<use [^>]*x="([-\d.]+)" y="([-\d.]+)"', group)]


@pytest.mark.parametrize("name", FIGURES)
def test_the_html_is_the_same_on_every_run_and_holds_rounded_numbers(name):
    first, second = FIGURES[name](), FIGURES[name]()
    html = first.to_html()
    assert html == second.to_html()
    assert html.startswith(f'<div class="explorable" data-explorable="{first.name}">')
    assert first.name in (f"explorable-{name}", "explorable-dot-product")
    data = figure_json(html)
    assert [s["labels"] for s in data["sliders"]] == [s.labels for s in first.sliders]
    assert [p["values"] for p in data["parts"]] == [p.values for p in first.parts]
    # No processor-dependent digits in the data: at most six decimals, no negative zero.
    numbers = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[-+]?\d+)?", json.dumps(data))
    assert numbers and max(len(n.split("e")[0].split(".")[1]) for n in numbers) <= 6
    assert not re.search(r"-0\.0\b(?!\d)", json.dumps(data))
    # No plotting library, no element ids of its own: the script finds its figure from where it is.
    assert "Plotly" not in html and "getElementById" not in html and len(html) < 150_000
    assert "document.currentScript" in html


@pytest.mark.parametrize("name", FIGURES)
def test_every_moving_part_starts_where_matplotlib_drew_it(name):
    """The script's map from data to the drawing's units, applied to the first setting,
    gives the points matplotlib drew: the page moves what was drawn, not a copy of it."""
    figure = FIGURES[name]()
    html = figure.to_html()
    data = figure_json(html)
    checked = 0
    for part in data["parts"]:
        if part["kind"] != "xy" or not figure.part(part["name"], "xy").at(figure.setting):
            continue
        a, b, c, d = part["map"]
        points = figure.part(part["name"], "xy").at(figure.setting)
        drawn = svg_points(html, part["name"])
        assert len(drawn) == len(points), part["name"]
        for (x, y), (sx, sy) in zip(points, drawn):
            assert (a + b * x, c + d * y) == pytest.approx((sx, sy), abs=0.01), part["name"]
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("name", FIGURES)
def test_every_slider_is_a_labelled_native_range_input(name):
    figure = FIGURES[name]()
    html = figure.to_html()
    inputs = re.findall(r"<input [^>]*>", html)
    assert len(inputs) == len(figure.sliders)
    for tag, slider in zip(inputs, figure.sliders):
        assert 'type="range"' in tag and 'min="0"' in tag and f'max="{len(slider.values) - 1}"' in tag
        assert f'value="{slider.active}"' in tag and f'aria-label="{slider.name}"' in tag
        assert f'aria-valuetext="{slider.name} {slider.labels[slider.active]}"' in tag
    assert html.count('aria-live="polite"') == 1 and figure.summary() in html.replace("&#x27;", "'")
    # The controls stay hidden until the script runs: no slider that cannot move.
    assert '<div class="explorable-controls" hidden>' in html
    # The figure's text and axes take the page's colour, so the figure follows the theme.
    assert "currentColor" in html and "#010203" not in html


@pytest.mark.parametrize("name", FIGURES)
def test_the_notebook_output_and_its_fallback(name):
    figure = FIGURES[name]()
    bundle = figure._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    fallback = figure.fallback()
    assert fallback.get_figwidth() == pytest.approx(5.0)
    assert fallback.number not in plt.get_fignums(), "the fallback is shown only where it is glued"
    assert all(text.get_fontsize() >= 11 for ax in fallback.axes for text in ax.get_xticklabels())


def test_the_fallback_draws_the_first_setting():
    from pe_lib.course.display.style import figure_data

    clocks = clock_hands(range(0, 40), 8, base=100.0, position=9)
    lines = figure_data(clocks.fallback())["axes"][0]["lines"]
    hands = [line for line in lines if len(line) == 2 and line[0][1] == 0.0]   # from a centre, at y = 0
    assert len(hands) == 8
    for n, hand in enumerate(hands):
        assert hand == clocks.part(f"hand-{n // 4}-{n % 4}", "xy").at((9,))
    series = wavelength_series((8, 16), (100.0, 1000.0), depth=16, base=1000.0)
    trend, curve, bound = figure_data(series.fallback())["axes"][0]["lines"]   # the hidden depth is left out
    assert trend == series.part("trend", "xy").at((1, 1))
    assert curve == series.part("series-1", "xy").at((1, 1))
    assert 10 ** bound[0][1] == pytest.approx(TWO_PI * 1000.0)


def test_figure_colours_stand_out_in_both_themes():
    """WCAG 1.4.11: at least 3:1 against white and against the dark theme's #121212."""
    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    def contrast(a: str, b: str) -> float:
        high, low = sorted((luminance(a), luminance(b)), reverse=True)
        return (high + 0.05) / (low + 0.05)

    assert luminance("#767676") == pytest.approx(0.1812, abs=1e-4)   # WCAG's own 4.5:1 grey
    for colour in explorable.COLOURS:
        assert contrast(colour, "#FFFFFF") >= 3 and contrast(colour, "#121212") >= 3, colour


# --- Bad settings ---------------------------------------------------------------------------


@pytest.mark.parametrize("call, error, words", [
    (lambda: clock_hands(range(5), 7), ValueError, "depth must be even"),
    (lambda: clock_hands(range(5), 18), ValueError, "depth must be at most 16"),
    (lambda: clock_hands([], 8), ValueError, "positions must hold at least one"),
    (lambda: clock_hands([0, -1], 8), ValueError, "positions must be >= 0"),
    (lambda: clock_hands([1, 1], 8), ValueError, "positions must not repeat"),
    (lambda: clock_hands([0.5], 8), TypeError, "positions must be an integer"),
    (lambda: clock_hands(5, 8), TypeError, "positions must be a sequence"),
    (lambda: clock_hands(range(401), 8), ValueError, "at most 400"),
    (lambda: clock_hands(range(5), 8, position=9), ValueError, "position must be one of the positions"),
    (lambda: clock_hands(range(5), 8, neighbour=0), ValueError, "neighbour must be >= 1"),
    (lambda: clock_hands(range(5), 8, base=0.0), ValueError, "base must be a finite number > 0"),
    (lambda: wavelength_series((8, 9)), ValueError, "depths must be even"),
    (lambda: wavelength_series(bases=(100.0, -1.0)), ValueError, "bases must be a finite number > 0"),
    (lambda: wavelength_series(depth=12), ValueError, "depth must be one of the depths"),
    (lambda: rotary_query_key((1.0, 0.0, 0.0)), ValueError, "query must be two finite numbers"),
    (lambda: rotary_query_key(key=(0.0, 0.0)), ValueError, "key must not be the zero vector"),
    (lambda: rotary_query_key(rate=-0.1), ValueError, "rate must be a finite number > 0"),
    (lambda: rotary_query_key(shift=True), ValueError, "shift must be one of the shifts"),
    (lambda: rotary_query_key(shifts=[3, 4], offsets=[-4, 0]), ValueError,
     "offsets must keep every key at position 0 or later: the shift 3 with the offset -4 puts one at -1"),
])
def test_bad_settings_are_refused_by_name(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()
