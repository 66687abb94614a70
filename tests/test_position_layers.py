"""The attention-side layers: each against its NumPy reference and its defining property."""

import math
import re

import keras
import mpmath
import numpy as np
import pytest

import pe_lib
from pe_lib.alibi import alibi_block
from pe_lib.layers import (
    AlibiBias,
    LearnedPositionEmbedding,
    PositionalEncoding,
    PositionalSelfAttention,
    RotaryEmbedding,
    ShawRelativePositions,
    T5RelativeBias,
)
from pe_lib.rope import apply_rope
from pe_lib.rope_scaling import scaled_rates
from pe_lib.shaw import clipped_offsets
from pe_lib.t5 import bucket_matrix

to_numpy = keras.ops.convert_to_numpy


@pytest.fixture
def policy():
    """Set a dtype policy for one test and restore float32 afterwards."""
    yield keras.config.set_dtype_policy
    keras.config.set_dtype_policy("float32")


# --- RotaryEmbedding ---------------------------------------------------------------------

YARN_FACTOR_4 = 1.1386294361119891  # 0.1 ln 4 + 1, by hand


def has_float64():
    return keras.backend.standardize_dtype(keras.ops.convert_to_tensor(np.zeros(1)).dtype) == "float64"


def mpmath_rotation(x, positions, rates, layout="half-split"):
    """Rotate the last axis of x (length, depth) pair by pair with mpmath's cos and sin at 40 digits."""
    import mpmath

    mpmath.mp.dps = 40
    half = len(rates)
    out = np.array(x, dtype=np.float64, copy=True)
    for row, m in enumerate(positions):
        for i, rate in enumerate(rates):
            angle = mpmath.mpf(int(m)) * mpmath.mpf(float(rate))
            c, s = mpmath.cos(angle), mpmath.sin(angle)
            a, b = (i, i + half) if layout == "half-split" else (2 * i, 2 * i + 1)
            xa, xb = mpmath.mpf(float(x[row, a])), mpmath.mpf(float(x[row, b]))
            out[row, a], out[row, b] = float(xa * c - xb * s), float(xa * s + xb * c)
    return out


@pytest.mark.parametrize("layout", ["half-split", "interleaved"])
@pytest.mark.parametrize(
    ("method", "factor"),
    [("rope", 1.0), ("rope_pi", 1.0), ("rope_ntk", 1.0), ("rope_yarn", YARN_FACTOR_4),
     ("rope_yarn_paper", YARN_FACTOR_4), ("rope_llama3", 1.0)],
)
def test_rotary_embedding_matches_the_numpy_reference(layout, method, factor):
    x = np.random.default_rng(0).normal(size=(2, 6, 3, 8)).astype("float32")
    layer = RotaryEmbedding(method=method, layout=layout, scale=4.0, original_length=16)
    out = to_numpy(layer(x, start_index=5))
    rates = scaled_rates(method, 8, scale=4.0, original_length=16)
    reference = apply_rope(x.astype("float64"), np.arange(5, 11), sequence_axis=1, layout=layout, rates=rates)
    np.testing.assert_allclose(out, reference * factor, rtol=0, atol=2e-6)


def test_yarn_multiplies_every_rotated_vector_by_its_attention_factor():
    x = np.random.default_rng(1).normal(size=(1, 5, 2, 16)).astype("float32")
    norms = np.linalg.norm(x.astype("float64"), axis=-1)
    for options, factor in [
        ({}, YARN_FACTOR_4),
        ({"attention_factor": 0.5}, 0.5),
        ({"mscale": 0.707, "mscale_all_dim": 1.0}, (0.0707 * math.log(4) + 1) / YARN_FACTOR_4),
    ]:
        out = to_numpy(RotaryEmbedding("rope_yarn", scale=4.0, original_length=64, **options)(x))
        np.testing.assert_allclose(np.linalg.norm(out.astype("float64"), axis=-1) / norms, factor, rtol=1e-6)
    plain = to_numpy(RotaryEmbedding("rope_pi", scale=4.0)(x))
    np.testing.assert_allclose(np.linalg.norm(plain.astype("float64"), axis=-1), norms, rtol=1e-6)


def test_yarn_scale_may_be_the_ratio_of_the_contexts():
    x = np.random.default_rng(2).normal(size=(1, 7, 1, 8)).astype("float32")
    by_ratio = RotaryEmbedding("rope_yarn", original_length=4096, max_length=16384)
    by_scale = RotaryEmbedding("rope_yarn", original_length=4096, scale=4.0)
    np.testing.assert_array_equal(to_numpy(by_ratio(x, start_index=9000)), to_numpy(by_scale(x, start_index=9000)))
    with pytest.raises(ValueError, match="scale=2.0 disagrees"):
        RotaryEmbedding("rope_yarn", original_length=4096, max_length=16384, scale=2.0)
    # a scale that agrees is taken; one a quarter off is refused, in full
    assert RotaryEmbedding("rope_yarn", original_length=16, max_length=20, scale=1.25).effective_scale == 1.25
    with pytest.raises(ValueError, match=re.escape(
            "scale=1.5 disagrees with max_length / original_length = 20 / 16 = 1.25; give one or the other")):
        RotaryEmbedding("rope_yarn", original_length=16, max_length=20, scale=1.5)
    # agreement is to round-off only: a scale 2**-30 or a millionth off is refused
    for scale in (1.25 + 2.0**-30, 1.25 * (1 + 1e-6)):
        with pytest.raises(ValueError, match=re.escape(f"scale={scale!r} disagrees")):
            RotaryEmbedding("rope_yarn", original_length=16, max_length=20, scale=scale)


@pytest.mark.parametrize("method", ["rope_pi", "rope_ntk"])
def test_a_scaled_method_without_a_scale_is_plain_rope(method):
    x = np.random.default_rng(7).normal(size=(1, 4, 1, 8)).astype("float32")
    layer = RotaryEmbedding(method)
    assert layer.effective_scale == 1.0
    np.testing.assert_allclose(to_numpy(layer(x, start_index=300)),
                               apply_rope(x.astype("float64"), np.arange(300, 304), sequence_axis=1),
                               rtol=0, atol=2e-6)


def test_an_attention_factor_of_two_doubles_every_rotated_vector():
    x = np.random.default_rng(8).normal(size=(1, 3, 1, 8)).astype("float32")
    layer = RotaryEmbedding("rope_yarn", scale=4.0, original_length=16, attention_factor=2.0)
    reference = apply_rope(x.astype("float64"), np.arange(3), sequence_axis=1,
                           rates=scaled_rates("rope_yarn", 8, scale=4.0, original_length=16))
    np.testing.assert_allclose(to_numpy(layer(x)), 2.0 * reference, rtol=0, atol=4e-6)


def test_rotary_embedding_counts_positions_from_the_attention_mask():
    x = np.random.default_rng(9).normal(size=(2, 4, 1, 8)).astype("float32")
    mask = np.array([[0, 0, 1, 1], [1, 1, 1, 1]])
    out = to_numpy(RotaryEmbedding()(x, attention_mask=mask))
    # by hand: a token's position is the count of tokens before it, a pad's 0
    for row, positions in enumerate(([0, 0, 0, 1], [0, 1, 2, 3])):
        np.testing.assert_allclose(out[row], apply_rope(x[row].astype("float64"), np.array(positions),
                                                        sequence_axis=0), rtol=0, atol=2e-6)


@pytest.mark.parametrize(("factors", "message"), [
    ([[1.0, 1.0]], "short_factor must be a flat sequence of numbers, one per pair; got shape (1, 2)"),
    (2.0, "short_factor must be a flat sequence of numbers, one per pair; got shape ()"),
    ([1.0, "x"], "short_factor must be a sequence of numbers, got [1.0, 'x']"),
    ([1.0, None], "short_factor must hold positive finite numbers, one per pair; got [1.0, None]"),
    ([1.0, 0.0], "short_factor must hold positive finite numbers, one per pair; got [1.0, 0.0]"),
    ([1.0, float("inf")], "short_factor must hold positive finite numbers, one per pair; got [1.0, inf]"),
])
def test_longrope_factors_that_are_not_a_flat_list_of_numbers_are_refused(factors, message):
    with pytest.raises((TypeError, ValueError), match="^" + re.escape(message) + "$"):
        RotaryEmbedding("rope_longrope", original_length=8, short_factor=factors)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"method": "rope_pi", "beta_fast": 16.0}, ["beta_fast", "rope_pi"]),
        ({"method": "rope_llama3", "scale": 8.0}, ["original_length", "rope_llama3"]),
        ({"method": "rope_yarn", "original_length": 16, "alpha": 2.0}, ["alpha", "rope_yarn"]),
        ({"method": "rope", "rotary_fraction": 0.0}, ["rotary_fraction", "0.0"]),
        ({"method": "rope_ntk", "max_length": 64}, ["max_length", "original_length"]),
        ({"method": "rope_dynamic", "original_length": 16, "mscale": 1.0}, ["mscale", "rope_dynamic"]),
    ],
)
def test_rotary_embedding_refuses_options_its_method_does_not_use(kwargs, words):
    with pytest.raises(ValueError) as raised:
        RotaryEmbedding(**kwargs)
    assert all(word in str(raised.value) for word in words)


def test_rotary_embedding_refuses_a_feature_count_it_cannot_split():
    with pytest.raises(ValueError, match="rotates 3 features"):
        RotaryEmbedding(rotary_fraction=0.375)(np.zeros((1, 2, 8), "float32"))


@pytest.mark.parametrize(
    ("settings", "call", "message"),
    [
        ({}, {"length": 4}, "length is used by methods 'rope_dynamic' and 'rope_longrope' only"),
        ({}, {"positions": np.arange(3), "attention_mask": np.ones((1, 3))},
         "give positions or attention_mask, not both"),
        ({"sequence_axis": 4}, {}, "sequence_axis=4 is outside inputs of rank 4"),
        ({"sequence_axis": -5}, {}, "sequence_axis=-5 is outside inputs of rank 4"),
        ({"feature_axis": 4}, {}, "feature_axis=4 is outside inputs of rank 4"),
        ({"feature_axis": -5}, {}, "feature_axis=-5 is outside inputs of rank 4"),
        ({"sequence_axis": 3}, {}, "sequence_axis and feature_axis are the same axis (3)"),
        ({"sequence_axis": -1, "feature_axis": 3}, {}, "sequence_axis and feature_axis are the same axis (3)"),
        ({"mrope_section": (1, 1, 2)}, {},
         "mrope_section=(1, 1, 2) needs positions of shape (3, sequence) or (3, batch, sequence), got None"),
        ({"mrope_section": (1, 1, 2)}, {"positions": np.arange(3)},
         "mrope_section=(1, 1, 2) needs positions of shape (3, sequence) or (3, batch, sequence), got (3,)"),
        ({"mrope_section": (1, 1, 2)}, {"positions": np.zeros((2, 3), "int32")},
         "mrope_section=(1, 1, 2) needs positions of shape (3, sequence) or (3, batch, sequence), got (2, 3)"),
        ({"mrope_section": (1, 1, 2)}, {"positions": np.zeros((3, 1, 1, 3), "int32")},
         "mrope_section=(1, 1, 2) needs positions of shape (3, sequence) or (3, batch, sequence), "
         "got (3, 1, 1, 3)"),
    ],
)
def test_rotary_embedding_refuses_a_bad_call_in_its_own_words(settings, call, message):
    layer = RotaryEmbedding(name="rope_q", **settings)
    with pytest.raises(ValueError, match=re.escape(f"rope_q: {message}")):
        layer(np.zeros((1, 3, 2, 8), "float32"), **call)


@pytest.mark.parametrize(("settings", "shape"), [
    ({}, (1, 3, 2, 7)),
    ({"rotary_fraction": 1.0}, (1, 3, 2, None)),
    ({"proportional": True, "rotary_fraction": 0.5}, (1, 3, 2, 7)),
])
def test_rotary_embedding_refuses_a_width_it_cannot_pair(settings, shape):
    layer = RotaryEmbedding(name="rope_k", **settings)
    message = f"rope_k: the feature axis must have a known even size (RoPE rotates pairs), got shape {shape}"
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        layer.build(shape)


def test_rotary_embedding_refuses_sections_that_do_not_fill_the_head():
    layer = RotaryEmbedding(name="rope_k", mrope_section=(1, 1, 2))
    message = "rope_k: mrope_section=(1, 1, 2) has 4 pairs, the rotated depth 10 has 5"
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        layer.build((1, 3, 2, 10))


def test_rotary_embedding_axes_may_count_from_either_end():
    x = np.random.default_rng(6).normal(size=(3, 2, 4)).astype("float32")
    expected = apply_rope(x, sequence_axis=0, feature_axis=2)
    for sequence_axis, feature_axis in ((0, 2), (-3, -1), (0, -1), (-3, 2)):
        out = to_numpy(RotaryEmbedding(sequence_axis=sequence_axis, feature_axis=feature_axis)(x))
        np.testing.assert_allclose(out, expected, atol=1e-6, err_msg=f"{sequence_axis}, {feature_axis}")
    # the features first: the pairs run down axis 0
    moved = np.moveaxis(x, 2, 0)
    out = to_numpy(RotaryEmbedding(sequence_axis=-2, feature_axis=-3)(moved))
    np.testing.assert_allclose(np.moveaxis(out, 0, 2), expected, atol=1e-6)


# dynamic NTK


def test_dynamic_ntk_follows_the_length_it_is_called_with():
    x = np.random.default_rng(3).normal(size=(1, 4, 2, 8)).astype("float32")
    layer = RotaryEmbedding("rope_dynamic", scale=2.0, original_length=16)
    # Positions 10..13: length 14 <= 16, plain RoPE.
    np.testing.assert_allclose(to_numpy(layer(x, start_index=10)),
                               apply_rope(x, np.arange(10, 14), sequence_axis=1), atol=2e-6)
    # Positions 60..63: length 64, s = 2 * 64 / 16 - 1 = 7, NTK-aware rates of base 1e4 * 7^(8/6).
    rates = pe_lib.angle_rates(8, base=10000.0 * 7 ** (8 / 6))
    expected = apply_rope(x, np.arange(60, 64), sequence_axis=1, rates=rates)
    np.testing.assert_allclose(to_numpy(layer(x, start_index=60)), expected, atol=2e-6)
    # An explicit length: the same positions at length 32, s = 3.
    rates = pe_lib.angle_rates(8, base=10000.0 * 3 ** (8 / 6))
    expected = apply_rope(x, np.arange(10, 14), sequence_axis=1, rates=rates)
    np.testing.assert_allclose(to_numpy(layer(x, start_index=10, length=32)), expected, atol=2e-6)


def test_dynamic_ntk_forms_its_angles_in_float64_where_the_backend_has_it():
    if not has_float64():
        pytest.skip("the backend keeps no float64 (JAX without jax_enable_x64)")
    x = np.random.default_rng(10).normal(size=(1, 2, 1, 8)).astype("float32")
    layer = RotaryEmbedding("rope_dynamic", scale=2.0, original_length=16)
    # length 100002: s = 2 * 100002 / 16 - 1 = 12499.25; float32 angles would be off by ~1e-3 here
    rates = pe_lib.angle_rates(8, base=10000.0 * 12499.25 ** (8 / 6))
    expected = apply_rope(x.astype("float64"), np.array([100000, 100001]), sequence_axis=1, rates=rates)
    out = to_numpy(layer(x, positions=np.array([100000, 100001])))
    np.testing.assert_allclose(out, expected, rtol=0, atol=2e-6)


def test_dynamic_ntk_keys_cached_at_another_length_break_the_offset_rule():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(2, 1, 1, 1, 8)).astype("float32")
    layer = RotaryEmbedding("rope_dynamic", original_length=16)

    def score(m, n, key_length, query_length):
        rotated_q = to_numpy(layer(q, positions=np.array([m]), length=query_length))
        rotated_k = to_numpy(layer(k, positions=np.array([n]), length=key_length))
        return float(np.sum(rotated_q.astype("float64") * rotated_k))

    # Rotated at one length, query and key give a score of the offset only...
    assert score(40, 37, 64, 64) == pytest.approx(score(50, 47, 64, 64), abs=1e-5)
    # ...but a key cached at length 38 and read by the query at length 64 does not match it.
    assert abs(score(40, 37, 38, 64) - score(40, 37, 64, 64)) > 1e-3


def test_dynamic_ntk_in_a_compiled_model_matches_the_eager_call():
    x = np.random.default_rng(5).normal(size=(2, 40, 2, 8)).astype("float32")
    inputs = keras.Input(shape=(None, 2, 8))
    layer = RotaryEmbedding("rope_dynamic", original_length=16)
    model = keras.Model(inputs, layer(inputs))
    np.testing.assert_allclose(model.predict(x, verbose=0), to_numpy(layer(x)), atol=1e-6)
    rates = pe_lib.angle_rates(8, base=10000.0 * (40 / 16) ** (8 / 6))
    np.testing.assert_allclose(model.predict(x, verbose=0), apply_rope(x, sequence_axis=1, rates=rates), atol=2e-5)


# partial rotary


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layout", ["half-split", "interleaved"])
def test_partial_rotary_passes_the_other_features_through_untouched(dtype, layout):
    x = np.random.default_rng(6).normal(size=(2, 5, 3, 16)).astype(dtype)
    layer = RotaryEmbedding(layout=layout, rotary_fraction=0.25)
    out = to_numpy(layer(x, start_index=100))
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out[..., 4:], x[..., 4:])
    # The first 4 features turn with the rates of depth 4: 1 and 1/100.
    expected = apply_rope(x[..., :4].astype("float64"), np.arange(100, 105), sequence_axis=1, layout=layout,
                          rates=[1.0, 0.01])
    np.testing.assert_allclose(out[..., :4].astype("float64"), expected, rtol=0,
                               atol=float(np.finfo(dtype).eps) * 4)
    assert not np.allclose(out[..., :4], x[..., :4])


def test_partial_rotary_with_yarn_scales_the_rotated_features_only():
    x = np.random.default_rng(7).normal(size=(1, 3, 1, 8)).astype("float32")
    out = to_numpy(RotaryEmbedding("rope_yarn", scale=4.0, original_length=64, rotary_fraction=0.5)(x))
    np.testing.assert_array_equal(out[..., 4:], x[..., 4:])
    np.testing.assert_allclose(np.linalg.norm(out[..., :4], axis=-1) / np.linalg.norm(x[..., :4], axis=-1),
                               YARN_FACTOR_4, rtol=1e-6)


# dtypes


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_float64_inputs_are_rotated_to_float64_accuracy_at_long_positions(base):
    if not has_float64():
        pytest.skip("this backend holds no float64 tensors (JAX without jax_enable_x64)")
    positions = np.array([0, 4095, 65536, 131071, 2**24 + 1, 2**31 - 1])
    x = np.random.default_rng(8).normal(size=(1, len(positions), 1, 64))
    out = to_numpy(RotaryEmbedding(base=base)(x, positions=positions))
    assert out.dtype == np.float64
    expected = mpmath_rotation(x[0, :, 0], positions, pe_lib.angle_rates(64, base=base))
    assert np.abs(out[0, :, 0] - expected).max() < 1e-14 * np.abs(x).max()


def ulp(values, mantissa_bits, min_exponent):
    """The spacing of a float with ``mantissa_bits`` stored bits at each value (subnormals included)."""
    exponent = np.floor(np.log2(np.maximum(np.abs(values), 2.0**min_exponent)))
    return 2.0 ** (exponent - mantissa_bits)


@pytest.mark.parametrize(("dtype", "bits", "min_exponent"), [("float16", 10, -14), ("bfloat16", 7, -126)])
def test_half_precision_stays_within_one_step_of_the_exact_rotation(policy, dtype, bits, min_exponent):
    positions = np.array([0, 1, 2047, 2049, 65535, 131071, 2**24 + 1])
    x = np.random.default_rng(9).normal(size=(1, len(positions), 1, 32)).astype("float32")
    policy(f"mixed_{dtype}")
    out = RotaryEmbedding(base=500000.0)(x, positions=positions)
    assert keras.backend.standardize_dtype(out.dtype) == dtype
    got = to_numpy(keras.ops.cast(out, "float32")).astype(np.float64)[0, :, 0]
    expected = mpmath_rotation(x[0, :, 0].astype(np.float64), positions, pe_lib.angle_rates(32, base=500000.0))
    step = np.maximum(ulp(expected, bits, min_exponent), 2.0**-20 * np.abs(x).max())
    assert np.all(np.abs(got - expected) <= step), np.max(np.abs(got - expected) / step)


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
    np.testing.assert_allclose(out[0, :, 0], mpmath_rotation(x[0, :, 0], positions, pe_lib.angle_rates(8)),
                               atol=5e-7)
    assert not np.allclose(out[0, 0], out[0, 1])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rotary_embedding_keeps_the_input_dtype(dtype):
    if dtype == "float64" and not has_float64():
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
                            original_length=32, sequence_axis=2, feature_axis=-1, rotary_fraction=0.5,
                            beta_fast=16.0, truncate=False, mscale=1.0, mscale_all_dim=0.5, name="r")
    clone = RotaryEmbedding.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert clone.attention_factor == layer.attention_factor != 1.0


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


@pytest.mark.parametrize("make, heads", [(lambda: AlibiBias(heads=2), (2,)), (lambda: T5RelativeBias(heads=2), (2,)),
                                         (lambda: ShawRelativePositions(max_distance=2), ())])
def test_a_block_of_3_queries_and_5_keys_has_a_3_by_5_term_in_a_model(make, heads):
    """Symbolic shapes: the keys' length when keys are given, the queries' otherwise (depth 8 is neither)."""
    layer = make()
    queries, keys = keras.Input(shape=(3, 8)), keras.Input(shape=(5, 8))
    assert tuple(layer(queries, keys).shape) == (None, *heads, 3, 5)
    assert tuple(layer(queries).shape) == (None, *heads, 3, 3)
    assert tuple(layer(keras.Input(shape=(None, 8)), keys).shape) == (None, *heads, None, 5)


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


# --- bias layers: blocks that start anywhere, against independent values --------------------


def test_alibi_bias_of_a_block_with_both_starts():
    # Queries at 10, 11, 12 and keys at 7..11: the bias is -m (i - j), masked where j > i.
    bias = to_numpy(AlibiBias(4)(np.zeros((3, 2), "float32"), np.zeros((5, 2), "float32"),
                                 query_start=10, key_start=7))
    i, j = np.arange(10, 13)[:, None], np.arange(7, 12)[None, :]
    for head, slope in enumerate([1 / 4, 1 / 16, 1 / 64, 1 / 256]):
        np.testing.assert_allclose(bias[head], np.where(j <= i, -slope * (i - j), -1e9), rtol=1e-7)


@pytest.mark.parametrize("form", ["causal", "symmetric"])
@pytest.mark.parametrize("dtype", ["float32", "mixed_float16"])
def test_alibi_bias_diagonal_is_plus_zero(form, dtype):
    bias = to_numpy(AlibiBias(3, form=form, dtype=dtype)(np.zeros((4, 2), "float32"))).astype(np.float64)
    diagonal = np.diagonal(bias, axis1=-2, axis2=-1)
    assert np.all(diagonal == 0.0) and not np.any(np.signbit(diagonal))


def test_alibi_bias_in_float64_keeps_distances_past_two_to_the_24():
    if keras.backend.standardize_dtype(keras.ops.convert_to_tensor(np.zeros(1)).dtype) != "float64":
        pytest.skip("this backend holds no float64 tensors (JAX without jax_enable_x64)")
    # Head 1 of 8 has slope 1/2: distance 2**24 + 1 gives -8388608.5 exactly (float32 has no 16777217).
    bias = to_numpy(AlibiBias(8, dtype="float64")(np.zeros((1, 2)), np.zeros((1, 2)),
                                                   query_start=2**24 + 1, key_start=0))
    assert bias.dtype == np.float64 and bias[0, 0, 0] == -8388608.5


def test_alibi_bias_in_float16_rounds_the_exact_product_once():
    # 12 heads: head 9 has slope 2**-0.5. At distance 13 the product is -9.19238816...,
    # whose nearest float16 is -9.1953125; float16 slope times float16 distance gives -9.1875.
    bias = to_numpy(AlibiBias(12, dtype="mixed_float16")(np.zeros((14, 2), "float32")))
    assert bias.dtype == np.float16 and float(bias[8, 13, 0]) == -9.1953125
    # Exact products from mpmath; each lies more than 1e-6 of its size from a float16
    # rounding boundary, so a slope a few ulp off in float64 rounds to the same float16.
    with mpmath.workdps(40):
        products = [-mpmath.sqrt(mpmath.mpf(1) / 2) * d for d in range(14)]
        nearest = np.float16([float(p) for p in products])
        for product, rounded in zip(products[1:], nearest[1:]):
            step = mpmath.mpf(abs(float(np.spacing(rounded))))
            assert abs(abs(product - mpmath.mpf(float(rounded))) - step / 2) > 1e-6 * abs(product)
    np.testing.assert_array_equal(bias[8, 13, :14], nearest[::-1])


def test_t5_bias_of_a_block_with_both_starts_and_empty_buckets():
    from pe_lib.t5 import relative_position_bucket

    for options in ({"num_buckets": 8, "max_distance": 16}, {"num_buckets": 10, "max_distance": 3},
                    {"num_buckets": 5, "max_distance": 10, "bidirectional": False}):
        layer = T5RelativeBias(2, embeddings_initializer="random_normal", **options)
        bias = to_numpy(layer(np.zeros((3, 2), "float32"), np.zeros((6, 2), "float32"), query_start=20,
                              key_start=16))
        table = to_numpy(layer.embeddings)
        assert np.all(table != 0)
        offsets = np.arange(16, 22)[None, :] - np.arange(20, 23)[:, None]  # j - i
        expected = table[relative_position_bucket(offsets, **options)].transpose(2, 0, 1)
        np.testing.assert_array_equal(bias, expected)


def test_shaw_tables_start_different_and_reproducibly():
    first = ShawRelativePositions(2, initializer=keras.initializers.RandomNormal(seed=5))
    second = ShawRelativePositions(2, initializer=keras.initializers.RandomNormal(seed=5))
    for layer in (first, second):
        layer(np.zeros((1, 3, 4), "float32"))
    keys, values = to_numpy(first.key_table), to_numpy(first.value_table)
    assert not np.allclose(keys, values)
    np.testing.assert_array_equal(values, to_numpy(second.value_table))
    default = ShawRelativePositions(2)
    default(np.zeros((1, 3, 4), "float32"))
    assert not np.allclose(to_numpy(default.key_table), to_numpy(default.value_table))


def test_shaw_key_and_value_terms_of_a_block_with_both_starts():
    layer = ShawRelativePositions(max_distance=2, initializer="random_normal")
    rng = np.random.default_rng(10)
    queries = rng.normal(size=(1, 3, 4)).astype("float32")
    keys = np.zeros((1, 5, 4), "float32")
    term = to_numpy(layer(queries, keys, query_start=9, key_start=6))
    key_table, value_table = to_numpy(layer.key_table), to_numpy(layer.value_table)
    # rows clip(j - i, 2) + 2 for queries 9..11 and keys 6..10, written out by hand
    rows = np.array([[0, 0, 1, 2, 3],
                     [0, 0, 0, 1, 2],
                     [0, 0, 0, 0, 1]])
    expected = np.einsum("qd,qkd->qk", queries[0].astype(np.float64), key_table[rows]) / 2.0
    np.testing.assert_allclose(term[0], expected, rtol=1e-5, atol=1e-6)
    weights = rng.random(size=(1, 3, 5)).astype("float32")
    values = to_numpy(layer.value_term(weights, query_start=9, key_start=6))[0]
    np.testing.assert_allclose(values, np.einsum("qk,qkd->qd", weights[0], value_table[rows]), rtol=1e-5, atol=1e-6)
    assert not np.allclose(values, np.einsum("qk,qkd->qd", weights[0], key_table[rows]), atol=1e-3)


def test_self_attention_buckets_t5_offsets_causally():
    from pe_lib.t5 import relative_position_bucket

    layer = PositionalSelfAttention(2, 4, method="t5", method_options={"num_buckets": 6, "max_distance": 8})
    x = np.random.default_rng(11).normal(size=(1, 9, 8)).astype("float32")
    layer(x)
    table = np.random.default_rng(12).normal(size=(6, 2)).astype("float32")
    layer.positions.embeddings.assign(table)
    scores = to_numpy(layer.scores(x))[0]
    q = (x[0] @ to_numpy(layer.query.kernel)).reshape(9, 2, 4).transpose(1, 0, 2).astype(np.float64)
    k = (x[0] @ to_numpy(layer.key.kernel)).reshape(9, 2, 4).transpose(1, 0, 2).astype(np.float64)
    offsets = np.arange(9)[None, :] - np.arange(9)[:, None]
    causal = relative_position_bucket(offsets, bidirectional=False, num_buckets=6, max_distance=8)
    expected = q @ k.transpose(0, 2, 1) / 2.0 + table[causal].transpose(2, 0, 1)
    lower = np.tril(np.ones((9, 9), bool))
    np.testing.assert_allclose(scores[:, lower], expected[:, lower], rtol=1e-5, atol=1e-5)
    # bidirectional buckets would differ on every row past the first few
    both = relative_position_bucket(offsets, bidirectional=True, num_buckets=6, max_distance=8)
    assert np.any((both != causal)[lower])


@pytest.mark.parametrize(("make", "needed"), [(lambda: AlibiBias(heads=2), "(batch, length, depth)"),
                                              (lambda: T5RelativeBias(heads=2), "(batch, length, depth)"),
                                              (lambda: ShawRelativePositions(max_distance=2), "(..., length, depth)")],
                         ids=["AlibiBias", "T5RelativeBias", "ShawRelativePositions"])
def test_bias_layers_refuse_queries_without_a_length_and_a_depth(make, needed):
    """A query vector alone, (depth,), is refused with the shape the layer needs and the one it got."""
    layer = make()
    with pytest.raises(ValueError) as caught:
        layer(np.zeros((8,), "float32"))
    assert f"{layer.name}: queries must have shape {needed}, got shape (8,)" in str(caught.value)


@pytest.mark.parametrize("layer_class", [LearnedPositionEmbedding, PositionalEncoding])
@pytest.mark.parametrize("shape", [(2, 8), (2, 5, None)])
def test_position_tables_name_their_own_class_when_they_refuse_a_shape(layer_class, shape):
    with pytest.raises(ValueError) as caught:
        layer_class(16).build(shape)
    assert str(caught.value).startswith(f"{layer_class.__name__} ")
    assert str(shape) in str(caught.value)


@pytest.mark.parametrize("layer_class", [LearnedPositionEmbedding, PositionalEncoding])
def test_position_tables_name_their_own_class_when_an_input_is_too_long(layer_class):
    with pytest.raises(ValueError) as caught:
        layer_class(16).build((2, 20, 8))
    assert str(caught.value) == (f"{layer_class.__name__}: the input has 20 steps but max_length is 16; "
                                 "build the layer with a larger max_length")


@pytest.mark.parametrize("shape", [(2, 8), (2, 5, None), (2, 3, 5, 8)])
def test_self_attention_refuses_inputs_without_steps_and_a_known_depth(shape):
    with pytest.raises(ValueError) as caught:
        PositionalSelfAttention(heads=2, key_dim=4, name="attention").build(shape)
    assert str(caught.value) == f"attention expects inputs of shape (batch, steps, depth), got shape {shape}"


def test_self_attention_names_its_weights_as_a_port_maps_them():
    """A checkpoint is ported weight by weight, by name: the four projections, and the sinks."""
    layer = PositionalSelfAttention(heads=2, key_dim=4, sink_logit=True, name="attention")
    layer.build((1, 3, 8))
    assert sorted(weight.path for weight in layer.weights) == [
        "attention/key/kernel", "attention/output/kernel", "attention/query/kernel", "attention/sinks",
        "attention/value/kernel"]
