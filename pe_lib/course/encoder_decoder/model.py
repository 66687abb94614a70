"""A small encoder-decoder Transformer that reverses token sequences.

:func:`reversal_task` generates the data: random token sequences and their
reversals, with the decoder's teacher-forcing inputs. :func:`sorting_task`
pairs the same sources with their sorted tokens, a task that needs no
positions. :func:`encoder_decoder`
builds the model on the front end of Géron's Transformer: one token
``Embedding`` shared by the encoder and the decoder inputs, and one position
layer applied to both. :func:`greedy_decode` writes the output one token at a
time, and :func:`exact_match` scores whole sequences.
:func:`train_encoder_decoders` trains one model per position method on the
same batches.

Reversal needs positions and nothing else: the output holds exactly the input
tokens, so a model that sees its input as an unordered collection knows *what*
to write but not in which order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import keras
import numpy as np
from keras import ops

from pe_lib._checks import require_choice, require_int, require_multiple, require_positive_float
from pe_lib.layers import LearnedPositionEmbedding, PositionalEncoding
from pe_lib.methods import method_names

#: What the model adds to its token vectors (names of the method registry).
INPUT_METHODS = (*method_names("input"), "none")

#: Token id 0 is reserved; 1 starts every decoder input; content starts at 2.
START = 1
FIRST_CONTENT = 2


@dataclasses.dataclass(frozen=True)
class ReversalData:
    """What :func:`reversal_task` returns; every array is ``(count, length)``.

    Attributes:
        sources: the encoder's input tokens.
        decoder_inputs: ``START`` followed by the target without its last
            token (teacher forcing).
        targets: the sources reversed, the tokens the decoder must write.
    """

    sources: np.ndarray
    decoder_inputs: np.ndarray
    targets: np.ndarray


def reversal_task(count: int, length: int, *, vocabulary_size: int = 16, seed: int = 0) -> ReversalData:
    """Random sequences of content tokens and their reversals.

    Each source token is drawn uniformly from ``2 .. vocabulary_size - 1``.

    Args:
        count: number of sequences.
        length: tokens per sequence.
        vocabulary_size: number of token ids, including ``0`` and ``START``.
        seed: seed of the random generator.

    Example:
        >>> data = reversal_task(1, 5, vocabulary_size=10, seed=3)
        >>> src, dec, tgt = data.sources[0], data.decoder_inputs[0], data.targets[0]
        >>> bool((tgt == src[::-1]).all()), int(dec[0]), bool((dec[1:] == tgt[:-1]).all())
        (True, 1, True)
    """
    count = require_int("count", count, minimum=1)
    length = require_int("length", length, minimum=1)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=FIRST_CONTENT + 1)
    seed = require_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    sources = rng.integers(FIRST_CONTENT, vocabulary_size, size=(count, length)).astype("int32")
    targets = sources[:, ::-1].copy()
    decoder_inputs = np.concatenate([np.full((count, 1), START, "int32"), targets[:, :-1]], axis=1)
    return ReversalData(sources, decoder_inputs, targets)


def sorting_task(count: int, length: int, *, vocabulary_size: int = 16, seed: int = 0) -> ReversalData:
    """The sources of :func:`reversal_task` with their tokens sorted as targets.

    The sorted sequence depends only on which tokens the source holds, not
    on their order: a task that an encoder without positions loses nothing on.

    Example:
        >>> data = sorting_task(1, 5, vocabulary_size=10, seed=3)
        >>> src, dec, tgt = data.sources[0], data.decoder_inputs[0], data.targets[0]
        >>> bool((tgt == np.sort(src)).all()), int(dec[0]), bool((dec[1:] == tgt[:-1]).all())
        (True, 1, True)
    """
    sources = reversal_task(count, length, vocabulary_size=vocabulary_size, seed=seed).sources
    targets = np.sort(sources, axis=1)
    decoder_inputs = np.concatenate([np.full((len(sources), 1), START, "int32"), targets[:, :-1]], axis=1)
    return ReversalData(sources, decoder_inputs, targets)


def _position_layer(method: str, max_length: int):
    """The layer that adds ``method``'s positions, or ``None`` for none."""
    if method == "sinusoidal":
        return PositionalEncoding(max_length, name="positional_encoding")
    if method == "learned":
        return LearnedPositionEmbedding(max_length, name="positional_encoding")
    return None


def _residual(x, update, name: str):
    """``x + update``, normalised: how every sub-layer joins the model."""
    return keras.layers.LayerNormalization(name=name)(x + update)


def _feed_forward(x, depth: int, hidden: int, name: str):
    """Two dense layers, widening to ``hidden`` and back, added to ``x``."""
    expand = keras.layers.Dense(hidden, activation="relu",
                                name=f"{name}_expand")
    project = keras.layers.Dense(depth, name=f"{name}_project")
    return _residual(x, project(expand(x)), f"{name}_norm")


def encoder_decoder(
    method: str,
    *,
    vocabulary_size: int = 16,
    max_length: int = 16,
    depth: int = 32,
    heads: int = 2,
    hidden: int = 64,
    encoder_blocks: int = 1,
    decoder_blocks: int = 1,
    feed_forward: bool = True,
    seed: int = 0,
) -> keras.Model:
    """An encoder-decoder Transformer from token ids to next-token logits.

    Both inputs go through one ``Embedding`` (its vectors scaled by
    ``sqrt(depth)``) and one position layer: a
    :class:`~pe_lib.layers.PositionalEncoding` (``"sinusoidal"``), a
    :class:`~pe_lib.layers.LearnedPositionEmbedding` (``"learned"``) or
    nothing (``"none"``). Each encoder block is self-attention and a
    feed-forward layer; each decoder block is causal self-attention,
    attention to the encoder's output, and a feed-forward layer; every
    sub-layer has a residual connection and layer normalisation. With
    ``feed_forward=False`` the blocks keep only their attention sub-layers,
    a smaller model whose training step TensorFlow builds faster.

    Args:
        method: ``"sinusoidal"``, ``"learned"`` or ``"none"``, names from
            :mod:`pe_lib.methods`.
        vocabulary_size: number of token ids.
        max_length: rows of the position table, the longest input accepted
            (any length is accepted with ``"none"``).
        depth: size of the token vectors; a multiple of ``heads``.
        heads: attention heads per attention layer.
        hidden: width of the feed-forward layers.
        encoder_blocks, decoder_blocks: how many blocks of each.
        feed_forward: whether each block ends with a feed-forward layer.
        seed: seed of the initial weights.

    Returns:
        An uncompiled ``keras.Model`` from ``[sources, decoder_inputs]``, both
        ``(batch, steps)`` integer arrays, to logits
        ``(batch, decoder steps, vocabulary_size)``.

    Example:
        >>> model = encoder_decoder("learned", max_length=8)
        >>> data = reversal_task(3, 8)
        >>> tuple(model([data.sources, data.decoder_inputs]).shape)
        (3, 8, 16)
    """
    method = require_choice("method", method, INPUT_METHODS)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=FIRST_CONTENT + 1)
    max_length = require_int("max_length", max_length, minimum=1)
    depth = require_int("depth", depth, minimum=1)
    heads = require_int("heads", heads, minimum=1)
    hidden = require_int("hidden", hidden, minimum=1)
    encoder_blocks = require_int("encoder_blocks", encoder_blocks, minimum=1)
    decoder_blocks = require_int("decoder_blocks", decoder_blocks, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    if not isinstance(feed_forward, bool):
        raise TypeError(f"feed_forward must be True or False, got {feed_forward!r}")
    require_multiple("depth", depth, "heads", heads)

    keras.utils.set_random_seed(seed)
    sources = keras.Input(shape=(None,), dtype="int32", name="sources")
    decoder_inputs = keras.Input(shape=(None,), dtype="int32",
                                 name="decoder_inputs")
    embedding = keras.layers.Embedding(vocabulary_size, depth,
                                       name="shared_embedding")
    position_layer = _position_layer(method, max_length)
    scale = math.sqrt(depth)

    def front_end(tokens):
        vectors = embedding(tokens) * scale
        if position_layer is None:
            return vectors
        return position_layer(vectors)

    def attention(name):
        return keras.layers.MultiHeadAttention(heads, depth // heads,
                                               name=name)

    x = front_end(sources)
    for block in range(1, encoder_blocks + 1):
        name = f"encoder_{block}"
        x = _residual(x, attention(f"{name}_attention")(x, x),
                      f"{name}_norm")
        if feed_forward:
            x = _feed_forward(x, depth, hidden, f"{name}_ff")
    memory = x

    y = front_end(decoder_inputs)
    for block in range(1, decoder_blocks + 1):
        name = f"decoder_{block}"
        causal = attention(f"{name}_self")(y, y, use_causal_mask=True)
        y = _residual(y, causal, f"{name}_self_norm")
        cross = attention(f"{name}_cross")(y, memory)
        y = _residual(y, cross, f"{name}_cross_norm")
        if feed_forward:
            y = _feed_forward(y, depth, hidden, f"{name}_ff")
    logits = keras.layers.Dense(vocabulary_size, name="logits")(y)
    return keras.Model([sources, decoder_inputs], logits,
                       name=f"encoder_decoder_{method}")


def _decodable(model, sources, steps):
    """``sources`` as an array and the number of steps to write, both checked.

    Raises ``ValueError`` if ``sources`` is not a 2-D array of token ids, or
    if ``sources`` or ``steps`` is longer than a position layer of ``model``
    has rows, before anything is decoded.
    """
    sources = np.asarray(sources)
    if sources.ndim != 2 or not np.issubdtype(sources.dtype, np.integer):
        raise ValueError(f"sources must be a 2-D array of token ids, got shape {sources.shape} "
                         f"and dtype {sources.dtype}")
    steps = sources.shape[1] if steps is None else require_int("steps", steps, minimum=1)
    for layer in getattr(model, "layers", ()):
        if isinstance(layer, (PositionalEncoding, LearnedPositionEmbedding)):
            kind, rows = type(layer).__name__, layer.max_length
            if sources.shape[1] > rows:
                raise ValueError(f"sources has {sources.shape[1]} steps but the model's {kind} has "
                                 f"max_length {rows}: it has no row for position {rows}")
            # The decoder reads START and steps - 1 written tokens: steps positions.
            if steps > rows:
                raise ValueError(f"steps must be at most the model's {kind} max_length {rows}, got {steps}")
    return sources, steps


def greedy_decode(model: keras.Model, sources, *,
                  steps: int | None = None) -> np.ndarray:
    """Write each answer one token at a time, the most likely each time.

    ``steps`` tokens (the sources' length by default). A source or ``steps``
    longer than a position layer of ``model`` has rows raises ``ValueError``
    before anything is decoded.

    >>> model = encoder_decoder("none")
    >>> greedy_decode(model, reversal_task(2, 6).sources).shape
    (2, 6)
    """
    sources, steps = _decodable(model, sources, steps)
    written = np.full((len(sources), 1), START, dtype="int32")
    for _ in range(steps):
        logits = model([sources, written], training=False)
        last = ops.convert_to_numpy(logits)[:, -1, :]
        following = last.argmax(axis=-1).astype("int32")
        written = np.concatenate([written, following[:, None]], axis=1)
    return written[:, 1:]  # without START


def exact_match(predictions, targets) -> float:
    """Share of rows of ``predictions`` equal to their target in every token.

    >>> exact_match([[3, 2], [4, 5]], [[3, 2], [4, 4]])
    0.5
    """
    predictions, targets = np.asarray(predictions), np.asarray(targets)
    if predictions.ndim != 2 or predictions.shape != targets.shape:
        raise ValueError(f"predictions and targets must be 2-D arrays of one shape, "
                         f"got {predictions.shape} and {targets.shape}")
    return float(np.mean((predictions == targets).all(axis=1)))


def token_accuracy(predictions, targets) -> float:
    """Share of tokens of ``predictions`` equal to the target token at their place.

    >>> token_accuracy([[3, 2], [4, 5]], [[3, 2], [4, 4]])
    0.75
    """
    predictions, targets = np.asarray(predictions), np.asarray(targets)
    if predictions.ndim != 2 or predictions.shape != targets.shape:
        raise ValueError(f"predictions and targets must be 2-D arrays of one shape, "
                         f"got {predictions.shape} and {targets.shape}")
    return float(np.mean(predictions == targets))


def train_encoder_decoders(
    methods: Sequence[str] = INPUT_METHODS,
    *,
    train_length: int = 8,
    sequences: int = 2048,
    epochs: int = 4,
    batch_size: int = 64,
    learning_rate: float = 3e-3,
    seed: int = 0,
    jit_compile: bool | str = "auto",
    task=reversal_task,
    **model_options,
) -> dict[str, keras.Model]:
    """Train one :func:`encoder_decoder` per position method on the same batches.

    The models are trained side by side, as branches of one Keras model
    whose loss is the sum of theirs; they share no weight, and Adam updates
    each weight from its own gradient, so each is trained as it would be
    alone, while the training step is compiled once. Training uses teacher
    forcing: the decoder reads the true previous tokens. The learning rate
    falls to zero along a cosine.

    Args:
        methods: some of ``"sinusoidal"``, ``"learned"`` and ``"none"``, each once.
        train_length: tokens per training sequence, and the rows of a
            learned table: every row is trained, and a longer input is
            refused. The sinusoidal table has ``max_length`` rows (the
            seed's 500 by default), since a fixed row needs no training.
        sequences: training sequences, drawn by ``task``.
        epochs: passes over them.
        batch_size: sequences per training step.
        learning_rate: Adam's initial learning rate.
        seed: one seed for the data, the weights and the shuffling.
        jit_compile: passed to ``Model.compile``; ``True`` compiles the
            training step with XLA, which is faster for a model this small.
        task: the function that draws the training data,
            :func:`reversal_task` or :func:`sorting_task`.
        **model_options: passed on to :func:`encoder_decoder`.

    Returns:
        A dictionary from each method to its trained model.

    Example:
        >>> models = train_encoder_decoders(("none",), sequences=64, epochs=1)
        >>> list(models)
        ['none']
    """
    methods = tuple(require_choice("methods", method, INPUT_METHODS) for method in methods)
    if not methods or len(set(methods)) != len(methods):
        raise ValueError(f"methods must name each method at most once, and at least one; got {methods!r}")
    train_length = require_int("train_length", train_length, minimum=1)
    sequences = require_int("sequences", sequences, minimum=1)
    epochs = require_int("epochs", epochs, minimum=1)
    batch_size = require_int("batch_size", batch_size, minimum=1)
    learning_rate = require_positive_float("learning_rate", learning_rate)
    seed = require_int("seed", seed, minimum=0)
    max_length = require_int("max_length", model_options.pop("max_length", 500), minimum=train_length)
    vocabulary_size = model_options.get("vocabulary_size", 16)

    if task not in (reversal_task, sorting_task):
        raise ValueError(f"task must be reversal_task or sorting_task, got {task!r}")

    models = {
        method: encoder_decoder(
            method, max_length=train_length if method == "learned" else max_length, seed=seed, **model_options
        )
        for method in methods
    }
    data = task(sequences, train_length, vocabulary_size=vocabulary_size, seed=seed)
    _train_side_by_side(models, data, epochs=epochs, batch_size=batch_size,
                        learning_rate=learning_rate, seed=seed, jit_compile=jit_compile)
    return models


def _train_side_by_side(models, data, *, epochs, batch_size, learning_rate,
                        seed, jit_compile):
    """Train ``models`` as branches of one model; its loss is their sum."""
    sources = keras.Input(shape=(None,), dtype="int32", name="sources")
    decoder_inputs = keras.Input(shape=(None,), dtype="int32",
                                 name="decoder_inputs")
    side_by_side = keras.Model(
        [sources, decoder_inputs],
        {method: model([sources, decoder_inputs])
         for method, model in models.items()})
    steps = epochs * math.ceil(len(data.sources) / batch_size)
    schedule = keras.optimizers.schedules.CosineDecay(learning_rate, steps)
    loss = keras.losses.SparseCategoricalCrossentropy
    side_by_side.compile(
        optimizer=keras.optimizers.Adam(schedule),
        loss={method: loss(from_logits=True) for method in models},
        jit_compile=jit_compile)
    keras.utils.set_random_seed(seed)
    side_by_side.fit(
        [data.sources, data.decoder_inputs],  # teacher forcing
        {method: data.targets for method in models},
        batch_size=batch_size, epochs=epochs, shuffle=True, verbose=0)
