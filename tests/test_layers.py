"""The Keras position layers: values, shapes, masks, dtypes, saving and errors.

Every class in ``pe_lib.layers.__all__`` goes through the shared harness of
``tests/layer_harness.py`` (see ``EXAMPLES``); the tests after it check what
is particular to each layer against an independent reference. The test command
runs this file on TensorFlow and again with ``KERAS_BACKEND=jax``.
"""

import math

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pe_lib.layers
from layer_harness import CHECKS, LayerExample, load_in_fresh_process, save_for_fresh_process, to_numpy
from pe_lib.layers import (
    AlibiBias,
    LearnedPositionEmbedding,
    PositionalEncoding,
    PositionalSelfAttention,
    RotaryEmbedding,
    ShawRelativePositions,
    T5RelativeBias,
    TokenAndPositionEmbedding,
)

POSITION_LAYERS = [PositionalEncoding, LearnedPositionEmbedding]


def vectors(shape):
    return lambda rng: rng.normal(size=shape).astype("float32")


def token_ids(shape, vocabulary_size):
    return lambda rng: rng.integers(1, vocabulary_size, size=shape).astype("int32")


# Every layer of pe_lib.layers, with what the harness needs to know about it. A layer
# missing here fails test_every_layer_has_an_example.
EXAMPLES = {
    PositionalEncoding: LayerExample(
        init_kwargs={"max_length": 12, "base": 500.0, "layout": "half-split"},
        make_inputs=vectors((2, 6, 4)), mask="passes", bad_shape=(2, 6),
    ),
    LearnedPositionEmbedding: LayerExample(
        init_kwargs={"max_length": 12, "initializer": "he_normal"},
        make_inputs=vectors((2, 6, 4)), trainable=True, mask="passes", bad_shape=(2, 6, 4, 1),
    ),
    TokenAndPositionEmbedding: LayerExample(
        init_kwargs={"vocabulary_size": 20, "max_length": 12, "embedding_dim": 4, "method": "learned",
                     "mask_zero": True, "scale_embeddings": True, "base": 123.0},
        make_inputs=token_ids((2, 6), 20), trainable=True, mask="makes", bad_shape=(2, 6, 4),
        float16_tolerance=5e-2,
    ),
    RotaryEmbedding: LayerExample(
        init_kwargs={"method": "rope_yarn", "base": 500.0, "scale": 2.0, "original_length": 8, "sequence_axis": 1,
                     "rotary_fraction": 0.5, "beta_fast": 16.0, "truncate": False},
        make_inputs=vectors((2, 6, 3, 8)), bad_shape=(2, 6, 3, 7),
    ),
    # The bias layers read the attention inputs (batch, steps, depth): (batch, heads, steps, steps).
    AlibiBias: LayerExample(init_kwargs={"heads": 4}, make_inputs=vectors((2, 6, 8)), bad_shape=(6,),
                            masked_below=-3e4),
    T5RelativeBias: LayerExample(
        init_kwargs={"heads": 4, "num_buckets": 8, "max_distance": 16, "embeddings_initializer": "random_normal"},
        make_inputs=vectors((2, 6, 8)), trainable=True, bad_shape=(6,),
    ),
    ShawRelativePositions: LayerExample(
        init_kwargs={"max_distance": 2, "initializer": "random_normal"},
        make_inputs=vectors((2, 4, 6, 8)), trainable=True, bad_shape=(6,), outside_call=("value_table",),
    ),
    PositionalSelfAttention: LayerExample(
        init_kwargs={"heads": 2, "key_dim": 4, "method": "t5"},
        make_inputs=vectors((2, 6, 8)), trainable=True, bad_shape=(2, 6),
    ),
}


def layer_classes():
    """The classes ``pe_lib.layers`` exports (constants aside)."""
    exported = (getattr(pe_lib.layers, name) for name in pe_lib.layers.__all__)
    return [value for value in exported if isinstance(value, type) and issubclass(value, keras.layers.Layer)]


def test_every_layer_has_an_example():
    missing = [layer.__name__ for layer in layer_classes() if layer not in EXAMPLES]
    assert not missing, f"add these layers to EXAMPLES in tests/test_layers.py: {missing}"
    assert set(EXAMPLES) <= set(layer_classes())


@pytest.fixture
def policy():
    """Set a dtype policy for one test and restore float32 afterwards."""
    yield keras.config.set_dtype_policy
    keras.config.set_dtype_policy("float32")


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("layer_class", layer_classes(), ids=lambda layer: layer.__name__)
def test_harness(layer_class, check):
    if layer_class not in EXAMPLES:
        pytest.fail(f"{layer_class.__name__} has no entry in EXAMPLES")
    CHECKS[check](layer_class, EXAMPLES[layer_class])


@pytest.fixture(scope="module")
def fresh_process_results(tmp_path_factory):
    """Every example saved as a .keras model and loaded again in one new process."""
    folder = tmp_path_factory.mktemp("saved_layers")
    saved = {layer.__name__: (layer, example) for layer, example in EXAMPLES.items()}
    save_for_fresh_process(saved, folder)
    return load_in_fresh_process(folder)


@pytest.mark.parametrize("layer_class", layer_classes(), ids=lambda layer: layer.__name__)
def test_harness_saved_model_loads_in_a_fresh_process(layer_class, fresh_process_results):
    assert fresh_process_results.get(layer_class.__name__) == layer_class.__name__, fresh_process_results


# --- an independent reference -------------------------------------------------------------


def reference_table(length, depth, base=10000.0, layout="interleaved"):
    """The sinusoidal table from its definition, one Python math.sin/math.cos per entry.

    Column 2i holds sin(p / base**(2i/depth)) and column 2i+1 the cosine of the same
    angle; "half-split" puts every sine column before every cosine column.
    """
    table = np.empty((length, depth))
    for p in range(length):
        for k in range(depth):
            angle = p / base ** (2 * (k // 2) / depth)
            table[p, k] = math.sin(angle) if k % 2 == 0 else math.cos(angle)
    if layout == "half-split":
        table = np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)
    return table


def added_table(layer) -> np.ndarray:
    """What a position layer adds at each position: the reference, or the learned weights."""
    if isinstance(layer, PositionalEncoding):
        return reference_table(layer.max_length, layer.depth, base=layer.base, layout=layer.layout)
    return to_numpy(layer.table)


def assert_float32_of(actual, expected):
    """``actual`` holds the float32 rounding of ``expected`` (to within one float32 step)."""
    actual = np.asarray(actual, dtype=np.float64)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1.2e-7)


def test_reference_table_by_hand():
    # depth 4: position 1 has the angles 1 and 1/100; position 0 is 0, 1, 0, 1.
    table = reference_table(2, 4)
    assert table[0].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert table[1].tolist() == [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]
    assert reference_table(2, 4, layout="half-split")[1].tolist() == [
        math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01)
    ]


# --- values -------------------------------------------------------------------------------


def test_adds_the_table_to_every_sequence():
    inputs = np.random.default_rng(0).normal(size=(3, 9, 6)).astype("float32")
    outputs = to_numpy(PositionalEncoding(max_length=20)(inputs))
    np.testing.assert_allclose(outputs, inputs + reference_table(9, 6)[None], rtol=0, atol=5e-7)


def test_zero_input_returns_the_cropped_table():
    outputs = to_numpy(PositionalEncoding(max_length=50)(np.zeros((2, 7, 8), "float32")))
    assert outputs.dtype == np.float32
    assert_float32_of(outputs[0], reference_table(7, 8))
    np.testing.assert_array_equal(outputs[1], outputs[0])


def test_position_zero_is_zero_one_repeated():
    outputs = to_numpy(PositionalEncoding(max_length=4)(np.zeros((1, 1, 6), "float32")))
    assert outputs[0, 0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]


def test_depth_four_row_one_checkable_by_hand():
    # depth 4: the angles of position 1 are 1 and 1/100.
    outputs = to_numpy(PositionalEncoding(max_length=4)(np.zeros((1, 2, 4), "float32")))
    assert_float32_of(outputs[0, 1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)])


@pytest.mark.parametrize("depth", [1, 3, 5, 7])
def test_odd_depth_matches_the_reference_and_ends_with_a_sine(depth):
    outputs = to_numpy(PositionalEncoding(max_length=30)(np.zeros((1, 30, depth), "float32")))[0]
    assert_float32_of(outputs, reference_table(30, depth))
    last_rate = 10000.0 ** (-2 * ((depth - 1) // 2) / depth)
    assert_float32_of(outputs[:, -1], [math.sin(p * last_rate) for p in range(30)])


@pytest.mark.parametrize(("base", "layout"), [(10000.0, "half-split"), (100.0, "interleaved"), (500.0, "half-split")])
def test_base_and_layout_are_passed_on(base, layout):
    outputs = to_numpy(PositionalEncoding(12, base=base, layout=layout)(np.zeros((1, 12, 6), "float32")))[0]
    assert_float32_of(outputs, reference_table(12, 6, base=base, layout=layout))


@settings(max_examples=15)  # each example builds a layer: keep the file quick on two backends
@given(
    steps=st.integers(min_value=1, max_value=40),
    extra=st.integers(min_value=0, max_value=20),
    depth=st.integers(min_value=1, max_value=12),
)
def test_output_minus_input_is_the_first_rows_of_the_table(steps, extra, depth):
    inputs = np.random.default_rng(steps).normal(size=(2, steps, depth)).astype("float32")
    layer = PositionalEncoding(max_length=steps + extra)
    outputs = to_numpy(layer(inputs))
    expected = np.broadcast_to(reference_table(steps, depth), inputs.shape)
    np.testing.assert_allclose(outputs - inputs, expected, rtol=0, atol=1e-6)
    assert layer.table.shape == (steps + extra, depth)


def test_learned_layer_adds_the_first_rows_of_its_table():
    layer = LearnedPositionEmbedding(max_length=10)
    inputs = np.random.default_rng(1).normal(size=(3, 4, 5)).astype("float32")
    outputs = to_numpy(layer(inputs))
    assert tuple(layer.table.shape) == (10, 5)
    np.testing.assert_allclose(outputs, inputs + added_table(layer)[:4][None], rtol=1e-6)


def test_learned_layer_initializer_is_used():
    layer = LearnedPositionEmbedding(max_length=3, initializer="ones")
    outputs = to_numpy(layer(np.zeros((1, 2, 4), "float32")))
    np.testing.assert_array_equal(outputs, np.ones((1, 2, 4)))


# --- parameters ---------------------------------------------------------------------------


def test_sinusoidal_layer_has_no_weights_and_learned_has_length_times_depth():
    inputs = np.zeros((1, 10, 512), "float32")
    fixed, learned = PositionalEncoding(500), LearnedPositionEmbedding(500)
    fixed(inputs)
    learned(inputs)
    assert fixed.weights == [] and fixed.count_params() == 0
    assert learned.count_params() == 500 * 512 == 256_000
    assert len(learned.trainable_weights) == 1


def test_seed_front_end_shares_one_token_table():
    """The seed's configuration: vocabulary 10000, 512 dimensions, 500 steps, shared by two inputs."""
    embed = TokenAndPositionEmbedding(10000, 500, 512)
    encoder_inputs = keras.Input(shape=(None,), dtype="int32")
    decoder_inputs = keras.Input(shape=(None,), dtype="int32")
    encoder_in, decoder_in = embed(encoder_inputs), embed(decoder_inputs)
    model = keras.Model([encoder_inputs, decoder_inputs], [encoder_in, decoder_in])
    assert tuple(encoder_in.shape) == tuple(decoder_in.shape) == (None, None, 512)
    assert model.count_params() == 10000 * 512
    assert len(model.weights) == 1
    learned = TokenAndPositionEmbedding(10000, 500, 512, method="learned")
    learned(encoder_inputs)
    assert learned.count_params() == 10000 * 512 + 500 * 512


# --- shapes -------------------------------------------------------------------------------


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_one_compiled_model_accepts_several_lengths(layer_class):
    inputs = keras.Input(shape=(None, 4))
    layer = layer_class(max_length=16)
    model = keras.Model(inputs, layer(inputs))
    for steps in (3, 16, 9):
        outputs = model.predict(np.zeros((2, steps, 4), "float32"), verbose=0)
        assert outputs.shape == (2, steps, 4)
        np.testing.assert_allclose(outputs[1], added_table(layer)[:steps], rtol=1e-6, atol=1.2e-7)


def test_token_and_position_shapes():
    embed = TokenAndPositionEmbedding(20, 12, 6)
    assert tuple(embed(np.ones((3, 5), "int32")).shape) == (3, 5, 6)
    assert embed.compute_output_shape((None, None)) == (None, None, 6)


def test_token_and_position_adds_the_table_to_the_token_vectors():
    for scale in (False, True):
        embed = TokenAndPositionEmbedding(20, 12, 6, scale_embeddings=scale)
        tokens = np.array([[4, 0, 19, 4]])
        outputs = to_numpy(embed(tokens))[0]
        vectors = to_numpy(embed.token_embedding.embeddings)[tokens[0]] * (np.sqrt(6) if scale else 1.0)
        np.testing.assert_allclose(outputs, vectors + reference_table(4, 6), rtol=1e-6, atol=2e-7)


def test_scaled_token_vectors_stay_in_the_compute_dtype():
    # width 4: the scale sqrt(4) = 2 is exact in float16, so only the sum rounds
    embed = TokenAndPositionEmbedding(10, 8, 4, scale_embeddings=True, dtype="mixed_float16")
    tokens = np.array([[3, 1, 7]])
    outputs = to_numpy(embed(tokens))[0]
    assert outputs.dtype == np.float16
    doubled = 2 * to_numpy(embed.token_embedding.embeddings)[tokens[0]].astype(np.float16)
    expected = doubled.astype(np.float64) + reference_table(3, 4).astype(np.float32).astype(np.float16)
    np.testing.assert_allclose(outputs, expected, rtol=2.0**-10, atol=2.0**-24)


# --- training ---------------------------------------------------------------------------


def test_rows_no_sequence_reaches_are_not_trained():
    keras.utils.set_random_seed(1)
    tokens = keras.Input(shape=(None,), dtype="int32")
    embed = TokenAndPositionEmbedding(12, 10, 4, method="learned")
    model = keras.Model(tokens, keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(embed(tokens))))
    model.compile(optimizer="adam", loss="mse")
    before = to_numpy(embed.position_embedding.table)
    model.fit(np.ones((8, 6), "int32"), np.ones((8, 1)), epochs=2, verbose=0)
    after = to_numpy(embed.position_embedding.table)
    assert not np.allclose(after[:6], before[:6])
    np.testing.assert_array_equal(after[6:], before[6:])


# --- dtype policies -----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "compute"), [("mixed_float16", "float16"), ("mixed_bfloat16", "bfloat16")])
def test_position_2049_is_not_rounded_to_2048_under_mixed_precision(policy, name, compute):
    policy(name)
    layer = PositionalEncoding(max_length=2100)
    outputs = layer(np.zeros((1, 2060, 8), "float32"))
    assert keras.backend.standardize_dtype(outputs.dtype) == compute
    assert layer.table.dtype == np.float32
    table = reference_table(2050, 8)
    row = to_numpy(outputs[0, 2049]).astype(np.float64)
    # The float32 table rounded to the compute dtype: the same as rounding the exact row.
    expected = to_numpy(keras.ops.cast(layer.table[2049], compute)).astype(np.float64)
    rounded_position = to_numpy(keras.ops.cast(table[2048], compute)).astype(np.float64)
    np.testing.assert_array_equal(row, expected)
    assert not np.array_equal(row, rounded_position)
    # The table itself holds float32 values of the float64 angles.
    assert_float32_of(layer.table[2049], table[2049])


@pytest.mark.parametrize("name", ["mixed_float16", "mixed_bfloat16"])
def test_learned_table_is_kept_in_float32_under_mixed_precision(policy, name):
    policy(name)
    embed = TokenAndPositionEmbedding(10, 8, 4, method="learned")
    outputs = embed(np.ones((2, 3), "int32"))
    assert keras.backend.standardize_dtype(outputs.dtype) == embed.compute_dtype != "float32"
    assert keras.backend.standardize_dtype(embed.position_embedding.table.dtype) == "float32"


def test_float64_policy_keeps_a_float64_table(policy):
    if keras.backend.backend() == "jax":
        import jax

        if not jax.config.jax_enable_x64:
            pytest.skip("JAX truncates float64 to float32 unless JAX_ENABLE_X64=1")
    policy("float64")
    layer = PositionalEncoding(max_length=3000)
    outputs = to_numpy(layer(np.zeros((1, 3000, 6))))
    assert outputs.dtype == np.float64
    np.testing.assert_allclose(outputs[0], reference_table(3000, 6), rtol=0, atol=1e-12)


def test_dtype_argument_sets_the_compute_dtype():
    layer = PositionalEncoding(max_length=8, dtype="mixed_float16")
    assert keras.backend.standardize_dtype(layer(np.zeros((1, 2, 4), "float32")).dtype) == "float16"
    assert layer.get_config()["dtype"]["config"]["name"] == "mixed_float16"


# --- masks --------------------------------------------------------------------------------


def test_eager_output_carries_the_input_mask():
    vectors = keras.layers.Embedding(10, 4, mask_zero=True)(np.array([[3, 0]]))
    outputs = PositionalEncoding(max_length=4)(vectors)
    assert to_numpy(outputs._keras_mask).tolist() == [[True, False]]


@pytest.mark.parametrize(("mask_zero", "expected"), [(True, [[True, True, False]]), (False, None)])
def test_token_and_position_mask_comes_from_the_token_embedding(mask_zero, expected):
    embed = TokenAndPositionEmbedding(10, 8, 4, mask_zero=mask_zero)
    tokens = np.array([[2, 9, 0]])
    mask = embed.compute_mask(tokens)
    assert (None if mask is None else to_numpy(mask).tolist()) == expected
    outputs = embed(tokens)
    attached = getattr(outputs, "_keras_mask", None)
    assert (None if attached is None else to_numpy(attached).tolist()) == expected


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_too_long_eager_input_names_both_lengths(layer_class):
    layer = layer_class(max_length=16)
    with pytest.raises(ValueError, match="input has 20 steps but max_length is 16"):
        layer(np.zeros((1, 20, 4), "float32"))


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_too_long_static_shape_fails_when_the_model_is_built(layer_class):
    with pytest.raises(ValueError, match="input has 20 steps but max_length is 16"):
        layer_class(max_length=16)(keras.Input(shape=(20, 4)))


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_too_long_dynamic_input_fails_inside_a_compiled_function(layer_class):
    inputs = keras.Input(shape=(None, 4))
    model = keras.Model(inputs, layer_class(max_length=16)(inputs))
    model.predict(np.zeros((1, 16, 4), "float32"), verbose=0)
    # TensorFlow checks a length known only at run time inside the graph
    # (InvalidArgumentError); JAX traces every length, so the check is a ValueError.
    with pytest.raises(Exception, match="max_length is 16") as raised:
        model.predict(np.zeros((1, 20, 4), "float32"), verbose=0)
    assert type(raised.value).__name__ in {"InvalidArgumentError", "ValueError"}
    with pytest.raises(ValueError, match="input has 20 steps but max_length is 16"):
        model(np.zeros((1, 20, 4), "float32"))


def test_token_and_position_too_long():
    with pytest.raises(ValueError, match="input has 9 steps but max_length is 8"):
        TokenAndPositionEmbedding(10, 8, 4)(np.ones((1, 9), "int32"))


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
@pytest.mark.parametrize(
    ("shape", "words"),
    [((None, 4), "(batch, steps, depth)"), ((2, None, 3, 4), "(batch, steps, depth)"), ((None, 5, None), "known depth")],
)
def test_wrong_input_shapes(layer_class, shape, words):
    with pytest.raises(ValueError) as raised:
        layer_class(max_length=8).build(shape)
    assert words in str(raised.value) and str(shape) in str(raised.value)


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_a_second_depth_is_refused(layer_class):
    layer = layer_class(max_length=8)
    layer(np.zeros((1, 3, 4), "float32"))
    with pytest.raises(ValueError, match="built for depth 4"):
        layer(np.zeros((1, 3, 6), "float32"))


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"max_length": 0}, ValueError, ["max_length", "0"]),
        ({"max_length": -5}, ValueError, ["max_length", "-5"]),
        ({"max_length": 2.5}, TypeError, ["max_length", "2.5"]),
        ({"max_length": None}, TypeError, ["max_length", "None"]),
        ({"base": 0.0}, ValueError, ["base", "0.0"]),
        ({"base": "big"}, TypeError, ["base", "'big'"]),
        ({"layout": "stacked"}, ValueError, ["layout", "'stacked'"]),
    ],
)
def test_positional_encoding_rejects(kwargs, error, words):
    with pytest.raises(error) as raised:
        PositionalEncoding(**{"max_length": 8, **kwargs})
    assert all(word in str(raised.value) for word in words)


def test_learned_position_embedding_rejects_bad_max_length():
    with pytest.raises(ValueError, match="max_length must be >= 1, got 0"):
        LearnedPositionEmbedding(0)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"vocabulary_size": 0}, ValueError, ["vocabulary_size", "0"]),
        ({"embedding_dim": 4.0}, TypeError, ["embedding_dim", "4.0"]),
        ({"max_length": -1}, ValueError, ["max_length", "-1"]),
        ({"method": "rotary"}, ValueError, ["method", "'rotary'"]),
        ({"mask_zero": 1}, TypeError, ["mask_zero", "1"]),
        ({"scale_embeddings": "yes"}, TypeError, ["scale_embeddings", "'yes'"]),
        ({"base": -2.0}, ValueError, ["base", "-2.0"]),
    ],
)
def test_token_and_position_rejects(kwargs, error, words):
    with pytest.raises(error) as raised:
        TokenAndPositionEmbedding(**{"vocabulary_size": 10, "max_length": 8, "embedding_dim": 4, **kwargs})
    assert all(word in str(raised.value) for word in words)


def test_token_and_position_wants_token_ids_of_rank_two():
    with pytest.raises(ValueError, match=r"\(batch, steps\), got shape \(2, 3, 4\)"):
        TokenAndPositionEmbedding(10, 8, 4).build((2, 3, 4))


def test_unbuilt_table_is_an_error():
    with pytest.raises(ValueError, match="not built yet"):
        PositionalEncoding(8).table


# --- attention-side layers in a model and under mixed precision ----------------------------


@pytest.mark.parametrize("form", ["causal", "symmetric"])
def test_alibi_bias_in_a_model_repeats_the_reference_over_the_batch(form):
    inputs = keras.Input(shape=(None, 8))
    model = keras.Model(inputs, AlibiBias(heads=4, form=form)(inputs))
    for steps in (3, 7):
        bias = model.predict(np.zeros((2, steps, 8), "float32"), verbose=0)
        assert bias.shape == (2, 4, steps, steps)
        i, j = np.arange(steps)[:, None], np.arange(steps)[None, :]
        for head, slope in enumerate([1 / 4, 1 / 16, 1 / 64, 1 / 256]):  # 2**(-8(h+1)/4)
            distance = np.abs(i - j) if form == "symmetric" else i - j
            expected = np.where(distance >= 0, -slope * distance, -1e9)
            np.testing.assert_allclose(bias[0, head], expected, rtol=1e-7)
            np.testing.assert_array_equal(bias[1], bias[0])


def test_t5_bias_in_a_model_looks_up_the_same_table_for_every_sequence():
    from pe_lib.t5 import bucket_matrix

    inputs = keras.Input(shape=(None, 8))
    layer = T5RelativeBias(heads=3, num_buckets=8, max_distance=16, embeddings_initializer="random_normal")
    model = keras.Model(inputs, layer(inputs))
    bias = model.predict(np.zeros((2, 20, 8), "float32"), verbose=0)
    table = to_numpy(layer.embeddings)
    expected = table[bucket_matrix(20, num_buckets=8, max_distance=16)].transpose(2, 0, 1)
    assert bias.shape == (2, 3, 20, 20)
    np.testing.assert_array_equal(bias[0], expected)
    np.testing.assert_array_equal(bias[1], expected)


def test_float16_causal_alibi_masks_with_a_finite_score_that_softmax_zeroes(policy):
    policy("mixed_float16")
    bias = AlibiBias(heads=2)(np.zeros((1, 5, 4), "float32"))
    assert keras.backend.standardize_dtype(bias.dtype) == "float16"
    values = to_numpy(bias).astype(np.float64)
    assert np.isfinite(values).all()
    above = np.triu(np.ones((5, 5), bool), k=1)  # keys after the query
    assert (values[0][:, above] <= -3e4).all()
    # float16 overflows past 65504: a score of -1000 added to the mask stays finite
    assert np.isfinite(to_numpy(bias + keras.ops.cast(-1000.0, "float16"))).all()
    weights = to_numpy(keras.ops.softmax(keras.ops.cast(bias, "float32"), axis=-1))
    assert (weights[0][:, above] == 0).all()
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("method", ["alibi", "t5", "shaw", "rope"])
def test_self_attention_under_mixed_float16_is_finite_and_close_to_float32(policy, method):
    inputs = np.random.default_rng(8).normal(size=(2, 9, 8)).astype("float32")
    full = PositionalSelfAttention(heads=2, key_dim=4, method=method)
    reference = to_numpy(full(inputs)).astype(np.float64)
    policy("mixed_float16")
    half = PositionalSelfAttention(heads=2, key_dim=4, method=method)
    half(inputs)
    half.set_weights(full.get_weights())
    outputs = half(inputs)
    assert keras.backend.standardize_dtype(outputs.dtype) == "float16"
    assert np.isfinite(to_numpy(outputs)).all()
    np.testing.assert_allclose(to_numpy(outputs).astype(np.float64), reference, rtol=0, atol=2e-2)


def test_rotary_embedding_under_mixed_float16_rounds_the_float64_rotation(policy):
    from pe_lib.rope import apply_rope

    policy("mixed_float16")
    x = np.random.default_rng(9).normal(size=(1, 300, 2, 8)).astype("float32")
    out = RotaryEmbedding()(x)
    assert keras.backend.standardize_dtype(out.dtype) == "float16"
    exact = apply_rope(x.astype(np.float64), np.arange(300), sequence_axis=1)
    # within one float16 rounding (half a step, 2**-11 relative) of the exact rotation
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), exact, rtol=2**-10, atol=1e-7)


@pytest.mark.parametrize(
    "init_kwargs",
    [{"method": "rope_dynamic", "scale": 2.0, "original_length": 4},
     {"method": "rope_llama3", "base": 500000.0, "scale": 8.0, "original_length": 4},
     {"method": "rope_yarn_paper", "scale": 4.0, "original_length": 4, "alpha": 2.0, "beta": 16.0}],
)
def test_every_rope_variant_saves_and_runs_symbolically(init_kwargs, tmp_path):
    """The harness's config, symbolic and saving checks for the variants the EXAMPLES entry does not use."""
    example = LayerExample(init_kwargs=init_kwargs, make_inputs=vectors((2, 6, 3, 8)), bad_shape=(2, 6, 3, 7))
    for check in ("config_round_trip", "symbolic_and_eager", "mixed_precision", "bad_shape"):
        CHECKS[check](RotaryEmbedding, example)
    inputs = example.make_inputs(np.random.default_rng(7))
    symbolic_in = keras.Input(shape=(None, 3, 8))
    model = keras.Model(symbolic_in, RotaryEmbedding(**init_kwargs)(symbolic_in))
    model.save(tmp_path / "rotary.keras")
    loaded = keras.saving.load_model(tmp_path / "rotary.keras")
    np.testing.assert_array_equal(loaded.predict(inputs, verbose=0), model.predict(inputs, verbose=0))
