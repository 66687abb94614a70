"""Shaw et al.'s clipped relative positions: offsets, table indices, vectors and scores."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib.shaw import clipped_offsets, relative_indices, relative_scores, relative_vectors

lengths = st.integers(min_value=1, max_value=40)
distances = st.integers(min_value=1, max_value=12)


def test_hand_checked_matrix():
    assert clipped_offsets(4, 2).tolist() == [[0, 1, 2, 2], [-1, 0, 1, 2], [-2, -1, 0, 1], [-2, -2, -1, 0]]
    assert relative_indices(3, 1).tolist() == [[1, 2, 2], [0, 1, 2], [0, 0, 1]]


@given(lengths, distances)
def test_entry_depends_only_on_the_offset(length, k):
    offsets = clipped_offsets(length, k)
    # Every diagonal j - i = c is constant: the matrix is Toeplitz.
    for c in range(-length + 1, length):
        assert len(set(np.diagonal(offsets, offset=c).tolist())) == 1


@given(lengths, distances)
def test_offsets_saturate_beyond_the_clipping_distance(length, k):
    i, j = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    offsets = clipped_offsets(length, k)
    near = np.abs(j - i) <= k
    np.testing.assert_array_equal(offsets[near], (j - i)[near])
    np.testing.assert_array_equal(offsets[~near], k * np.sign(j - i)[~near])


@given(lengths, distances)
def test_indices_address_a_table_of_two_k_plus_one_rows(length, k):
    indices = relative_indices(length, k)
    assert indices.min() >= 0 and indices.max() <= 2 * k
    assert np.all(np.diagonal(indices) == k)


def test_a_long_sequence_uses_every_row_and_no_more():
    assert sorted(set(relative_indices(30, 4).ravel().tolist())) == list(range(9))


def test_vectors_are_table_rows():
    table = np.arange(10.0).reshape(5, 2)  # k = 2
    vectors = relative_vectors(table, 6)
    assert vectors.shape == (6, 6, 2)
    np.testing.assert_array_equal(vectors[0, 5], table[4])  # offset +5 clips to +2
    np.testing.assert_array_equal(vectors[5, 0], table[0])  # offset -5 clips to -2
    np.testing.assert_array_equal(vectors[3, 2], table[1])  # offset -1


@given(st.integers(min_value=1, max_value=10), st.integers(min_value=1, max_value=4), st.integers(0, 10**6))
def test_scores_match_an_explicit_double_loop(length, k, seed):
    rng = np.random.default_rng(seed)
    queries, keys = rng.normal(size=(2, length, 3))
    table = rng.normal(size=(2 * k + 1, 3))
    expected = np.empty((length, length))
    for i in range(length):
        for j in range(length):
            a = table[min(max(j - i, -k), k) + k]
            expected[i, j] = queries[i] @ (keys[j] + a) / np.sqrt(3)
    np.testing.assert_allclose(relative_scores(queries, keys, table), expected, rtol=1e-12, atol=1e-12)


def test_same_query_everywhere_gives_a_toeplitz_position_term():
    rng = np.random.default_rng(0)
    query = rng.normal(size=4)
    scores = relative_scores(np.tile(query, (7, 1)), np.zeros((7, 4)), rng.normal(size=(5, 4)))
    for c in range(-6, 7):
        np.testing.assert_allclose(np.diagonal(scores, offset=c), np.diagonal(scores, offset=c)[0])


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: clipped_offsets(0, 2), ValueError, ["length", "0"]),
        (lambda: clipped_offsets(3.0, 2), TypeError, ["length", "3.0"]),
        (lambda: clipped_offsets(3, 0), ValueError, ["max_distance", "0"]),
        (lambda: relative_indices(3, "2"), TypeError, ["max_distance", "'2'"]),
        (lambda: relative_vectors(np.zeros((4, 2)), 3), ValueError, ["table", "(4, 2)"]),
        (lambda: relative_vectors(np.zeros((1, 2)), 3), ValueError, ["table", "3 rows", "(1, 2)"]),
        (lambda: relative_vectors(np.full((3, 2), np.nan), 3), ValueError, ["table", "finite"]),
        (lambda: relative_scores(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((3, 2))), ValueError,
         ["queries and keys", "(3, 2)", "(4, 2)"]),
        (lambda: relative_scores(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 5))), ValueError,
         ["depth of table", "(3, 5)"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert all(word in str(raised.value) for word in words)
