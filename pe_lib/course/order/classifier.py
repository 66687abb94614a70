"""A small Transformer that learns which marker comes first, with or without positions.

:func:`order_classifier` builds the model: token embeddings (plus a
sinusoidal or learned position table, or nothing), one or more
encoder blocks (:func:`encoder_block`), an average over the steps and one
logit. :func:`train_side_by_side` trains several such models on the same
batches; :func:`run_order_experiments` trains one per kind of positions on
:func:`pe_lib.course.order.tasks.marker_order_task` with it and measures each
one's accuracy at the training length and at other lengths.

Without positions every layer treats the steps as an unordered set, so the
model answers both rows of a mirror pair alike and scores exactly one half.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import keras
import numpy as np

from pe_lib._checks import require_int, require_multiple, require_positive_float
from pe_lib.layers import TokenAndPositionEmbedding
from pe_lib.methods import PositionMethod, get_method, method_names
from pe_lib.course.order.tasks import marker_order_task

def _require_input_method(name: str, method: str | PositionMethod) -> None:
    """Raise unless ``method`` names a method that acts on the input, or none."""
    if get_method(method).acts_on not in ("input", "none"):
        allowed = (*method_names("input"), *method_names("none"))
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))} for this model; got {method!r}")


def _data_seed(seed: int, *key: int) -> int:
    """A data seed drawn from ``seed`` and ``key`` alone: (0,) for training, (1, length) for a test."""
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1)[0])


def encoder_block(x, *, heads: int, hidden: int, tag: str = ""):
    """One encoder block on ``x``: self-attention, then a feed-forward layer.

    Each sub-layer's output is added to its input (a residual connection)
    and the sum is normalised. ``tag`` ends the layers' names, so that
    several blocks can live in one model.

    >>> x = keras.Input(shape=(None, 8))
    >>> tuple(encoder_block(x, heads=2, hidden=16).shape)
    (None, None, 8)
    """
    depth = x.shape[-1]
    attention = keras.layers.MultiHeadAttention(
        heads, depth // heads, name=f"attention{tag}")
    x = keras.layers.LayerNormalization(name=f"norm{tag}_a")(
        x + attention(x, x))
    expand = keras.layers.Dense(hidden, activation="relu",
                                name=f"expand{tag}")
    project = keras.layers.Dense(depth, name=f"project{tag}")
    return keras.layers.LayerNormalization(name=f"norm{tag}_b")(
        x + project(expand(x)))


def order_classifier(
    method: str | PositionMethod,
    *,
    vocabulary_size: int = 16,
    max_length: int = 64,
    depth: int = 32,
    heads: int = 2,
    blocks: int = 1,
    hidden: int = 64,
    learning_rate: float = 3e-3,
    decay_steps: int | None = None,
    seed: int = 0,
) -> keras.Model:
    """A compiled Transformer encoder that outputs one logit per sequence.

    Args:
        method: ``"sinusoidal"``, ``"learned"`` or ``"none"`` (the methods of
            :mod:`pe_lib.methods` that act on the input, and none).
        vocabulary_size: number of token ids.
        max_length: longest sequence the position layer accepts (unused
            for ``"none"``, which accepts any length).
        depth: size of the token vectors.
        heads: attention heads per block; ``depth`` must be a multiple.
        blocks: number of attention blocks.
        hidden: width of each block's feed-forward layer.
        learning_rate: Adam's (initial) learning rate.
        decay_steps: if given, the learning rate falls to zero along a
            cosine over this many training steps; otherwise it stays fixed.
        seed: seed for the initial weights.

    Returns:
        A ``keras.Model`` from token ids ``(batch, steps)`` to logits
        ``(batch, 1)``, compiled with binary cross-entropy and accuracy.
        The embedding layer is named ``"embedding"``.

    Example:
        >>> model = order_classifier("learned", max_length=24)
        >>> tuple(model.get_layer("embedding").position_embedding.table.shape)
        (24, 32)
        >>> tuple(model(np.ones((3, 10), dtype="int32")).shape)
        (3, 1)
    """
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=1)
    max_length = require_int("max_length", max_length, minimum=1)
    depth = require_int("depth", depth, minimum=1)
    heads = require_int("heads", heads, minimum=1)
    blocks = require_int("blocks", blocks, minimum=1)
    hidden = require_int("hidden", hidden, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    require_multiple("depth", depth, "heads", heads)
    learning_rate = require_positive_float("learning_rate", learning_rate)
    _require_input_method("method", method)
    entry = get_method(method)
    if decay_steps is not None:  # the rate falls to 0 along a cosine
        decay_steps = require_int("decay_steps", decay_steps, minimum=1)
        learning_rate = keras.optimizers.schedules.CosineDecay(
            learning_rate, decay_steps)

    keras.utils.set_random_seed(seed)
    tokens = keras.Input(shape=(None,), dtype="int32", name="tokens")
    if entry.acts_on == "none":
        embed = keras.layers.Embedding(vocabulary_size, depth,
                                       name="embedding")
    else:
        embed = TokenAndPositionEmbedding(vocabulary_size, max_length, depth,
                                          method=entry, name="embedding")
    x = embed(tokens)
    for block in range(1, blocks + 1):
        x = encoder_block(x, heads=heads, hidden=hidden, tag=f"_{block}")
    pooled = keras.layers.GlobalAveragePooling1D(name="average")(x)
    logit = keras.layers.Dense(1, name="logit")(pooled)
    model = keras.Model(tokens, logit, name=f"order_classifier_{entry.name}")
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0, name="accuracy")],
    )
    return model


def order_accuracy(model: keras.Model, tokens: np.ndarray, labels: np.ndarray) -> float:
    """Share of sequences whose logit has the sign of the label (1: positive, 0: not).

    The model runs eagerly on all sequences at once, so lengths it has not
    seen before need no new compiled function.

    >>> model = order_classifier("none")
    >>> tokens, labels = marker_order_task(50, 12, seed=1)
    >>> order_accuracy(model, tokens, labels)
    0.5
    """
    tokens = np.asarray(tokens)
    labels = np.asarray(labels)
    if tokens.ndim != 2 or labels.shape != tokens.shape[:1]:
        raise ValueError(
            f"tokens must be (sequences, steps) and labels (sequences,), got {tokens.shape} and {labels.shape}"
        )
    logits = keras.ops.convert_to_numpy(model(tokens, training=False))[:, 0]
    return float(np.mean((logits > 0) == (labels == 1)))


def train_side_by_side(
    models: dict[str, keras.Model],
    tokens: np.ndarray,
    labels: np.ndarray,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float = 3e-3,
    decay_steps: int | None = None,
    seed: int = 0,
) -> dict[str, tuple[float, ...]]:
    """Train one-logit models on the same batches, as the branches of one model.

    The loss is the sum of the models' binary cross-entropies. They share no
    weight, so the gradient for each weight is that of its own model's loss,
    and Adam steps each weight from its own history: every model learns as
    it would alone, while the training step is compiled once for all. The
    learning rate falls to zero along a cosine over ``decay_steps`` (by
    default, every step of the training).

    Returns:
        Each model's training accuracy after each epoch, by name.

    Example:
        >>> tokens, labels = marker_order_task(32, 12, seed=0)
        >>> history = train_side_by_side({"none": order_classifier("none")},
        ...                              tokens, labels, epochs=2, batch_size=32)
        >>> {name: len(accuracy) for name, accuracy in history.items()}
        {'none': 2}
    """
    epochs = require_int("epochs", epochs, minimum=1)
    batch_size = require_int("batch_size", batch_size, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    learning_rate = require_positive_float("learning_rate", learning_rate)
    if decay_steps is None:  # every step of the training
        decay_steps = epochs * -(-len(tokens) // batch_size)
    decay_steps = require_int("decay_steps", decay_steps, minimum=1)
    optimizer = keras.optimizers.Adam(
        keras.optimizers.schedules.CosineDecay(learning_rate, decay_steps))

    inputs = keras.Input(shape=(None,), dtype="int32", name="tokens")
    branches = keras.Model(
        inputs, {name: model(inputs) for name, model in models.items()})
    branches.compile(
        optimizer=optimizer,
        loss={name: keras.losses.BinaryCrossentropy(from_logits=True)
              for name in models},
        metrics={name: [keras.metrics.BinaryAccuracy(threshold=0.0,
                                                     name="accuracy")]
                 for name in models},
    )
    keras.utils.set_random_seed(seed)
    history = branches.fit(
        tokens, {name: labels for name in models},
        batch_size=batch_size, epochs=epochs, shuffle=True, verbose=0,
    ).history

    def accuracy(name):  # with one branch, Keras leaves the name out
        return history.get(f"{name}_accuracy", history.get("accuracy"))

    return {name: tuple(float(value) for value in accuracy(name))
            for name in models}


@dataclasses.dataclass(frozen=True)
class OrderRun:
    """What :func:`run_order_experiment` returns.

    Attributes:
        method: ``"sinusoidal"``, ``"learned"`` or ``"none"`` (the methods of
            :mod:`pe_lib.methods` that act on the input, and none).
        model: the trained model.
        trainable_parameters: number of trained weights.
        train_accuracy: training accuracy after each epoch.
        test_accuracy: accuracy on fresh sequences, by sequence length.
        initial_position_table: the learned position table before training
            (``None`` unless ``method == "learned"``).
    """

    method: str
    model: keras.Model
    trainable_parameters: int
    train_accuracy: tuple[float, ...]
    test_accuracy: dict[int, float]
    initial_position_table: np.ndarray | None


def run_order_experiment(method: str, **options) -> OrderRun:
    """Train one :func:`order_classifier` on the marker-order task and test it.

    The same as ``run_order_experiments((method,), **options)[method]``;
    see :func:`run_order_experiments` for the options.

    Example:
        >>> run = run_order_experiment("none", pairs=32, test_pairs=20, epochs=1)
        >>> run.test_accuracy
        {12: 0.5, 24: 0.5}
    """
    return run_order_experiments((method,), **options)[method]


def run_order_experiments(
    methods: Sequence[str],
    *,
    train_length: int = 12,
    test_lengths: Sequence[int] = (12, 24),
    pairs: int = 1536,
    test_pairs: int = 500,
    epochs: int = 6,
    batch_size: int = 64,
    learning_rate: float = 3e-3,
    seed: int = 0,
    **model_options,
) -> dict[str, OrderRun]:
    """Train one :func:`order_classifier` per position method on the same data, and test each.

    Training sequences all have ``train_length`` steps; each test set is
    drawn afresh for its length, from ``seed`` and that length alone, so the
    sequences tested at one length do not depend on which other lengths are
    tested. The position table gets
    ``max(train_length, *test_lengths)`` rows unless ``max_length`` is given,
    so a learned table has rows that no training sequence reaches. The
    learning rate decays to zero over the training steps unless
    ``decay_steps`` is given.

    The models are trained side by side by :func:`train_side_by_side`, on
    the same batches, each as it would be alone.

    Args:
        methods: some of ``"sinusoidal"``, ``"learned"`` and ``"none"``, each once.
        train_length: steps per training sequence.
        test_lengths: lengths to test at.
        pairs: mirror pairs in the training set (twice as many sequences;
            the default makes 48 full batches of 64, so that no smaller last
            batch costs a second compilation of the training step).
        test_pairs: mirror pairs in each test set.
        epochs: passes over the training set.
        batch_size: sequences per training step.
        learning_rate: Adam's initial learning rate, for every model.
        seed: one seed for the weights, the data and the shuffling.
        **model_options: passed on to :func:`order_classifier`.

    Returns:
        A dictionary from each method to its :class:`OrderRun`.

    Example:
        >>> runs = run_order_experiments(("none", "learned"), pairs=32, test_pairs=20, epochs=1)
        >>> list(runs), runs["none"].test_accuracy[24]
        (['none', 'learned'], 0.5)
    """
    for method in methods:
        _require_input_method("methods", method)
    entries = tuple(get_method(method) for method in methods)
    methods = tuple(entry.name for entry in entries)
    if not methods or len(set(methods)) != len(methods):
        raise ValueError(f"methods must name each method at most once, and at least one; got {methods!r}")
    train_length = require_int("train_length", train_length, minimum=2)
    test_lengths = tuple(require_int("test_lengths", length, minimum=2) for length in test_lengths)
    pairs = require_int("pairs", pairs, minimum=1)
    epochs = require_int("epochs", epochs, minimum=1)
    batch_size = require_int("batch_size", batch_size, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    model_options.setdefault("max_length", max(train_length, *test_lengths))
    model_options.setdefault("decay_steps", epochs * -(-2 * pairs // batch_size))
    # The training set comes from the seed alone and each test set from the seed and
    # its length alone, so a length's test set does not change with the other lengths.
    train_seed = _data_seed(seed, 0)

    models = {entry.name: order_classifier(entry, seed=seed, learning_rate=learning_rate, **model_options)
              for entry in entries}
    initial_tables = {
        method: keras.ops.convert_to_numpy(model.get_layer("embedding").position_embedding.table)
        if method == "learned" else None
        for method, model in models.items()
    }
    train_tokens, train_labels = marker_order_task(pairs, train_length, seed=train_seed)
    history = train_side_by_side(
        models, train_tokens, train_labels, epochs=epochs, batch_size=batch_size,
        learning_rate=learning_rate,
        decay_steps=model_options["decay_steps"], seed=seed,
    )
    tests = [(length, *marker_order_task(test_pairs, length, seed=_data_seed(seed, 1, length)))
             for length in test_lengths]
    runs = {}
    for method, model in models.items():
        runs[method] = OrderRun(
            method=method,
            model=model,
            trainable_parameters=int(sum(np.prod(weight.shape) for weight in model.trainable_weights)),
            train_accuracy=history[method],
            test_accuracy={length: order_accuracy(model, test_tokens, test_labels)
                           for length, test_tokens, test_labels in tests},
            initial_position_table=initial_tables[method],
        )
    return runs
