"""The attention-side layers: each against its NumPy reference and its defining property."""

import keras
import numpy as np
import pytest

import pe_lib
from pe_lib.alibi import alibi_block
from pe_lib.layers import (
    AlibiBias,
    PositionalEncoding,
    PositionalSelfAttention,
    RotaryEmbedding,
    ShawRelativePositions,
    T5RelativeBias,
)
from pe_lib.rope import apply_rope
from pe_lib.shaw import clipped_offsets
from pe_lib.t5 import bucket_matrix

to_numpy = keras.ops.convert_to_numpy


# --- RotaryEmbedding ---------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["half-split", "interleaved"])
@pytest.mark.parametrize("method", ["rope", "rope_pi", "rope_ntk", "rope_yarn"])
def test_rotary_embedding_matches_the_numpy_reference(layout, method):
    x = np.random.default_rng(0).normal(size=(2, 6, 3, 8)).astype("float32")
    layer = RotaryEmbedding(method=method, layout=layout, scale=4.0, original_length=16)
    out = to_numpy(layer(x, start_index=5))
    reference = apply_rope(x.astype("float64"), np.arange(5, 11), sequence_axis=1, layout=layout,
                           rates=layer.rates) * layer.attention_factor
    np.testing.assert_allclose(out, reference, rtol=0, atol=1e-6)


def test_rotary_scores_depend_on_the_offset_only():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 1, 1, 1, 16)).astype("float32")
    layer = RotaryEmbedding()

    def score(m, n):
        rotated_q = to_numpy(layer(q, positions=np.array([m])))
        rotated_k = to_numpy(layer(k, positions=np.array([n])))
        return float(np.sum(rotated_q.astype("float64") * rotated_k))

    reference = score(3, 10)
    for shift in (1, 1000, 2**20, 2**24 + 5, 2**30):
        assert score(3 + shift, 10 + shift) == pytest.approx(reference, abs=1e-5)


def test_rotary_angles_stay_accurate_above_two_to_the_24():
    # Positions that float32 cannot hold apart (2**24 + 1 rounds to 2**24).
    positions = np.array([2**24, 2**24 + 1, 2**31 - 1])
    x = np.ones((1, 3, 1, 8), dtype="float32")
    out = to_numpy(RotaryEmbedding()(x, positions=positions))
    np.testing.assert_allclose(out, apply_rope(x.astype("float64"), positions, sequence_axis=1), atol=5e-7)
    assert not np.allclose(out[0, 0], out[0, 1])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rotary_embedding_keeps_the_input_dtype(dtype):
    if dtype == "float64" and keras.ops.convert_to_tensor(np.zeros(1)).dtype != "float64":
        pytest.skip("this backend holds no float64 tensors (JAX without jax_enable_x64)")
    x = np.random.default_rng(2).normal(size=(1, 4, 2, 8)).astype(dtype)
    out = RotaryEmbedding()(x)
    assert keras.backend.standardize_dtype(out.dtype) == dtype


def test_rotary_embedding_takes_positions_per_batch_entry_and_other_axes():
    x = np.random.default_rng(3).normal(size=(2, 3, 4, 8)).astype("float32")  # (batch, heads, seq, dim)
    positions = np.array([[0, 1, 2, 3], [7, 8, 9, 10]])
    out = to_numpy(RotaryEmbedding(sequence_axis=2)(x, positions=positions))
    np.testing.assert_allclose(out, apply_rope(x.astype("float64"), positions, sequence_axis=2), atol=1e-6)


def test_rotary_embedding_config_round_trip():
    layer = RotaryEmbedding(method="rope_yarn", base=500.0, layout="interleaved", scale=2.0,
                            original_length=32, sequence_axis=2, feature_axis=-1, name="r")
    clone = RotaryEmbedding.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()


# --- AlibiBias ---------------------------------------------------------------------------


def test_alibi_bias_is_minus_the_slope_times_the_distance():
    heads = 8
    bias = to_numpy(AlibiBias(heads)(np.zeros((5, 4), "float32")))
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    for head in range(heads):
        slope = 2.0 ** -(head + 1)  # the paper's 1/2, 1/4, ..., 1/256 for eight heads
        expected = np.where(j <= i, -slope * (i - j), -1e9)
        np.testing.assert_allclose(bias[head], expected, rtol=1e-6)


def test_alibi_bias_of_one_query_at_the_end_of_a_long_cache():
    layer = AlibiBias(4, dtype="float16")
    bias = layer(np.zeros((1, 8), "float16"), np.zeros((100_000, 8), "float16"))
    assert tuple(bias.shape) == (4, 1, 100_000)
    assert keras.backend.standardize_dtype(bias.dtype) == "float16"
    reference = alibi_block([99_999], np.arange(99_990, 100_000), 4)
    np.testing.assert_allclose(to_numpy(bias)[:, :, -10:].astype("float64"), reference, rtol=1e-3)


# --- T5RelativeBias ----------------------------------------------------------------------


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bias_looks_up_the_bucket_matrix(bidirectional):
    layer = T5RelativeBias(3, bidirectional=bidirectional, num_buckets=20, max_distance=160,
                           embeddings_initializer="random_normal")
    bias = to_numpy(layer(np.zeros((90, 4), "float32")))
    table = to_numpy(layer.embeddings)
    buckets = bucket_matrix(90, bidirectional=bidirectional, num_buckets=20, max_distance=160)
    np.testing.assert_array_equal(bias, table[buckets].transpose(2, 0, 1))
    # offset -10 is in bucket 6 (floor(5 ln 2 / ln 32) = 1 exactly)
    if bidirectional:
        np.testing.assert_array_equal(bias[:, 10, 0], table[6])


# --- ShawRelativePositions ---------------------------------------------------------------


def test_shaw_uses_the_clipped_offsets_for_keys_and_values():
    layer = ShawRelativePositions(max_distance=2, initializer="random_normal")
    rng = np.random.default_rng(4)
    queries = rng.normal(size=(1, 6, 4)).astype("float32")
    term = to_numpy(layer(queries))
    keys_table, values_table = to_numpy(layer.key_table), to_numpy(layer.value_table)
    rows = clipped_offsets(6, 2) + 2
    expected = np.einsum("qd,qkd->qk", queries[0], keys_table[rows]) / 2.0  # sqrt(depth 4)
    np.testing.assert_allclose(term[0], expected, rtol=1e-5, atol=1e-6)
    weights = rng.random(size=(1, 6, 6)).astype("float32")
    np.testing.assert_allclose(to_numpy(layer.value_term(weights))[0],
                               np.einsum("qk,qkd->qd", weights[0], values_table[rows]), rtol=1e-5, atol=1e-6)


# --- PositionalEncoding: cached decoding ---------------------------------------------------


def test_positional_encoding_adds_the_rows_from_start():
    layer = PositionalEncoding(max_length=64)
    full = to_numpy(layer(np.zeros((1, 64, 8), "float32")))
    for start in (0, 9, 63):
        step = to_numpy(layer(np.zeros((1, 1, 8), "float32"), start=start))
        np.testing.assert_array_equal(step[0, 0], full[0, start])
        np.testing.assert_allclose(step[0, 0], pe_lib.sinusoidal_encoding(1, 8, start=start)[0])
    with pytest.raises(ValueError, match="start=60 plus 5 steps"):
        layer(np.zeros((1, 5, 8), "float32"), start=60)


# --- PositionalSelfAttention: every method of the registry ---------------------------------


@pytest.mark.parametrize("method", ["none", "rope", "rope_pi", "rope_ntk", "rope_yarn", "alibi", "t5", "shaw"])
def test_attention_is_causal_for_every_method(method):
    options = {"scale": 2.0, "original_length": 8} if method.startswith("rope_") else None
    layer = PositionalSelfAttention(2, 4, method=method, method_options=options)
    x = np.random.default_rng(5).normal(size=(1, 7, 8)).astype("float32")
    out = to_numpy(layer(x))
    changed = x.copy()
    changed[:, 5:] += 1.0  # later steps must not change earlier outputs
    np.testing.assert_allclose(to_numpy(layer(changed))[:, :5], out[:, :5], atol=1e-5)
    clone = PositionalSelfAttention.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()


def test_attention_rope_scores_match_the_numpy_rotation():
    layer = PositionalSelfAttention(1, 4, method="rope")
    x = np.random.default_rng(6).normal(size=(1, 5, 4)).astype("float32")
    layer(x)  # builds the projections
    scores = to_numpy(layer.scores(x))[0, 0]
    q = x[0].astype("float64") @ to_numpy(layer.query.kernel).astype("float64")
    k = x[0].astype("float64") @ to_numpy(layer.key.kernel).astype("float64")
    expected = apply_rope(q) @ apply_rope(k).T / 2.0
    lower = np.tril(np.ones((5, 5), bool))
    np.testing.assert_allclose(scores[lower], expected[lower], atol=1e-5)
