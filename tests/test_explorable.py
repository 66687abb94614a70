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

from pe_lib.course.display import explorable
from pe_lib.course.display.explorable import clock_hands, dot_product_by_offset, rotary_query_key, wavelength_series

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


def test_clock_hands_at_a_hand_checked_setting():
    # Depth 4, base 100: rates 1 and 1/10. At p = 0 both hands point up.
    figure = clock_hands(range(3), 4, base=100.0)
    assert [(trace["x"], trace["y"]) for trace in figure.data[:2]] == [([0.0, 0.0], [0.0, 1.0]),
                                                                       ([0.0, 0.0], [0.0, 0.45])]
    # The neighbour, position 1: the fast hand has turned by 1 radian clockwise.
    x, y = figure.data[2]["x"][1], figure.data[2]["y"][1]
    assert (x, y) == (round(math.sin(1.0), 4), round(math.cos(1.0), 4))


@pytest.mark.parametrize("depth, base, neighbour", [(8, 100.0, 1), (16, 10000.0, 3), (2, 10.0, 5)])
def test_every_step_turns_each_hand_by_its_rate(depth, base, neighbour):
    positions = list(range(0, 60, 7))
    figure = clock_hands(positions, depth, base=base, neighbour=neighbour)
    pairs = depth // 2
    (slider,) = figure.layout["sliders"]
    assert [step["label"] for step in slider["steps"]] == [str(p) for p in positions]
    for p, step in zip(positions, slider["steps"]):
        restyle, relayout = step["args"]
        assert relayout == {"annotations[0].text": f"position {p}",
                            "annotations[1].text": f"position {p + neighbour}"}
        for clock, row in enumerate((p, p + neighbour)):
            for i in range(pairs):
                x, y = restyle["x"][clock * pairs + i][1], restyle["y"][clock * pairs + i][1]
                assert same_angle(hand_angle(x, y), row * rate(i, depth, base), 1e-3)
        # The lesson of the figure: the neighbour's hands are turned by neighbour * rate, at every p.
        for i in range(pairs):
            ahead = hand_angle(restyle["x"][pairs + i][1], restyle["y"][pairs + i][1])
            here = hand_angle(restyle["x"][i][1], restyle["y"][i][1])
            assert same_angle(ahead - here, neighbour * rate(i, depth, base), 2e-3)


def test_clock_hands_start_at_the_chosen_position_and_the_fastest_hand_is_longest():
    figure = clock_hands(range(0, 50), 8, base=100.0, position=17)
    (slider,) = figure.layout["sliders"]
    assert slider["active"] == 17
    step = slider["steps"][17]["args"][0]
    assert [trace["x"] for trace in figure.data] == step["x"]
    assert [trace["y"] for trace in figure.data] == step["y"]
    assert figure.layout["annotations"][0]["text"] == "position 17"
    lengths = [math.hypot(trace["x"][1], trace["y"][1]) for trace in figure.data[:4]]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] == pytest.approx(1.0, abs=1e-4)


# --- The wavelengths --------------------------------------------------------------


def test_wavelengths_follow_the_geometric_series_for_every_base():
    depths, bases = (8, 16, 64), (100.0, 10000.0, 500000.0)
    figure = wavelength_series(depths, bases, depth=16, base=10000.0)
    depth_slider, base_slider = figure.layout["sliders"]
    assert (depth_slider["active"], base_slider["active"]) == (1, 1)
    for base, step in zip(bases, base_slider["steps"]):
        assert step["label"] == f"{base:g}"
        (restyle,) = step["args"]
        for depth, values in zip(depths, restyle["y"]):
            exact = [2 * mpmath.pi * mpmath.power(base, mpmath.mpf(2 * i) / depth) for i in range(depth // 2)]
            assert len(values) == depth // 2
            for value, reference in zip(values, exact):
                assert value == pytest.approx(float(reference), rel=1e-5)
        assert restyle["y"][-1] == [pytest.approx(TWO_PI * base, rel=1e-5)] * 2
    # The first setting is drawn before any slider moves.
    assert [trace["y"] for trace in figure.data] == base_slider["steps"][1]["args"][0]["y"]


def test_the_depth_slider_shows_one_depth_and_the_bound():
    figure = wavelength_series((8, 16, 64), (100.0,))
    assert [trace["visible"] for trace in figure.data[:3]] == [True, False, False]
    for j, step in enumerate(figure.layout["sliders"][0]["steps"]):
        assert step["args"] == [{"visible": [k == j for k in range(3)] + [True]}]
    assert [trace["x"] for trace in figure.data[:3]] == [list(range(4)), list(range(8)), list(range(32))]


# --- The dot product against the offset ----------------------------------------------


def dot_over_half_depth(k: int, depth: int, base: float) -> float:
    return math.fsum(math.cos(k * rate(i, depth, base)) for i in range(depth // 2)) / (depth / 2)


def test_dot_product_at_hand_checked_offsets():
    # Depth 4, base 10000: rates 1 and 1/100, so the value is (cos k + cos(k/100)) / 2.
    figure = dot_product_by_offset(range(3), (4,))
    expected = [(math.cos(k) + math.cos(k / 100)) / 2 for k in range(3)]
    assert figure.data[0]["y"] == [round(v, 4) for v in expected]


def test_every_offset_step_moves_each_depths_marker_onto_its_curve():
    offsets, depths = list(range(0, 41, 4)), (4, 16, 64)
    figure = dot_product_by_offset(offsets, depths, base=1000.0, offset=8, depth=16)
    offset_slider, depth_slider = figure.layout["sliders"]
    assert (offset_slider["active"], depth_slider["active"]) == (2, 1)
    for j, depth in enumerate(depths):
        curve = figure.data[j]["y"]
        assert curve == pytest.approx([dot_over_half_depth(k, depth, 1000.0) for k in offsets], abs=1e-4)
    for k, step in zip(offsets, offset_slider["steps"]):
        restyle, traces = step["args"]
        assert traces == [3, 4, 5]
        for j, depth in enumerate(depths):
            assert restyle["x"][j] == [k]
            assert restyle["y"][j][0] == pytest.approx(dot_over_half_depth(k, depth, 1000.0), abs=1e-4)
            assert restyle["text"][j][0].replace("−", "-") == f"{restyle['y'][j][0]:.4f}"
    for j, step in enumerate(depth_slider["steps"]):
        assert step["args"] == [{"visible": [k == j for k in range(3)] * 2}]


def test_the_markers_label_stays_clear_of_the_axis_ends():
    # Offsets 0 to 100: the label sits right of a marker near 0, left of one near 100.
    figure = dot_product_by_offset(range(101), (4, 8), offset=0)
    steps = figure.layout["sliders"][0]["steps"]
    sides = {k: step["args"][0]["textposition"] for k, step in zip(range(101), steps)}
    assert sides[0] == sides[19] == "top right"
    assert sides[50] == "top center"
    assert sides[81] == sides[100] == "top left"
    assert figure.data[2]["textposition"] == figure.data[3]["textposition"] == "top right"


# --- RoPE: the query and the key --------------------------------------------------------


def rotated(vector, angle):
    """Counter-clockwise rotation, written out."""
    x, y = vector
    return (x * math.cos(angle) - y * math.sin(angle), x * math.sin(angle) + y * math.cos(angle))


def test_rope_at_a_hand_checked_setting():
    # A quarter turn per position: the query at m = 0 is (1, 0), the key at n = 1 is (0, 1).
    figure = rotary_query_key((1.0, 0.0), (1.0, 0.0), rate=math.pi / 2, shifts=[0, 1], offsets=[1])
    assert (figure.data[0]["x"], figure.data[0]["y"]) == ([0.0, 1.0], [0.0, 0.0])
    assert (figure.data[1]["x"], figure.data[1]["y"]) == ([0.0, 0.0], [0.0, 1.0])
    assert figure.layout["annotations"][0]["text"].endswith("= 0.000")


def test_rope_arrows_turn_with_their_positions_and_the_score_stays():
    query, key, theta = (0.9, 0.3), (-0.2, 0.7), 0.3
    shifts, offsets = list(range(0, 30, 3)), [0, 1, 2, 5]
    figure = rotary_query_key(query, key, rate=theta, shifts=shifts, offsets=offsets, shift=6, offset=2)
    shift_slider, offset_slider = figure.layout["sliders"]
    assert (shift_slider["active"], offset_slider["active"]) == (2, 2)
    for m, step in zip(shifts, shift_slider["steps"]):
        restyle, traces = step["args"]
        assert traces == [0, 1, 2, 3, 4]
        assert (restyle["x"][0][1], restyle["y"][0][1]) == pytest.approx(rotated(query, m * theta), abs=1e-4)
        for j, k in enumerate(offsets):
            tip = restyle["x"][j + 1][1], restyle["y"][j + 1][1]
            assert tip == pytest.approx(rotated(key, (m + k) * theta), abs=1e-4)
    for j, (k, step) in enumerate(zip(offsets, offset_slider["steps"])):
        restyle, relayout = step["args"]
        assert restyle == {"visible": [True] + [i == j for i in range(len(offsets))]}
        # The score of q and k rotated k positions apart: |q||k| cos(angle between them after the turn).
        angle = math.atan2(key[1], key[0]) + k * theta - math.atan2(query[1], query[0])
        score = math.hypot(*query) * math.hypot(*key) * math.cos(angle)
        shown = float(re.search(r"= (−?[0-9.]+)$", relayout["annotations[0].text"]).group(1).replace("−", "-"))
        assert shown == pytest.approx(score, abs=5e-4)
        # ... and it is the dot product of the arrows drawn at every shift, not only the first.
        for m_step in shift_slider["steps"]:
            xs, ys = m_step["args"][0]["x"], m_step["args"][0]["y"]
            drawn = xs[0][1] * xs[j + 1][1] + ys[0][1] * ys[j + 1][1]
            assert drawn == pytest.approx(score, abs=5e-4)


# --- What the notebook shows -------------------------------------------------------------

FIGURES = {
    "clocks": lambda: clock_hands(range(21), 8, base=100.0),
    "wavelengths": lambda: wavelength_series(),
    "dot-product": lambda: dot_product_by_offset(),
    "rope": lambda: rotary_query_key(),
}


def figure_json(html: str) -> list:
    """The data, layout and config passed to Plotly.newPlot in the figure's HTML."""
    call = re.search(r"Plotly\.newPlot\(\s*\"([\w-]+)\",\s*(.*)\s*\)\s*};", html, re.S)
    return [call.group(1)] + json.loads(f"[{call.group(2)}]")


@pytest.mark.parametrize("name", FIGURES)
def test_the_html_is_the_same_on_every_run_and_holds_rounded_numbers(name):
    first, second = FIGURES[name](), FIGURES[name]()
    html = first.to_html()
    assert html == second.to_html()
    assert html.startswith('<div class="explorable" role="figure" aria-label="')
    element, data, layout, config = figure_json(html)
    assert element == first.name == f"explorable-{name}"
    assert data == first.data and layout["sliders"] == first.layout["sliders"]
    assert config == explorable.CONFIG
    # No processor-dependent digits: at most six significant digits, no negative zero.
    numbers = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[-+]?\d+)?", html)
    digits = [len(n.lstrip("-").split("e")[0].replace(".", "").strip("0")) for n in numbers]
    assert numbers and max(digits) <= 6
    assert not re.search(r"-0\.0\b(?!\d)", html)
    # plotly.js itself is not inlined: the page loads it once, from _static.
    assert "plotly.js v" not in html and len(html) < 200_000


@pytest.mark.parametrize("name", FIGURES)
def test_the_notebook_output_and_its_fallback(name):
    figure = FIGURES[name]()
    bundle = figure._repr_mimebundle_()
    assert set(bundle) == {"text/html", "application/vnd.plotly.v1+json", "text/plain"}
    assert bundle["application/vnd.plotly.v1+json"]["data"] == figure.data
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
    for hand, trace in zip(hands, clocks.data):
        (x0, _), (x1, y1) = hand
        assert (x1 - x0, y1) == pytest.approx((trace["x"][1], trace["y"][1]), abs=1e-4)
    series = wavelength_series((8, 16), (100.0, 1000.0), depth=16, base=1000.0)
    curve, bound = figure_data(series.fallback())["axes"][0]["lines"]
    assert [y for _, y in curve] == pytest.approx(series.data[1]["y"], rel=1e-5)
    assert bound[0][1] == pytest.approx(TWO_PI * 1000.0)


def test_a_phone_can_move_every_slider():
    # plotly.js makes the whole strip under a slider's rail draggable: 25 px to
    # the ticks, the ticks, then the labels. Long ticks keep it above 44 px.
    for make in FIGURES.values():
        for slider in make().layout["sliders"]:
            assert 25 + slider["ticklen"] + slider["font"]["size"] >= 44
            assert slider["currentvalue"]["font"]["size"] >= 14 and slider["len"] == 1.0


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
    (lambda: dot_product_by_offset(offset=500), ValueError, "offset must be one of the offsets"),
    (lambda: dot_product_by_offset(depths=(3,)), ValueError, "depths must be even"),
    (lambda: rotary_query_key((1.0, 0.0, 0.0)), ValueError, "query must be two finite numbers"),
    (lambda: rotary_query_key(key=(0.0, 0.0)), ValueError, "key must not be the zero vector"),
    (lambda: rotary_query_key(rate=-0.1), ValueError, "rate must be a finite number > 0"),
    (lambda: rotary_query_key(shift=True), ValueError, "shift must be one of the shifts"),
])
def test_bad_settings_are_refused_by_name(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()
