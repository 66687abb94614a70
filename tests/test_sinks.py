"""Sliding windows and attention sinks: the mask, the sink logit, and the attention layer's options."""

import math
import re

import keras
import mpmath
import numpy as np
import pytest

from layer_harness import CHECKS, LayerExample, load_in_fresh_process, save_for_fresh_process, to_numpy
from peer_reference import FLOAT32_STEP, PEER, array
from pe_lib.layers import PositionalSelfAttention
from pe_lib.sinks import softmax_with_sink, window_mask


def test_window_mask_by_hand():
    # window 3: query 5 sees keys 3, 4, 5; with one sink token, key 0 too
    assert np.flatnonzero(window_mask([5], np.arange(8), window=3)[0]).tolist() == [3, 4, 5]
    assert np.flatnonzero(window_mask([5], np.arange(8), window=3, sink_tokens=1)[0]).tolist() == [0, 3, 4, 5]
    # no window: causal
    assert window_mask(np.arange(3), np.arange(3)).tolist() == np.tril(np.ones((3, 3), bool)).tolist()
    # the sinks are never in the query's future
    assert not window_mask([1], np.arange(4), window=1, sink_tokens=4)[0, 2:].any()


def test_every_row_sees_at_most_window_plus_sinks_keys():
    mask = window_mask(np.arange(50), np.arange(50), window=7, sink_tokens=4)
    assert mask.sum(axis=1).max() == 7 + 4
    assert mask.sum(axis=1)[:7].tolist() == list(range(1, 8))


def test_sink_logit_by_hand():
    # keys with logits 0 and ln 2, sink 0: weights 1/4 and 2/4, the sink takes 1/4
    weights = softmax_with_sink(np.array([[[0.0, math.log(2.0)]]]), [0.0])
    np.testing.assert_allclose(weights, [[[0.25, 0.5]]], rtol=1e-15)
    # a very negative sink changes nothing
    plain = softmax_with_sink(np.array([[[1.0, 2.0, 3.0]]]), [-1e4])
    np.testing.assert_allclose(plain.sum(), 1.0, rtol=1e-15)


def test_sink_logit_is_gpt_oss_eager_attention():
    oss = PEER["gpt_oss"]
    query, key = array(oss["query"]), array(oss["key"])  # (heads, steps, 4)
    scores = np.einsum("hqd,hkd->hqk", query, key) * oss["scaling"]
    causal = np.tril(np.ones(scores.shape[-2:], bool))
    ours = softmax_with_sink(scores, oss["sinks"], mask=causal)
    np.testing.assert_allclose(ours, array(oss["weights"]), rtol=0, atol=8 * FLOAT32_STEP)
    assert ours.sum(axis=-1).max() < 1.0


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: window_mask([0], [0], window=0), ValueError, ["window", "0"]),
        (lambda: window_mask([0], [0], sink_tokens=2), ValueError, ["sink_tokens=2", "window"]),
        (lambda: window_mask([0.5], [0], window=2), TypeError, ["query_positions"]),
        (lambda: window_mask([0], [0.5], window=2), TypeError, ["key_positions", "0.5"]),
        (lambda: window_mask([0], [0], window=2, sink_tokens=-1), ValueError, ["sink_tokens", "-1"]),
        (lambda: softmax_with_sink(np.zeros((2, 3, 3)), [0.0]), ValueError, ["sink_logits", "2"]),
        (lambda: softmax_with_sink(np.zeros((3, 3)), [0.0]), ValueError, ["scores", "(3, 3)"]),
        (lambda: PositionalSelfAttention(2, 4, window=-1), ValueError, ["window", "-1"]),
        (lambda: PositionalSelfAttention(2, 4, sink_tokens=4), ValueError, ["sink_tokens=4", "window"]),
        (lambda: PositionalSelfAttention(2, 4, sink_logit=1), TypeError, ["sink_logit", "1"]),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error) as raised:
        call()
    # each word whole: "window" is not found inside "XXwindowXX"
    assert all(re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", str(raised.value)) for word in words), \
        str(raised.value)


def test_window_mask_compares_positions_as_integers_past_two_to_the_53():
    # 2**53 + 1 has no float64: as floats both keys would sit at the query's distance 0
    far = 2**53
    got = window_mask([far + 1], [far, far + 1], window=1)
    assert got.tolist() == [[False, True]]


def test_sink_softmax_holds_at_scores_far_from_zero_in_each_row():
    """Two heads: scores 0, 1 with sink 0, and 1000, 1001 with sink 1000. Each row's weights are
    1 / (2 + e) and e / (2 + e) (by hand), which no shared shift of both rows could give."""
    scores = np.array([[[0.0, 1.0]], [[1000.0, 1001.0]]])
    got = softmax_with_sink(scores, [0.0, 1000.0])
    with mpmath.workdps(30):
        e = mpmath.e
        want = [float(1 / (2 + e)), float(e / (2 + e))]
    for head in range(2):
        np.testing.assert_allclose(got[head, 0], want, rtol=8 * 2.0**-52)


def test_attention_layer_masks_outside_the_window_but_keeps_the_sinks():
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope", window=3, sink_tokens=2)
    x = np.random.default_rng(0).normal(size=(1, 9, 8)).astype("float32")
    layer(x)
    scores = to_numpy(layer.scores(x))
    visible = window_mask(np.arange(9), np.arange(9), window=3, sink_tokens=2)
    assert (scores[..., ~visible] <= -1e8).all() and (scores[..., visible] > -1e3).all()


def test_attention_layer_sink_logit_takes_weight_as_the_reference_says():
    layer = PositionalSelfAttention(heads=2, key_dim=4, sink_logit=True)
    x = np.random.default_rng(1).normal(size=(2, 5, 8)).astype("float32")
    layer(x)
    layer.sinks.assign(np.array([0.5, -1.0], "float32"))
    scores = to_numpy(layer.scores(x)).astype(np.float64)
    weights = to_numpy(layer._softmax(keras.ops.convert_to_tensor(scores.astype("float32"))))
    causal = np.tril(np.ones((5, 5), bool))
    np.testing.assert_allclose(weights, softmax_with_sink(scores, [0.5, -1.0], mask=causal), rtol=0, atol=1e-6)


SINK_EXAMPLE = LayerExample(
    init_kwargs={"heads": 2, "key_dim": 4, "method": "rope", "window": 3, "sink_tokens": 1, "sink_logit": True},
    make_inputs=lambda rng: rng.normal(size=(2, 6, 8)).astype("float32"), trainable=True, bad_shape=(2, 6),
)


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_window_and_sinks_through_the_harness(check):
    CHECKS[check](PositionalSelfAttention, SINK_EXAMPLE)


def test_window_and_sinks_load_in_a_fresh_process(tmp_path):
    save_for_fresh_process({"sinks": (PositionalSelfAttention, SINK_EXAMPLE)}, tmp_path)
    assert load_in_fresh_process(tmp_path) == {"sinks": "PositionalSelfAttention"}


def test_sink_logits_are_not_rounded_to_float32():
    # 1 + 2**-30 has no float32 (it rounds to 1): the weight of one key of score 0 beside it is
    # 1 / (1 + e^(1 + 2**-30)), which float32 rounding would move by about 2e-10 (7e-10 of its size)
    with mpmath.workdps(40):
        exact = float(1 / (1 + mpmath.exp(1 + mpmath.mpf(2) ** -30)))
    got = softmax_with_sink(np.zeros((1, 1, 1)), [1 + 2.0**-30])[0, 0, 0]
    assert abs(got - exact) <= 4 * 2.0**-52 * exact
