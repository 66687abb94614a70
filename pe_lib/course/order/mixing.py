"""Add the position code to the token vectors, or concatenate it: a small experiment.

:func:`mixing_classifier` builds the course's one-block order classifier with
either front end: ``"add"`` sums token vectors and sinusoidal codes of the
same width; ``"concatenate"`` puts a ``position_depth``-wide code beside
narrower (or equally wide) token vectors. :func:`run_mixing_experiment` trains
several such models side by side on
:func:`pe_lib.course.order.tasks.marker_order_task` and tests them.

>>> attention_parameters(32, heads=2)
4224
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import keras
import numpy as np

import pe_lib
from pe_lib.layers import PositionalEncoding
from pe_lib._checks import require_choice, require_int
from pe_lib.course.order.classifier import encoder_block, train_side_by_side
from pe_lib.course.order.tasks import marker_order_task

#: How a front end combines token vectors and position codes.
MIXINGS = ("add", "concatenate")


def attention_parameters(width: int, *, heads: int, key_depth: int | None = None) -> int:
    """Weights of one multi-head attention layer on ``width``-wide vectors.

    Query, key and value each map ``width`` to ``heads * key_depth`` (kernel and
    bias); the output maps back to ``width``. ``key_depth`` defaults to
    ``width // heads``, which makes the count ``4 * width**2 + 4 * width``.

    >>> attention_parameters(512, heads=8)
    1050624
    """
    width = require_int("width", width, minimum=1)
    heads = require_int("heads", heads, minimum=1)
    key_depth = width // heads if key_depth is None else key_depth
    key_depth = require_int("key_depth", key_depth, minimum=1)
    inner = heads * key_depth
    return 3 * (width * inner + inner) + inner * width + width


@keras.saving.register_keras_serializable(package="pe_lib.course")
class ConcatenatedPositions(keras.layers.Layer):
    """Puts a sinusoidal code of ``position_depth`` columns after each token vector.

    Example:
        >>> layer = ConcatenatedPositions(max_length=10, position_depth=4)
        >>> tuple(layer(np.zeros((2, 6, 3))).shape)
        (2, 6, 7)
    """

    def __init__(self, max_length: int, position_depth: int, **kwargs):
        super().__init__(**kwargs)
        self.max_length = require_int("max_length", max_length, minimum=1)
        self.position_depth = require_int("position_depth", position_depth, minimum=1)
        self.table = pe_lib.sinusoidal_encoding(self.max_length, self.position_depth)

    def call(self, inputs):
        batch, steps = keras.ops.shape(inputs)[0], keras.ops.shape(inputs)[1]
        codes = keras.ops.cast(self.table, inputs.dtype)[None, :steps, :]
        codes = keras.ops.broadcast_to(
            codes, (batch, steps, self.position_depth))
        return keras.ops.concatenate([inputs, codes], axis=-1)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], input_shape[-1] + self.position_depth)

    def get_config(self):
        return {**super().get_config(), "max_length": self.max_length, "position_depth": self.position_depth}


def mixing_classifier(
    mixing: str,
    *,
    token_depth: int,
    position_depth: int | None = None,
    vocabulary_size: int = 16,
    max_length: int = 64,
    heads: int = 2,
    hidden: int = 64,
    seed: int = 0,
) -> keras.Model:
    """An uncompiled one-block order classifier with an added or concatenated position code.

    Args:
        mixing: ``"add"`` or ``"concatenate"``.
        token_depth: width of the token vectors.
        position_depth: width of the concatenated code; ``"add"`` takes
            none (its code is ``token_depth`` wide).
        vocabulary_size: number of token ids.
        max_length: longest sequence the position table covers.
        heads: attention heads; they split the model width evenly.
        hidden: width of the feed-forward layer.
        seed: seed of the initial weights.

    Returns:
        A ``keras.Model`` from token ids ``(batch, steps)`` to one logit per
        sequence; its attention layer is named ``"attention"``.

    Example:
        >>> model = mixing_classifier("concatenate", token_depth=16, position_depth=16)
        >>> model.get_layer("attention").count_params() == attention_parameters(32, heads=2)
        True
    """
    mixing = require_choice("mixing", mixing, MIXINGS)
    token_depth = require_int("token_depth", token_depth, minimum=1)
    if (mixing == "add") != (position_depth is None):
        raise ValueError(
            f"position_depth must be given for 'concatenate' and only for it, got {position_depth!r} for {mixing!r}"
        )
    width = token_depth if mixing == "add" else token_depth + require_int("position_depth", position_depth, minimum=1)
    heads = require_int("heads", heads, minimum=1)
    if width % heads:
        raise ValueError(f"the model width {width} must be a multiple of heads={heads}")

    seed = require_int("seed", seed, minimum=0)

    keras.utils.set_random_seed(seed)
    tokens = keras.Input(shape=(None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(vocabulary_size, token_depth,
                               name="token_embedding")(tokens)
    if mixing == "add":
        x = PositionalEncoding(max_length, name="positions")(x)
    else:
        x = ConcatenatedPositions(max_length, position_depth,
                                  name="positions")(x)
    x = encoder_block(x, heads=heads, hidden=hidden)
    pooled = keras.layers.GlobalAveragePooling1D(name="average")(x)
    logit = keras.layers.Dense(1, name="logit")(pooled)
    return keras.Model(tokens, logit, name=f"{mixing}_{width}")


@dataclasses.dataclass(frozen=True)
class MixingRun:
    """One trained model of :func:`run_mixing_experiment`.

    Attributes:
        model: the trained model.
        width: the width the attention layer works on.
        attention_parameters: weights of its attention layer.
        parameters: weights of the whole model.
        test_accuracy: share of fresh test sequences it labels right.
    """

    model: keras.Model
    width: int
    attention_parameters: int
    parameters: int
    test_accuracy: float


def run_mixing_experiment(
    variants: Mapping[str, dict],
    *,
    length: int = 12,
    pairs: int = 768,
    test_pairs: int = 500,
    epochs: int = 6,
    batch_size: int = 64,
    learning_rate: float = 3e-3,
    seed: int = 0,
    task=marker_order_task,
) -> dict[str, MixingRun]:
    """Train one :func:`mixing_classifier` per variant on the same batches, and test each.

    The models are trained side by side by
    :func:`pe_lib.course.order.classifier.train_side_by_side`, on the same
    batches, each as it would be alone; the learning rate falls to zero along
    a cosine.

    Args:
        variants: a name for each model, with the keyword arguments of
            :func:`mixing_classifier` (without ``seed``).
        length: steps per sequence, in training and testing.
        pairs: mirror pairs of training sequences.
        test_pairs: mirror pairs of test sequences.
        epochs: passes over the training set.
        batch_size: sequences per step.
        learning_rate: Adam's initial learning rate.
        seed: one seed for the weights, the data and the shuffling.
        task: the task's sequences, ``task(pairs, length, seed=...)``
            giving ``(tokens, labels)`` in mirror pairs, as
            :func:`~pe_lib.course.order.tasks.marker_order_task` (the
            default) and :func:`~pe_lib.course.order.tasks.adjacent_markers_task` do.

    Example:
        >>> runs = run_mixing_experiment({"add": {"mixing": "add", "token_depth": 8}},
        ...                              pairs=32, test_pairs=10, epochs=1)
        >>> runs["add"].width, runs["add"].attention_parameters
        (8, 288)
    """
    if not variants:
        raise ValueError("variants must name at least one model")
    length = require_int("length", length, minimum=2)
    pairs = require_int("pairs", pairs, minimum=1)
    epochs = require_int("epochs", epochs, minimum=1)
    batch_size = require_int("batch_size", batch_size, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    if not callable(task):
        raise ValueError(f"task must be a function of (pairs, length, seed=...), got {task!r}")
    train_seed, test_seed = (int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(2))

    models = {name: mixing_classifier(**options, max_length=length, seed=seed) for name, options in variants.items()}
    train_tokens, train_labels = task(pairs, length, seed=train_seed)
    train_side_by_side(models, train_tokens, train_labels, epochs=epochs,
                       batch_size=batch_size, learning_rate=learning_rate, seed=seed)

    test_tokens, test_labels = task(test_pairs, length, seed=test_seed)
    runs = {}
    for name, model in models.items():
        logits = keras.ops.convert_to_numpy(model(test_tokens, training=False))[:, 0]
        attention = model.get_layer("attention")
        runs[name] = MixingRun(
            model=model,
            width=int(attention.get_config()["num_heads"] * attention.get_config()["key_dim"]),
            attention_parameters=int(attention.count_params()),
            parameters=int(model.count_params()),
            test_accuracy=float(np.mean((logits > 0) == (test_labels == 1))),
        )
    return runs
