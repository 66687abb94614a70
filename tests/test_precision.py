"""float32_angle_encoding (the wrong way), column_errors and angle_errors (the measurements)."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib import angle_rates, sinusoidal_encoding
from pe_lib.course.lessons.precision import (
    angle_errors,
    column_errors,
    float32_angle_encoding,
    float32_angle_errors,
    round_to_format,
    rounded_angles,
    rounded_rope_scores,
)

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


FORMAT_TYPES = {"float32": np.float32, "float16": np.float16}


def _format_types():
    import ml_dtypes

    return {**FORMAT_TYPES, "bfloat16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("number_format", ["float32", "bfloat16", "float16"])
def test_round_to_format_matches_the_format_itself(number_format):
    # Every magnitude from subnormal to past the largest value, and whole numbers.
    rng = np.random.default_rng(5)
    values = rng.normal(size=20_000) * 10.0 ** rng.integers(-45, 40, size=20_000)
    values = np.concatenate([values, np.arange(-70_000, 70_000), [0.0, 65_519.0, 65_520.0]])
    with np.errstate(over="ignore"):
        expected = values.astype(_format_types()[number_format]).astype(np.float64)
    np.testing.assert_array_equal(round_to_format(values, number_format), expected)


def test_whole_numbers_end_at_two_to_the_significand():
    whole = np.arange(3000)
    for number_format, last in (("bfloat16", 256), ("float16", 2048)):
        held = round_to_format(whole, number_format) == whole
        assert held[: last + 1].all() and not held[last + 1]


def test_float64_angles_are_position_times_rate():
    positions = np.array([[0, 7], [1000, 123_456]])
    expected = positions[..., None] * angle_rates(8)[:4]
    np.testing.assert_array_equal(rounded_angles(positions, 8, "float64"), expected)


def test_angle_errors_in_float32_agree_with_the_exact_measurement():
    for start in (0, 999, 10**6, 2**24 - 40):
        np.testing.assert_allclose(
            angle_errors(32, 16, "float32", start=start),
            float32_angle_errors(32, 16, start=start),
            rtol=2.0**-40, atol=(start + 32) * 2.0**-52,
        )


@pytest.mark.parametrize("number_format", ["bfloat16", "float16"])
def test_angle_errors_against_exact_rationals(number_format):
    # The angle formed in the format by its own type, and the true angle, as fractions.
    from fractions import Fraction

    dtype = _format_types()[number_format]
    start, length, depth = 990, 20, 6
    expected = []
    for rate in angle_rates(depth):
        worst = max(
            abs(Fraction(float(dtype(dtype(p) * dtype(rate)))) - Fraction(p) * Fraction(float(rate)))
            for p in range(start, start + length)
        )
        expected += [float(worst)] * 2
    np.testing.assert_allclose(angle_errors(length, depth, number_format, start=start), expected, rtol=2.0**-40)


def test_float16_overflows_past_its_largest_value():
    assert np.isfinite(angle_errors(1, 4, "float16", start=65_504)).all()
    assert np.isinf(angle_errors(1, 4, "float16", start=65_520)).all()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: round_to_format([1.0], "int8"), ValueError, "number_format"),
        (lambda: rounded_angles([1.5], 4, "float32"), TypeError, "positions"),
        (lambda: rounded_angles([1], 4, "float8"), ValueError, "number_format"),
        (lambda: angle_errors(0, 4, "float16"), ValueError, "length"),
        (lambda: angle_errors(2, 4, "float64"), ValueError, "number_format"),
    ],
)
def test_new_measurements_name_the_bad_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_rounded_rope_scores_in_float64_are_complex_rotations():
    # Independent reference: pair i as the complex number x_i + j x_{i + d/2},
    # turned by e^{j p w_i}; the score is the real part of q conj(k), over sqrt(d).
    rng = np.random.default_rng(4)
    queries, keys = rng.normal(size=(2, 6, 8))
    query_at, key_at = rng.integers(0, 5000, size=(2, 6))
    rates = 10000.0 ** (-np.arange(4) / 4)
    q = (queries[:, :4] + 1j * queries[:, 4:]) * np.exp(1j * np.outer(query_at, rates))
    k = (keys[:, :4] + 1j * keys[:, 4:]) * np.exp(1j * np.outer(key_at, rates))
    expected = (q * np.conj(k)).real.sum(axis=1) / np.sqrt(8)
    found = rounded_rope_scores(queries, keys, query_at, key_at, "float64")
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-9)


def test_rounded_rope_scores_cast_what_they_are_told():
    rng = np.random.default_rng(5)
    queries, keys = rng.normal(size=(2, 50, 16))
    at = np.arange(50)
    exact = rounded_rope_scores(queries, keys, at + 300, at, "float64")
    # small positions: float32 angles move a score by far less than bfloat16 cosines
    f32 = np.abs(rounded_rope_scores(queries, keys, at + 300, at, "float32") - exact).max()
    cast = np.abs(rounded_rope_scores(queries, keys, at + 300, at, "float64", stored_in="bfloat16") - exact).max()
    held = np.abs(rounded_rope_scores(queries, keys, at + 300, at, "float64", vectors_in="bfloat16") - exact).max()
    assert f32 < 1e-4 < cast < 0.2 and 1e-4 < held < 0.2


def test_rounded_rope_scores_refuse_mismatched_shapes():
    with pytest.raises(ValueError, match="queries and keys"):
        rounded_rope_scores(np.ones((2, 4)), np.ones((3, 4)), [0, 1], [0, 1], "float64")
