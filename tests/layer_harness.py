"""One set of checks that every Keras layer of ``pe_lib.layers`` goes through.

In the spirit of keras-hub's ``TestCase.run_layer_test``: a layer is described
once by a :class:`LayerExample` (how to build it, what to feed it, what it
promises), and each ``check_*`` function below verifies one promise on the
current Keras backend:

- :func:`check_config_round_trip`: ``from_config(get_config())`` gives the
  same config, survives Keras serialization through JSON, and computes the
  same outputs once it has the same weights;
- :func:`check_symbolic_and_eager`: a call on ``keras.Input`` predicts the
  eager call's shape and dtype, and a model built from it computes the eager
  call's values;
- :func:`check_training_step`: ``fit`` runs on a tiny batch, changes every
  trainable weight that the call reads and nothing of a fixed one;
- :func:`check_mask`: a Keras mask reaches a downstream layer (padding does not
  change a masked average) where the layer passes or makes one;
- :func:`check_mixed_precision`: under ``mixed_float16`` the output is float16
  and finite, the weights stay float32, and the values are close to the
  float32 ones (masked entries aside, which must be the same);
- :func:`check_bad_shape`: an input of the wrong rank raises ``ValueError``
  naming that shape;
- :func:`save_for_fresh_process` and :func:`load_in_fresh_process`: a model
  saved as ``.keras`` loads in a new Python process (one for all layers) and
  gives the same outputs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import keras
import numpy as np
from keras import ops


@dataclass(frozen=True)
class LayerExample:
    """How to build and feed one layer class, and what it promises.

    Args:
        init_kwargs: arguments for the constructor.
        make_inputs: ``rng -> array``, a small batch the layer accepts.
        trainable: the layer owns trainable weights that a fit step must change.
        mask: ``"passes"`` (a mask on the input reaches the output), ``"makes"``
            (the layer derives a mask from token id 0) or ``None`` (no mask).
        bad_shape: an input shape the layer must refuse with ``ValueError``.
        float16_tolerance: largest absolute difference allowed between the
            ``mixed_float16`` and float32 outputs.
        masked_below: outputs at or below this value are masked entries
            (each dtype holds its own large negative score there): both
            policies must mask the same entries, and only the others are
            compared; ``None`` when the layer masks nothing.
        outside_call: names of trainable weights that calling the layer does
            not read (Shaw's ``value_table``, used by ``value_term``): the
            fit step must leave them as they were.
    """

    init_kwargs: dict
    make_inputs: Callable[[np.random.Generator], np.ndarray]
    trainable: bool = False
    mask: str | None = None
    bad_shape: tuple = ()
    float16_tolerance: float = 2e-2
    masked_below: float | None = None
    outside_call: tuple = ()


def to_numpy(value) -> np.ndarray:
    """A backend tensor or a Keras variable as a NumPy array."""
    return ops.convert_to_numpy(value)


def built_layer(layer_class, example: LayerExample, inputs, **overrides):
    """A new layer called once on ``inputs``; returns ``(layer, outputs as NumPy)``."""
    layer = layer_class(**{**example.init_kwargs, **overrides})
    return layer, to_numpy(layer(inputs))


def check_config_round_trip(layer_class, example: LayerExample) -> None:
    inputs = example.make_inputs(np.random.default_rng(0))
    layer, outputs = built_layer(layer_class, example, inputs)
    config = layer.get_config()
    for key, value in example.init_kwargs.items():
        assert key in config, f"get_config() of {layer_class.__name__} lacks {key!r}"
        if not isinstance(config[key], dict):  # initializers and the like come back serialized
            assert config[key] == value, (key, config[key], value)
    clone = layer_class.from_config(config)
    assert clone.get_config() == config
    revived = keras.saving.deserialize_keras_object(
        json.loads(json.dumps(keras.saving.serialize_keras_object(layer)))
    )
    assert type(revived) is layer_class and revived.get_config() == config
    clone(inputs)
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(to_numpy(clone(inputs)), outputs)


def check_symbolic_and_eager(layer_class, example: LayerExample) -> None:
    inputs = example.make_inputs(np.random.default_rng(1))
    layer = layer_class(**example.init_kwargs)
    symbolic_in = keras.Input(shape=inputs.shape[1:], dtype=str(inputs.dtype))
    symbolic_out = layer(symbolic_in)
    eager_out = layer(inputs)
    assert tuple(symbolic_out.shape) == (None, *tuple(eager_out.shape)[1:])
    assert keras.backend.standardize_dtype(symbolic_out.dtype) == keras.backend.standardize_dtype(
        eager_out.dtype
    )
    assert tuple(layer.compute_output_shape(inputs.shape)) == tuple(eager_out.shape)
    model = keras.Model(symbolic_in, symbolic_out)
    np.testing.assert_allclose(
        model.predict(inputs, verbose=0), to_numpy(eager_out), rtol=1e-6, atol=1e-6
    )


def check_training_step(layer_class, example: LayerExample) -> None:
    keras.utils.set_random_seed(0)
    inputs = example.make_inputs(np.random.default_rng(2))
    layer = layer_class(**example.init_kwargs)
    symbolic_in = keras.Input(shape=inputs.shape[1:], dtype=str(inputs.dtype))
    # A Dense head gives a fixed layer something to train, so fit runs either way.
    outputs = keras.layers.Dense(1)(layer(symbolic_in))
    model = keras.Model(symbolic_in, outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    before = [to_numpy(weight) for weight in layer.trainable_weights]
    fixed_before = [to_numpy(weight) for weight in layer.non_trainable_weights]
    target = np.random.default_rng(3).normal(size=(len(inputs), *tuple(outputs.shape)[1:]))
    history = model.fit(inputs, target.astype("float32"), epochs=1, batch_size=len(inputs), verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert bool(before) == example.trainable, (
        f"{layer_class.__name__} has {len(before)} trainable weights; the table says "
        f"trainable={example.trainable}"
    )
    names = {weight.name for weight in layer.trainable_weights}
    assert set(example.outside_call) <= names, (example.outside_call, names)
    for weight, old in zip(layer.trainable_weights, before):
        if weight.name in example.outside_call:
            np.testing.assert_array_equal(to_numpy(weight), old)
        else:
            assert not np.array_equal(to_numpy(weight), old), f"{weight.path} did not change"
    for weight, old in zip(layer.non_trainable_weights, fixed_before):
        np.testing.assert_array_equal(to_numpy(weight), old)


def check_mask(layer_class, example: LayerExample) -> None:
    layer = layer_class(**example.init_kwargs)
    if example.mask is None:
        assert not layer.supports_masking, (
            f"{layer_class.__name__}.supports_masking is True; say mask='passes' in the table"
        )
        return
    inputs = example.make_inputs(np.random.default_rng(4))
    padded = np.concatenate([inputs, np.zeros_like(inputs[:, :2])], axis=1)
    steps_mask = np.any(padded != 0, axis=tuple(range(2, padded.ndim)))
    if example.mask == "passes":
        assert layer.supports_masking
        given = ops.convert_to_tensor(steps_mask)
        assert to_numpy(layer.compute_mask(padded, given)).tolist() == steps_mask.tolist()
    elif example.mask == "makes":
        assert to_numpy(layer.compute_mask(padded)).tolist() == steps_mask.tolist()
    else:
        raise ValueError(f"mask must be 'passes', 'makes' or None, got {example.mask!r}")
    symbolic_in = keras.Input(shape=(None, *inputs.shape[2:]), dtype=str(inputs.dtype))
    with warnings.catch_warnings():
        # Keras warns, and the test fails, if a layer drops a mask it was given.
        warnings.simplefilter("error")
        masked = keras.layers.Masking(mask_value=0.0)(symbolic_in) if example.mask == "passes" else symbolic_in
        x = layer(masked)
        if len(x.shape) != 3:
            return  # the pooling below reads (batch, steps, features)
        model = keras.Model(symbolic_in, keras.layers.GlobalAveragePooling1D()(x))
    # The average ignores the padded steps only if the mask reaches the pooling layer.
    np.testing.assert_allclose(
        model.predict(padded, verbose=0), model.predict(inputs, verbose=0), rtol=1e-5, atol=1e-6
    )


def check_mixed_precision(layer_class, example: LayerExample) -> None:
    inputs = example.make_inputs(np.random.default_rng(5))
    layer, reference = built_layer(layer_class, example, inputs)
    half = layer_class(**example.init_kwargs, dtype="mixed_float16")
    half(inputs)
    half.set_weights(layer.get_weights())
    outputs = half(inputs)
    assert keras.backend.standardize_dtype(outputs.dtype) == "float16"
    for weight in half.weights:
        assert keras.backend.standardize_dtype(weight.dtype) == "float32", weight.path
    half_outputs = to_numpy(outputs).astype(np.float64)
    assert np.isfinite(half_outputs).all(), "float16 outputs overflowed"
    reference = reference.astype(np.float64)
    if example.masked_below is not None:
        masked = reference <= example.masked_below
        assert masked.any(), "the example masks nothing: masked_below is not tested"
        np.testing.assert_array_equal(half_outputs <= example.masked_below, masked)
        half_outputs, reference = half_outputs[~masked], reference[~masked]
    difference = np.abs(half_outputs - reference)
    assert difference.max() <= example.float16_tolerance, difference.max()


def check_bad_shape(layer_class, example: LayerExample) -> None:
    layer = layer_class(**example.init_kwargs)
    inputs = np.zeros(example.bad_shape, dtype=example.make_inputs(np.random.default_rng(6)).dtype)
    try:
        layer(inputs)
    except ValueError as error:
        assert str(tuple(example.bad_shape)) in str(error), str(error)
    else:
        raise AssertionError(f"{layer_class.__name__} accepted an input of shape {example.bad_shape}")


def save_for_fresh_process(layers: dict, folder: Path) -> None:
    """Save one model per ``name -> (layer_class, example)`` with its inputs and outputs."""
    for name, (layer_class, example) in layers.items():
        inputs = example.make_inputs(np.random.default_rng(7))
        symbolic_in = keras.Input(shape=(None, *inputs.shape[2:]), dtype=str(inputs.dtype))
        model = keras.Model(symbolic_in, layer_class(**example.init_kwargs, name="layer")(symbolic_in))
        model.save(folder / f"{name}.keras")
        np.savez(folder / f"{name}.npz", inputs=inputs, outputs=model.predict(inputs, verbose=0))


# Runs in a new interpreter: only the registration done by importing pe_lib.layers
# lets load_model find the classes (no custom_objects).
_LOAD_ALL = """
import json, sys
from pathlib import Path
import numpy as np, keras
import pe_lib.layers
results = {}
for path in sorted(Path(sys.argv[1]).glob("*.keras")):
    try:
        model = keras.saving.load_model(path)
        data = np.load(path.with_suffix(".npz"))
        np.testing.assert_allclose(model.predict(data["inputs"], verbose=0), data["outputs"],
                                   rtol=1e-6, atol=1e-6)
        results[path.stem] = type(model.get_layer("layer")).__name__
    except Exception as error:
        results[path.stem] = f"{type(error).__name__}: {error}"
print("RESULTS " + json.dumps(results))
"""


def load_in_fresh_process(folder: Path) -> dict:
    """Load every saved model in one new process: ``name -> class name or error text``."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_LOAD_ALL), str(folder)],
        capture_output=True, text=True, timeout=300,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULTS ")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    return json.loads(lines[-1].removeprefix("RESULTS "))


CHECKS = {
    "config_round_trip": check_config_round_trip,
    "symbolic_and_eager": check_symbolic_and_eager,
    "training_step": check_training_step,
    "mask": check_mask,
    "mixed_precision": check_mixed_precision,
    "bad_shape": check_bad_shape,
}
