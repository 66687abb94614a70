"""Context extension for RoPE against independent values.

The references below are written from the published formulas and configurations
in mpmath at 50 digits, branch by branch as the papers and the peers' code state
them (Hugging Face's ``_compute_*_parameters``, the YaRN authors'
``find_correction_range``), never from ``pe_lib.rope_scaling``'s own code.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib
from pe_lib.methods import get_method
from pe_lib.rope_scaling import (
    SCALINGS,
    attention_factor,
    dynamic_ntk_rates,
    dynamic_ntk_scale,
    interpolation_rates,
    llama3_rates,
    ntk_base,
    ntk_rates,
    scale_from_lengths,
    scaled_rates,
    split_options,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_paper_rates,
    yarn_ramp,
    yarn_rates,
    yarn_turns,
)

mpmath.mp.dps = 50
mpf = mpmath.mpf

depths = st.integers(min_value=2, max_value=64).map(lambda half: 2 * half)
scales = st.floats(min_value=1.0, max_value=64.0)


# --- independent references ------------------------------------------------------------------


def theta(i, depth, base):
    """theta_i = base^(-2i/d), exactly enough."""
    return mpmath.power(mpf(base), -mpf(2 * i) / depth)


def yarn_shipped(depth, scale, length, base=10000.0, beta_fast=32, beta_slow=1, truncate=True):
    """YaRN as the authors' code and Hugging Face compute it, in mpmath.

    find_correction_dim(r) = d ln(L / (2 pi r)) / (2 ln base); low from beta_fast rounded
    down, high from beta_slow rounded up (when truncating), clipped to [0, d - 1];
    the extrapolation factor is 1 - clamp((i - low) / (high - low), 0, 1) and the rate
    interpolation * (1 - factor) + extrapolation * factor.
    """
    def correction_dim(turns):
        return depth * mpmath.log(mpf(length) / (turns * 2 * mpmath.pi)) / (2 * mpmath.log(base))

    low, high = correction_dim(mpf(beta_fast)), correction_dim(mpf(beta_slow))
    if truncate:
        low, high = mpmath.floor(low), mpmath.ceil(high)
    low, high = max(low, 0), min(high, depth - 1)
    if low == high:
        high += mpf("0.001")
    rates = []
    for i in range(depth // 2):
        extrapolation = 1 - min(mpf(1), max(mpf(0), (i - low) / (high - low)))
        rate = theta(i, depth, base)
        rates.append(rate / scale * (1 - extrapolation) + rate * extrapolation)
    return rates


def yarn_paper(depth, scale, length, base=10000.0, alpha=1, beta=32):
    """The paper's eq.: gamma(r) = clamp((r - alpha) / (beta - alpha)), r = L / lambda."""
    rates = []
    for i in range(depth // 2):
        rate = theta(i, depth, base)
        turns = length / (2 * mpmath.pi / rate)
        gamma = min(mpf(1), max(mpf(0), (turns - alpha) / mpf(beta - alpha)))
        rates.append((1 - gamma) * rate / scale + gamma * rate)
    return rates


def llama3(depth, factor, old_context, base, low_freq_factor=1, high_freq_factor=4):
    """Llama 3.1's three bands, by wavelength, as Hugging Face's _compute_llama3_parameters reads."""
    low_wavelength, high_wavelength = mpf(old_context) / low_freq_factor, mpf(old_context) / high_freq_factor
    rates = []
    for i in range(depth // 2):
        rate = theta(i, depth, base)
        wavelength = 2 * mpmath.pi / rate
        if wavelength < high_wavelength:
            rates.append(rate)
        elif wavelength > low_wavelength:
            rates.append(rate / factor)
        else:
            smooth = (old_context / wavelength - low_freq_factor) / mpf(high_freq_factor - low_freq_factor)
            rates.append((1 - smooth) * rate / factor + smooth * rate)
    return rates


def dynamic_ntk(depth, factor, max_positions, seq_len, base):
    """Hugging Face's dynamic NTK: base * (factor seq_len / L - (factor - 1))^(d/(d-2)), seq_len >= L."""
    seq_len = max(seq_len, max_positions)
    new_base = mpf(base) * mpmath.power(mpf(factor) * seq_len / max_positions - (factor - 1),
                                        mpf(depth) / (depth - 2))
    return [theta(i, depth, new_base) for i in range(depth // 2)]


def assert_rates(actual, expected, rtol=1e-14):
    expected = np.array([float(value) for value in expected])
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0)


# --- YaRN as shipped ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("depth", "base", "scale", "length"),
    [(128, 10000.0, 4.0, 4096), (64, 10000.0, 8.0, 2048), (128, 500000.0, 32.0, 8192),
     (128, 10000.0, 2.0, 2048), (64, 500000.0, 16.0, 4096), (8, 10000.0, 4.0, 16), (8, 10000.0, 4.0, 2048)],
)
def test_yarn_is_what_its_code_and_hugging_face_compute(depth, base, scale, length):
    assert_rates(yarn_rates(depth, scale, length, base=base), yarn_shipped(depth, scale, length, base))
    assert_rates(yarn_rates(depth, scale, length, base=base, truncate=False),
                 yarn_shipped(depth, scale, length, base, truncate=False))
    assert_rates(yarn_rates(depth, scale, length, base=base, beta_fast=16.0, beta_slow=2.0),
                 yarn_shipped(depth, scale, length, base, beta_fast=16, beta_slow=2))


def test_yarn_values_measured_with_the_peers():
    # d=128, base 1e4, s=4, L=4096: pair 31 is 0.007884 in Hugging Face's YaRN, 0.004711 in the paper's eq.
    assert yarn_rates(128, 4.0, 4096)[31] == pytest.approx(0.007884, abs=5e-7)
    assert yarn_paper_rates(128, 4.0, 4096)[31] == pytest.approx(0.004711, abs=5e-7)
    # d=64, s=8, L=2048: pair 14 differs by a factor of 2.3.
    assert yarn_rates(64, 8.0, 2048)[14] / yarn_paper_rates(64, 8.0, 2048)[14] == pytest.approx(2.29, abs=0.005)
    # The RoPE chapter's experiment (d=8, L=16, s=4): the shipped YaRN keeps pair 0, the paper cuts it.
    assert yarn_rates(8, 4.0, 16)[0] == 1.0
    assert yarn_paper_rates(8, 4.0, 16)[0] == pytest.approx(0.2874, abs=5e-5)


def test_yarn_correction_range_by_hand():
    # d=128, L=4096: the pair turning 32 times is 64 ln(4096 / 64 pi) / ln 1e4 = 20.94...,
    # the pair turning once 64 ln(4096 / 2 pi) / ln 1e4 = 45.03...
    low = 64 * math.log(4096 / (64 * math.pi)) / math.log(1e4)
    high = 64 * math.log(4096 / (2 * math.pi)) / math.log(1e4)
    assert (20 < low < 21) and (45 < high < 46)
    assert yarn_correction_range(128, 4096) == (20.0, 46.0)
    assert yarn_correction_range(128, 4096, truncate=False) == pytest.approx((low, high), rel=1e-14)
    # A short context: the fast end falls below pair 0 and is clipped there.
    assert yarn_correction_range(8, 16) == (0.0, 1.0)


def test_both_yarns_keep_and_interpolate_the_same_pairs():
    for depth, scale, length in [(128, 4.0, 4096), (64, 8.0, 2048), (128, 16.0, 32768)]:
        shipped, paper = yarn_rates(depth, scale, length), yarn_paper_rates(depth, scale, length)
        plain = pe_lib.angle_rates(depth)
        np.testing.assert_array_equal(shipped == plain, paper == plain)
        np.testing.assert_array_equal(np.isclose(shipped, plain / scale, rtol=1e-15),
                                      np.isclose(paper, plain / scale, rtol=1e-15))


@pytest.mark.parametrize(("alpha", "beta"), [(1.0, 32.0), (2.0, 16.0), (0.5, 8.0)])
def test_yarn_paper_is_the_papers_equation(alpha, beta):
    assert_rates(yarn_paper_rates(64, 8.0, 2048, alpha=alpha, beta=beta), yarn_paper(64, 8.0, 2048, 10000.0, alpha, beta))


def test_options_reach_the_rates():
    # Rate 2 of d=8, s=4, L=2048 with alpha=2, beta=16: 0.003175 (0.003047 with the defaults).
    assert scaled_rates("rope_yarn_paper", 8, scale=4.0, original_length=2048, alpha=2.0, beta=16.0)[2] == (
        pytest.approx(0.003175, abs=5e-7))
    assert scaled_rates("rope_yarn_paper", 8, scale=4.0, original_length=2048)[2] == pytest.approx(0.003047, abs=5e-7)
    got = scaled_rates("rope_yarn", 128, scale=4.0, original_length=4096, beta_fast=64.0, beta_slow=2.0, truncate=False)
    assert_rates(got, yarn_shipped(128, 4.0, 4096, beta_fast=64, beta_slow=2, truncate=False))
    got = scaled_rates("rope_llama3", 128, scale=8.0, original_length=8192, base=500000.0,
                       low_freq_factor=2.0, high_freq_factor=8.0)
    assert_rates(got, llama3(128, 8, 8192, 500000.0, 2, 8))


def test_yarn_ramp_by_hand():
    assert yarn_ramp([0.0, 1.0, 2.0, 3.0, 9.0], alpha=1.0, beta=5.0).tolist() == [0.0, 0.0, 0.25, 0.5, 1.0]
    assert yarn_turns(8, 2048)[0] == pytest.approx(2048 / (2 * math.pi), rel=1e-15)


# --- Llama 3 ------------------------------------------------------------------------------------


def test_llama3_is_hugging_faces_three_bands_for_llama_31_8b():
    # Llama-3.1-8B: rope_theta 500000, head_dim 128, rope_scaling {factor 8, low_freq_factor 1,
    # high_freq_factor 4, original_max_position_embeddings 8192}.
    rates = llama3_rates(128, 8.0, 8192, base=500000.0)
    assert_rates(rates, llama3(128, 8, 8192, 500000.0))
    plain = pe_lib.angle_rates(128, base=500000.0)
    # Wavelength 2 pi 500000^(i/64) < 8192/4 up to i = 28, > 8192 from i = 35 on.
    kept = np.flatnonzero(rates == plain).tolist()
    divided = np.flatnonzero(np.isclose(rates, plain / 8, rtol=1e-15)).tolist()
    assert kept == list(range(29)) and divided == list(range(35, 64))


@given(depths.filter(lambda depth: depth >= 4), scales, st.integers(min_value=4, max_value=10**5))
def test_llama3_rates_lie_between_interpolation_and_none(depth, scale, length):
    rates, plain = llama3_rates(depth, scale, length), pe_lib.angle_rates(depth)
    assert np.all(rates <= plain * (1 + 1e-15)) and np.all(rates >= plain / scale * (1 - 1e-15))
    assert np.all(np.diff(rates / plain) <= 1e-15)  # slower pairs keep less of their rate


# --- dynamic NTK ------------------------------------------------------------------------------


@pytest.mark.parametrize(("factor", "trained", "length"),
                         [(2.0, 4096, 4096), (2.0, 4096, 8192), (2.0, 4096, 131072), (1.0, 2048, 3000),
                          (4.0, 8192, 100000)])
def test_dynamic_ntk_is_hugging_faces(factor, trained, length):
    for depth, base in [(128, 10000.0), (64, 500000.0)]:
        got = dynamic_ntk_rates(depth, factor, trained, length, base=base)
        assert_rates(got, dynamic_ntk(depth, factor, trained, length, base), rtol=1e-13)


def test_dynamic_ntk_equals_static_ntk_at_one_length_only():
    static = ntk_rates(64, 3.0)
    assert dynamic_ntk_scale(8192, 2.0, 4096) == 3.0  # 2 * 8192 / 4096 - 1
    np.testing.assert_array_equal(dynamic_ntk_rates(64, 2.0, 4096, 8192), static)
    assert not np.allclose(dynamic_ntk_rates(64, 2.0, 4096, 6000), static)
    np.testing.assert_array_equal(dynamic_ntk_rates(64, 2.0, 4096, 100), pe_lib.angle_rates(64))
    # The fastest pair is kept at every length (keras-hub's "dynamic" divides it too).
    assert dynamic_ntk_rates(64, 2.0, 4096, 131072)[0] == 1.0


# --- position interpolation and NTK-aware scaling --------------------------------------------


@given(depths, scales, st.integers(min_value=2, max_value=4096))
def test_interpolation_maps_s_times_the_trained_length_into_the_trained_angles(depth, scale, trained):
    longest = math.floor(scale * trained) - 1
    reached = longest * interpolation_rates(depth, scale)
    assert np.all(reached <= trained * pe_lib.angle_rates(depth) * (1 + 1e-12))


@given(depths.filter(lambda depth: depth >= 4), scales)
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_s(depth, scale):
    rates, plain = ntk_rates(depth, scale), pe_lib.angle_rates(depth)
    assert rates[0] == plain[0] == 1.0
    np.testing.assert_allclose(rates[-1], plain[-1] / scale, rtol=1e-12)


def test_ntk_base_by_hand():
    assert ntk_base(128, 4.0) == pytest.approx(10000 * 4 ** (64 / 63), rel=1e-14)


def test_large_bases_are_accurate_to_float64():
    # base 5e5, d=128: every rate within a few float64 steps of the exact one.
    for method, options in [("rope_pi", {}), ("rope_ntk", {}), ("rope_yarn", {"original_length": 8192}),
                            ("rope_llama3", {"original_length": 8192})]:
        got = scaled_rates(method, 128, scale=8.0, base=500000.0, **options)
        exact = {"rope_pi": [theta(i, 128, 500000.0) / 8 for i in range(64)],
                 "rope_ntk": [theta(i, 128, mpf(500000) * mpmath.power(8, mpf(128) / 126)) for i in range(64)],
                 "rope_yarn": yarn_shipped(128, 8, 8192, 500000.0),
                 "rope_llama3": llama3(128, 8, 8192, 500000.0)}[method]
        assert_rates(got, exact, rtol=2e-15 * 64)


# --- the attention factor ---------------------------------------------------------------------


def test_attention_factor_by_hand():
    assert yarn_attention_factor(1.0) == 1.0
    assert yarn_attention_factor(math.e**2) == pytest.approx(1.2, rel=1e-15)
    assert attention_factor("rope_yarn", 4.0) == pytest.approx(1.1386294361119891, rel=1e-15)
    assert attention_factor("rope_yarn_paper", 4.0) == pytest.approx(1.1386294361119891, rel=1e-15)
    for method in ("rope", "rope_pi", "rope_ntk", "rope_dynamic", "rope_llama3"):
        assert attention_factor(method, 8.0) == 1.0
    assert attention_factor("rope_yarn", 4.0, attention_factor=0.75) == 0.75
    # DeepSeek's mscale 0.707 and mscale_all_dim 1 at s = 40: (0.0707 ln 40 + 1) / (0.1 ln 40 + 1)
    expected = (0.0707 * math.log(40) + 1) / (0.1 * math.log(40) + 1)
    assert yarn_attention_factor(40.0, mscale=0.707, mscale_all_dim=1.0) == pytest.approx(expected, rel=1e-14)
    assert yarn_attention_factor(40.0, mscale=1.0, mscale_all_dim=1.0) == 1.0


def test_scale_from_lengths_is_the_ratio():
    assert scale_from_lengths(163840, 4096) == 40.0
    assert scale_from_lengths(4096, 4096) == 1.0


def test_scale_one_changes_nothing():
    plain = pe_lib.angle_rates(16)
    for method in ("rope", *SCALINGS):
        extra = {"length": 64} if method == "rope_dynamic" else {}
        np.testing.assert_allclose(scaled_rates(method, 16, scale=1.0, original_length=64, **extra), plain, rtol=1e-15)


def test_every_scaling_is_registered_with_its_reference():
    for method in SCALINGS:
        entry = get_method(method)
        assert entry.acts_on == "queries and keys" and entry.reference.__module__ == "pe_lib.rope_scaling"


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: interpolation_rates(8, 0.5), ValueError, ["scale", "0.5"]),
        (lambda: ntk_rates(2, 2.0), ValueError, ["depth", "2"]),
        (lambda: yarn_rates(8, 2.0, 0), ValueError, ["original_length", "0"]),
        (lambda: yarn_rates(8, 2.0, 64, beta_fast=1.0, beta_slow=4.0), ValueError, ["beta_fast", "beta_slow"]),
        (lambda: yarn_rates(8, 2.0, 64, truncate=1), TypeError, ["truncate", "1"]),
        (lambda: yarn_ramp([1.0], alpha=4.0, beta=2.0), ValueError, ["beta", "alpha"]),
        (lambda: llama3_rates(8, 2.0, 64, low_freq_factor=4.0, high_freq_factor=1.0), ValueError,
         ["high_freq_factor", "low_freq_factor"]),
        (lambda: scaled_rates("rope_yarn", 8, scale=2.0), ValueError, ["original_length"]),
        (lambda: scaled_rates("rope_dynamic", 8, scale=2.0, original_length=16), ValueError, ["length"]),
        (lambda: scaled_rates("rope_pi", 8, scale=2.0, length=16), ValueError, ["length", "rope_dynamic"]),
        (lambda: scaled_rates("rope_yarn", 8, scale=2.0, original_length=16, alpha=2.0), ValueError,
         ["alpha", "rope_yarn", "beta_fast"]),
        (lambda: scaled_rates("alibi", 8), ValueError, ["method", "'alibi'"]),
        (lambda: dynamic_ntk_scale(0, 2.0, 16), ValueError, ["length", "0"]),
        (lambda: yarn_attention_factor(4.0, mscale=1.0), ValueError, ["mscale", "mscale_all_dim"]),
        (lambda: attention_factor("rope_pi", 4.0, mscale=1.0, mscale_all_dim=1.0), ValueError,
         ["mscale", "rope_pi"]),
        (lambda: attention_factor("rope_yarn", 4.0, attention_factor=-1.0), ValueError, ["attention_factor", "-1.0"]),
        (lambda: scale_from_lengths(1000, 4096), ValueError, ["max_length", "1000", "4096"]),
        (lambda: split_options("rope_llama3", {"beta_fast": 1.0}), ValueError, ["beta_fast", "rope_llama3"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    for word in words:
        assert word in str(raised.value)
