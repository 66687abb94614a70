"""offset_similarity and offset_distance: dot products and distances depend on p - q only."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from float_checks import TRANSCENDENTAL_ULP, assert_within_ulp

from pe_lib import nearest_pairs, sinusoidal_encoding
from pe_lib.similarity import first_closer_offset, offset_distance, offset_similarity

even_depths = st.integers(min_value=1, max_value=64).map(lambda half: 2 * half)
starts = st.integers(min_value=0, max_value=10**5)
bases = st.floats(min_value=2.0, max_value=1e6)


def test_depth_two_is_a_cosine():
    np.testing.assert_allclose(offset_similarity([0, 1, 2, 3], 2), np.cos([0, 1, 2, 3]), rtol=0, atol=1e-15)


def test_depth_four_by_hand():
    # Rates 1 and 1/100.
    assert math.isclose(offset_similarity(50, 4), math.cos(50) + math.cos(0.5), rel_tol=1e-14)


@pytest.mark.parametrize("depth", [2, 64, 512])
def test_zero_offset_gives_half_the_depth(depth):
    assert offset_similarity(0, depth) == depth / 2
    assert offset_distance(0, depth) == 0.0


def test_shape_follows_the_offsets():
    assert offset_similarity(np.zeros((3, 2), dtype=int), 8).shape == (3, 2)
    assert offset_distance(5, 8).shape == ()


@given(even_depths, starts, bases)
def test_similarity_matches_dot_products_of_table_rows(depth, start, base):
    table = sinusoidal_encoding(12, depth, start=start, base=base, dtype="float64")
    positions = np.arange(12)
    offsets = positions[:, None] - positions[None, :]
    np.testing.assert_allclose(table @ table.T, offset_similarity(offsets, depth, base=base), rtol=0, atol=1e-9)


@given(even_depths, starts, bases)
def test_distance_matches_distances_between_table_rows(depth, start, base):
    table = sinusoidal_encoding(12, depth, start=start, base=base, dtype="float64")
    distances = np.linalg.norm(table[:, None, :] - table[None, :, :], axis=-1)
    offsets = np.arange(12)[:, None] - np.arange(12)[None, :]
    np.testing.assert_allclose(distances, offset_distance(offsets, depth, base=base), rtol=0, atol=1e-9)


@given(even_depths, st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=20))
def test_similarity_is_even_and_at_most_half_the_depth(depth, offsets):
    offsets = np.array(offsets)
    similarity = offset_similarity(offsets, depth)
    # cos(-x) and cos(x) need not be the same float in a vectorised cosine: each of
    # the depth/2 terms is within a few ulp of the exact cosine, and so is each sum.
    per_term = 2 * TRANSCENDENTAL_ULP + 1
    assert_within_ulp(similarity, offset_similarity(-offsets, depth), ulp=per_term * depth / 2, of=depth / 2)
    # cos(k * 1) < 1 for every whole k != 0, so the maximum is strict.
    assert np.all(similarity[offsets != 0] < depth / 2)


@given(even_depths, st.lists(st.integers(-10**4, 10**4), min_size=1, max_size=20))
def test_squared_distance_is_depth_minus_twice_the_similarity(depth, offsets):
    squared = offset_distance(offsets, depth) ** 2
    np.testing.assert_allclose(squared, depth - 2 * offset_similarity(offsets, depth), rtol=0, atol=1e-9)


@pytest.mark.parametrize("depth", [8, 64])
def test_nearest_pairs_agree_with_the_closest_offset(depth):
    # Distances depend on the offset only, so the closest pair of L positions
    # is the smallest offset distance over k = 1 .. L-1.
    length = 300
    table = sinusoidal_encoding(length, depth, dtype="float64")
    closest = nearest_pairs(table)[0]
    by_offset = offset_distance(np.arange(1, length), depth)
    assert math.isclose(closest.distance, by_offset.min(), rel_tol=1e-9)
    assert closest.second - closest.first == 1 + int(np.argmin(by_offset))


def test_distance_keeps_its_digits_for_tiny_offsets():
    # D - 2 S(k) would cancel catastrophically here; the sine form does not.
    # With one pair of rate 1 the distance is the chord 2 sin(k / 2).
    assert math.isclose(offset_distance(1e-9, 2), 2 * math.sin(0.5e-9), rel_tol=1e-12)


@pytest.mark.parametrize("function", [offset_similarity, offset_distance])
@pytest.mark.parametrize(
    ("offsets", "depth", "error", "message"),
    [
        ([1, 2], 5, ValueError, r"depth must be even \(.*p \+ q.*\), got 5"),
        ([1, 2], 0, ValueError, "depth must be >= 1, got 0"),
        ([1, 2], 4.0, TypeError, r"depth must be an integer, got 4\.0"),
        ([1, np.nan], 4, ValueError, r"offsets must be finite, got \[1, nan\]"),
        ([np.inf], 4, ValueError, r"offsets must be finite, got \[inf\]"),
        (["1"], 4, TypeError, r"offsets must be integers or real numbers, got \['1'\]"),
        ([True, False], 4, TypeError, r"offsets must be integers or real numbers, got \[True, False\]"),
    ],
)
def test_bad_input_names_the_argument(function, offsets, depth, error, message):
    with pytest.raises(error, match=message):
        function(offsets, depth)


def test_bad_base_is_refused():
    with pytest.raises(ValueError, match="base must be a finite number > 0, got -1.0"):
        offset_similarity([1], 4, base=-1.0)


@pytest.mark.parametrize("depth", [2, 4, 6, 8, 10])
def test_first_closer_offset_matches_a_table_of_codes(depth):
    # Independent reference: the rows of an encoding table, compared with row 1.
    last = 3000
    table = sinusoidal_encoding(last + 1, depth, dtype="float64")
    distances = np.linalg.norm(table - table[0], axis=1)
    closer = np.flatnonzero(distances[2:] < distances[1]) + 2
    expected = int(closer[0]) if closer.size else None
    assert first_closer_offset(depth, last=last) == expected


def test_first_closer_offset_by_hand():
    # Depth 2: one pair at rate 1; offset 6 is 6 - 2 pi = -0.28 rad from a whole turn.
    assert first_closer_offset(2) == 6
    assert first_closer_offset(2, last=5) is None


@pytest.mark.parametrize("last", [1, 2.5, True])
def test_first_closer_offset_refuses_a_bad_last(last):
    with pytest.raises((TypeError, ValueError), match="last"):
        first_closer_offset(4, last=last)
