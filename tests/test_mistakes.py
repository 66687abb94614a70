"""apply_rope_with_tables: RoPE from cosine and sine tables, right and mixed up."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib.course.lessons.mistakes import apply_rope_with_tables, rope_scores
from pe_lib.rope import apply_rope

even_depths = st.integers(min_value=1, max_value=16).map(lambda half: 2 * half)
depths_with_two_pairs = st.integers(min_value=2, max_value=16).map(lambda half: 2 * half)
starts = st.integers(min_value=0, max_value=10**5)
layouts = st.sampled_from(["interleaved", "half-split"])
seeds = st.integers(min_value=0, max_value=2**32 - 1)
OTHER = {"interleaved": "half-split", "half-split": "interleaved"}


def reference(vector, position, layout, table_layout, base=10000.0):
    """The table form written feature by feature, from the formula in the module docstring."""
    depth = len(vector)
    half = depth // 2

    def rate(feature):
        pair = feature // 2 if table_layout == "interleaved" else feature % half
        return base ** (-2 * pair / depth)

    out = [0.0] * depth
    for j in range(half):
        a, b = (2 * j, 2 * j + 1) if layout == "interleaved" else (j, j + half)
        out[a] = vector[a] * math.cos(position * rate(a)) - vector[b] * math.sin(position * rate(a))
        out[b] = vector[b] * math.cos(position * rate(b)) + vector[a] * math.sin(position * rate(b))
    return out


def test_depth_four_by_hand():
    # Rates 1 and 1/100, position 3. Interleaved pairs (0, 1), (2, 3); half-split pairs (0, 2), (1, 3).
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    c1, s1, c2, s2 = math.cos(3), math.sin(3), math.cos(0.03), math.sin(0.03)
    right = [c1 - 2 * s1, s1 + 2 * c1, 3 * c2 - 4 * s2, 3 * s2 + 4 * c2]
    # Interleaved pairing with the half-split table (rates 1, 1/100, 1, 1/100):
    # feature 1 turns at 1/100 while its partner, feature 0, turns at 1.
    mixed = [c1 - 2 * s1, 2 * c2 + s2, 3 * c1 - 4 * s1, 4 * c2 + 3 * s2]
    np.testing.assert_allclose(apply_rope_with_tables(x, [3], layout="interleaved")[0], right, rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        apply_rope_with_tables(x, [3], layout="interleaved", table_layout="half-split")[0], mixed, rtol=0, atol=1e-15
    )


@given(even_depths, starts, layouts, layouts, seeds)
def test_matches_the_feature_by_feature_reference(depth, position, layout, table_layout, seed):
    vector = np.random.default_rng(seed).normal(size=depth)
    result = apply_rope_with_tables(vector[None], [position], layout=layout, table_layout=table_layout)[0]
    np.testing.assert_allclose(result, reference(vector.tolist(), position, layout, table_layout), rtol=0, atol=1e-9)


@given(even_depths, starts, layouts, seeds)
def test_matching_tables_give_apply_rope(depth, start, layout, seed):
    x = np.random.default_rng(seed).normal(size=(2, 5, depth))
    positions = np.arange(start, start + 5)
    np.testing.assert_allclose(
        apply_rope_with_tables(x, positions, layout=layout), apply_rope(x, positions, layout=layout),
        rtol=0, atol=1e-12,
    )


@given(even_depths, layouts, seeds)
def test_position_zero_changes_nothing_even_when_mixed_up(depth, layout, seed):
    x = np.random.default_rng(seed).normal(size=(1, depth))
    assert np.array_equal(apply_rope_with_tables(x, [0], layout=layout, table_layout=OTHER[layout]), x)


def test_depth_two_cannot_be_mixed_up():
    # With a single pair both layouts are the same.
    x = np.array([[0.3, -0.7]])
    assert np.array_equal(
        apply_rope_with_tables(x, [9], layout="interleaved", table_layout="half-split"),
        apply_rope_with_tables(x, [9], layout="interleaved"),
    )


@given(depths_with_two_pairs, layouts)
def test_mixed_up_tables_change_the_length(depth, layout):
    # At position 1 the first feature turns by 1 radian and its partner by a smaller
    # angle theta < 1, so the unit vector e_0 goes to length cos(1)**2 + sin(theta)**2 < 1.
    x = np.zeros((1, depth))
    x[0, 0] = 1.0
    moved = apply_rope_with_tables(x, [1], layout=layout, table_layout=OTHER[layout])
    assert np.linalg.norm(moved) < 0.99


@pytest.mark.parametrize("layout", ["interleaved", "half-split"])
def test_mixed_up_tables_give_scores_that_depend_on_the_position(layout):
    q, k = np.random.default_rng(0).normal(size=(2, 1, 16))

    def score(m, n, table_layout):
        rotate = lambda v, p: apply_rope_with_tables(v, [p], layout=layout, table_layout=table_layout)
        return float(np.sum(rotate(q, m) * rotate(k, n)))

    assert math.isclose(score(0, 1, layout), score(50, 51, layout), abs_tol=1e-9)
    assert abs(score(0, 1, OTHER[layout]) - score(50, 51, OTHER[layout])) > 0.1


def test_default_positions_count_from_zero():
    x = np.random.default_rng(3).normal(size=(4, 6))
    np.testing.assert_array_equal(apply_rope_with_tables(x), apply_rope_with_tables(x, np.arange(4)))


def test_input_is_not_changed():
    x = np.ones((2, 4))
    apply_rope_with_tables(x, [3, 4], table_layout="interleaved")
    assert np.array_equal(x, np.ones((2, 4)))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: apply_rope_with_tables(np.ones((2, 5))), ValueError,
         r"x: the last axis is the depth; depth must be even \(RoPE rotates the features in pairs\), got 5"),
        (lambda: apply_rope_with_tables(np.ones((2, 0))), ValueError, "depth must be >= 1, got 0"),
        (lambda: apply_rope_with_tables(np.ones(4)), ValueError, r"x must have shape \(\.\.\., length, depth\), got shape \(4,\)"),
        (lambda: apply_rope_with_tables([[1.0, np.inf]]), ValueError, "x must hold finite numbers"),
        (lambda: apply_rope_with_tables(np.ones((2, 4)), [0.0, 1.0]), TypeError, "positions must be integers"),
        (lambda: apply_rope_with_tables(np.ones((2, 4)), [0, 1, 2]), ValueError,
         r"positions must have shape \(2,\), one per row of x; got shape \(3,\)"),
        (lambda: apply_rope_with_tables(np.ones((2, 4)), layout="pairs"), ValueError, "layout must be one of .* got 'pairs'"),
        (lambda: apply_rope_with_tables(np.ones((2, 4)), table_layout="cat"), ValueError,
         "table_layout must be one of .* got 'cat'"),
        (lambda: apply_rope_with_tables(np.ones((2, 4)), base=0.0), ValueError, r"base must be a finite number > 0, got 0\.0"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


# rope_scores


def test_scores_by_hand_for_depth_two():
    # One pair turning at 1 radian per position: the score of (1, 0) with (1, 0) is cos(n - m).
    scores = rope_scores([1.0, 0.0], [1.0, 0.0], 7, np.array([7, 8, 5, 107]))
    np.testing.assert_allclose(scores, np.cos([0, 1, -2, 100]), rtol=0, atol=1e-12)


@given(even_depths, starts, layouts, seeds)
def test_scores_are_dot_products_of_rotated_vectors(depth, start, layout, seed):
    q, k = np.random.default_rng(seed).normal(size=(2, depth))
    key_positions = np.array([start, start + 3, start + 40])
    expected = [
        float(apply_rope(q[None], [start + 1], layout=layout)[0] @ apply_rope(k[None], [n], layout=layout)[0])
        for n in key_positions
    ]
    np.testing.assert_allclose(rope_scores(q, k, start + 1, key_positions, layout=layout), expected, rtol=0, atol=1e-9)


@given(even_depths, starts, starts, layouts, seeds)
def test_matched_scores_depend_on_the_offset_only(depth, first, second, layout, seed):
    q, k = np.random.default_rng(seed).normal(size=(2, depth))
    offsets = np.arange(-5, 6)
    at_first = rope_scores(q, k, first, first + offsets, layout=layout)
    at_second = rope_scores(q, k, second, second + offsets, layout=layout)
    np.testing.assert_allclose(at_first, at_second, rtol=0, atol=1e-9 * depth)


def test_mixed_up_scores_depend_on_the_position():
    q, k = np.random.default_rng(5).normal(size=(2, 32))
    offsets = np.arange(-5, 6)
    near = rope_scores(q, k, 10, 10 + offsets, layout="interleaved", table_layout="half-split")
    far = rope_scores(q, k, 900, 900 + offsets, layout="interleaved", table_layout="half-split")
    assert np.abs(near - far).max() > 1.0


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: rope_scores(np.ones(4), np.ones(6), 0, [0]), ValueError,
         r"query and key must be 1-D vectors of the same depth, got shapes \(4,\) and \(6,\)"),
        (lambda: rope_scores(np.ones((1, 4)), np.ones((1, 4)), 0, [0]), ValueError, "query and key must be 1-D"),
        (lambda: rope_scores(np.ones(4), np.ones(4), 1.5, [0]), TypeError, r"query_position must be an integer, got 1\.5"),
        (lambda: rope_scores(np.ones(4), np.ones(4), 0, [0.5]), TypeError, r"key_positions must be integers, got \[0\.5\]"),
        (lambda: rope_scores(np.ones(4), np.ones(4), 0, [[0, 1]]), ValueError, r"key_positions must be 1-D, got shape \(1, 2\)"),
        (lambda: rope_scores(np.ones(3), np.ones(3), 0, [0]), ValueError, "depth must be even"),
    ],
)
def test_bad_score_input_is_refused_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()
