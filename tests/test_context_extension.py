"""Context extension for RoPE: each recipe's defining property, against independent values."""

import math

import mpmath
import numpy as np
import pytest
from float_checks import TRANSCENDENTAL_ULP, assert_within_ulp

import pe_lib
from pe_lib.course.lessons.context_extension import (
    METHODS,
    attention_factor,
    scaled_angle_rates,
    yarn_attention_factor,
    yarn_pair_ramp,
    yarn_ramp,
)


def plain_rates(depth, base=10000.0):
    """theta_i = base^(-2i/d), with mpmath at 30 digits."""
    mpmath.mp.dps = 30
    return [mpmath.power(base, -mpmath.mpf(2 * i) / depth) for i in range(depth // 2)]


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 8.0])
def test_interpolation_maps_the_new_length_into_the_trained_range(factor):
    trained, depth = 16, 8
    new_length = int(factor * trained)
    rates = scaled_angle_rates("rope_pi", depth, scale=factor)
    reference = plain_rates(depth)
    # Every position below the new length turns each pair no further than
    # some real position below the trained length would.
    largest = (new_length - 1) * rates
    # the rates come from NumPy's power: within TRANSCENDENTAL_ULP of exact
    slack = 1 - 2 * TRANSCENDENTAL_ULP * np.finfo(np.float64).eps
    for i, rate in enumerate(reference):
        assert largest[i] < float(trained * rate)
        assert largest[i] >= float((trained - 1) * rate) * slack
    # Position m after interpolation is position m / s before it.
    assert np.allclose(12 * rates, [float(mpmath.mpf(12) / factor * r) for r in reference], rtol=1e-14)


def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_the_factor():
    depth, factor = 16, 4.0
    rates = scaled_angle_rates("rope_ntk", depth, scale=factor)
    new_base = mpmath.mpf(10000) * mpmath.power(factor, mpmath.mpf(depth) / (depth - 2))
    expected = [float(mpmath.power(new_base, -mpmath.mpf(2 * i) / depth)) for i in range(depth // 2)]
    assert np.allclose(rates, expected, rtol=1e-13)
    plain = np.array([float(r) for r in plain_rates(depth)])
    assert rates[0] == plain[0] == 1.0
    assert rates[-1] * factor == pytest.approx(plain[-1], rel=1e-13)
    ratios = rates / plain  # a geometric series from 1 down to 1/s
    assert np.allclose(ratios[1:] / ratios[:-1], factor ** (-2 / (depth - 2)), rtol=1e-13)


def test_yarn_keeps_fast_pairs_interpolates_slow_ones_and_ramps_over_the_pair_index():
    depth, factor, trained = 128, 4.0, 4096
    plain = np.array([float(r) for r in plain_rates(depth)])
    rates = scaled_angle_rates("rope_yarn", depth, scale=factor, original_length=trained)
    # The YaRN code's correction range: pair 64 ln(4096 / 64 pi) / ln 1e4 = 20.9 rounded down,
    # pair 64 ln(4096 / 2 pi) / ln 1e4 = 45.03 rounded up.
    low, high = 20, 46
    pairs = np.arange(depth // 2)
    kept = 1 - np.clip((pairs - low) / (high - low), 0, 1)
    assert np.allclose(rates, plain * (kept + (1 - kept) / factor), rtol=1e-13)
    assert np.array_equal(yarn_pair_ramp(depth, trained), kept)
    # The fast pairs keep their rate: the very same float as the plain rates (same
    # path), each within a few ulp of the exact base^(-2i/d) (NumPy's power differs
    # by processor in the last bits, so never bit for bit with mpmath).
    assert np.array_equal(rates[:21], pe_lib.angle_rates(depth)[:21])
    assert_within_ulp(rates[:21], plain_rates(depth)[:21])
    assert np.allclose(rates[46:], plain[46:] / factor, rtol=1e-13)
    # The paper's equation keeps and interpolates the same pairs but ramps over the turns.
    paper = scaled_angle_rates("rope_yarn_paper", depth, scale=factor, original_length=trained)
    rotations = trained * plain / (2 * math.pi)
    gamma = np.clip((rotations - 1) / 31, 0, 1)
    assert np.allclose(paper, plain * (gamma + (1 - gamma) / factor), rtol=1e-13)
    assert not np.allclose(paper[21:46], rates[21:46], rtol=0.01)


def test_yarn_ramp_by_hand():
    assert yarn_ramp([0.0, 1.0, 2.0, 3.0, 9.0], alpha=1.0, beta=5.0).tolist() == [0.0, 0.0, 0.25, 0.5, 1.0]


def test_yarn_attention_factor():
    assert yarn_attention_factor(1.0) == 1.0
    assert yarn_attention_factor(math.e**10) == pytest.approx(2.0, rel=1e-15)
    assert attention_factor("rope_ntk", 8.0) == 1.0
    assert attention_factor("rope_yarn", 16.0) == pytest.approx(1 + 0.4 * math.log(2))


def test_no_scaling_and_factor_one_change_nothing():
    plain = np.array([float(r) for r in plain_rates(8)])
    assert np.allclose(scaled_angle_rates("rope", 8, scale=4.0), plain, rtol=1e-15)
    for method in METHODS[1:]:
        length = {"length": 16} if method == "rope_dynamic" else {}
        assert np.allclose(scaled_angle_rates(method, 8, scale=1.0, original_length=16, **length), plain, rtol=1e-13)


@pytest.mark.parametrize(
    "method, depth, scale, message",
    [
        ("rope_pi", 7, 2.0, "depth"),
        ("linear", 8, 2.0, "method"),
        ("rope_pi", 8, 0.5, "scale"),
        ("rope_pi", 8, -2.0, "scale"),
        ("rope_yarn", 8, 2.0, "original_length"),
        ("rope_ntk", 2, 2.0, "depth"),
    ],
)
def test_bad_input_names_the_argument(method, depth, scale, message):
    with pytest.raises(ValueError, match=message):
        scaled_angle_rates(method, depth, scale=scale)


def test_yarn_ramp_refuses_reversed_ends():
    with pytest.raises(ValueError, match="beta"):
        yarn_ramp([1.0], alpha=4.0, beta=2.0)


def test_the_chapter_vocabulary_is_the_registry():
    assert METHODS == ("rope", "rope_pi", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_yarn_paper", "rope_llama3",
                       "rope_longrope")
    rates = scaled_angle_rates("rope_dynamic", 8, scale=1.0, original_length=16, length=64)
    assert np.allclose(rates, scaled_angle_rates("rope_ntk", 8, scale=4.0), rtol=1e-14)
