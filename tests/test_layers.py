"""The Keras position layers: values, shapes, masks, dtypes, saving and errors."""

import subprocess
import sys
import textwrap
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from pe_lib import sinusoidal_encoding
from pe_lib.layers import LearnedPositionEmbedding, PositionalEncoding, TokenAndPositionEmbedding

POSITION_LAYERS = [PositionalEncoding, LearnedPositionEmbedding]


def numpy(tensor) -> np.ndarray:
    """A tensor or a Keras variable as a NumPy array."""
    return tensor.numpy() if hasattr(tensor, "numpy") else np.asarray(tensor)


def added_table(layer) -> np.ndarray:
    """The table a position layer adds, as NumPy, for either kind of layer."""
    return numpy(layer.table)


@pytest.fixture
def policy():
    """Set a dtype policy for one test and restore float32 afterwards."""
    yield keras.config.set_dtype_policy
    keras.config.set_dtype_policy("float32")


# --- values -------------------------------------------------------------------------------


def test_adds_the_numpy_table_to_every_sequence():
    inputs = np.random.default_rng(0).normal(size=(3, 9, 6)).astype("float32")
    outputs = numpy(PositionalEncoding(max_length=20)(inputs))
    table = sinusoidal_encoding(9, 6)
    np.testing.assert_array_equal(outputs, inputs + table[None])


def test_zero_input_returns_the_cropped_table_exactly():
    outputs = numpy(PositionalEncoding(max_length=50)(np.zeros((2, 7, 8), "float32")))
    np.testing.assert_array_equal(outputs[0], sinusoidal_encoding(7, 8))
    np.testing.assert_array_equal(outputs[1], sinusoidal_encoding(7, 8))


def test_position_zero_is_zero_one_repeated():
    outputs = numpy(PositionalEncoding(max_length=4)(np.zeros((1, 1, 6), "float32")))
    assert outputs[0, 0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]


def test_depth_four_row_one_checkable_by_hand():
    # depth 4: the angles of position 1 are 1 and 1/100.
    outputs = numpy(PositionalEncoding(max_length=4)(np.zeros((1, 2, 4), "float32")))
    np.testing.assert_allclose(outputs[0, 1], [np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)], atol=1e-7)


@pytest.mark.parametrize("depth", [1, 3, 5, 7])
def test_odd_depth_matches_numpy_and_ends_with_a_sine(depth):
    outputs = numpy(PositionalEncoding(max_length=30)(np.zeros((1, 30, depth), "float32")))[0]
    np.testing.assert_array_equal(outputs, sinusoidal_encoding(30, depth))
    last_rate = 10000.0 ** (-2 * ((depth - 1) // 2) / depth)
    np.testing.assert_allclose(outputs[:, -1], np.sin(np.arange(30) * last_rate), atol=1e-6)


@pytest.mark.parametrize(("base", "layout"), [(10000.0, "half-split"), (100.0, "interleaved"), (500.0, "half-split")])
def test_base_and_layout_are_passed_on(base, layout):
    outputs = numpy(PositionalEncoding(12, base=base, layout=layout)(np.zeros((1, 12, 6), "float32")))[0]
    np.testing.assert_array_equal(outputs, sinusoidal_encoding(12, 6, base=base, layout=layout))


@settings(max_examples=15, deadline=None)
@given(
    steps=st.integers(min_value=1, max_value=40),
    extra=st.integers(min_value=0, max_value=20),
    depth=st.integers(min_value=1, max_value=12),
)
def test_output_minus_input_is_the_first_rows_of_the_table(steps, extra, depth):
    inputs = np.random.default_rng(steps).normal(size=(2, steps, depth)).astype("float32")
    layer = PositionalEncoding(max_length=steps + extra)
    outputs = numpy(layer(inputs))
    np.testing.assert_allclose(outputs - inputs, np.broadcast_to(sinusoidal_encoding(steps, depth), inputs.shape), atol=1e-6)
    assert layer.table.shape == (steps + extra, depth)


def test_learned_layer_adds_the_first_rows_of_its_table():
    layer = LearnedPositionEmbedding(max_length=10)
    inputs = np.random.default_rng(1).normal(size=(3, 4, 5)).astype("float32")
    outputs = numpy(layer(inputs))
    assert tuple(layer.table.shape) == (10, 5)
    np.testing.assert_allclose(outputs, inputs + added_table(layer)[:4][None], rtol=1e-6)


def test_learned_layer_initializer_is_used():
    layer = LearnedPositionEmbedding(max_length=3, initializer="ones")
    outputs = numpy(layer(np.zeros((1, 2, 4), "float32")))
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
@pytest.mark.parametrize("steps", [None, 6])
def test_symbolic_shapes_static_and_dynamic(layer_class, steps):
    inputs = keras.Input(shape=(steps, 4))
    outputs = layer_class(max_length=16)(inputs)
    assert tuple(outputs.shape) == (None, steps, 4)


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_one_compiled_model_accepts_several_lengths(layer_class):
    inputs = keras.Input(shape=(None, 4))
    layer = layer_class(max_length=16)
    model = keras.Model(inputs, layer(inputs))
    for steps in (3, 16, 9):
        outputs = model.predict(np.zeros((2, steps, 4), "float32"), verbose=0)
        assert outputs.shape == (2, steps, 4)
        np.testing.assert_allclose(outputs[1], added_table(layer)[:steps], rtol=1e-6)


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_compute_output_shape(layer_class):
    assert layer_class(max_length=8).compute_output_shape((None, 5, 3)) == (None, 5, 3)


def test_token_and_position_shapes():
    embed = TokenAndPositionEmbedding(20, 12, 6)
    assert tuple(embed(np.ones((3, 5), "int32")).shape) == (3, 5, 6)
    assert embed.compute_output_shape((None, None)) == (None, None, 6)


def test_token_and_position_adds_the_table_to_the_token_vectors():
    for scale in (False, True):
        embed = TokenAndPositionEmbedding(20, 12, 6, scale_embeddings=scale)
        tokens = np.array([[4, 0, 19, 4]])
        outputs = numpy(embed(tokens))[0]
        vectors = numpy(embed.token_embedding.embeddings)[tokens[0]] * (np.sqrt(6) if scale else 1.0)
        np.testing.assert_allclose(outputs, vectors + sinusoidal_encoding(4, 6), rtol=1e-6, atol=1e-7)


# --- configuration and saving -------------------------------------------------------------


def make_layers():
    return [
        PositionalEncoding(40, base=500.0, layout="half-split", name="fixed"),
        LearnedPositionEmbedding(40, initializer="he_normal", name="learned"),
        TokenAndPositionEmbedding(
            30, 40, 6, method="learned", mask_zero=True, scale_embeddings=True, base=123.0, name="tokens"
        ),
    ]


@pytest.mark.parametrize("index", range(3))
def test_config_round_trip(index):
    layer = make_layers()[index]
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    if isinstance(layer, TokenAndPositionEmbedding):
        assert (config["vocabulary_size"], config["max_length"], config["embedding_dim"]) == (30, 40, 6)
        assert (config["method"], config["mask_zero"], config["scale_embeddings"], config["base"]) == (
            "learned", True, True, 123.0,
        )
    else:
        assert config["max_length"] == 40
    if isinstance(layer, PositionalEncoding):
        assert (config["base"], config["layout"]) == (500.0, "half-split")
        inputs = np.zeros((1, 5, 6), "float32")
        np.testing.assert_array_equal(numpy(clone(inputs)), numpy(layer(inputs)))


def test_saved_model_loads_in_a_fresh_process_without_custom_objects(tmp_path):
    fixed, learned, embed = make_layers()
    tokens = keras.Input(shape=(None,), dtype="int32")
    x = embed(tokens)
    x = fixed(x)
    x = learned(x)
    outputs = keras.layers.GlobalAveragePooling1D()(x)
    model = keras.Model(tokens, outputs)
    sample = np.array([[3, 7, 1, 0, 0], [5, 5, 5, 5, 2]], "int32")
    path, data = tmp_path / "front_end.keras", tmp_path / "data.npz"
    model.save(path)
    np.savez(data, sample=sample, expected=model.predict(sample, verbose=0))
    script = textwrap.dedent(
        f"""
        import numpy as np, keras
        import pe_lib.layers
        model = keras.saving.load_model({str(path)!r})
        data = np.load({str(data)!r})
        np.testing.assert_allclose(model.predict(data["sample"], verbose=0), data["expected"], rtol=1e-6)
        fixed, learned, embed = (model.get_layer(name) for name in ("fixed", "learned", "tokens"))
        assert type(fixed).__name__ == "PositionalEncoding" and fixed.layout == "half-split"
        assert fixed.count_params() == 0 and learned.count_params() == 40 * 6
        assert embed.mask_zero and embed.method == "learned"
        print("loaded")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("loaded")


def test_compiled_fit_step_trains_the_learned_table_only():
    keras.utils.set_random_seed(0)
    tokens = keras.Input(shape=(None,), dtype="int32")
    fixed = TokenAndPositionEmbedding(12, 8, 4, name="fixed")
    learned = TokenAndPositionEmbedding(12, 8, 4, method="learned", name="learned")
    x = keras.layers.Concatenate()([fixed(tokens), learned(tokens)])
    outputs = keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(x))
    model = keras.Model(tokens, outputs)
    model.compile(optimizer="adam", loss="mse")
    before = numpy(learned.position_embedding.table)
    sample = np.random.default_rng(0).integers(0, 12, size=(16, 8)).astype("int32")
    history = model.fit(sample, np.ones((16, 1)), epochs=2, batch_size=8, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert not np.allclose(numpy(learned.position_embedding.table), before)
    np.testing.assert_array_equal(fixed.position_embedding.table, sinusoidal_encoding(8, 4))
    assert fixed.position_embedding.trainable_weights == []


def test_rows_no_sequence_reaches_are_not_trained():
    keras.utils.set_random_seed(1)
    tokens = keras.Input(shape=(None,), dtype="int32")
    embed = TokenAndPositionEmbedding(12, 10, 4, method="learned")
    model = keras.Model(tokens, keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(embed(tokens))))
    model.compile(optimizer="adam", loss="mse")
    before = numpy(embed.position_embedding.table)
    model.fit(np.ones((8, 6), "int32"), np.ones((8, 1)), epochs=2, verbose=0)
    after = numpy(embed.position_embedding.table)
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
    table = sinusoidal_encoding(2060, 8)
    row = numpy(outputs[0, 2049]).astype(np.float64)
    expected = numpy(keras.ops.cast(table[2049], compute)).astype(np.float64)
    rounded_position = numpy(keras.ops.cast(table[2048], compute)).astype(np.float64)
    np.testing.assert_array_equal(row, expected)
    assert not np.array_equal(row, rounded_position)
    # The table itself holds float32 values of the float64 angles.
    np.testing.assert_array_equal(layer.table[2049], table[2049])


@pytest.mark.parametrize("name", ["mixed_float16", "mixed_bfloat16"])
def test_learned_table_is_kept_in_float32_under_mixed_precision(policy, name):
    policy(name)
    embed = TokenAndPositionEmbedding(10, 8, 4, method="learned")
    outputs = embed(np.ones((2, 3), "int32"))
    assert keras.backend.standardize_dtype(outputs.dtype) == embed.compute_dtype != "float32"
    assert keras.backend.standardize_dtype(embed.position_embedding.table.dtype) == "float32"


def test_float64_policy_keeps_a_float64_table(policy):
    policy("float64")
    layer = PositionalEncoding(max_length=3000)
    outputs = numpy(layer(np.zeros((1, 3000, 6))))
    assert outputs.dtype == np.float64
    np.testing.assert_array_equal(outputs[0], sinusoidal_encoding(3000, 6, dtype="float64"))


def test_dtype_argument_sets_the_compute_dtype():
    layer = PositionalEncoding(max_length=8, dtype="mixed_float16")
    assert keras.backend.standardize_dtype(layer(np.zeros((1, 2, 4), "float32")).dtype) == "float16"
    assert layer.get_config()["dtype"]["config"]["name"] == "mixed_float16"


# --- masks --------------------------------------------------------------------------------


@pytest.mark.parametrize("layer_class", POSITION_LAYERS)
def test_mask_passes_through_to_a_downstream_layer(layer_class):
    tokens = keras.Input(shape=(None,), dtype="int32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
        x = layer_class(max_length=8)(x)
        outputs = keras.layers.GlobalAveragePooling1D()(x)
    model = keras.Model(tokens, outputs)
    short = np.array([[3, 4, 5]], "int32")
    padded = np.array([[3, 4, 5, 0, 0]], "int32")
    # The average skips the padding only if the mask reaches the pooling layer.
    np.testing.assert_allclose(model.predict(padded, verbose=0), model.predict(short, verbose=0), rtol=1e-6)


def test_eager_output_carries_the_input_mask():
    vectors = keras.layers.Embedding(10, 4, mask_zero=True)(np.array([[3, 0]]))
    outputs = PositionalEncoding(max_length=4)(vectors)
    assert numpy(outputs._keras_mask).tolist() == [[True, False]]


@pytest.mark.parametrize(("mask_zero", "expected"), [(True, [[True, True, False]]), (False, None)])
def test_token_and_position_mask_comes_from_the_token_embedding(mask_zero, expected):
    embed = TokenAndPositionEmbedding(10, 8, 4, mask_zero=mask_zero)
    tokens = np.array([[2, 9, 0]])
    mask = embed.compute_mask(tokens)
    assert (None if mask is None else numpy(mask).tolist()) == expected
    outputs = embed(tokens)
    attached = getattr(outputs, "_keras_mask", None)
    assert (None if attached is None else numpy(attached).tolist()) == expected


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
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_length is 16"):
        model.predict(np.zeros((1, 20, 4), "float32"), verbose=0)
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
