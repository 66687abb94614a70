"""tokenize, build_vocabulary, token_ids, self_attention, permutation_gap and pooled_gap."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pe_lib import sinusoidal_encoding
from pe_lib.course.lessons.word_order import (
    build_vocabulary,
    permutation_gap,
    pooled_gap,
    self_attention,
    token_ids,
    tokenize,
)

FOX = "The quick brown fox jumps over the lazy dog ."


def numpy_self_attention(weights):
    """Single-head softmax self-attention written out in NumPy, independently of Keras."""
    w_query, w_key, w_value = weights

    def attend(x):
        queries, keys, values = x @ w_query, x @ w_key, x @ w_value
        scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(keys.shape[-1])
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return (scores / scores.sum(axis=-1, keepdims=True)) @ values

    return attend


sequences = st.integers(min_value=1, max_value=8).flatmap(
    lambda steps: st.tuples(
        arrays(np.float64, (steps, 3), elements=st.floats(-2, 2)),
        st.permutations(range(steps)),
    )
)
small_weights = st.tuples(*[arrays(np.float64, (3, 3), elements=st.floats(-1, 1))] * 3)


# --- tokens and ids -------------------------------------------------------------


def test_fox_sentence_has_ten_tokens_and_nine_words():
    tokens = tokenize(FOX)
    assert tokens == ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "."]
    vocabulary = build_vocabulary(tokens)
    assert len(vocabulary) == 9
    assert vocabulary["the"] == 0 and vocabulary["."] == 8


def test_tokenize_splits_punctuation_and_folds_case():
    assert tokenize("Man bites DOG!") == ["man", "bites", "dog", "!"]
    assert tokenize("   ") == []


def test_repeated_word_gets_one_id():
    ids = token_ids(tokenize(FOX), build_vocabulary(tokenize(FOX)))
    assert ids.dtype == np.int32 and ids.shape == (10,)
    assert ids[0] == ids[6] == 0
    assert ids.tolist() == [0, 1, 2, 3, 4, 5, 0, 6, 7, 8]


@given(st.lists(st.sampled_from(["a", "b", "c", "d", "."]), max_size=20))
def test_vocabulary_numbers_first_appearances_and_ids_round_trip(tokens):
    vocabulary = build_vocabulary(tokens)
    assert list(vocabulary) == list(dict.fromkeys(tokens))
    assert sorted(vocabulary.values()) == list(range(len(vocabulary)))
    words = {number: word for word, number in vocabulary.items()}
    assert [words[number] for number in token_ids(tokens, vocabulary)] == tokens


def test_empty_sentence_gives_empty_ids():
    assert token_ids([], {}).shape == (0,)


# --- permutation_gap ------------------------------------------------------------


def test_permutation_gap_hand_values():
    x = np.array([[1.0], [2.0], [3.0]])
    # cumsum(x) = [1, 3, 6], reversed [6, 3, 1]; reversed x = [3, 2, 1] has cumsum [3, 5, 6]:
    # the differences are 3, 2 and 5.
    assert permutation_gap(lambda v: np.cumsum(v, axis=-2), x, [2, 1, 0]) == 5.0
    assert permutation_gap(lambda v: v + 1.0, x, [2, 1, 0]) == 0.0


@given(sequences)
def test_tokenwise_functions_are_equivariant(case):
    x, permutation = case
    assert permutation_gap(lambda v: np.tanh(v) * 3.0 - 1.0, x, permutation) == 0.0


@given(sequences, small_weights)
def test_numpy_self_attention_is_equivariant(case, weights):
    x, permutation = case
    assert permutation_gap(numpy_self_attention(weights), x, permutation) < 1e-12


@given(sequences, small_weights)
def test_identity_permutation_gives_zero_even_for_order_aware_functions(case, weights):
    x, _ = case
    with_positions = lambda v: numpy_self_attention(weights)(v + sinusoidal_encoding(len(v), 3, dtype="float64"))
    assert permutation_gap(with_positions, x, list(range(len(x)))) == 0.0


def test_check_detects_a_function_that_sees_positions():
    weights = (np.eye(3), np.eye(3), np.eye(3))
    x = np.zeros((4, 3))
    with_positions = lambda v: numpy_self_attention(weights)(v + sinusoidal_encoding(4, 3, dtype="float64"))
    assert permutation_gap(with_positions, x, [1, 0, 2, 3]) > 0.1
    assert permutation_gap(lambda v: np.cumsum(v, axis=-2), np.eye(3), [1, 2, 0]) == 1.0


def test_permutation_acts_on_the_steps_axis_of_a_batch():
    x = np.arange(24.0).reshape(2, 4, 3)
    # Reversing the steps of the running total changes it; a function of each step does not care.
    assert permutation_gap(lambda v: np.cumsum(v, axis=-2), x, [3, 2, 1, 0]) > 0
    assert permutation_gap(np.square, x, [3, 2, 1, 0]) == 0.0


# --- pooled_gap -----------------------------------------------------------------


def test_pooled_gap_hand_value():
    first = np.array([[1.0, 0.0], [0.0, 0.0]])
    second = np.array([[0.0, 0.0], [0.0, 4.0]])
    # means: [0.5, 0] and [0, 2]
    assert pooled_gap(lambda v: v, first, second) == 2.0


@given(sequences, small_weights)
def test_pooled_attention_ignores_order(case, weights):
    x, permutation = case
    attend = numpy_self_attention(weights)
    assert pooled_gap(attend, x, x[list(permutation)]) < 1e-12


def test_pooled_gap_allows_sequences_of_different_lengths():
    assert pooled_gap(lambda v: v, np.ones((2, 3)), np.ones((5, 3))) == 0.0


# --- bad input ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("permutation", "error", "words"),
    [
        ([0, 0, 1], ValueError, ["permutation", "[0, 0, 1]"]),
        ([0, 1], ValueError, ["permutation", "[0, 1]"]),
        ([1, 2, 3], ValueError, ["permutation", "[1, 2, 3]"]),
        ([0.0, 1.0, 2.0], TypeError, ["permutation", "0.0"]),
        ([[0, 1, 2]], TypeError, ["permutation", "[[0, 1, 2]]"]),
        ([True, False, True], TypeError, ["permutation", "True"]),
    ],
)
def test_permutation_gap_rejects_bad_permutations(permutation, error, words):
    with pytest.raises(error) as raised:
        permutation_gap(np.tanh, np.zeros((3, 2)), permutation)
    for word in words:
        assert word in str(raised.value)


def test_inputs_need_a_steps_axis():
    with pytest.raises(ValueError, match=r"inputs .*shape \(3,\)"):
        permutation_gap(np.tanh, np.zeros(3), [0, 1, 2])
    with pytest.raises(ValueError, match=r"second .*shape \(\)"):
        pooled_gap(np.tanh, np.zeros((2, 2)), 1.0)


def test_inputs_must_be_real_numbers():
    with pytest.raises(TypeError, match="inputs .*dtype"):
        permutation_gap(np.tanh, np.array([["a", "b"]]), [0])


def test_function_must_be_callable():
    with pytest.raises(TypeError, match="function must be callable, got 3"):
        permutation_gap(3, np.zeros((2, 2)), [1, 0])
    with pytest.raises(TypeError, match="function must be callable"):
        pooled_gap("attention", np.zeros((2, 2)), np.zeros((2, 2)))


def test_function_must_keep_the_steps():
    with pytest.raises(ValueError, match=r"function must keep .*\(3, 2\) to \(2\,\)"):
        permutation_gap(lambda v: v.sum(axis=0), np.zeros((3, 2)), [0, 2, 1])


def test_pooled_summaries_must_match():
    with pytest.raises(ValueError, match=r"\(2,\) and \(3,\)"):
        pooled_gap(lambda v: v, np.zeros((4, 2)), np.zeros((4, 3)))


def test_tokenize_rejects_non_strings():
    with pytest.raises(TypeError, match="sentence must be a str, got 42"):
        tokenize(42)


def test_vocabulary_rejects_a_bare_string_and_non_string_tokens():
    with pytest.raises(TypeError, match="tokens must be a sequence of str, not one str: got 'dog'"):
        build_vocabulary("dog")
    with pytest.raises(TypeError, match="tokens must all be str, got 7"):
        build_vocabulary(["dog", 7])


def test_token_ids_names_the_unknown_token():
    with pytest.raises(ValueError, match="tokens contains 'cat', which is not in vocabulary"):
        token_ids(["dog", "cat"], {"dog": 0})
    with pytest.raises(TypeError, match="not one str"):
        token_ids("dog", {"dog": 0})


def test_self_attention_rejects_a_non_callable_layer():
    with pytest.raises(TypeError, match="layer must be callable, got None"):
        self_attention(None)


# --- a real Keras layer ---------------------------------------------------------


@pytest.fixture(scope="module")
def keras_attention():
    keras = pytest.importorskip("keras")
    keras.utils.set_random_seed(0)
    layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    x = np.random.default_rng(1).uniform(-1, 1, size=(2, 6, 8)).astype("float32")
    return layer, x


def test_keras_attention_is_equivariant_without_positions(keras_attention):
    layer, x = keras_attention
    attend = self_attention(layer)
    assert attend(x).shape == (2, 6, 8)
    assert permutation_gap(attend, x, [5, 3, 0, 1, 4, 2]) < 1e-5
    assert pooled_gap(attend, x, x[:, ::-1]) < 1e-5


def test_keras_attention_sees_order_with_positions(keras_attention):
    layer, x = keras_attention
    attend = self_attention(layer)
    table = sinusoidal_encoding(6, 8)
    with_positions = lambda v: attend(v + table)
    assert permutation_gap(with_positions, x, [5, 3, 0, 1, 4, 2]) > 1e-2
    assert pooled_gap(with_positions, x, x[:, ::-1]) > 1e-3


def test_causal_mask_breaks_equivariance(keras_attention):
    layer, x = keras_attention
    causal = self_attention(layer, use_causal_mask=True)
    assert permutation_gap(causal, x, [5, 3, 0, 1, 4, 2]) > 1e-2


@settings(max_examples=10)
@given(st.permutations(range(6)))
def test_keras_attention_equivariant_for_every_permutation(keras_attention, permutation):
    layer, x = keras_attention
    assert permutation_gap(self_attention(layer), x, permutation) < 1e-5
