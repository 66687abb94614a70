"""pe_lib.course.display.explorable_figures: every slider step carries the right data, checked
against values computed here with mpmath and by hand from the methods' published formulas,
never the module's own code; bad settings are refused by name.

The HTML, the sliders and the fallback of these figures are checked with the others in
tests/test_explorable.py; in a browser, on their chapters, by tests/test_book.py.
"""

from __future__ import annotations

import math
import re

import mpmath
import pytest

from pe_lib.course.display.explorable_figures import context_extension_rates, dot_product_by_pair

# --- Properties: the dot product, pair by pair --------------------------------------------


def test_each_pair_adds_the_cosine_of_its_turn_and_the_curve_is_their_mean():
    offsets, depths = range(0, 60, 7), (4, 8, 16)
    figure = dot_product_by_pair(offsets, depths, base=100.0, offset=14, depth=8)
    assert figure.setting == (2, 1)
    for k_index, k in enumerate(offsets):
        for j, depth in enumerate(depths):
            terms = [mpmath.cos(k * mpmath.power(100, -mpmath.mpf(2 * i) / depth)) for i in range(depth // 2)]
            drawn = figure.part(f"pairs-{j}", "xy").at((k_index, j))
            assert [x for x, _ in drawn] == pytest.approx([2 * i / depth for i in range(depth // 2)], abs=1e-4)
            assert [y for _, y in drawn] == pytest.approx([float(t) for t in terms], abs=6e-4)
            mean = float(sum(terms) / len(terms))
            assert [y for _, y in figure.part("mean", "xy").at((k_index, j))] == pytest.approx([mean] * 2, abs=6e-5)
            assert figure.part("marker", "xy").at((k_index, j)) == [[k, pytest.approx(mean, abs=6e-5)]]
            # The curve of the bottom panel holds the same mean at this offset.
            assert figure.part(f"curve-{j}", "xy").at((k_index, j))[k_index] == [k, pytest.approx(mean, abs=6e-5)]
            assert [figure.part(f"pairs-{c}", "shown").at((k_index, j)) for c in range(3)] == [c == j for c in range(3)]


def test_the_pairs_figure_at_hand_checked_values():
    figure = dot_product_by_pair(range(3), (4,))
    # D = 4, N = 10000: rates 1 and 1/100; at k = 1, cos 1 = 0.5403 and cos 0.01 = 0.99995.
    assert figure.part("pairs-0", "xy").at((1, 0)) == [[0.0, 0.54], [0.5, 1.0]]
    assert figure.summary((1, 0)) == "Offset 1, depth 4: dot product ÷ (D/2) = 0.7701."
    # The bottom panel's curve is (cos k + cos(k/100)) / 2, at every offset.
    expected = [(math.cos(k) + math.cos(k / 100)) / 2 for k in range(3)]
    assert figure.part("curve-0", "xy").at(()) == [[k, round(v, 4)] for k, v in enumerate(expected)]
    assert figure.part("title", "text").at((0, 0)) == "depth D = 4: 2 pairs"


# --- RoPE: context extension, pair by pair ------------------------------------------------------

# A head of 8 features with N = 10000: rates 1, 1/10, 1/100, 1/1000; trained on L = 64
# positions, pairs 0 and 1 turn 10.19 and 1.02 times, pairs 2 and 3 less than once.
DEPTH, TRAINED = 8, 64


def log2(x) -> float:
    return float(mpmath.log(x, 2))


def hand_ratios(method: str, s: float) -> list[float]:
    """s theta'_i / theta_i from each method's published formula, for the head above."""
    s = mpmath.mpf(s)
    pairs = range(DEPTH // 2)
    theta = [mpmath.mpf(10) ** -i for i in pairs]
    if method == "rope":
        return [s] * 4
    if method == "rope_pi":
        return [mpmath.mpf(1)] * 4
    if method in ("rope_ntk", "rope_dynamic"):
        # N' = N s^(d/(d-2)), so theta'_i = theta_i s^(-2i/(d-2)); dynamic NTK at n = sL with
        # factor s uses s_n = s n / L - (s - 1) = s^2 - s + 1.
        used = s if method == "rope_ntk" else s * s - s + 1
        return [s * used ** (-mpmath.mpf(2 * i) / (DEPTH - 2)) for i in pairs]
    turns = [TRAINED * t / (2 * mpmath.pi) for t in theta]
    if method == "rope_yarn_paper":     # gamma = clip((r - 1) / (32 - 1), 0, 1)
        gamma = [min(1, max(0, (r - 1) / 31)) for r in turns]
    elif method == "rope_llama3":       # the ramp in L / lambda = r between 1 and 4
        gamma = [min(1, max(0, (r - 1) / 3)) for r in turns]
    else:
        raise AssertionError(method)
    return [1 + g * (s - 1) for g in gamma]


@pytest.mark.parametrize("method", ["rope", "rope_pi", "rope_ntk", "rope_dynamic", "rope_yarn_paper", "rope_llama3"])
@pytest.mark.parametrize("scale", [2.0, 8.0])
def test_each_method_is_drawn_at_the_angle_it_reaches_over_the_one_trained(method, scale):
    figure = context_extension_rates((scale, 3.0), depth=DEPTH, original_length=TRAINED)
    drawn = figure.part(method, "xy").at((0,))
    assert [x for x, _ in drawn] == [0, 1, 2, 3]
    assert [y for _, y in drawn] == pytest.approx([log2(r) for r in hand_ratios(method, scale)], abs=6e-5)


def test_shipped_yarn_keeps_the_fast_pairs_and_interpolates_the_slow_ones_fully():
    # The code's ramp runs over pair indices between floor(8 ln(64/(2 pi 32)) / (2 ln 10^4)) = -1,
    # clamped to 0, and ceil(8 ln(64/(2 pi)) / (2 ln 10^4)) = 2: pair 0 kept, pair 2 and 3 at 1/s.
    figure = context_extension_rates((4.0,), depth=DEPTH, original_length=TRAINED)
    (first, _, third, fourth) = [y for _, y in figure.part("rope_yarn", "xy").at((0,))]
    assert (first, third, fourth) == (2.0, 0.0, 0.0)


def test_the_sentence_counts_the_pairs_taken_past_the_angles_of_training():
    figure = context_extension_rates((2.0, 8.0), depth=DEPTH, original_length=TRAINED)
    # By hand: unchanged RoPE takes pairs 2 and 3 twice as far; NTK-aware pair 2 to
    # 2 * 2^(-2/3) = 2^(1/3), its slowest pair exactly to 1; dynamic NTK (s_n = 3) pair 2 to
    # 2 * 3^(-2/3) = 0.961; the others keep the slow pairs at 1.
    assert figure.summary((0,)) == (
        "Scale 2, run on 128 positions. The pairs that did not turn once in training now reach at most "
        "this multiple of the angle they reached then: RoPE unchanged 2 (2 pairs past 1); position "
        "interpolation 1; NTK-aware 1.26 (1 pair past 1); dynamic NTK 0.961; YaRN, as shipped 1; "
        "YaRN, paper 1; Llama 3.1 1.")
    assert figure.part("title", "text").at((1,)) == "s = 8: trained on 64, run on 512"


@pytest.mark.parametrize("call, error, words", [
    (lambda: dot_product_by_pair(depths=(5,)), ValueError, "depths must be even"),
    (lambda: dot_product_by_pair(offset=500), ValueError, "offset must be one of the offsets"),
    (lambda: context_extension_rates((1.0, 2.0)), ValueError, "scales must be > 1"),
    (lambda: context_extension_rates(scale=5.0), ValueError, "scale must be one of the scales"),
    (lambda: context_extension_rates(depth=7), ValueError, "depth must be even"),
    (lambda: context_extension_rates(original_length=0), ValueError, "original_length must be >= 1"),
])
def test_bad_settings_are_refused_by_name(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


@pytest.mark.parametrize("scales", [(2.0, 3.0), (1.5, 32.0)])
def test_the_scale_of_angles_marks_1_the_line_a_pair_must_not_cross(scales):
    """Whatever the largest scale, the vertical axis has a tick at 1 (2 to the 0), where the line is."""
    figure = context_extension_rates(scales, depth=DEPTH, original_length=TRAINED)
    axis = figure.fallback().axes[0]
    assert 0.0 in list(axis.get_yticks())
    assert "1" in [label.get_text() for label in axis.get_yticklabels()]
    assert any(list(line.get_ydata()) == [0.0, 0.0] for line in axis.get_lines())


@pytest.mark.parametrize("scale", [1.5, 3.0, 8.0, 32.0])
def test_the_scale_of_angles_marks_s_where_rope_unchanged_lies(scale):
    """At every setting the vertical axis has a tick at s, so RoPE unchanged can be read off it."""
    scales = (1.5, 3.0, 8.0, 32.0)
    figure = context_extension_rates(scales, depth=DEPTH, original_length=TRAINED, scale=scale)
    axis = figure.fallback().axes[0]
    ticks = list(axis.get_yticks())
    assert any(abs(t - log2(scale)) < 1e-12 for t in ticks)
    assert f"{scale:g}" in [label.get_text() for label in axis.get_yticklabels()]
    assert all(t == 0 or abs(t - log2(scale)) >= 0.5 or abs(t - log2(scale)) < 1e-12 for t in ticks)


@pytest.mark.parametrize("scale", [1.5, 3.0, 8.0, 32.0])
def test_the_scale_of_angles_spaces_its_powers_of_2_evenly_past_every_line(scale):
    """Apart from s, the ticks are powers of 2 at one spacing, and the labelled range holds every line."""
    scales = (1.5, 3.0, 8.0, 32.0)
    figure = context_extension_rates(scales, depth=DEPTH, original_length=TRAINED, scale=scale)
    axis = figure.fallback().axes[0]
    ticks = sorted(t for t in axis.get_yticks() if abs(t - log2(scale)) > 1e-12)
    # neighbours not straddling s, whose tick is between them, are one step apart
    steps = {round(b - a, 12) for a, b in zip(ticks, ticks[1:]) if not (a < log2(scale) < b)}
    assert len(steps) == 1
    highest = max(max(abs(y) for y in line.get_ydata()) for line in axis.get_lines())
    assert ticks[0] <= -highest and ticks[-1] >= highest
