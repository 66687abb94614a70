"""float32_angle_encoding (the wrong way) and column_errors (the measurement)."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib import angle_rates, sinusoidal_encoding
from pe_lib.course.lessons.precision import column_errors, float32_angle_encoding, float32_angle_errors

depths = st.integers(min_value=1, max_value=64)
# Below 2**24 every position is a float32 integer, so only the angle is rounded.
starts = st.integers(min_value=0, max_value=2**24 - 100)


def test_first_row_is_zero_one_repeated_and_dtype_is_float32():
    table = float32_angle_encoding(3, 5)
    assert table.dtype == np.float32
    assert table.shape == (3, 5)
    assert table[0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_small_positions_agree_with_sinusoidal_encoding():
    np.testing.assert_allclose(float32_angle_encoding(50, 16), sinusoidal_encoding(50, 16), rtol=0, atol=1e-5)


def test_error_of_the_float32_angle_by_hand():
    # Depth 64, column 2: the rate 10000**(-1/32) rounds to float32 and the
    # angle 10**6 * rate is then rounded to a float32 step of 2**-4.
    rate = np.float32(10000.0 ** (-1 / 32))
    angle = np.float32(10**6) * rate
    with mpmath.workdps(30):
        exact = mpmath.sin(mpmath.mpf(10**6) / mpmath.power(10000, mpmath.mpf(1) / 32))
    expected_error = abs(float(np.sin(np.float64(angle))) - float(exact))
    errors = column_errors(float32_angle_encoding(1, 64, start=10**6), start=10**6)
    assert errors[2] == pytest.approx(expected_error, abs=1e-6)
    assert errors[2] > 0.01


def test_rate_one_column_stays_accurate():
    # Column 0 has rate exactly 1: integer times 1 is exact in float32, so only
    # the float32 sine's own rounding remains, even at position ten million.
    errors = column_errors(float32_angle_encoding(64, 8, start=10**7), start=10**7)
    assert errors[0] < 2.0**-23
    assert errors[2] > 1e-2


def test_error_grows_with_position():
    worst = [column_errors(float32_angle_encoding(64, 64, start=s), start=s).max() for s in (10**3, 10**5, 10**7)]
    assert worst[0] < 1e-3 < worst[1] < 1e-1 < worst[2]


@given(st.integers(min_value=1, max_value=16), depths, starts)
def test_float32_angle_error_is_bounded_by_the_angle_rounding(length, depth, start):
    # fl(p * fl(w)) is within 2 * 2**-24 * p * w of p * w (plus a hair);
    # the float32 sine adds a few float32 steps of its own.
    errors = column_errors(float32_angle_encoding(length, depth, start=start), start=start)
    rates = np.repeat(angle_rates(depth), 2)[:depth]
    bound = 1.01 * (start + length) * rates * 2.0**-23 + 2.0**-21
    assert np.all(errors <= bound)


@given(st.integers(min_value=1, max_value=16), depths, st.integers(min_value=0, max_value=10**7))
def test_sinusoidal_encoding_stays_within_half_a_float32_step(length, depth, start):
    errors = column_errors(sinusoidal_encoding(length, depth, start=start), start=start)
    # Half a float32 step for values up to 1, plus the float64 angle error
    # that reference and table may each carry.
    assert np.all(errors <= 2.0**-25 + (start + length) * 2.0**-50)


def test_errors_of_the_reference_itself_are_zero():
    reference = sinusoidal_encoding(20, 6, start=1000, dtype="float64")
    assert column_errors(reference, start=1000).max() < 1e-12


def test_base_is_passed_to_the_reference():
    table = sinusoidal_encoding(8, 6, base=50.0)
    assert column_errors(table, base=50.0).max() < 1e-7
    assert column_errors(table).max() > 1e-2


def test_empty_table_has_zero_errors():
    assert column_errors(np.zeros((0, 4))).tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: float32_angle_encoding(-1, 4), ValueError, "length must be >= 0, got -1"),
        (lambda: float32_angle_encoding(4, 0), ValueError, "depth must be >= 1, got 0"),
        (lambda: float32_angle_encoding(4, 4, start=-2), ValueError, "start must be >= 0, got -2"),
        (lambda: float32_angle_encoding(4, 4, start=2.0), TypeError, r"start must be an integer, got 2\.0"),
        (lambda: float32_angle_encoding(4, 4, base=0), ValueError, "base must be a finite number > 0, got 0"),
        (lambda: column_errors(np.zeros(4)), ValueError, r"table must be 2-D \(positions, depth\), got shape \(4,\)"),
        (lambda: column_errors(np.zeros((3, 0))), ValueError, r"table must have at least one column, got shape \(3, 0\)"),
        (lambda: column_errors([[np.inf, 1.0]]), ValueError, "table must be finite"),
        (lambda: column_errors(np.zeros((2, 2)), start=-1), ValueError, "start must be >= 0, got -1"),
    ],
)
def test_bad_input_names_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_float32_angle_errors_against_exact_rationals():
    # The float32 angle and the true angle as exact fractions: p * w with w the
    # float64 rate, and the float32 product of float32(p) and float32(w).
    from fractions import Fraction

    start, length, depth = 999_990, 10, 6
    rates = angle_rates(depth)
    expected = []
    for rate in rates:
        worst = max(
            abs(Fraction(float(np.float32(p) * np.float32(rate))) - Fraction(p) * Fraction(float(rate)))
            for p in range(start, start + length)
        )
        expected += [float(worst)] * 2
    got = float32_angle_errors(length, depth, start=start)
    np.testing.assert_allclose(got, expected, rtol=2.0**-52, atol=0)
    assert got[0] == got[1] == 0.0  # rate 1: an integer times 1 is exact
    assert got[2] > 1e-3


def test_float32_angle_errors_bound_the_sine_errors():
    start = 10**6
    angles = float32_angle_errors(32, 16, start=start)
    sines = column_errors(float32_angle_encoding(32, 16, start=start), start=start)
    # |sin a - sin b| <= |a - b|, plus the float32 sine's own rounding
    assert np.all(sines <= angles + 2.0**-21)


def test_float32_angle_errors_refuse_positions_past_two_to_the_24():
    with pytest.raises(ValueError, match="start"):
        float32_angle_errors(2, 4, start=2**24 - 1)
