"""Padding, cached decoding, chunked attention and qk-norm in ``PositionalSelfAttention``.

Each padded or packed row is checked against an independent NumPy attention
(:func:`numpy_attention`, written from the definitions with
:func:`pe_lib.rope.apply_rope`) or against the same row run alone; each
cached step against the same row of one pass over the whole sequence.

*Tolerance.* Every output here passes through fewer than 64 rounded float32
operations on numbers of size at most :math:`S` (three projections of 8
terms, a rotation, a dot product of 4 terms, a softmax over at most 12 keys,
a weighted sum, the output projection of 8 terms), each off by at most half
a step, :math:`2^{-24}` relative: :func:`float32_bound` allows
:math:`64 \\cdot 2^{-23} S`. Two float32 computations of one value (a cached
step and the full pass) may each be that far from the exact one.
"""

import math

import keras
import numpy as np
import pytest

from peer_reference import PEER
from pe_lib import position_ids as ids
from pe_lib.layers import LearnedPositionEmbedding, PositionalEncoding, PositionalSelfAttention
from pe_lib.rope import apply_rope
from pe_lib.rope_scaling import scaled_rates

to_numpy = keras.ops.convert_to_numpy
PACKED = PEER["packed_and_padded"]
MROPE = PEER["qwen2_vl_mrope"]


def float32_bound(*values) -> float:
    """64 float32 steps at the size of the largest of ``values`` (see the module's text)."""
    return 64 * 2.0**-23 * max(1.0, *(float(np.abs(v).max()) for v in values))


def kernels(layer):
    """The four projections of a built layer as float64 arrays (query, key, value, output)."""
    return [to_numpy(dense.kernel).astype(np.float64)
            for dense in (layer.query, layer.key, layer.value, layer.output_projection)]


def numpy_attention(layer, x, visible, positions=None, rates=None):
    """Causal attention written out in float64: ``visible[b, i, j]`` says which keys query i sees.

    With ``positions`` ``(batch, steps)`` the queries and keys are rotated by
    plain RoPE (or ``rates``) at them. A row with no visible key gives 0.
    """
    wq, wk, wv, wo = kernels(layer)
    batch, steps, _ = x.shape
    heads, width = layer.heads, layer.key_dim
    out = np.zeros((batch, steps, heads * width))
    for b in range(batch):
        q = (x[b].astype(np.float64) @ wq).reshape(steps, heads, width)
        k = (x[b].astype(np.float64) @ wk).reshape(steps, heads, width)
        v = (x[b].astype(np.float64) @ wv).reshape(steps, heads, width)
        for h in range(heads):
            qh, kh = q[:, h], k[:, h]
            if positions is not None:
                qh = apply_rope(qh, positions[b], rates=rates)
                kh = apply_rope(kh, positions[b], rates=rates)
            for i in range(steps):
                seen = np.flatnonzero(visible[b, i])
                if seen.size == 0:
                    continue
                scores = kh[seen] @ qh[i] / math.sqrt(width)
                weights = np.exp(scores - scores.max())
                out[b, i, h * width:(h + 1) * width] = weights / weights.sum() @ v[seen, h]
    return out @ wo


def causal_visible(mask):
    """Query i sees key j <= i when both are tokens (1 in ``mask``)."""
    mask = np.asarray(mask, dtype=bool)
    steps = mask.shape[1]
    return np.tril(np.ones((steps, steps), bool))[None] & mask[:, None, :] & mask[:, :, None]


def seed_weights(layer, shape, seed):
    """Build ``layer`` for ``shape`` with weights drawn from ``seed``: the same whatever ran before
    in this process, so that a margin measured on them is the same in any test order."""
    layer.build(shape)
    weights = np.random.default_rng(seed)
    layer.set_weights([weights.normal(size=w.shape).astype("float32") for w in layer.get_weights()])


# --- padding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["none", "rope"])
def test_padded_rows_match_the_numpy_attention_at_hugging_faces_positions(method):
    mask = np.array(PACKED["attention_mask"])  # left pads, none, and a pad between tokens
    x = np.random.default_rng(0).normal(size=(3, 5, 8)).astype("float32")
    layer = PositionalSelfAttention(heads=2, key_dim=4, method=method)
    got = to_numpy(layer(x, attention_mask=mask))
    positions = np.array(PACKED["padded_position_ids"]) if method == "rope" else None
    expected = numpy_attention(layer, x, causal_visible(mask), positions)
    np.testing.assert_allclose(got, expected, rtol=0, atol=float32_bound(expected))
    assert np.all(got[mask == 0] == 0)  # a pad's output is 0


@pytest.mark.parametrize("method", ["rope", "alibi", "t5", "shaw", "none"])
@pytest.mark.parametrize("side", ["left", "right", "middle"])
def test_a_padded_row_gives_what_its_tokens_give_alone(method, side):
    """Pads on either side, or between tokens (T5 and Shaw too: their offsets are in positions)."""
    options = {"embeddings_initializer": "random_normal"} if method == "t5" else None
    layer = PositionalSelfAttention(heads=2, key_dim=4, method=method, method_options=options,
                                    temperature={"kind": "llama4", "floor_scale": 2} if method == "none" else None)
    x = np.random.default_rng(1).normal(size=(1, 6, 8)).astype("float32")
    alone = to_numpy(layer(x[:, :4]))
    padding = np.random.default_rng(2).normal(size=(1, 2, 8)).astype("float32")  # pads hold noise
    if side == "left":
        padded, mask, tokens = np.concatenate([padding, x[:, :4]], 1), [[0, 0, 1, 1, 1, 1]], slice(2, 6)
    elif side == "right":
        padded, mask, tokens = np.concatenate([x[:, :4], padding], 1), [[1, 1, 1, 1, 0, 0]], slice(0, 4)
    else:
        padded = np.concatenate([x[:, :2], padding, x[:, 2:4]], 1)
        mask, tokens = [[1, 1, 0, 0, 1, 1]], [0, 1, 4, 5]
    got = to_numpy(layer(padded, attention_mask=np.array(mask)))
    np.testing.assert_allclose(got[:, tokens], alone, rtol=0, atol=2 * float32_bound(alone))
    pads = {"left": slice(0, 2), "right": slice(4, 6), "middle": slice(2, 4)}[side]
    assert np.all(got[:, pads] == 0)
    if side == "left":  # without the mask the tokens would attend to the pads
        assert not np.allclose(to_numpy(layer(padded))[:, tokens], alone, atol=1e-3)


def test_pads_inside_a_packed_row_start_no_document():
    # documents of 3 and 2 tokens, right-padded by 2; the pads (position 0) are masked, not documents
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope", chunk_size=2)
    x = np.random.default_rng(3).normal(size=(1, 7, 8)).astype("float32")
    positions, mask = np.array([[0, 1, 2, 0, 1, 0, 0]]), np.array([[1, 1, 1, 1, 1, 0, 0]])
    got = to_numpy(layer(x, position_ids=positions, attention_mask=mask))
    alone = np.concatenate([to_numpy(layer(x[:, :3])), to_numpy(layer(x[:, 3:5]))], axis=1)
    np.testing.assert_allclose(got[:, :5], alone, rtol=0, atol=2 * float32_bound(alone))
    assert np.all(got[:, 5:] == 0)


# --- chunked attention and qk-norm (Llama 4) --------------------------------------------------


def visible_keys(layer, x, **kwargs):
    """Which keys each query of row 0 sees, read from the layer's scores (hidden ones are -1e9)."""
    return to_numpy(layer.scores(x, **kwargs))[0, 0] > -1e8


def test_chunks_count_from_the_first_token_and_restart_per_document():
    layer = PositionalSelfAttention(heads=1, key_dim=4, method="rope", chunk_size=3)
    x = np.random.default_rng(4).normal(size=(1, 8, 4)).astype("float32")
    layer(x)
    # two left pads: chunks are steps 2-4 and 5-7, written out by hand
    seen = visible_keys(layer, x, attention_mask=np.array([[0, 0, 1, 1, 1, 1, 1, 1]]))
    expected = np.zeros((8, 8), bool)
    for chunk in ((2, 3, 4), (5, 6, 7)):
        for i in chunk:
            expected[i, [j for j in chunk if j <= i]] = True
    assert seen.tolist() == expected.tolist()
    # packed documents of 5 and 3: chunks 0-2, 3-4 | 5-7
    seen = visible_keys(layer, x, position_ids=np.array([[0, 1, 2, 3, 4, 0, 1, 2]]))
    expected = np.zeros((8, 8), bool)
    for chunk in ((0, 1, 2), (3, 4), (5, 6, 7)):
        for i in chunk:
            expected[i, [j for j in chunk if j <= i]] = True
    assert seen.tolist() == expected.tolist()


def test_qk_norm_divides_rotated_queries_and_keys_by_their_root_mean_square():
    layer = PositionalSelfAttention(heads=1, key_dim=4, method="rope", qk_norm=True)
    x = np.random.default_rng(5).normal(size=(1, 5, 4)).astype("float32")
    layer(x)
    wq, wk, _, _ = kernels(layer)
    q, k = apply_rope(x[0].astype(np.float64) @ wq), apply_rope(x[0].astype(np.float64) @ wk)
    q, k = (v / np.sqrt(np.mean(v**2, axis=-1, keepdims=True) + 1e-5) for v in (q, k))
    expected = q @ k.T / 2.0
    lower = np.tril(np.ones((5, 5), bool))
    got = to_numpy(layer.scores(x))[0, 0]
    np.testing.assert_allclose(got[lower], expected[lower], rtol=0, atol=float32_bound(expected))
    # each normalised vector has root mean square 1 (less the epsilon), so |score| <= sqrt(4) = 2
    assert np.abs(got[lower]).max() <= 2.0


# --- the temperature: by position or by cache position ---------------------------------------


def test_temperature_by_cache_position_is_llama4s_on_a_packed_row():
    """Documents of 7 and 12 tokens, floor_scale 4, attn_scale 0.1: at step 7 (position 0 of the
    second document) transformers' Llama4TextAttention gives 1 + 0.1 ln(1 + floor(8 / 4)) = 1 + 0.1 ln 3."""
    x = np.random.default_rng(6).normal(size=(1, 19, 8)).astype("float32")
    packed = ids.packed_position_ids([7, 12])[None]
    plain = PositionalSelfAttention(heads=2, key_dim=4)
    plain(x)
    scores = to_numpy(plain.scores(x, position_ids=packed))
    visible = scores > -1e8
    by_position = 1 + 0.1 * np.log1p(np.array([(p + 1) // 4 for p in packed[0]], dtype=float))
    by_step = 1 + 0.1 * np.log1p(np.array([(s + 1) // 4 for s in range(19)], dtype=float))
    assert by_position[7] == 1.0 and by_step[7] == pytest.approx(1 + 0.1 * math.log(3), rel=1e-15)
    for index, factors in (("position", by_position), ("cache_position", by_step)):
        heated = PositionalSelfAttention(heads=2, key_dim=4, temperature={
            "kind": "llama4", "floor_scale": 4, "attn_scale": 0.1, "index": index})
        heated(x)
        heated.set_weights(plain.get_weights())
        got = to_numpy(heated.scores(x, position_ids=packed))
        expected = scores * factors[:, None]  # each query's scores times its factor
        np.testing.assert_allclose(got[visible], expected[visible], rtol=0, atol=2 * float32_bound(scores))
    assert np.abs(by_position - by_step).max() > 0.1


# --- cached decoding: every method -------------------------------------------------------------


def decode_in_steps(layer, x, prompt, **prompt_kwargs):
    """The outputs of a prompt of ``prompt`` steps, then of each later step alone with the cache."""
    out, cache = layer.decode(x[:, :prompt], **prompt_kwargs)
    outputs = [to_numpy(out)]
    for step in range(prompt, x.shape[1]):
        out, cache = layer.decode(x[:, step:step + 1], cache)
        outputs.append(to_numpy(out))
    assert tuple(cache["keys"].shape)[2] == x.shape[1]
    return np.concatenate(outputs, axis=1)


ROPE_SCALING = {"scale": 2.0, "original_length": 4}
CASES = {
    "rope": ("rope", None, {}),
    "rope_pi": ("rope_pi", {"scale": 2.0}, {}),
    "rope_ntk": ("rope_ntk", {"scale": 2.0}, {}),
    "rope_yarn": ("rope_yarn", ROPE_SCALING, {}),
    "rope_llama3": ("rope_llama3", ROPE_SCALING, {}),
    "rope partial": ("rope", {"rotary_fraction": 0.5}, {}),
    "alibi": ("alibi", None, {}),
    "t5": ("t5", {"embeddings_initializer": "random_normal"}, {}),
    "shaw": ("shaw", {"max_distance": 3, "initializer": "random_normal"}, {}),
    "window and sinks": ("rope", None, {"window": 3, "sink_tokens": 1, "sink_logit": True}),
    "temperature by position": ("none", None, {"temperature": {"kind": "llama4", "floor_scale": 2}}),
    "temperature by cache position": ("none", None, {"temperature": {"kind": "log_length", "trained_length": 3,
                                                                      "index": "cache_position"}}),
    "chunks and qk-norm": ("rope", None, {"chunk_size": 3, "qk_norm": True}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_cached_step_is_the_row_of_the_full_pass(case):
    method, options, extra = CASES[case]
    layer = PositionalSelfAttention(heads=2, key_dim=4, method=method, method_options=options, **extra)
    x = np.random.default_rng(7).normal(size=(2, 9, 8)).astype("float32")
    full = to_numpy(layer(x))
    if layer.sink_logit:
        layer.sinks.assign(np.array([0.5, -1.0], "float32"))
        full = to_numpy(layer(x))
    got = decode_in_steps(layer, x, prompt=4)
    np.testing.assert_allclose(got, full, rtol=0, atol=2 * float32_bound(full))


@pytest.mark.parametrize("method", ["rope", "alibi"])
def test_scores_with_a_cache_are_the_last_rows_of_the_full_scores(method):
    """``scores`` of a block after a cache: the keys of the cache first, at their positions."""
    layer = PositionalSelfAttention(heads=2, key_dim=4, method=method)
    x = np.random.default_rng(9).normal(size=(2, 6, 8)).astype("float32")
    layer(x)
    full = to_numpy(layer.scores(x))
    _, cache = layer.decode(x[:, :4])
    got = to_numpy(layer.scores(x[:, 4:], cache=cache))
    assert got.shape == (2, 2, 2, 6)
    visible = np.tril(np.ones((6, 6), bool))[4:]
    np.testing.assert_allclose(got[..., visible], full[:, :, 4:][..., visible], rtol=0,
                               atol=2 * float32_bound(full[..., np.tril(np.ones((6, 6), bool))]))
    assert np.all(got[..., ~visible] == -1e9)


def test_a_prompt_with_an_image_block_decodes_as_the_full_pass():
    """Steps 1-3 are one image block (Gemma 3): in the prompt they see each other both ways, as in
    the pass over all 6 steps, and the text after them decodes from the cache."""
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope")
    x = np.random.default_rng(20).normal(size=(1, 6, 8)).astype("float32")
    seed_weights(layer, x.shape, 21)
    blocks = np.array([[-1, 0, 0, 0, -1, -1]])
    full = to_numpy(layer(x, block_ids=blocks))
    out, cache = layer.decode(x[:, :4], block_ids=blocks[:, :4])
    assert keras.backend.standardize_dtype(cache["blocks"].dtype) == "int32"
    outputs = [to_numpy(out)]
    for step in (4, 5):
        out, cache = layer.decode(x[:, step:step + 1], cache)
        outputs.append(to_numpy(out))
    np.testing.assert_allclose(np.concatenate(outputs, axis=1), full, rtol=0, atol=2 * float32_bound(full))
    assert to_numpy(cache["blocks"]).tolist() == [[-1, 0, 0, 0, -1, -1]]
    causal = to_numpy(layer(x))
    assert np.abs(causal[:, 1:3] - full[:, 1:3]).max() > 100 * float32_bound(full)


@pytest.mark.parametrize("method", ["rope_dynamic", "rope_longrope"])
def test_methods_that_follow_the_length_equal_the_pass_over_each_prefix(method):
    """Dynamic NTK and LongRoPE choose their rates by the current length: a cached step at length n is
    the last row of the pass over the first n steps, every key rotated with the rates of n."""
    options = ({"scale": 2.0, "original_length": 4} if method == "rope_dynamic" else
               {"original_length": 4, "short_factor": [1.0, 1.5], "long_factor": [2.0, 3.0]})
    layer = PositionalSelfAttention(heads=1, key_dim=4, method=method, method_options=options)
    x = np.random.default_rng(8).normal(size=(1, 7, 4)).astype("float32")
    got = decode_in_steps(layer, x, prompt=3)
    for n in range(4, 8):
        prefix = to_numpy(layer(x[:, :n]))[:, -1]
        np.testing.assert_allclose(got[:, n - 1], prefix, rtol=0, atol=2 * float32_bound(prefix))


@pytest.mark.parametrize("method", ["rope_dynamic", "rope_longrope"])
def test_a_packed_row_decoded_by_documents_is_the_full_pass(method):
    """Documents of 5 and 3 tokens: the second document's queries, at positions 0-2, take the
    length of all the keys (5, past ``original_length`` 4) as the full pass does, not their own (3).
    A base of 10 makes the second pair's rate large enough to tell the two apart."""
    options = ({"scale": 8.0, "original_length": 4} if method == "rope_dynamic" else
               {"original_length": 4, "short_factor": [1.0, 1.5], "long_factor": [2.0, 3.0]})
    layer = PositionalSelfAttention(heads=1, key_dim=4, method=method, base=10.0, method_options=options)
    x = np.random.default_rng(18).normal(size=(1, 8, 4)).astype("float32")
    seed_weights(layer, x.shape, 19)
    packed = ids.packed_position_ids([5, 3])[None]
    full = to_numpy(layer(x, position_ids=packed))
    _, cache = layer.decode(x[:, :5], position_ids=packed[:, :5])
    got, _ = layer.decode(x[:, 5:], cache, position_ids=packed[:, 5:])
    np.testing.assert_allclose(to_numpy(got), full[:, 5:], rtol=0, atol=2 * float32_bound(full))
    alone = to_numpy(layer(x[:, 5:]))  # the same document at the length of its own 3 tokens
    assert np.abs(alone - full[:, 5:]).max() > 100 * float32_bound(full)


def test_longrope_switches_to_the_long_factors_past_the_original_length():
    """Scores at lengths 4 (short factors) and 5 (long ones, every key included), against NumPy rotations
    by the rates of :func:`scaled_rates`, times the attention factor on queries and keys."""
    factors = {"short_factor": [1.0, 1.5], "long_factor": [2.0, 3.0]}
    layer = PositionalSelfAttention(heads=1, key_dim=4, method="rope_longrope",
                                    method_options={"original_length": 4, "max_length": 16, **factors})
    x = np.random.default_rng(12).normal(size=(1, 5, 4)).astype("float32")
    layer(x)
    wq, wk, _, _ = kernels(layer)
    factor = layer.positions.attention_factor
    assert factor == pytest.approx(math.sqrt(2.0))  # sqrt(1 + ln s / ln L), s = 16 / 4 = L
    for n, rates in ((4, scaled_rates("rope_longrope", 4, original_length=4, length=4, **factors)),
                     (5, scaled_rates("rope_longrope", 4, original_length=4, length=5, **factors))):
        q = apply_rope(x[0, :n].astype(np.float64) @ wq, rates=rates) * factor
        k = apply_rope(x[0, :n].astype(np.float64) @ wk, rates=rates) * factor
        expected = q @ k.T / 2.0
        lower = np.tril(np.ones((n, n), bool))
        got = to_numpy(layer.scores(x[:, :n]))[0, 0]
        np.testing.assert_allclose(got[lower], expected[lower], rtol=0, atol=float32_bound(expected))
    assert not np.allclose(*(scaled_rates("rope_longrope", 4, original_length=4, length=n, **factors)
                             for n in (4, 5)))


def test_sinusoidal_and_learned_tables_decode_from_their_start():
    x = np.random.default_rng(9).normal(size=(1, 6, 8)).astype("float32")
    for table in (PositionalEncoding(max_length=6), LearnedPositionEmbedding(max_length=6)):
        attention = PositionalSelfAttention(heads=2, key_dim=4)
        full = to_numpy(attention(table(x)))
        out, cache = attention.decode(table(x[:, :2]))
        outputs = [to_numpy(out)]
        for step in range(2, 6):
            out, cache = attention.decode(table(x[:, step:step + 1], start=step), cache)
            outputs.append(to_numpy(out))
        np.testing.assert_allclose(np.concatenate(outputs, 1), full, rtol=0, atol=2 * float32_bound(full))
    with pytest.raises(ValueError, match="start=5 plus 2 steps"):
        LearnedPositionEmbedding(max_length=6)(x[:, :2], start=5)


def decode_padded(layer, x, mask, prompt, table=None):
    """Decode ``x`` with a padded prompt of ``prompt`` steps, then a step at a time (every row a token).

    ``table``: a layer of positions added before the attention, at each row's own positions.
    """
    def placed(block, positions):
        return block if table is None else table(block, positions=positions)

    out, cache = layer.decode(placed(x[:, :prompt], ids.left_padded_position_ids(mask)), attention_mask=mask)
    outputs = [to_numpy(out)]
    for step in range(prompt, x.shape[1]):
        out, cache = layer.decode(placed(x[:, step:step + 1], layer.next_positions(cache)), cache)
        outputs.append(to_numpy(out))
    return np.concatenate(outputs, axis=1)


PADDED_CASES = {
    "alibi": ("alibi", None, None),
    "t5": ("t5", {"embeddings_initializer": "random_normal"}, None),
    "shaw": ("shaw", {"max_distance": 3, "initializer": "random_normal"}, None),
    "sinusoidal": ("none", None, lambda: PositionalEncoding(max_length=8)),
    "learned": ("none", None, lambda: LearnedPositionEmbedding(max_length=8, initializer="random_normal")),
}


@pytest.mark.parametrize("case", list(PADDED_CASES))
@pytest.mark.parametrize("side", ["left", "right"])
def test_padded_prompts_decode_as_the_full_pass_and_as_their_rows_alone(case, side):
    """Row 0 has no pad; row 1 a prompt of 3 tokens and 2 pads, then 3 decoded steps. Each step equals
    the row of the full pass (the pads inside the row after a right-padded prompt), and row 1's tokens
    give what they give alone: the pads take no position, so the distances and the table's rows are
    those of the tokens alone."""
    method, options, make_table = PADDED_CASES[case]
    layer = PositionalSelfAttention(heads=2, key_dim=4, method=method, method_options=options)
    table = None if make_table is None else make_table()
    x = np.random.default_rng(13).normal(size=(2, 8, 8)).astype("float32")
    prompt = [[1, 1, 1, 1, 1], [0, 0, 1, 1, 1] if side == "left" else [1, 1, 1, 0, 0]]
    mask = np.concatenate([np.array(prompt), np.ones((2, 3), int)], axis=1)
    got = decode_padded(layer, x, np.array(prompt), prompt=5, table=table)
    inputs = x if table is None else table(x, positions=ids.left_padded_position_ids(mask))
    full = to_numpy(layer(inputs, attention_mask=mask))
    np.testing.assert_allclose(got, full, rtol=0, atol=2 * float32_bound(full))
    tokens = np.flatnonzero(mask[1])
    row = x[1:, tokens] if table is None else table(x[1:, tokens])
    alone = to_numpy(layer(row))[0]
    np.testing.assert_allclose(got[1, tokens], alone, rtol=0, atol=2 * float32_bound(alone))
    assert np.all(got[1, mask[1] == 0] == 0)


def test_alibi_with_one_head_has_the_slope_two_to_the_minus_8():
    """One head: ALiBi's slope is 2^(-8/1), so score (i, j) is q_i . k_j / sqrt(4) - (i - j) / 256."""
    layer = PositionalSelfAttention(heads=1, key_dim=4, method="alibi")
    x = np.random.default_rng(19).normal(size=(1, 5, 4)).astype("float32")
    layer(x)
    wq, wk, _, _ = kernels(layer)
    q, k = x[0].astype(np.float64) @ wq, x[0].astype(np.float64) @ wk
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    expected = q @ k.T / 2.0 - (i - j) / 256
    lower = j <= i
    got = to_numpy(layer.scores(x))[0, 0]
    np.testing.assert_allclose(got[lower], expected[lower], rtol=0, atol=float32_bound(expected))
    assert np.all(got[~lower] == -1e9)


def test_alibi_with_pads_between_tokens_is_blooms():
    """transformers' BLOOM adds ``m_h * ((cumsum(mask) - 1) * mask)[j]`` to the scores of key j: a pad is
    not a step. Written out in float64 with the slopes of 2 heads, 2^-4 and 2^-8 (by hand), it is
    what the layer gives; counting the pads as steps would not be."""
    mask = np.array([[1, 1, 0, 0, 0, 1, 1, 1], [0, 0, 1, 0, 1, 1, 1, 1]])
    x = np.random.default_rng(14).normal(size=(2, 8, 8)).astype("float32")
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="alibi")
    seed_weights(layer, x.shape, 23)
    got = to_numpy(layer(x, attention_mask=mask))
    slopes = np.array([2.0**-4, 2.0**-8])

    def with_bias(key_places):
        wq, wk, wv, wo = kernels(layer)
        out = np.zeros((2, 8, 8))
        for b in range(2):
            q, k, v = ((x[b].astype(np.float64) @ w).reshape(8, 2, 4) for w in (wq, wk, wv))
            for h in range(2):
                for i in np.flatnonzero(mask[b]):
                    seen = [j for j in range(i + 1) if mask[b, j]]
                    scores = k[seen, h] @ q[i, h] / 2.0 + slopes[h] * key_places[b, seen]
                    weights = np.exp(scores - scores.max())
                    out[b, i, h * 4:(h + 1) * 4] = weights / weights.sum() @ v[seen, h]
        return out @ wo

    bloom = with_bias((np.cumsum(mask, axis=-1) - 1) * mask)
    np.testing.assert_allclose(got, bloom, rtol=0, atol=float32_bound(bloom))
    by_steps = with_bias(np.broadcast_to(np.arange(8), (2, 8)))
    assert np.abs(by_steps - bloom).max() > 100 * float32_bound(bloom)


@pytest.mark.parametrize("mask, message", [
    (np.array([[1, 1, 2]]), r"attention_mask must hold 1 \(token\) and 0 \(pad\) only, got 2 in \[\[1, 1, 2\]\]"),
    (np.array([[0, 1, 3]]), r"attention_mask must hold 1 \(token\) and 0 \(pad\) only, got 3 in \[\[0, 1, 3\]\]"),
    (np.array([[1.0, 0.5, 1.0]]), r"attention_mask must hold 1 \(token\) and 0 \(pad\) only, got 0.5"),
    (np.ones((1, 4)), r"attention_mask must have shape \(batch, steps\) = \(1, 3\), got shape \(1, 4\)"),
])
def test_a_mask_that_is_not_one_and_zero_per_step_is_refused(mask, message):
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="alibi")
    with pytest.raises(ValueError, match=message):
        layer.decode(np.zeros((1, 3, 8), "float32"), attention_mask=mask)


@pytest.mark.parametrize("make", [lambda: PositionalEncoding(max_length=4),
                                  lambda: LearnedPositionEmbedding(max_length=4)])
def test_table_positions_outside_the_table_or_of_the_wrong_shape_are_refused(make):
    table, x = make(), np.zeros((2, 3, 4), "float32")
    name = type(table).__name__
    with pytest.raises(ValueError, match=name + r": positions must be whole numbers from 0 to max_length - 1 = 3, "
                                              r"got 4 in \[\[0, 1, 2\], \[2, 3, 4\]\]"):
        table(x, positions=np.array([[0, 1, 2], [2, 3, 4]]))
    with pytest.raises(ValueError, match=r"positions must be whole numbers .* got -1"):
        table(x, positions=np.array([[0, 1, 2], [-1, 0, 1]]))
    with pytest.raises(ValueError, match=r"positions must have shape \(steps,\) or \(batch, steps\) with "
                                         r"steps = 3, got shape \(2, 2\)"):
        table(x, positions=np.array([[0, 1], [0, 1]]))
    with pytest.raises(ValueError, match=name + r": give start or positions, not both \(got start=1\)"):
        table(x, start=1, positions=np.array([0, 1, 2]))


@pytest.mark.parametrize("make", [lambda: PositionalEncoding(max_length=4),
                                  lambda: LearnedPositionEmbedding(max_length=4)])
def test_one_row_of_table_positions_serves_every_row(make):
    table, x = make(), np.zeros((2, 3, 4), "float32")
    table.build(x.shape)
    rows = to_numpy(table.table)[[3, 0, 1]]  # the rows of positions 3, 0, 1, from the table itself
    out = to_numpy(table(x, positions=np.array([3, 0, 1])))
    np.testing.assert_array_equal(out, np.broadcast_to(rows, (2, 3, 4)))


def test_left_padded_prompts_decode_as_their_rows_alone():
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope", window=4)
    x = np.random.default_rng(10).normal(size=(2, 8, 8)).astype("float32")
    mask = np.array([[1] * 5, [0, 0, 1, 1, 1]])  # row 1: a prompt of 3 after two pads
    got = decode_in_steps(layer, x, prompt=5, attention_mask=mask)
    np.testing.assert_allclose(got[0], to_numpy(layer(x[:1]))[0], rtol=0, atol=1e-5)
    alone = to_numpy(layer(x[1:, 2:]))[0]
    np.testing.assert_allclose(got[1, 2:], alone, rtol=0, atol=2 * float32_bound(alone))


def test_mrope_decoding_continues_after_the_largest_position():
    """Qwen2-VL: 3 text tokens and a 4 x 6 image merged 2 x 2 (positions up to 5), then text. The next text
    token is at 6 = step 9 + rope_deltas -3, transformers' ``cache_position + rope_deltas``."""
    section = (1, 1, 2)
    layer = PositionalSelfAttention(heads=1, key_dim=8, method="rope", method_options={"mrope_section": section})
    positions = np.array(MROPE["position_ids"])[:, :1]  # row 0: 3 text, the image, 2 text
    x = np.random.default_rng(11).normal(size=(1, 11, 8)).astype("float32")
    full = to_numpy(layer(x, position_ids=positions))
    out, cache = layer.decode(x[:, :9], position_ids=positions[:, :, :9])
    outputs = [to_numpy(out)]
    for step in (9, 10):
        out, cache = layer.decode(x[:, step:step + 1], cache)
        outputs.append(to_numpy(out))
    assert to_numpy(cache["positions"])[:, 0, 9:].tolist() == [[6, 7]] * 3
    assert [9 + MROPE["deltas"][0], 10 + MROPE["deltas"][0]] == [6, 7]
    np.testing.assert_allclose(np.concatenate(outputs, 1), full, rtol=0, atol=2 * float32_bound(full))


def test_decoding_options_survive_the_config_and_bad_ones_are_refused():
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope", chunk_size=8, qk_norm=True,
                                    temperature={"kind": "constant", "factor": 2.0, "index": "cache_position"})
    clone = PositionalSelfAttention.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert (clone.chunk_size, clone.qk_norm, clone.temperature["index"]) == (8, True, "cache_position")
    with pytest.raises(ValueError, match="qk_norm.*'alibi'"):
        PositionalSelfAttention(heads=2, key_dim=4, method="alibi", qk_norm=True)
    with pytest.raises(ValueError, match="chunk_size"):
        PositionalSelfAttention(heads=2, key_dim=4, chunk_size=0)
    with pytest.raises(ValueError, match="index"):
        PositionalSelfAttention(heads=2, key_dim=4, temperature={"kind": "llama4", "index": "step"})
    with pytest.raises(ValueError, match=r"attention_mask.*\(1, 3\)"):
        PositionalSelfAttention(heads=2, key_dim=4)(np.zeros((1, 3, 8), "float32"), attention_mask=np.ones((1, 4)))


def test_a_cache_of_another_layer_or_no_cache_at_all_is_refused():
    """Each part of the cache is checked against this layer's heads, key_dim, rows and steps."""
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope", name="attention")
    x = np.zeros((2, 1, 8), "float32")
    _, cache = layer.decode(np.zeros((2, 3, 8), "float32"))
    mrope = PositionalSelfAttention(heads=2, key_dim=4, method="rope", method_options={"mrope_section": (1, 1)})
    wrong = {
        r"cache\['keys'\] must have shape \(batch, heads, steps, key_dim\) = \(2, 2, 3, 4\), got shape "
        r"\(2, 1, 3, 4\)": {**cache, "keys": cache["keys"][:, :1]},
        r"cache\['keys'\] must have shape \(batch, heads, steps, key_dim\) = \(2, 2, 0, 4\), got shape "
        r"\(2, 2, 0, 2\)": PositionalSelfAttention(heads=2, key_dim=2).empty_cache(2) | {
            "keys": np.zeros((2, 2, 0, 2), "float32")},
        r"cache\['keys'\] must have shape \(batch, heads, steps, key_dim\) = \(2, 2, 0, 4\), got shape "
        r"\(3, 2, 0, 4\)": {**layer.empty_cache(3), "mask": np.zeros((2, 0), "int32")},
        r"cache\['values'\] must have shape \(batch, heads, steps, key_dim\) = \(2, 2, 3, 4\), got shape "
        r"\(2, 2, 2, 4\)": {**cache, "values": cache["values"][:, :, 1:]},
        r"cache\['positions'\] must have shape \(batch, steps\) = \(2, 3\), got shape \(3, 2, 3\)":
            {**cache, "positions": np.zeros((3, 2, 3), "int32")},
        r"cache\['mask'\] must have shape \(batch, steps\) = \(2, 3\), got shape \(2, 3, 1\)":
            {**cache, "mask": np.ones((2, 3, 1), "int32")},
        r"cache\['blocks'\] must have shape \(batch, steps\) = \(2, 3\), got shape \(2, 2\)":
            {**cache, "blocks": np.zeros((2, 2), "int32")},
        r"cache must be a dict of \['keys', 'values', 'positions', 'mask', 'blocks'\] from empty_cache or "
        r"decode, got \['keys', 'mask', 'positions', 'values'\]":
            {name: cache[name] for name in ("keys", "values", "positions", "mask")},
        r"cache must be a dict .* got tuple": tuple(cache.values()),
    }
    for message, bad in wrong.items():
        with pytest.raises(ValueError, match=r"^attention: " + message + "$"):
            layer.decode(x, bad)
    with pytest.raises(ValueError, match=r"^attention: cache\['keys'\] must have shape \(batch, heads, steps, "
                                         r"key_dim\) = \(2, 2, 0, 4\), got shape \(3, 2, 0, 4\)$"):
        layer.decode(x, layer.empty_cache(3))  # a cache of 3 rows for 2
    with pytest.raises(ValueError, match=r"^attention: cache\['positions'\] must have shape \(batch, steps\) = "
                                         r"\(2, 0\), got shape \(2, 2, 0\)$"):
        layer.next_positions(mrope.empty_cache(2))
    with pytest.raises(ValueError, match=r"cache\['positions'\] must have shape \(2, batch, steps\) = \(2, 2, 3\), "
                                         r"got shape \(2, 3\)"):
        mrope.decode(x, cache)


def test_one_row_of_position_ids_serves_every_row_and_a_wrong_shape_is_refused():
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope", name="attention")
    mrope = PositionalSelfAttention(heads=2, key_dim=4, method="rope", method_options={"mrope_section": (1, 1)},
                                    name="mrope")
    x = np.random.default_rng(15).normal(size=(2, 5, 8)).astype("float32")
    packed = np.array([0, 1, 2, 0, 1])
    for attention, row in ((layer, packed), (mrope, np.stack([packed, packed[::-1]]))):
        each = to_numpy(attention(x, position_ids=np.stack([row, row], axis=-2)))
        np.testing.assert_array_equal(to_numpy(attention(x, position_ids=row)), each)
        assert np.abs(each - to_numpy(attention(x))).max() > 1e-3  # the positions were used
    with pytest.raises(ValueError, match=r"^attention: position_ids must have shape \(batch, steps\), "
                                         r"got shape \(2, 5, 1\)$"):
        layer.scores(x, position_ids=packed[None, :, None].repeat(2, 0))
    with pytest.raises(ValueError, match=r"^mrope: position_ids must have shape \(2, batch, steps\), "
                                         r"got shape \(5,\)$"):
        mrope.scores(x, position_ids=packed)
    with pytest.raises(ValueError, match=r"^attention: position_ids must be integers, got dtype float32$"):
        layer.scores(x, position_ids=(packed + 0.5).astype("float32"))


def test_a_cache_keeps_keys_and_values_in_the_compute_dtype():
    """Empty or grown, its keys and values are in the compute dtype, its positions, mask and blocks int32."""
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="alibi", dtype="mixed_float16")
    x = np.random.default_rng(21).normal(size=(1, 3, 8)).astype("float16")
    cache = layer.empty_cache(1)
    for block in (None, x[:, :2], x[:, 2:]):
        if block is not None:
            out, cache = layer.decode(block, cache)
            assert keras.backend.standardize_dtype(out.dtype) == "float16"
        assert {name: keras.backend.standardize_dtype(value.dtype) for name, value in cache.items()} == {
            "keys": "float16", "values": "float16", "positions": "int32", "mask": "int32", "blocks": "int32"}
    assert tuple(cache["mask"].shape) == (1, 3)


def test_an_empty_cache_needs_a_whole_number_of_rows():
    layer = PositionalSelfAttention(heads=2, key_dim=4)
    assert tuple(layer.empty_cache(1)["mask"].shape) == (1, 0)
    with pytest.raises(ValueError, match=r"^batch must be >= 1, got 0$"):
        layer.empty_cache(0)
    with pytest.raises(TypeError, match=r"^batch must be an integer, got 2.0 \(float\)$"):
        layer.empty_cache(2.0)


def test_the_next_position_of_a_row_without_tokens_is_0():
    """Row 0 is all pads, row 1 has tokens at positions 0 and 1 with a pad between them; M-RoPE goes on
    from the largest position of any axis (here 4, on the second axis of row 1's first token)."""
    mask = np.array([[0, 0, 0], [1, 0, 1]])
    x = np.random.default_rng(16).normal(size=(2, 3, 8)).astype("float32")
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="rope")
    out, cache = layer.decode(x, attention_mask=mask)
    assert to_numpy(cache["positions"]).tolist() == [[0, 0, 0], [0, 0, 1]]  # a pad's position is 0
    assert to_numpy(layer.next_positions(cache, steps=2)).tolist() == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match=r"^steps must be >= 1, got 0$"):
        layer.next_positions(cache, steps=0)
    with pytest.raises(TypeError, match=r"^steps must be an integer, got 2.0 \(float\)$"):
        layer.next_positions(cache, steps=2.0)
    assert np.all(to_numpy(out)[mask == 0] == 0)
    mrope = PositionalSelfAttention(heads=2, key_dim=4, method="rope", method_options={"mrope_section": (1, 1)})
    positions = np.array([[[7, 7, 7], [0, 5, 1]], [[7, 7, 7], [4, 5, 2]]])  # (axes, batch, steps); pads 7, 5
    _, cache = mrope.decode(x, position_ids=positions, attention_mask=mask)
    assert to_numpy(mrope.next_positions(cache)).tolist() == [[0], [5]]


def test_the_next_position_is_exact_beyond_float32s_integers():
    """After a token at position 2^24 + 1, which float32 would round to 2^24, the next is 2^24 + 2,
    an int32 (the cache keeps its positions in int32 too)."""
    layer = PositionalSelfAttention(heads=2, key_dim=4, method="alibi")
    x = np.random.default_rng(17).normal(size=(1, 2, 8)).astype("float32")
    _, cache = layer.decode(x, position_ids=np.array([[2**24, 2**24 + 1]]))
    following = layer.next_positions(cache, steps=2)
    assert keras.backend.standardize_dtype(following.dtype) == "int32"
    assert to_numpy(following).tolist() == [[2**24 + 2, 2**24 + 3]]
    _, cache = layer.decode(x[:, :1], cache)
    assert keras.backend.standardize_dtype(cache["positions"].dtype) == "int32"
    assert to_numpy(cache["positions"]).tolist() == [[2**24, 2**24 + 1, 2**24 + 2]]


def test_without_position_ids_every_mrope_axis_counts_the_tokens():
    """Text alone: each of M-RoPE's two axes takes the position of a plain row, pads at 0."""
    mrope = PositionalSelfAttention(heads=2, key_dim=4, method="rope", method_options={"mrope_section": (1, 1)})
    x = np.random.default_rng(22).normal(size=(1, 4, 8)).astype("float32")
    mask = np.array([[0, 1, 1, 1]])
    counted = np.array([[0, 0, 1, 2]])
    given = to_numpy(mrope(x, position_ids=np.stack([counted, counted]), attention_mask=mask))
    np.testing.assert_array_equal(to_numpy(mrope(x, attention_mask=mask)), given)
    _, cache = mrope.decode(x, attention_mask=mask)
    assert to_numpy(cache["positions"]).tolist() == [[[0, 0, 1, 2]], [[0, 0, 1, 2]]]


def test_a_packed_row_goes_on_from_its_last_tokens_position_not_its_largest():
    """Two documents packed in one row, positions 0-5 then 0-2: the next token is the third
    document's position 3 (Hugging Face goes on from the last position id), not 6."""
    layer = PositionalSelfAttention(heads=1, key_dim=2, method="rope")
    _, cache = layer.decode(np.zeros((1, 9, 2), "float32"), position_ids=np.array([[0, 1, 2, 3, 4, 5, 0, 1, 2]]))
    assert keras.ops.convert_to_numpy(layer.next_positions(cache, steps=2)).tolist() == [[3, 4]]
