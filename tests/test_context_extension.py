"""Context extension for RoPE: each recipe's defining property, against independent values."""

import math

import mpmath
import numpy as np
import pytest

from pe_lib.course.context_extension import (
    attention_factor,
    scaled_angle_rates,
    scaled_rope,
    yarn_attention_factor,
    yarn_ramp,
)
from pe_lib.course.extrapolation import extrapolation_model
from pe_lib.course.order_classifier import order_accuracy


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
    for i, rate in enumerate(reference):
        assert largest[i] < float(trained * rate)
        assert largest[i] >= float((trained - 1) * rate)
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


def test_yarn_keeps_fast_pairs_interpolates_slow_ones_and_ramps_between():
    depth, factor, trained = 128, 4.0, 4096
    plain = np.array([float(r) for r in plain_rates(depth)])
    rates = scaled_angle_rates("rope_yarn", depth, scale=factor, original_length=trained)
    rotations = trained * plain / (2 * math.pi)
    fast, slow = rotations > 32, rotations < 1
    assert fast.any() and slow.any()
    assert np.allclose(rates[fast], plain[fast], rtol=1e-13)
    assert np.allclose(rates[slow], plain[slow] / factor, rtol=1e-13)
    between = ~(fast | slow)
    gamma = (rotations[between] - 1) / 31
    assert np.allclose(rates[between], plain[between] * (gamma + (1 - gamma) / factor), rtol=1e-13)


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
    for method in ("rope_pi", "rope_ntk", "rope_yarn"):
        assert np.allclose(scaled_angle_rates(method, 8, scale=1.0, original_length=16), plain, rtol=1e-13)


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


def test_scaled_rope_changes_the_scores_as_the_rates_say_and_restores_them():
    model = extrapolation_model("rope", train_length=8, depth=8, heads=2, seed=3)
    attention = model.get_layer("attention")
    inputs = np.random.default_rng(0).normal(size=(2, 12, 8)).astype("float32")
    before = np.asarray(attention.scores(inputs))
    # Interpolation by 2 is plain RoPE at positions 0, 0.5, ..., 5.5: the rates
    # halved. Head 1's scores, recomputed by hand, say so.
    with scaled_rope(model, "rope_pi", 2.0, original_length=8):
        stretched = np.asarray(attention.scores(inputs))
    after = np.asarray(attention.scores(inputs))
    assert np.array_equal(before, after)
    q = inputs @ np.asarray(attention.query.kernel)
    k = inputs @ np.asarray(attention.key.kernel)
    q, k = q[0, :, :4].astype(np.float64), k[0, :, :4].astype(np.float64)  # head 1, key_dim 4
    rates = np.array([1.0, 0.01]) / 2
    angles = np.arange(12)[:, None] * rates

    def rotate(x):  # half-split pairs (0, 2) and (1, 3)
        c, s = np.cos(angles), np.sin(angles)
        return np.concatenate([x[:, :2] * c - x[:, 2:] * s, x[:, :2] * s + x[:, 2:] * c], axis=1)

    expected = rotate(q) @ rotate(k).T / 2.0
    causal = np.tril(np.ones((12, 12), dtype=bool))
    assert np.allclose(stretched[0, 0][causal], expected[causal], atol=1e-4)


def test_scaled_rope_with_yarn_scales_the_scores_and_refuses_other_models():
    model = extrapolation_model("rope", train_length=8, depth=8, heads=2, seed=3)
    attention = model.get_layer("attention")
    inputs = np.random.default_rng(1).normal(size=(1, 3, 8)).astype("float32")
    with scaled_rope(model, "rope_pi", 4.0, original_length=8):
        pi = np.asarray(attention.scores(inputs))
    # Each head has two pairs; within 8 steps they turn 1.27 and 0.013 times, so YaRN
    # interpolates the slow pair fully, barely keeps the fast one, and scales the scores.
    with scaled_rope(model, "rope_yarn", 4.0, original_length=8):
        yarn = np.asarray(attention.scores(inputs))
    assert not np.allclose(pi, yarn)
    at_zero = (yarn[..., 0, 0], pi[..., 0, 0])  # position 0: no rotation, only the factor
    assert np.allclose(at_zero[0], at_zero[1] * (0.1 * math.log(4) + 1) ** 2, rtol=1e-5)
    with pytest.raises(ValueError, match="RoPE"):
        with scaled_rope(extrapolation_model("alibi", train_length=8, depth=8, heads=2), "rope_pi", 2.0,
                         original_length=8):
            pass
    tokens = np.ones((4, 8), dtype="int32")
    assert order_accuracy(model, tokens, np.array([0, 1, 0, 1])) == 0.5  # still runs after the block
