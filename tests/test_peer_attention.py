"""Chunks, qk-norm, temperature, videos, interleaved M-RoPE, proportional RoPE and image blocks against transformers.

The values come from transformers 5.24's own modules and mask functions
(``tests/data/make_hf_reference.py``): ``create_chunked_causal_mask``,
``Llama4TextL2Norm``, ``Llama4TextAttention``, ``get_rope_index`` of Qwen2-VL
and Qwen2.5-VL, ``Qwen3VLTextRotaryEmbedding``, ``Gemma4TextRotaryEmbedding``
and Gemma 3's ``create_masks_for_vision_model``. Masks and positions are
integers and compared exactly; the peers compute in float32, so rotations
are compared within a bound derived from float32 angles (2 float32 steps of
the angle and 2 at 1 per cosine, 4 roundings in all on values of ``x``'s
size), and normalised vectors within 4 float32 steps of their size.
"""

import keras
import numpy as np

from peer_reference import FLOAT32_STEP, PEER, array
from pe_lib import position_ids as ids
from pe_lib.layers import PositionalSelfAttention, RotaryEmbedding
from pe_lib.multimodal_rope import apply_mrope

to_numpy = keras.ops.convert_to_numpy
LLAMA4 = PEER["llama4_chunks_norm_and_temperature"]
QWEN = PEER["qwen_vl_videos_padding_and_interleaving"]
GEMMA4 = PEER["gemma4_proportional"]
GEMMA3 = PEER["gemma3_image_blocks"]


def rotation_bound(x, largest_angle):
    """|error| of a float32 rotation: float32 angles and products, on values as large as ``x``'s."""
    return 4 * FLOAT32_STEP * (largest_angle + 2.0) * np.abs(x).max()


def visible_keys(layer, x, **kwargs):
    layer(x)
    return to_numpy(layer.scores(x, **kwargs))[0, 0] > -1e8


def test_chunked_masks_are_llama4s():
    x = np.zeros((1, 8, 8), "float32")
    layer = PositionalSelfAttention(heads=1, key_dim=8, method="rope", chunk_size=LLAMA4["chunk_size"])
    for case in LLAMA4["masks"].values():
        kwargs = {name: np.array(case[name]) for name in ("attention_mask", "position_ids") if case[name]}
        seen = visible_keys(layer, x, **kwargs)
        expected = np.array(case["visible"])
        if "attention_mask" in kwargs:  # a pad's query row: transformers hides every key, as here
            assert not expected[:2].any()
        assert seen.tolist() == expected.tolist()


def test_qk_norm_is_llama4s_l2_norm():
    layer = PositionalSelfAttention(heads=1, key_dim=8, method="rope", qk_norm=True,
                                    qk_norm_epsilon=LLAMA4["rms_norm_eps"])
    x = array(LLAMA4["x"]).astype("float32")
    got = to_numpy(layer._normalize(keras.ops.convert_to_tensor(x)))
    expected = array(LLAMA4["normalized"])
    np.testing.assert_allclose(got, expected, rtol=0, atol=4 * FLOAT32_STEP * np.abs(expected).max())


def test_temperature_by_cache_position_is_llama4s_on_a_packed_row():
    packed = ids.packed_position_ids(LLAMA4["packed_lengths"])[None]
    expected = array(LLAMA4["temperature"])  # by step in the row: position 0 of document 2 gets 1 + 0.1 ln 3
    for index in ("cache_position", "position"):
        layer = PositionalSelfAttention(heads=1, key_dim=2, temperature={
            "kind": "llama4", "floor_scale": LLAMA4["floor_scale"], "attn_scale": LLAMA4["attn_scale"],
            "index": index})
        layer(np.zeros((1, 19, 2), "float32"))
        where = layer._place(np.zeros((1, 19, 2), "float32"), packed, None, None)
        got = to_numpy(layer._query_temperature(where))[0].astype(np.float64)
        if index == "cache_position":
            np.testing.assert_allclose(got, expected, rtol=2 * FLOAT32_STEP)
        else:  # the document's own positions: step 7 starts again at 1
            assert got[7] == 1.0 and expected[7] > 1.1


def test_video_and_left_padded_rope_index_is_qwens():
    # row 0: 2 text, a video of 2 x 4 x 6 patches, 2 text; row 1: 3 pads, 1 text, the video
    for name, interval in (("qwen2_vl", 1.0), ("qwen2_5_vl", QWEN["tokens_per_second"] * QWEN["second_per_grid_ts"][0])):
        expected = np.array(QWEN["get_rope_index"][name]["position_ids"])
        rows = [ids.mrope_position_ids([2, (2, 4, 6), 2], merge=2, time_interval=interval),
                ids.mrope_position_ids([1, (2, 4, 6)], merge=2, time_interval=interval,
                                       attention_mask=QWEN["attention_mask"][1])]
        assert np.stack(rows, axis=1).tolist() == expected.tolist()
        deltas = ids.mrope_deltas(expected, np.array(QWEN["attention_mask"]))
        assert deltas.tolist() == QWEN["get_rope_index"][name]["deltas"]


def test_interleaved_mrope_is_qwen3_vls():
    case = QWEN["qwen3_vl"]
    positions = np.array(case["position_ids"])  # (3, 1, 5)
    query = array(case["query"]).astype("float32")  # (5, 16)
    expected = array(case["rotated"])
    bound = rotation_bound(query, positions.max() * 1.0)
    section = tuple(case["mrope_section"])
    layer = RotaryEmbedding(mrope_section=section, mrope_interleaved=True, base=case["rope_theta"])
    got = to_numpy(layer(query[None, :, None], positions=positions))[0, :, 0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=bound)
    reference = apply_mrope(query.astype(np.float64), positions[:, 0], mrope_section=section,
                            base=case["rope_theta"], interleaved=True)
    np.testing.assert_allclose(reference, expected, rtol=0, atol=bound)
    in_sections = apply_mrope(query.astype(np.float64), positions[:, 0], mrope_section=section,
                              base=case["rope_theta"])
    assert np.abs(in_sections - expected).max() > 1e-3  # the order of the pairs matters


def test_proportional_rope_is_gemma4s():
    params = GEMMA4["rope_parameters"]
    layer = RotaryEmbedding(base=params["rope_theta"], rotary_fraction=params["partial_rotary_factor"],
                            proportional=True)
    query = array(GEMMA4["query"]).astype("float32")  # (4, 32)
    got = to_numpy(layer(query[None, :, None], positions=np.array(GEMMA4["positions"])))[0, :, 0]
    np.testing.assert_allclose(layer.rates, array(GEMMA4["rates"]), rtol=2 * FLOAT32_STEP)
    expected = array(GEMMA4["rotated"])
    np.testing.assert_allclose(got, expected, rtol=0, atol=rotation_bound(query, max(GEMMA4["positions"])))
    unturned = array(GEMMA4["rates"]) == 0
    features = np.concatenate([unturned, unturned])
    np.testing.assert_array_equal(got[:, features], query[:, features])  # rate 0: exactly unchanged
    plain_partial = to_numpy(RotaryEmbedding(base=params["rope_theta"], rotary_fraction=0.25)(
        query[None, :, None], positions=np.array(GEMMA4["positions"])))[0, :, 0]
    assert np.abs(plain_partial - expected).max() > 1e-2  # not GPT-NeoX's partial rotary


def test_image_blocks_are_gemma3s():
    blocks = ids.image_blocks(np.array(GEMMA3["token_type_ids"]))
    assert blocks.tolist() == GEMMA3["block_ids"]
    x = np.zeros((1, 8, 8), "float32")
    mask = np.array(GEMMA3["attention_mask"])
    for name, window in (("full_attention", None), ("sliding_attention", GEMMA3["sliding_window"])):
        layer = PositionalSelfAttention(heads=1, key_dim=8, method="rope", window=window)
        seen = visible_keys(layer, x, attention_mask=mask, block_ids=blocks)
        assert seen.tolist() == GEMMA3["visible"][name], name


def test_rope_deltas_of_one_row_and_refusals_by_hand():
    # 1 text token, then a 4 x 6 image merged 2 x 2 at 1: rows 1..2, columns 1..3; largest 3 + 1 - 7 tokens
    assert ids.mrope_deltas(ids.mrope_position_ids([1, (4, 6)], merge=2)).tolist() == [-3]
    assert ids.mrope_deltas(np.array([[0, 1, 2]] * 3)).tolist() == [0]  # text only: no delta
    # two left pads (position 0) do not count as tokens: largest 1, plus 1, less 2 tokens
    assert ids.mrope_deltas(np.array([[[0, 0, 0, 1]]] * 3), np.array([[0, 0, 1, 1]])).tolist() == [0]
    for bad in (np.zeros((3,), "int64"), np.zeros((3, 2), "float64")):
        try:
            ids.mrope_deltas(bad)
        except ValueError as error:
            assert "position_ids" in str(error)
        else:
            raise AssertionError(f"mrope_deltas accepted {bad!r}")
    assert ids.image_blocks(np.array([1, 1, 0, 0, 1])).tolist() == [0, 0, -1, -1, 1]  # one row, no batch axis
    assert ids.image_blocks(np.array([[2, 1, 0]])).tolist() == [[-1, 0, -1]]  # a video token (2) is no image
