"""sinusoidal_encoding against hand-checkable values, a high-precision reference and properties."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib import interleaved_to_half_split, sine_and_cosine_counts, sinusoidal_encoding

lengths = st.integers(min_value=1, max_value=40)
depths = st.integers(min_value=1, max_value=48)
even_depths = st.integers(min_value=1, max_value=24).map(lambda half: 2 * half)
starts = st.integers(min_value=0, max_value=10**6)
bases = st.floats(min_value=2.0, max_value=1e6)


def reference_row(position: int, depth: int, base: float = 10000.0) -> list[float]:
    """One row computed with 40 significant digits, independently of pe_lib."""
    with mpmath.workdps(40):
        row = []
        for column in range(depth):
            pair = column // 2
            angle = mpmath.mpf(position) / mpmath.power(mpmath.mpf(base), mpmath.mpf(2 * pair) / depth)
            row.append(float(mpmath.sin(angle) if column % 2 == 0 else mpmath.cos(angle)))
        return row


def assert_correctly_rounded(table: np.ndarray, reference: np.ndarray, last_position: int) -> None:
    """Every float32 entry is the exact value rounded to float32, up to the float64 angle error.

    An angle near ``last_position`` radians carries an absolute float64 error of
    about ``last_position * 2**-53``; that is far below a float32 step except
    for values very close to zero.
    """
    half_spacing = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64) / 2
    allowed = half_spacing + last_position * 2.0**-51
    error = np.abs(table.astype(np.float64) - reference)
    worst = np.unravel_index(np.argmax(error - allowed), error.shape)
    assert np.all(error <= allowed), f"entry {worst}: error {error[worst]:.3g} > allowed {allowed[worst]:.3g}"


def test_position_zero_is_zero_one_repeated():
    assert sinusoidal_encoding(1, 10)[0].tolist() == [0.0, 1.0] * 5


def test_depth_four_table_checkable_by_hand():
    # depth 4: rates 1 and 10000**(-2/4) = 1/100.
    expected = [
        [0.0, 1.0, 0.0, 1.0],
        [0.841471, 0.540302, 0.010000, 0.999950],
        [0.909297, -0.416147, 0.019999, 0.999800],
        [0.141120, -0.989992, 0.029996, 0.999550],
    ]
    np.testing.assert_allclose(sinusoidal_encoding(4, 4), expected, atol=1e-6)


def test_depth_six_position_three():
    # The published row ends 0.99997; cos(3 / 10000**(4/6)) = 0.9999791 rounds to 0.99998.
    expected = [0.14112, -0.98999, 0.13880, 0.99032, 0.00646, 0.99998]
    np.testing.assert_allclose(sinusoidal_encoding(4, 6)[3], expected, atol=5e-6)


@pytest.mark.parametrize(
    ("start", "depth", "base"),
    [(0, 64, 10000.0), (999_950, 64, 10000.0), (123_456, 33, 500.0), (10**6 - 20, 512, 10000.0)],
)
def test_correctly_rounded_against_40_digit_reference(start, depth, base):
    length = 21
    table = sinusoidal_encoding(length, depth, start=start, base=base)
    reference = np.array([reference_row(start + row, depth, base) for row in range(length)])
    assert_correctly_rounded(table, reference, start + length)
    assert np.abs(table - reference).max() <= 2.0**-25


def test_float64_table_is_as_accurate_as_its_float64_angles():
    table = sinusoidal_encoding(5, 16, start=10**6, dtype="float64")
    reference = np.array([reference_row(10**6 + row, 16) for row in range(5)])
    np.testing.assert_allclose(table, reference, rtol=0, atol=(10**6 + 5) * 2.0**-51)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", np.float32])
def test_dtype_is_respected(dtype):
    assert sinusoidal_encoding(3, 8, dtype=dtype).dtype == np.dtype(dtype)


@pytest.mark.parametrize("depth", [1, 2, 5, 7])
def test_odd_and_small_depths(depth):
    table = sinusoidal_encoding(9, depth)
    sines, cosines = sine_and_cosine_counts(depth)
    assert table.shape == (9, depth)
    assert (sines, cosines) == (math.ceil(depth / 2), depth // 2)
    # The last column is a sine exactly when the depth is odd.
    last_pair = (depth - 1) // 2
    last = np.sin(np.arange(9) / 10000 ** (2 * last_pair / depth))
    if depth % 2:
        np.testing.assert_allclose(table[:, -1], last, atol=1e-7)
    else:
        np.testing.assert_allclose(table[:, -1], np.cos(np.arange(9) / 10000 ** (2 * last_pair / depth)), atol=1e-7)


def test_zero_length_gives_an_empty_table():
    assert sinusoidal_encoding(0, 6).shape == (0, 6)


def test_concatenated_layout_puts_sines_first():
    table = sinusoidal_encoding(3, 6, layout="half-split")
    rates = 10000.0 ** (-np.arange(3) * 2 / 6)
    angles = np.arange(3)[:, None] * rates
    np.testing.assert_allclose(table, np.hstack([np.sin(angles), np.cos(angles)]), atol=1e-7)


@given(lengths, depths, starts, bases)
def test_values_lie_in_the_unit_interval(length, depth, start, base):
    table = sinusoidal_encoding(length, depth, start=start, base=base)
    assert np.all(np.abs(table) <= 1.0)


@given(lengths, even_depths, starts)
def test_squared_norm_is_half_the_depth(length, depth, start):
    table = sinusoidal_encoding(length, depth, start=start, dtype="float64")
    np.testing.assert_allclose(np.sum(table**2, axis=1), depth / 2, rtol=1e-12)


@given(lengths, depths, starts)
def test_layouts_are_a_column_permutation_of_each_other(length, depth, start):
    interleaved = sinusoidal_encoding(length, depth, start=start)
    concatenated = sinusoidal_encoding(length, depth, start=start, layout="half-split")
    np.testing.assert_array_equal(interleaved[:, interleaved_to_half_split(depth)], concatenated)


@given(lengths, depths, st.integers(min_value=0, max_value=5000), st.integers(min_value=0, max_value=300))
def test_start_shifts_the_rows(length, depth, start, shift):
    whole = sinusoidal_encoding(shift + length, depth, start=start)
    shifted = sinusoidal_encoding(length, depth, start=start + shift)
    # Both are correctly rounded; they may differ by one float32 step at a tie.
    np.testing.assert_allclose(shifted, whole[shift:], rtol=0, atol=2**-24)


@given(depths, bases)
def test_first_column_pair_ignores_the_base(depth, base):
    table = sinusoidal_encoding(4, depth, base=base)
    np.testing.assert_allclose(table[:, 0], np.sin(np.arange(4.0)), atol=1e-7)


@pytest.mark.parametrize("start", [2**24 + 1, 2**24 + 3, 3 * 2**30 + 7])
def test_rows_above_two_to_the_24_are_not_collapsed(start):
    # In float32, 2**24 + 1 rounds to 2**24: a table whose positions are held in
    # float32 would repeat rows here. Each row must match its own 40-digit reference.
    table = sinusoidal_encoding(3, 8, start=start)
    reference = np.array([reference_row(start + row, 8) for row in range(3)])
    assert_correctly_rounded(table, reference, start + 2)
    assert not np.array_equal(table[0], table[1])
