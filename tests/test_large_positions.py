"""Every NumPy reference that takes positions, offsets or lengths, at and past 2**24.

float32 holds every integer up to 2**24 and no odd one past it: 2**24 + 1
rounds to 2**24. A reference that casts its positions to float32 anywhere
still passes every test at small positions; here each one is called at
2**24 + 1 (and its neighbours) and compared with exact integers, exact
fractions or mpmath at 40 digits, within the ulp its float64 arithmetic
allows. A float32 position is off by a whole step of the position there,
millions of times the bound.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

import pe_lib
from exact_values import exact_angle_rates, exact_t5_bucket
from float_checks import TRANSCENDENTAL_ULP, assert_within_ulp
from pe_lib.alibi import alibi_block
from pe_lib.longrope import longrope_rates, uses_long_factors
from pe_lib.rope import apply_rope, exact_angle_cos_sin, offset_score, rope_angles
from pe_lib.rope_scaling import dynamic_ntk_rates, dynamic_ntk_scale, scale_from_lengths, yarn_turns
from pe_lib.similarity import offset_distance, offset_similarity
from pe_lib.sinks import window_mask
from pe_lib.t5 import relative_position_bucket
from pe_lib.temperature import query_temperature

BIG = 2**24 + 1  # float32(BIG) == 2**24
AROUND = np.array([2**24 - 1, 2**24, BIG, 2**24 + 2, 2**24 + 3])

mpmath.mp.dps = 40


def test_float32_cannot_hold_the_positions_these_tests_use():
    assert np.float32(BIG) == np.float32(2**24) and np.float64(BIG) == BIG


def test_rope_angles_at_two_to_the_24():
    # the float64 rate within 4 ulp, then one rounding of the product
    angles = rope_angles(AROUND, 8)
    assert_within_ulp(angles, [[p * r for r in exact_angle_rates(8)] for p in AROUND], ulp=TRANSCENDENTAL_ULP + 1)
    assert angles[2, 0] == BIG and angles[3, 0] - angles[2, 0] == 1.0  # rate 1: the positions themselves


def test_apply_rope_at_two_to_the_24():
    x = np.random.default_rng(0).normal(size=(len(AROUND), 8))
    out = apply_rope(x, AROUND)
    expected = np.empty_like(x)
    for row, p in enumerate(AROUND):
        for i, rate in enumerate(exact_angle_rates(8)):
            angle = p * rate
            c, s = mpmath.cos(angle), mpmath.sin(angle)
            a, b = mpmath.mpf(x[row, i]), mpmath.mpf(x[row, i + 4])
            expected[row, i], expected[row, i + 4] = float(a * c - b * s), float(a * s + b * c)
    # the float64 rate is within 4 ulp of the exact one, so the angle within p * 4 ulp of the rate:
    # at most 2**24 * 4 * 2**-53 = 2**-27 radians, times the pair's length
    lengths = np.hypot(x[:, :4], x[:, 4:])
    bound = (2.0**-27 + 8 * 2.0**-53) * np.concatenate([lengths, lengths], axis=1)
    np.testing.assert_array_less(np.abs(out - expected), bound)


def test_exact_angle_cos_sin_at_two_to_the_24():
    """cos and sin of n times the float64 rate, the product itself never rounded."""
    rates = np.array([1.0, 0.01, 1e-4, 0.3])
    cos, sin = exact_angle_cos_sin(AROUND, rates)
    product = [[mpmath.mpf(int(n)) * mpmath.mpf(float(r)) for r in rates] for n in AROUND]
    assert_within_ulp(cos, [[mpmath.cos(a) for a in row] for row in product], ulp=8, of=1.0)
    assert_within_ulp(sin, [[mpmath.sin(a) for a in row] for row in product], ulp=8, of=1.0)


@pytest.mark.parametrize("form", ["causal", "symmetric"])
def test_alibi_block_at_two_to_the_24(form):
    # 8 heads: slopes 2**-1 .. 2**-8, so every product is exact
    block = alibi_block(AROUND, AROUND, 8, form=form)
    for h in range(8):
        for a, i in enumerate(AROUND):
            for b, j in enumerate(AROUND):
                distance = int(i) - int(j)
                if form == "causal" and distance < 0:
                    assert block[h, a, b] < -1e8
                else:
                    assert Fraction(float(block[h, a, b])) == -Fraction(abs(distance), 2 ** (h + 1))


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_buckets_at_two_to_the_24(bidirectional):
    """Offsets around +-2**24 with a max_distance past them, so that they fall in the log range."""
    settings = {"bidirectional": bidirectional, "num_buckets": 64, "max_distance": 2**26}
    offsets = np.concatenate([AROUND, -AROUND, [2**25 + 1, -(2**25 + 1), 2**26 + 1, -(2**26 + 1)]])
    expected = [exact_t5_bucket(int(o), **settings) for o in offsets]
    assert relative_position_bucket(offsets, **settings).tolist() == expected


def test_sinusoidal_rows_at_two_to_the_24_in_float64():
    table = pe_lib.sinusoidal_encoding(3, 6, start=2**24, dtype="float64")
    exact = [[(mpmath.sin if c % 2 == 0 else mpmath.cos)(p * exact_angle_rates(6)[c // 2]) for c in range(6)]
             for p in (2**24, BIG, 2**24 + 2)]
    # the angle within (4 + 1) ulp of its size, 2**24: 5 * 2**-29 radians at most, then 4 ulp of the sine
    np.testing.assert_array_less(np.abs(table - np.array(exact, dtype=float)), 5 * 2.0**-29 + 4 * 2.0**-53)


def test_longrope_switches_to_the_long_factors_one_past_two_to_the_24():
    assert not uses_long_factors(2**24, 2**24) and uses_long_factors(BIG, 2**24)
    short, long = [1.0, 2.0], [4.0, 8.0]
    assert_within_ulp(longrope_rates(4, short, long, 2**24, length=BIG), [r / f for r, f in zip(exact_angle_rates(4), long)],
                      ulp=TRANSCENDENTAL_ULP + 1)
    assert_within_ulp(longrope_rates(4, short, long, 2**24, length=2**24),
                      [r / f for r, f in zip(exact_angle_rates(4), short)], ulp=TRANSCENDENTAL_ULP + 1)


def test_dynamic_ntk_at_two_to_the_24():
    # s n / L - (s - 1) with s = 2, L = 2**24: exactly 1 at n = L, exactly 1 + 2**-23 at n = L + 1
    assert dynamic_ntk_scale(2**24, 2.0, 2**24) == 1.0
    assert dynamic_ntk_scale(BIG, 2.0, 2**24) == 1.0 + 2.0**-23
    grown = mpmath.mpf(1) + mpmath.mpf(2) ** -23
    base = 10000 * grown ** (mpmath.mpf(8) / 6)
    assert_within_ulp(dynamic_ntk_rates(8, 2.0, 2**24, BIG), exact_angle_rates(8, base), ulp=2 * TRANSCENDENTAL_ULP)
    assert not np.array_equal(dynamic_ntk_rates(8, 2.0, 2**24, BIG), dynamic_ntk_rates(8, 2.0, 2**24, 2**24))


def test_lengths_past_two_to_the_24():
    assert scale_from_lengths(BIG, 2**24) == 1.0 + 2.0**-24  # exact: float64 holds 1 + 2**-24
    assert scale_from_lengths(2 * BIG, BIG) == 2.0
    turns = yarn_turns(8, BIG)
    assert_within_ulp(turns, [BIG * r / (2 * mpmath.pi) for r in exact_angle_rates(8)], ulp=TRANSCENDENTAL_ULP + 2)


def test_window_mask_at_two_to_the_24():
    keys = np.array([0, 1, 2**24 - 2, 2**24 - 1, 2**24, BIG, 2**24 + 2])
    got = window_mask([BIG], keys, window=3, sink_tokens=1)
    # j <= i and (i - j < 3 or j < 1): the sink, then 2**24 - 1 .. 2**24 + 1
    assert got.tolist() == [[True, False, False, True, True, True, False]]


def test_query_temperature_at_two_to_the_24():
    positions = np.array([2**24 - 1, 2**24, BIG, 2**24 + 2])
    got = query_temperature("llama4", positions, floor_scale=2, attn_scale=0.1)
    exact = [1 + mpmath.mpf("0.1") * mpmath.log(1 + (int(p) + 1) // 2) for p in positions]
    assert_within_ulp(got, exact, ulp=TRANSCENDENTAL_ULP + 2)
    assert got[1] != got[2]  # 2**24 + 1 and 2**24 + 2 give floors 2**23 and 2**23 + 1
    lengths = query_temperature("log_length", positions, trained_length=2**24)
    assert lengths[:1].tolist() == [1.0]  # 2**24 keys: not past the trained length
    assert_within_ulp(lengths[1:], [mpmath.log(int(p) + 1) / mpmath.log(2**24) for p in positions[1:]],
                      ulp=2 * TRANSCENDENTAL_ULP)


def test_offset_similarity_distance_and_score_at_two_to_the_24():
    offsets = np.array([2**24, BIG, -BIG])
    rates = exact_angle_rates(4)
    exact_similarity = [mpmath.fsum(mpmath.cos(int(k) * r) for r in rates) for k in offsets]
    exact_distance = [2 * mpmath.sqrt(mpmath.fsum(mpmath.sin(int(k) * r / 2) ** 2 for r in rates)) for k in offsets]
    # the angle k * rate within 2**-27 radians (the rate's 4 ulp times k), then cos or sin within 4 ulp
    bound = 2 * (2.0**-27 + 4 * 2.0**-53)
    np.testing.assert_array_less(np.abs(offset_similarity(offsets, 4) - np.array(exact_similarity, float)), bound)
    np.testing.assert_array_less(np.abs(offset_distance(offsets, 4) - np.array(exact_distance, float)), 2 * bound)
    np.testing.assert_array_less(np.abs(offset_score(offsets, 4) - np.array(exact_similarity, float) / 2), bound)
    # 2**24 and 2**24 + 1 are told apart: the rate-1 pair alone moves by cos(2**24 + 1) - cos(2**24)
    assert abs(offset_similarity([BIG], 4)[0] - offset_similarity([2**24], 4)[0]) > 1e6 * bound
