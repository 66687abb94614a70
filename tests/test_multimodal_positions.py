"""M-RoPE, 2-D axial RoPE, packed and left-padded positions, against Hugging Face's code and hand values.

The peer values (``tests/data/hf_reference.json``) come from transformers'
Qwen2-VL modules (``get_rope_index``, ``Qwen2VLRotaryEmbedding``,
``Qwen2VLVisionRotaryEmbedding``), ``DataCollatorWithFlattening``,
``find_packed_sequence_indices`` and generation's position ids, run in an
environment of their own (``tests/data/make_hf_reference.py``). The peers
rotate in float32, so rotated values are compared within a bound derived
from float32 angles (:func:`peer_reference.float32_angle_tolerance`).
"""

import math
import re

import keras
import mpmath
import numpy as np
import pytest

from float_checks import assert_within_ulp
from peer_reference import FLOAT32_STEP, PEER, array
from pe_lib import position_ids as ids
from pe_lib.layers import RotaryEmbedding
from pe_lib.methods import ATTENTION_OPTIONS
from pe_lib.multimodal_rope import apply_axial_rope, apply_mrope, axial_rates, pair_axes, section_angles

MROPE = PEER["qwen2_vl_mrope"]
AXIAL = PEER["qwen2_vl_vision_axial"]
PACKED = PEER["packed_and_padded"]


def float32_bound(x, largest_angle):
    """|error| of a float32 rotation: float32 angles and products, on values as large as ``x``'s."""
    return 4 * FLOAT32_STEP * (largest_angle + 2.0) * np.abs(x).max()


def test_mrope_position_ids_are_qwen2_vls():
    # row 0: 3 text tokens, a 4 x 6 image merged 2 x 2, 2 text tokens
    ours = ids.mrope_position_ids([3, (4, 6), 2], merge=MROPE["spatial_merge_size"])
    assert ours.tolist() == [axis[0] for axis in MROPE["position_ids"]]
    # row 1: two left pads, then 3 text tokens and the image; pads get 0
    padded = ids.mrope_position_ids([3, (4, 6)], merge=2)
    assert [axis[1] for axis in MROPE["position_ids"]] == [[0, 0] + axis for axis in padded.tolist()]


def test_mrope_position_ids_by_hand():
    # text at 0, 1; an image of 2 x 2 tokens from 2 (time 2, rows 2-3, columns 2-3); text from 2 + 2
    assert ids.mrope_position_ids([2, (4, 4), 1], merge=2).tolist() == [
        [0, 1, 2, 2, 2, 2, 4], [0, 1, 2, 2, 3, 3, 4], [0, 1, 2, 3, 2, 3, 4]]


def test_mrope_rotation_is_qwen2_vls():
    query = array(MROPE["query"])[:, 0]  # (batch, length, 128)
    positions = np.array(MROPE["position_ids"])  # (3, batch, length)
    ours = apply_mrope(query, positions, mrope_section=MROPE["mrope_section"], base=MROPE["rope_theta"])
    peer = array(MROPE["rotated"])[:, 0]
    np.testing.assert_allclose(ours, peer, rtol=0, atol=float32_bound(query, positions.max()))


def test_mrope_on_text_is_plain_rope_and_sections_pick_their_axis():
    from pe_lib.rope import apply_rope

    x = np.random.default_rng(0).normal(size=(5, 128))
    text = np.tile(np.arange(3, 8), (3, 1))
    np.testing.assert_allclose(apply_mrope(x, text, mrope_section=(16, 24, 24)), apply_rope(x, np.arange(3, 8)),
                               rtol=0, atol=1e-13)
    # pair 16 is the first of the row's section: its angle is the row times theta_16
    angles = section_angles(np.array([[1], [7], [100]]), np.ones(64), (16, 24, 24))
    assert angles[0, 15] == 1.0 and angles[0, 16] == 7.0 and angles[0, 40] == 100.0
    assert pair_axes((16, 24, 24)).tolist() == [0] * 16 + [1] * 24 + [2] * 24


def test_axial_rope_is_qwen2_vl_vision_towers():
    grid = AXIAL["grid_thw"][0]
    rows, columns = ids.patch_positions(grid[1], grid[2], merge=AXIAL["spatial_merge_size"])
    assert np.stack([rows, columns], axis=-1).tolist() == AXIAL["position_ids"]
    half = axial_rates(AXIAL["head_dim"], base=AXIAL["rope_theta"])[: AXIAL["head_dim"] // 4]
    np.testing.assert_allclose(half, array(AXIAL["inv_freq"]), rtol=4 * FLOAT32_STEP, atol=0)
    query = array(AXIAL["query"])[:, 0]  # (patches, 80)
    ours = apply_axial_rope(query, rows, columns, base=AXIAL["rope_theta"])
    np.testing.assert_allclose(ours, array(AXIAL["rotated"])[:, 0], rtol=0,
                               atol=float32_bound(query, max(rows.max(), columns.max())))


def test_axial_rope_rates_by_hand():
    # head of 8 features, N = 10^4: each axis has the rates of 4 features, 1 and 10^-2
    assert axial_rates(8).tolist() == [1.0, 0.01, 1.0, 0.01]
    x = np.zeros((1, 8))
    x[0, 1] = 1.0  # pair 1: the row's slow pair
    turned = apply_axial_rope(x, [50], [9])
    assert turned[0, 1] == pytest.approx(math.cos(0.5), abs=1e-15)
    assert turned[0, 5] == pytest.approx(math.sin(0.5), abs=1e-15)


def test_packed_positions_and_documents_are_hugging_faces():
    packed = ids.packed_position_ids(PACKED["lengths"])
    assert [packed.tolist()] == PACKED["packed_position_ids"]
    assert ids.packed_documents(packed[None]).tolist() == PACKED["packed_documents"]
    mask = ids.packed_mask(packed)
    # by hand: the document of 1 token sees itself only; the last sees its own 4
    assert mask[3].tolist() == [False, False, False, True, False, False, False, False]
    assert mask[7].tolist() == [False] * 4 + [True] * 4


def test_left_padded_positions_are_hugging_faces():
    assert ids.left_padded_position_ids(PACKED["attention_mask"]).tolist() == PACKED["padded_position_ids"]


@pytest.mark.parametrize("backend_layout", ["mrope", "axial", "padded", "packed"])
def test_keras_layer_matches_the_numpy_references(backend_layout):
    rng = np.random.default_rng(3)
    if backend_layout == "mrope":
        positions = np.array(MROPE["position_ids"])
        x = rng.normal(size=(2, 11, 1, 128)).astype("float32")  # (batch, length, heads, depth)
        layer = RotaryEmbedding(mrope_section=(16, 24, 24), base=1e6)
        expected = apply_mrope(x[:, :, 0].astype(np.float64), positions, mrope_section=(16, 24, 24), base=1e6)
        got = keras.ops.convert_to_numpy(layer(x, positions=positions))[:, :, 0]
        largest = positions.max()
    elif backend_layout == "axial":
        rows, columns = ids.patch_positions(4, 6, merge=2)
        x = rng.normal(size=(1, 24, 1, 80)).astype("float32")
        layer = RotaryEmbedding(mrope_section=(20, 20), axial=True)
        expected = apply_axial_rope(x[0, :, 0].astype(np.float64), rows, columns)
        got = keras.ops.convert_to_numpy(layer(x, positions=np.stack([rows, columns])))[0, :, 0]
        largest = 5
    elif backend_layout == "packed":
        from pe_lib.rope import apply_rope

        packed = np.array(PACKED["packed_position_ids"])  # (1, 8): documents of 3, 1 and 4 tokens
        x = rng.normal(size=(1, 8, 1, 16)).astype("float32")
        expected = np.concatenate([apply_rope(x[0, start:stop, 0].astype(np.float64))
                                   for start, stop in ((0, 3), (3, 4), (4, 8))])[None]
        got = keras.ops.convert_to_numpy(RotaryEmbedding()(x, positions=packed))[:, :, 0]
        largest = 3
    else:
        mask = np.array(PACKED["attention_mask"])
        x = rng.normal(size=(3, 5, 1, 16)).astype("float32")
        layer = RotaryEmbedding()
        from pe_lib.rope import apply_rope

        expected = apply_rope(x[:, :, 0].astype(np.float64), np.array(PACKED["padded_position_ids"]))
        got = keras.ops.convert_to_numpy(layer(x, attention_mask=mask))[:, :, 0]
        largest = 4
    np.testing.assert_allclose(got, expected, rtol=0, atol=float32_bound(x, largest))


@pytest.mark.parametrize("method, temperature", [("rope", None), ("alibi", None),
                                                 ("none", {"kind": "llama4", "floor_scale": 2})])
def test_packed_attention_is_each_document_alone(method, temperature):
    """A packed row attends as its documents would, each alone from position 0."""
    from pe_lib.layers import PositionalSelfAttention

    layer = PositionalSelfAttention(heads=2, key_dim=4, method=method, temperature=temperature)
    x = np.random.default_rng(4).normal(size=(1, 8, 8)).astype("float32")
    packed = ids.packed_position_ids(PACKED["lengths"])[None]  # documents of 3, 1 and 4 tokens
    together = keras.ops.convert_to_numpy(layer(x, position_ids=packed))
    alone = np.concatenate([keras.ops.convert_to_numpy(layer(x[:, start:stop]))
                            for start, stop in ((0, 3), (3, 4), (4, 8))], axis=1)
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-5)
    assert not np.allclose(keras.ops.convert_to_numpy(layer(x)), alone, atol=1e-3)


def test_keras_layer_options_round_trip_and_refuse_bad_input():
    layer = RotaryEmbedding(mrope_section=(16, 24, 24))
    again = RotaryEmbedding.from_config(layer.get_config())
    assert again.mrope_section == (16, 24, 24) and again.axial is False
    x = np.zeros((1, 4, 1, 128), dtype="float32")
    with pytest.raises(ValueError, match="positions"):
        layer(x)  # M-RoPE needs a position per axis
    with pytest.raises(ValueError, match="mrope_section"):
        RotaryEmbedding(mrope_section=(16, 24, 24))(np.zeros((1, 4, 1, 64), dtype="float32"),
                                                     positions=np.zeros((3, 4), dtype="int32"))
    with pytest.raises(ValueError, match="axial"):
        RotaryEmbedding(axial=True)
    with pytest.raises(ValueError, match="attention_mask"):
        RotaryEmbedding()(np.zeros((1, 3, 1, 4), dtype="float32"), attention_mask=np.ones((1, 3)),
                          positions=np.arange(3))


@pytest.mark.parametrize(("call", "words"), [
    (lambda: ids.packed_position_ids([3, 0]), ["lengths", "0"]),
    (lambda: ids.left_padded_position_ids([0, 2]), ["attention_mask"]),
    (lambda: ids.mrope_position_ids([2, (3, 4)], merge=2), ["merge=2", "3"]),
    (lambda: ids.mrope_position_ids(["text"]), ["segments", "'text'"]),
    (lambda: apply_mrope(np.zeros((2, 8)), np.zeros((2, 2), dtype=int), mrope_section=(1, 1, 2)),
     ["positions", "3 axes"]),
    (lambda: axial_rates(6), ["depth", "6"]),
    (lambda: axial_rates(0), ["depth must be >= 4, got 0"]),
    (lambda: pair_axes([2, 0]), ["mrope_section", "0"]),
    (lambda: pair_axes("ab"), ["mrope_section must be a sequence of pair counts, got 'ab'"]),
    (lambda: pair_axes([]), ["mrope_section must name at least one axis, got []"]),
    (lambda: pair_axes([1, 1], interleaved=1), ["interleaved must be True or False, got 1"]),
    (lambda: pair_axes([1, 2, 2], interleaved=True),
     ["interleaved mrope_section=(1, 2, 2): axis 1 needs 3 x 2 = 6 pairs, the head has 5"]),
    (lambda: section_angles([[0], [0]], [1.0], [1, 1]),
     ["rates must have one value per pair, sum(mrope_section) = 2; got shape (1,)"]),
    (lambda: section_angles([[0.5], [0.0]], [1.0, 1.0], [1, 1]), ["positions must be integers, got dtype float64"]),
    (lambda: apply_mrope(np.zeros((1, 8)), [[0], [0], [0]], mrope_section=(1, 1, 2), base=0.0), ["base", "0.0"]),
    (lambda: apply_mrope(np.full((1, 8), np.nan), [[0], [0], [0]], mrope_section=(1, 1, 2)),
     ["x must hold finite numbers"]),
    (lambda: apply_mrope(np.zeros((5, 8)), np.zeros((3, 3), int), mrope_section=(1, 1, 2)),
     ["x must have shape (..., length, depth) = (..., 3, 8) to match the positions, got (5, 8)"]),
    (lambda: apply_mrope(np.zeros((2, 5, 8)), np.zeros((3, 2, 3), int), mrope_section=(1, 1, 2)),
     ["x must have shape (..., length, depth) = (..., 3, 8) to match the positions, got (2, 5, 8)"]),
    (lambda: apply_axial_rope(np.zeros((2, 8)), [0, 1], [0, 1], base=-1.0), ["base", "-1.0"]),
    (lambda: apply_axial_rope(np.zeros((2, 8)), [[0, 1]], [[0, 1]]),
     ["rows and columns must be flat and of one length, got shapes (1, 2) and (1, 2)"]),
])
def test_bad_input_names_the_argument(call, words):
    with pytest.raises((ValueError, TypeError)) as raised:
        call()
    # each word whole: "base" is not found inside "XXbaseXX"
    assert all(re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", str(raised.value)) for word in words), \
        str(raised.value)


def test_text_that_is_not_numbers_is_refused_as_such():
    with pytest.raises(ValueError, match="^x must hold finite numbers$"):
        apply_mrope(np.array([["a"] * 8]), [[0], [0], [0]], mrope_section=(1, 1, 2))


def test_rotations_keep_a_floating_dtype_and_give_integers_float64():
    text = [[0, 1], [0, 1], [0, 1]]
    assert apply_mrope(np.ones((2, 8), np.float32), text, mrope_section=(1, 1, 2)).dtype == np.float32
    turned = apply_mrope(np.ones((2, 8), np.int64), text, mrope_section=(1, 1, 2))
    assert turned.dtype == np.float64
    # position 1 turns pair 0 (rate 1) by 1 radian: (1, 1) becomes (cos 1 - sin 1, sin 1 + cos 1)
    assert turned[1, 0] == pytest.approx(math.cos(1) - math.sin(1), abs=1e-15)
    assert turned[1, 4] == pytest.approx(math.sin(1) + math.cos(1), abs=1e-15)


def test_interleaved_sections_may_fill_the_head_exactly():
    # three axes of 2 pairs: axis 1 takes pairs 1 and 4, axis 2 pairs 2 and 5 (3 x 2 = 6 pairs, all of them)
    assert pair_axes([2, 2, 2], interleaved=True).tolist() == [0, 1, 2, 0, 1, 2]


def test_batched_mrope_positions_line_up_with_the_first_axis_of_x():
    """Rows of text (every axis at one position) under a heads axis: plain RoPE at each row's positions."""
    from pe_lib.rope import apply_rope

    x = np.random.default_rng(3).normal(size=(2, 3, 4, 8))  # (batch, heads, length, depth)
    rows = np.array([[0, 1, 2, 3], [7, 8, 9, 10]])
    got = apply_mrope(x, np.stack([rows] * 3), mrope_section=(1, 1, 2))
    for b in range(2):
        for h in range(3):
            np.testing.assert_allclose(got[b, h], apply_rope(x[b, h], rows[b]), rtol=0, atol=1e-13)


def test_axial_rope_reads_its_base_and_the_last_axis_of_x():
    # N = 100, a head of 4 features: each axis has one pair, of rate 1
    assert axial_rates(4, base=100.0).tolist() == [1.0, 1.0]
    # 100 ** -0.5 comes from NumPy's power, whose last bit varies by processor
    assert_within_ulp(axial_rates(8, base=100.0), [1, mpmath.mpf(1) / 10, 1, mpmath.mpf(1) / 10])
    x = np.zeros((1, 2, 8))  # (heads, patches, depth): the depth is the last axis
    x[..., 1] = 1.0  # pair 1: the row's slow pair, rate 1/10 at N = 100
    turned = apply_axial_rope(x, [5, 0], [0, 5], base=100.0)
    assert turned[0, 0, 1] == pytest.approx(math.cos(0.5), abs=1e-15)
    assert turned[0, 0, 5] == pytest.approx(math.sin(0.5), abs=1e-15)
    assert turned[0, 1, 1] == 1.0 and turned[0, 1, 5] == 0.0


def test_the_registry_lists_them_with_their_peers():
    for name, reference in (("mrope_section", apply_mrope), ("axial", apply_axial_rope),
                            ("packed_positions", ids.packed_position_ids),
                            ("left_padding", ids.left_padded_position_ids)):
        assert ATTENTION_OPTIONS[name].reference is reference and ATTENTION_OPTIONS[name].peers


def test_mrope_angles_keep_positions_above_two_to_the_24():
    # float32 holds no 2**24 + 1: the angles are formed from the exact integers, in float64
    big = 2**24 + 1
    angles = section_angles([[big, 3], [big + 2, 5]], [1.0, 0.5], [1, 1])
    assert angles.tolist() == [[big, (big + 2) / 2], [3.0, 2.5]]


def test_axial_survives_the_config():
    layer = RotaryEmbedding(mrope_section=(2, 2), axial=True, base=100.0)
    clone = RotaryEmbedding.from_config(layer.get_config())
    assert clone.axial is True and clone.get_config() == layer.get_config()
    x = np.random.default_rng(5).normal(size=(1, 3, 1, 8)).astype("float32")
    positions = np.array([[0, 1, 2], [5, 0, 3]])
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(clone(x, positions=positions)),
                                  keras.ops.convert_to_numpy(layer(x, positions=positions)))
    # the layer turns by the rates of its own base, as the NumPy reference does
    expected = apply_axial_rope(x[0, :, 0].astype(np.float64), positions[0], positions[1], base=100.0)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(x, positions=positions))[0, :, 0], expected,
                               rtol=0, atol=2e-6)
    plain = RotaryEmbedding(mrope_section=(2, 2), base=100.0)
    assert not np.allclose(keras.ops.convert_to_numpy(plain(x, positions=positions)),
                           keras.ops.convert_to_numpy(layer(x, positions=positions)), atol=1e-3)


# --- the position builders of pe_lib.position_ids, by hand ---------------------------------------

@pytest.mark.parametrize(("call", "message"), [
    (lambda: ids.packed_position_ids([1], start=-1), "start must be >= 0, got -1"),
    (lambda: ids.packed_position_ids([0]), "lengths must be >= 1, got 0"),
    (lambda: ids.packed_position_ids([]), "lengths must hold at least one document length, got none"),
    (lambda: ids.packed_documents(np.array([], int)), "position_ids must be integers with a sequence axis, got"),
    (lambda: ids.packed_documents([0.0, 1.0]), "position_ids must be integers with a sequence axis, got"),
    (lambda: ids.patch_positions(0, 2), "height must be >= 1, got 0"),
    (lambda: ids.patch_positions(2, 0), "width must be >= 1, got 0"),
    (lambda: ids.patch_positions(2, 2, merge=0), "merge must be >= 1, got 0"),
    (lambda: ids.patch_positions(4, 3, merge=2), "height and width must be multiples of merge=2, got 4 and 3"),
    (lambda: ids.mrope_position_ids([1], merge=0), "merge must be >= 1, got 0"),
    (lambda: ids.mrope_position_ids([0]), "segments must be >= 1, got 0"),
    (lambda: ids.mrope_position_ids([(0, 2)]), "height must be >= 1, got 0"),
    (lambda: ids.mrope_position_ids([(2, 0)]), "width must be >= 1, got 0"),
    (lambda: ids.mrope_position_ids([(0, 2, 2)]), "frames must be >= 1, got 0"),
    (lambda: ids.mrope_position_ids([2.5]), "segments must hold text lengths"),
    (lambda: ids.mrope_position_ids([]), "segments must hold at least one text or image, got none"),
    (lambda: ids.mrope_position_ids([1], time_interval=float("nan")), "time_interval must be a finite number >= 0"),
    (lambda: ids.mrope_position_ids([1], attention_mask=[1, 1]),
     "attention_mask must be 0 and 1 along the row with one 1 per token of the segments (1), got [1, 1]"),
    (lambda: ids.mrope_position_ids([1], attention_mask=[[1]]), "attention_mask must be 0 and 1 along the row"),
    (lambda: ids.image_blocks([0.0, 1.0]), "token_type_ids must be integers along a sequence axis, got"),
])
def test_the_position_builders_refuse_bad_input_by_name(call, message):
    with pytest.raises((ValueError, TypeError), match="^" + re.escape(message)):
        call()


def test_the_position_builders_by_hand():
    assert ids.packed_position_ids([2, 1], start=5).tolist() == [5, 6, 5]
    assert ids.packed_documents([[0]]).tolist() == [[0]]
    documents = ids.packed_documents([[0, 1, 0], [0, 0, 1]])
    assert documents.tolist() == [[0, 0, 1], [0, 1, 1]] and documents.dtype.kind == "i"
    padded = ids.left_padded_position_ids([0, 0, 1, 1])
    assert padded.tolist() == [0, 0, 0, 1] and padded.dtype.kind == "i"
    assert ids.left_padded_position_ids([[False, True, True], [True, True, True]]).tolist() == [[0, 0, 1], [0, 1, 2]]
    assert [a.tolist() for a in ids.patch_positions(1, 2)] == [[0, 0], [0, 1]]
    assert [a.tolist() for a in ids.patch_positions(2, 1)] == [[0, 1], [0, 0]]
    assert [a.tolist() for a in ids.patch_positions(2, 2, merge=2)] == [[0, 0, 1, 1], [0, 1, 0, 1]]
    assert ids.image_blocks([[1, 1, 0], [1, 0, 1]]).tolist() == [[0, 0, -1], [0, -1, 1]]


def test_mrope_positions_by_hand_after_two_texts_and_with_slow_videos():
    # text 0, 1 then 2, 3, 4; a 2 x 2 image from 5 (rows and columns 5 + 0 or 1); text again at 5 + 2 = 7
    got = ids.mrope_position_ids([2, 3, (2, 2), 1])
    assert got.tolist() == [[0, 1, 2, 3, 4, 5, 5, 5, 5, 7], [0, 1, 2, 3, 4, 5, 5, 6, 6, 7],
                            [0, 1, 2, 3, 4, 5, 6, 5, 6, 7]]
    assert got.dtype.kind == "i"
    # three frames of one patch: times floor(0), floor(0.5), floor(1.0); none at all with interval 0
    assert ids.mrope_position_ids([(3, 1, 1)], time_interval=0.5)[0].tolist() == [0, 0, 1]
    assert ids.mrope_position_ids([(2, 1, 1)], time_interval=0)[0].tolist() == [0, 0]
    assert ids.mrope_position_ids([(2, 1, 1)])[0].tolist() == [0, 1]  # Qwen2-VL: one position per time step
    image = ids.mrope_position_ids([1, (2, 4)], merge=2)  # 1 x 2 tokens from 1: columns 1, 2; next at 1 + 2
    assert image.tolist() == [[0, 1, 1], [0, 1, 1], [0, 1, 2]] and image.dtype.kind == "i"
    padded = ids.mrope_position_ids([2], attention_mask=[0, 1, 1])
    assert padded.tolist() == [[0, 0, 1]] * 3 and padded.dtype.kind == "i"


def test_mrope_deltas_by_hand():
    two_rows = np.stack([ids.mrope_position_ids([3]), ids.mrope_position_ids([1, (2, 4)], merge=2)], axis=1)
    deltas = ids.mrope_deltas(two_rows)  # largest 2 and 2, tokens 3 and 3
    assert deltas.tolist() == [0, 0] and deltas.dtype.kind == "i"
    # a left-padded row whose one token is at 0, and a row of pads only: both 0
    positions = np.zeros((3, 2, 2), int)
    assert ids.mrope_deltas(positions, attention_mask=[[0, 1], [0, 0]]).tolist() == [0, 0]
