"""ALiBi: the published slopes and the bias matrices."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pe_lib.alibi import alibi_bias, alibi_slopes

heads_counts = st.integers(min_value=1, max_value=300)


def test_eight_heads_halve_from_one_half_to_one_256th():
    assert alibi_slopes(8).tolist() == [1 / 2**h for h in range(1, 9)]


def test_one_two_and_sixteen_heads():
    assert alibi_slopes(1).tolist() == [2.0**-8]
    assert alibi_slopes(2).tolist() == [2.0**-4, 2.0**-8]
    np.testing.assert_allclose(alibi_slopes(16), [2.0 ** (-h / 2) for h in range(1, 17)], rtol=1e-15)


def test_twelve_heads_are_the_eight_head_slopes_plus_four_in_between():
    slopes = alibi_slopes(12)
    assert slopes[:8].tolist() == alibi_slopes(8).tolist()
    np.testing.assert_allclose(slopes[8:], [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5], rtol=1e-15)
    # Each extra slope is the geometric mean of two neighbouring 8-head slopes (or of 1 and 1/2).
    eight = np.concatenate([[1.0], alibi_slopes(8)])
    np.testing.assert_allclose(slopes[8:], np.sqrt(eight[:4] * eight[1:5]), rtol=1e-15)


@given(st.integers(min_value=0, max_value=8))
def test_powers_of_two_are_geometric_from_2_to_the_minus_8_over_n(exponent):
    n = 2**exponent
    slopes = alibi_slopes(n)
    np.testing.assert_allclose(slopes, 2.0 ** (-8 * np.arange(1, n + 1) / n), rtol=1e-15)
    assert slopes[-1] == 2.0**-8


@given(heads_counts)
def test_any_head_count_follows_the_published_rule(heads):
    slopes = alibi_slopes(heads)
    below = 2 ** math.floor(math.log2(heads))
    assert slopes.shape == (heads,)
    assert np.all((slopes > 0) & (slopes < 1))
    assert len(set(slopes.tolist())) == heads
    np.testing.assert_array_equal(slopes[:below], alibi_slopes(below))
    np.testing.assert_array_equal(slopes[below:], alibi_slopes(2 * below)[0::2][: heads - below])


@given(st.integers(min_value=1, max_value=30), st.integers(min_value=1, max_value=12))
def test_causal_bias_depends_only_on_the_offset(length, heads):
    bias = alibi_bias(length, heads)
    slopes = alibi_slopes(heads)
    for c in range(-length + 1, length):
        diagonal = np.diagonal(bias, offset=c, axis1=1, axis2=2)  # (heads, entries)
        if c > 0:
            assert np.all(diagonal == -np.inf)
        else:
            np.testing.assert_allclose(diagonal, np.broadcast_to(slopes[:, None] * c, diagonal.shape))


@given(st.integers(min_value=1, max_value=30), st.integers(min_value=1, max_value=12))
def test_symmetric_bias_mirrors_the_causal_one(length, heads):
    causal = alibi_bias(length, heads)
    symmetric = alibi_bias(length, heads, form="symmetric")
    np.testing.assert_array_equal(symmetric, np.swapaxes(symmetric, 1, 2))
    lower = np.tril(np.ones((length, length), dtype=bool))
    np.testing.assert_array_equal(symmetric[:, lower], causal[:, lower])


def test_hand_checked_values_and_signs():
    bias = alibi_bias(5, 8)
    assert bias[0, 4, 0] == -2.0  # slope 1/2, four steps back
    assert bias[7, 4, 1] == -3 / 256
    assert np.all(np.diagonal(bias, axis1=1, axis2=2) == 0)
    assert not np.any(np.signbit(np.diagonal(bias, axis1=1, axis2=2)))  # +0.0, not -0.0


def test_causal_softmax_ignores_the_future_and_prefers_the_recent():
    scores = alibi_bias(6, 2)[0]
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    assert np.all(np.triu(weights, k=1) == 0)
    assert np.all(np.diff(weights[5]) > 0)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: alibi_slopes(0), ValueError, ["heads", "0"]),
        (lambda: alibi_slopes(8.0), TypeError, ["heads", "8.0"]),
        (lambda: alibi_slopes(True), TypeError, ["heads", "True"]),
        (lambda: alibi_bias(-1, 2), ValueError, ["length", "-1"]),
        (lambda: alibi_bias(4, -2), ValueError, ["heads", "-2"]),
        (lambda: alibi_bias(4, 2, form="bidirectional"), ValueError, ["form", "'bidirectional'"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert all(word in str(raised.value) for word in words)


def test_a_block_far_into_a_long_sequence_is_the_offset_bias():
    from pe_lib.alibi import alibi_block

    queries, keys = np.array([10**7, 10**7 + 1]), np.arange(10**7 - 2, 10**7 + 2)
    block = alibi_block(queries, keys, 8, dtype="float32")
    assert block.dtype == np.float32 and block.shape == (8, 2, 4)
    # Head 0 of 8 has slope 1/2 (the paper's first slope): -(i - j)/2, and -inf after the query.
    np.testing.assert_array_equal(block[0], [[-1.0, -0.5, 0.0, -np.inf], [-1.5, -1.0, -0.5, 0.0]])
    np.testing.assert_array_equal(alibi_block(np.arange(5), np.arange(5), 3), alibi_bias(5, 3))
