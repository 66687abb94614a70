"""The marker-order task: labels, mirror pairs, determinism and bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib.course.order.tasks import (
    FILLER_START,
    FIRST_MARKER,
    SECOND_MARKER,
    adjacent_markers_task,
    marker_order_task,
    marker_positions,
    swap_markers,
)

pair_counts = st.integers(min_value=1, max_value=30)
lengths = st.integers(min_value=2, max_value=40)
vocabularies = st.integers(min_value=4, max_value=50)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def test_hand_checked_pair():
    tokens, labels = marker_order_task(1, 6, seed=3)
    assert tokens.tolist() == [[13, 1, 5, 6, 2, 13], [13, 2, 5, 6, 1, 13]]
    assert labels.tolist() == [1, 0]


def test_two_steps_leave_no_room_for_fillers():
    tokens, labels = marker_order_task(5, 2, seed=0)
    for row, label in zip(tokens.tolist(), labels.tolist()):
        assert row == ([1, 2] if label == 1 else [2, 1])


def test_same_seed_same_data_other_seed_other_data():
    first, second, other = (marker_order_task(20, 10, seed=seed)[0] for seed in (7, 7, 8))
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)


def test_zero_pairs_give_empty_arrays():
    tokens, labels = marker_order_task(0, 5)
    assert tokens.shape == (0, 5) and labels.shape == (0,)


def test_marker_places_are_uniform_enough():
    # With 12 steps each position should hold the first marker about 1/12 of the time.
    tokens, _ = marker_order_task(6000, 12, seed=1)
    first, _ = marker_positions(tokens)
    shares = np.bincount(first, minlength=12) / len(first)
    np.testing.assert_allclose(shares, 1 / 12, atol=0.01)


@given(pair_counts, lengths, vocabularies, seeds)
def test_shapes_dtypes_and_token_range(pairs, length, vocabulary_size, seed):
    tokens, labels = marker_order_task(pairs, length, vocabulary_size=vocabulary_size, seed=seed)
    assert tokens.shape == (2 * pairs, length) and labels.shape == (2 * pairs,)
    assert tokens.dtype == labels.dtype == np.int32
    fillers = tokens[(tokens != FIRST_MARKER) & (tokens != SECOND_MARKER)]
    assert np.all((fillers >= FILLER_START) & (fillers < vocabulary_size))


@given(pair_counts, lengths, seeds)
def test_label_says_whether_the_first_marker_leads(pairs, length, seed):
    tokens, labels = marker_order_task(pairs, length, seed=seed)
    first, second = marker_positions(tokens)
    np.testing.assert_array_equal(labels, (first < second).astype(np.int32))


@given(pair_counts, lengths, seeds)
def test_rows_come_in_mirror_pairs_with_opposite_labels(pairs, length, seed):
    tokens, labels = marker_order_task(pairs, length, seed=seed)
    np.testing.assert_array_equal(swap_markers(tokens[0::2]), tokens[1::2])
    np.testing.assert_array_equal(labels[0::2] + labels[1::2], np.ones(pairs))
    # A mirror is a reordering: each row holds the same multiset of tokens.
    np.testing.assert_array_equal(np.sort(tokens[0::2], axis=1), np.sort(tokens[1::2], axis=1))
    assert labels.sum() == pairs


def test_swap_markers_leaves_fillers_alone():
    assert swap_markers(np.array([[5, 1, 9, 2]])).tolist() == [[5, 2, 9, 1]]


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"pairs": -1}, ValueError, ["pairs", "-1"]),
        ({"pairs": 2.0}, TypeError, ["pairs", "2.0"]),
        ({"length": 1}, ValueError, ["length", "1"]),
        ({"length": "8"}, TypeError, ["length", "'8'"]),
        ({"vocabulary_size": 3}, ValueError, ["vocabulary_size", "3"]),
        ({"seed": -2}, ValueError, ["seed", "-2"]),
    ],
)
def test_marker_order_task_rejects(kwargs, error, words):
    with pytest.raises(error) as raised:
        marker_order_task(**{"pairs": 4, "length": 8, **kwargs})
    assert all(word in str(raised.value) for word in words)


def test_marker_positions_rejects_rows_without_exactly_one_marker():
    with pytest.raises(ValueError, match="tokens row 1 holds marker 2 0 times, not once"):
        marker_positions(np.array([[1, 2, 5], [1, 5, 5]]))
    with pytest.raises(ValueError, match="tokens row 0 holds marker 1 2 times"):
        marker_positions(np.array([[1, 2, 1]]))
    with pytest.raises(ValueError, match=r"tokens must be 2-D \(sequences, steps\), got shape \(3,\)"):
        marker_positions(np.array([1, 2, 5]))


@given(pair_counts, st.integers(min_value=4, max_value=40), seeds)
def test_adjacent_markers_are_neighbours_exactly_in_the_rows_labelled_1(pairs, length, seed):
    tokens, labels = adjacent_markers_task(pairs, length, seed=seed)
    assert tokens.shape == (2 * pairs, length) and tokens.dtype == labels.dtype == np.int32
    first, second = marker_positions(tokens)  # each marker exactly once
    np.testing.assert_array_equal(labels, (np.abs(first - second) == 1).astype(np.int32))
    np.testing.assert_array_equal(labels, np.tile([1, 0], pairs))
    # Mirror pairs hold the same tokens: a model blind to positions scores one half.
    np.testing.assert_array_equal(np.sort(tokens[0::2], axis=1), np.sort(tokens[1::2], axis=1))


def test_adjacent_markers_sit_anywhere_in_either_order():
    tokens, labels = adjacent_markers_task(3000, 12, seed=1)
    first, second = marker_positions(tokens[labels == 1])
    starts = np.minimum(first, second)
    np.testing.assert_allclose(np.bincount(starts, minlength=11) / len(starts), 1 / 11, atol=0.02)
    assert abs(np.mean(first < second) - 0.5) < 0.03
    apart = marker_positions(tokens[labels == 0])
    assert np.abs(apart[0] - apart[1]).max() == 11  # as far apart as the length allows


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"pairs": -1}, ValueError, ["pairs", "-1"]),
        ({"length": 3}, ValueError, ["length", "3"]),
        ({"vocabulary_size": 3}, ValueError, ["vocabulary_size", "3"]),
        ({"seed": 1.5}, TypeError, ["seed", "1.5"]),
    ],
)
def test_adjacent_markers_task_rejects(kwargs, error, words):
    with pytest.raises(error) as raised:
        adjacent_markers_task(**{"pairs": 4, "length": 8, **kwargs})
    assert all(word in str(raised.value) for word in words)
