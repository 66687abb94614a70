"""rotation_matrix and rotate_encoding: PE(p + k) = M_k PE(p), with M_k a block rotation."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib import sinusoidal_encoding
from pe_lib.course.lessons.rotation import rotate_encoding, rotation_matrix

even_depths = st.integers(min_value=1, max_value=32).map(lambda half: 2 * half)
offsets = st.integers(min_value=-10**5, max_value=10**5)
bases = st.floats(min_value=2.0, max_value=1e6)
# Two float32 entries, each within half a float32 step of the truth, combined
# with weights whose absolute values sum to at most sqrt(2), then compared
# with a third such entry: comfortably inside two float32 steps near 1.
FLOAT32_TOLERANCE = 2.0**-23


def test_depth_two_is_one_rotation_block():
    c, s = math.cos(3), math.sin(3)
    np.testing.assert_allclose(rotation_matrix(3, 2), [[c, s], [-s, c]], rtol=0, atol=1e-15)


def test_depth_four_by_hand():
    # Rates 1 and 1/100; offset 2 turns the pairs by 2 and 0.02 radians.
    c1, s1, c2, s2 = math.cos(2), math.sin(2), math.cos(0.02), math.sin(0.02)
    expected = [[c1, s1, 0, 0], [-s1, c1, 0, 0], [0, 0, c2, s2], [0, 0, -s2, c2]]
    np.testing.assert_allclose(rotation_matrix(2, 4), expected, rtol=0, atol=1e-15)


def test_zero_offset_is_the_identity():
    assert np.array_equal(rotation_matrix(0, 16), np.eye(16))


def test_position_zero_moves_to_position_k():
    # PE(0) = [0, 1, 0, 1, ...], so M_k PE(0) is the sum of the odd columns of M_k.
    first = sinusoidal_encoding(1, 8, dtype="float64")[0]
    np.testing.assert_allclose(rotation_matrix(5, 8) @ first, sinusoidal_encoding(1, 8, start=5, dtype="float64")[0])


def test_matrix_is_block_diagonal_with_unit_determinant_blocks():
    matrix = rotation_matrix(7, 12)
    blocks = np.kron(np.eye(6), np.ones((2, 2)))
    assert np.all(matrix[blocks == 0] == 0)
    for pair in range(6):
        block = matrix[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2]
        assert math.isclose(np.linalg.det(block), 1.0, rel_tol=1e-14)


@given(even_depths, st.integers(min_value=0, max_value=10**6), offsets, st.integers(min_value=1, max_value=8))
def test_matrix_shifts_encodings_to_float32_rounding(depth, position, offset, rows):
    # Negative offsets must not reach below position 0, where pe_lib's tables start.
    position = max(position, -offset)
    table = sinusoidal_encoding(rows, depth, start=position)
    shifted = sinusoidal_encoding(rows, depth, start=position + offset)
    moved = table.astype(np.float64) @ rotation_matrix(offset, depth).T
    np.testing.assert_allclose(moved, shifted, rtol=0, atol=FLOAT32_TOLERANCE)


@given(even_depths, offsets, bases)
def test_rotate_encoding_equals_the_matrix_product(depth, offset, base):
    table = sinusoidal_encoding(5, depth, base=base, dtype="float64")
    by_matrix = table @ rotation_matrix(offset, depth, base=base).T
    np.testing.assert_allclose(rotate_encoding(table, offset, base=base), by_matrix, rtol=0, atol=1e-12)


@given(even_depths, offsets, bases)
def test_matrix_is_orthogonal(depth, offset, base):
    matrix = rotation_matrix(offset, depth, base=base)
    np.testing.assert_allclose(matrix @ matrix.T, np.eye(depth), rtol=0, atol=1e-12)


@given(even_depths, offsets, offsets)
def test_matrices_compose_by_adding_offsets(depth, first, second):
    product = rotation_matrix(first, depth) @ rotation_matrix(second, depth)
    # The float64 angles k * rate carry an error of about |k| * 2**-53 each.
    np.testing.assert_allclose(product, rotation_matrix(first + second, depth), rtol=0, atol=1e-10)


@given(even_depths, offsets)
def test_negative_offset_is_the_transpose(depth, offset):
    np.testing.assert_allclose(rotation_matrix(-offset, depth), rotation_matrix(offset, depth).T, rtol=0, atol=1e-15)


def test_rotate_encoding_keeps_leading_axes():
    batch = sinusoidal_encoding(6, 4, dtype="float64").reshape(2, 3, 4)
    moved = rotate_encoding(batch, 2)
    assert moved.shape == (2, 3, 4)
    np.testing.assert_allclose(moved.reshape(6, 4)[:4], sinusoidal_encoding(6, 4, start=2, dtype="float64")[:4])


def test_rotate_encoding_does_not_change_its_input():
    table = sinusoidal_encoding(3, 4, dtype="float64")
    before = table.copy()
    rotate_encoding(table, 9)
    assert np.array_equal(table, before)


@pytest.mark.parametrize("depth", [1, 5, 33])
def test_odd_depth_is_refused_with_the_reason(depth):
    with pytest.raises(ValueError, match=rf"depth must be even \(.*lone sine column.*\), got {depth}"):
        rotation_matrix(1, depth)


def test_odd_codes_are_refused_naming_codes():
    with pytest.raises(ValueError, match=r"codes: the last axis is the depth; depth must be even .* got 5"):
        rotate_encoding(np.zeros((3, 5)), 1)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: rotation_matrix(1.0, 4), TypeError, r"offset must be an integer, got 1\.0"),
        (lambda: rotation_matrix(True, 4), TypeError, "offset must be an integer, got True"),
        (lambda: rotation_matrix(1, 0), ValueError, "depth must be >= 1, got 0"),
        (lambda: rotation_matrix(1, 4.0), TypeError, r"depth must be an integer, got 4\.0"),
        (lambda: rotation_matrix(1, 4, base=0.0), ValueError, r"base must be a finite number > 0, got 0\.0"),
        (lambda: rotate_encoding(1.0, 1), ValueError, r"codes must have at least one axis .* got shape \(\)"),
        (lambda: rotate_encoding([[0.0, np.nan]], 1), ValueError, "codes must be finite"),
        (lambda: rotate_encoding(np.zeros((2, 0)), 1), ValueError, "codes: .* depth must be >= 1, got 0"),
        (lambda: rotate_encoding([[0.0, 1.0]], 0.5), TypeError, r"offset must be an integer, got 0\.5"),
    ],
)
def test_bad_input_names_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_rotate_encoding_returns_float64_as_documented_even_for_float32_codes():
    codes = sinusoidal_encoding(4, 6)  # float32
    rotated = rotate_encoding(codes, 3)
    assert rotated.dtype == np.float64
    np.testing.assert_allclose(rotated, sinusoidal_encoding(4, 6, start=3, dtype="float64"), atol=1e-6)
