"""Context extension for RoPE: each method's defining property."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib
from pe_lib.rope_scaling import (
    interpolation_rates,
    ntk_base,
    ntk_rates,
    scaled_rates,
    yarn_attention_factor,
    yarn_ramp,
    yarn_turns,
    yarn_rates,
)

depths = st.integers(min_value=2, max_value=64).map(lambda half: 2 * half)
scales = st.floats(min_value=1.0, max_value=64.0)


@given(depths, scales, st.integers(min_value=2, max_value=4096))
def test_interpolation_maps_s_times_the_trained_length_into_the_trained_angles(depth, scale, trained):
    # The largest angle any pair reaches at position s*L - 1 stays below the angle of position L.
    longest = math.floor(scale * trained) - 1
    reached = longest * interpolation_rates(depth, scale)
    trained_range = trained * pe_lib.angle_rates(depth)
    assert np.all(reached <= trained_range * (1 + 1e-12))


@given(depths, scales)
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_s(depth, scale):
    rates, plain = ntk_rates(depth, scale), pe_lib.angle_rates(depth)
    assert rates[0] == plain[0] == 1.0
    np.testing.assert_allclose(rates[-1], plain[-1] / scale, rtol=1e-12)
    assert np.all(rates <= plain * (1 + 1e-12)) and np.all(rates >= plain / scale * (1 - 1e-12))


def test_ntk_base_by_hand():
    # d = 128, s = 4: 10000 * 4**(128/126)
    assert ntk_base(128, 4.0) == pytest.approx(10000 * 4 ** (64 / 63), rel=1e-14)


def test_yarn_keeps_fast_pairs_interpolates_slow_ones_and_ramps_between():
    depth, trained, scale = 64, 2048, 8.0
    plain = pe_lib.angle_rates(depth)
    wavelengths = 2 * math.pi / plain
    turns = trained / wavelengths
    rates = yarn_rates(depth, scale, trained)
    fast, slow = turns > 32, turns < 1  # the paper's beta = 32 and alpha = 1
    assert fast.any() and slow.any() and (~fast & ~slow).any()
    np.testing.assert_array_equal(rates[fast], plain[fast])
    np.testing.assert_allclose(rates[slow], plain[slow] / scale, rtol=1e-15)
    between = ~fast & ~slow
    gamma = (turns[between] - 1) / 31
    np.testing.assert_allclose(rates[between], (1 - gamma) * plain[between] / scale + gamma * plain[between])
    assert np.all(np.diff(yarn_ramp(yarn_turns(depth, trained))) <= 0)  # slower pairs are interpolated more


def test_yarn_attention_factor_is_one_tenth_log_s_plus_one():
    assert yarn_attention_factor(1.0) == 1.0
    assert yarn_attention_factor(math.e**2) == pytest.approx(1.2, rel=1e-15)


def test_scale_one_changes_nothing():
    plain = pe_lib.angle_rates(16)
    for method in ("rope", "rope_pi", "rope_ntk", "rope_yarn"):
        np.testing.assert_allclose(scaled_rates(method, 16, scale=1.0, original_length=64), plain, rtol=1e-15)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: interpolation_rates(8, 0.5), ValueError, ["scale", "0.5"]),
        (lambda: ntk_rates(2, 2.0), ValueError, ["depth", "2"]),
        (lambda: yarn_rates(8, 2.0, 0), ValueError, ["original_length", "0"]),
        (lambda: yarn_ramp([1.0], alpha=4.0, beta=2.0), ValueError, ["beta", "alpha"]),
        (lambda: scaled_rates("rope_yarn", 8, scale=2.0), ValueError, ["original_length"]),
        (lambda: scaled_rates("alibi", 8), ValueError, ["method", "'alibi'"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    for word in words:
        assert word in str(raised.value)
