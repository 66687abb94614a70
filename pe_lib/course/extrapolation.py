r"""Train short, test long: which ways of giving positions survive longer inputs.

The task is :func:`pe_lib.course.order_tasks.marker_order_task` with one extra step
at the end, a *query* token at which the model answers: does marker A come
before marker B? The model, :func:`extrapolation_model`, is one block of causal
self-attention, :class:`PositionalSelfAttention`, and a linear read-out at the
query step. It learns the order from where the markers are, so it needs
positions, given in one of five ways (:data:`METHODS`):

- ``"sinusoidal"``: the fixed sinusoidal table added to the token vectors;
- ``"learned"``: a trained table added to the token vectors, with as many rows
  as the training sequences have steps, so longer inputs are refused;
- ``"rope"``: queries and keys rotated by their positions (:mod:`pe_lib.rope`);
- ``"alibi"``: a linear distance penalty on the scores (:mod:`pe_lib.alibi`);
- ``"none"``: nothing. The query step then sees its keys as a set, so the two
  rows of a mirror pair get the same answer and the accuracy is exactly 1/2.

:func:`run_extrapolation` trains one model at one length and tests it at that
length and longer ones.
"""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
from keras import ops

from pe_lib._checks import require_choice, require_int, require_positive_float
from pe_lib.alibi import alibi_slopes
from pe_lib.frequencies import angle_rates
from pe_lib.layers import LearnedPositionEmbedding, PositionalEncoding
from pe_lib.course.order_classifier import order_accuracy
from pe_lib.course.order_tasks import FILLER_START, marker_order_task
from pe_lib.rope import apply_rope

#: What the attention layer itself does with positions.
ATTENTION_POSITIONS = ("none", "rope", "alibi")
#: The ways the model can be given positions.
METHODS = ("sinusoidal", "learned", "rope", "alibi", "none")

#: A score far below any real one: keys after the query get weight exp(-1e9) = 0.
_MASKED = -1e9


@keras.saving.register_keras_serializable(package="pe_lib")
class PositionalSelfAttention(keras.layers.Layer):
    r"""Causal multi-head self-attention with optional RoPE or ALiBi positions.

    Each head projects its input to queries :math:`q_i`, keys :math:`k_j` and
    values :math:`v_j` of size :math:`d` = ``key_dim`` and scores query
    :math:`i` against key :math:`j \le i` with

    - ``"none"``: :math:`q_i \cdot k_j / \sqrt{d}`;
    - ``"rope"``: :math:`(R_i q_i) \cdot (R_j k_j) / \sqrt{d}`, the half-split
      rotation of :func:`pe_lib.rope.apply_rope`;
    - ``"alibi"``: :math:`q_i \cdot k_j / \sqrt{d} - m_h (i - j)`, with the
      slopes :math:`m_h` of :func:`pe_lib.alibi.alibi_slopes`.

    Keys after the query get no weight. Each head's softmax-weighted sum of
    values is concatenated with the others and projected back to the input
    depth. Nothing in the layer depends on a maximum length.

    Args:
        heads: number of heads.
        key_dim: size of each head's queries, keys and values; even for RoPE.
        positions: ``"none"``, ``"rope"`` or ``"alibi"``.
        base: the RoPE base :math:`N` (unused otherwise).
        **kwargs: other arguments for ``keras.layers.Layer``, such as ``name``.

    Example:

    Four 8 x 8 projections (query, key, value, output), 256 weights:

    >>> layer = PositionalSelfAttention(heads=2, key_dim=4, positions="alibi")
    >>> outputs = layer(np.zeros((3, 7, 8), dtype="float32"))
    >>> tuple(outputs.shape), layer.count_params()
    ((3, 7, 8), 256)
    """

    def __init__(self, heads: int, key_dim: int, positions: str = "none", base: float = 10000.0, **kwargs):
        super().__init__(**kwargs)
        self.heads = require_int("heads", heads, minimum=1)
        self.key_dim = require_int("key_dim", key_dim, minimum=1)
        self.positions = require_choice("positions", positions, ATTENTION_POSITIONS)
        self.base = require_positive_float("base", base)
        if self.positions == "rope" and self.key_dim % 2:
            raise ValueError(f"key_dim must be even for RoPE (it rotates features in pairs), got {key_dim}")
        self._slopes = alibi_slopes(self.heads).astype("float32")
        self._rates = angle_rates(self.key_dim, base=self.base).astype("float32")

    def build(self, input_shape) -> None:
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(f"{self.name} expects inputs of shape (batch, steps, depth), got shape {input_shape}")
        width = self.heads * self.key_dim
        self.query = keras.layers.Dense(width, use_bias=False, name="query")
        self.key = keras.layers.Dense(width, use_bias=False, name="key")
        self.value = keras.layers.Dense(width, use_bias=False, name="value")
        self.output_projection = keras.layers.Dense(input_shape[-1], use_bias=False, name="output")
        for dense in (self.query, self.key, self.value):
            dense.build(input_shape)
        self.output_projection.build((*input_shape[:-1], width))

    def _split_heads(self, x, steps):
        x = ops.reshape(x, (ops.shape(x)[0], steps, self.heads, self.key_dim))
        return ops.transpose(x, (0, 2, 1, 3))  # (batch, heads, steps, key_dim)

    def _rotate(self, x, steps):
        """The half-split RoPE rotation of (batch, heads, steps, key_dim) queries or keys."""
        angles = ops.cast(ops.arange(steps), "float32")[:, None] * ops.convert_to_tensor(self._rates)[None, :]
        cos, sin = ops.cos(angles), ops.sin(angles)
        half = self.key_dim // 2
        first, second = x[..., :half], x[..., half:]
        return ops.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)

    def scores(self, inputs):
        """The ``(batch, heads, steps, steps)`` scores before the softmax, masked keys at -1e9."""
        steps = ops.shape(inputs)[1]
        queries = self._split_heads(self.query(inputs), steps)
        keys = self._split_heads(self.key(inputs), steps)
        if self.positions == "rope":
            queries, keys = self._rotate(queries, steps), self._rotate(keys, steps)
        scores = ops.matmul(queries, ops.transpose(keys, (0, 1, 3, 2))) / float(np.sqrt(self.key_dim))
        where = ops.arange(steps)
        behind = ops.cast(where[:, None] - where[None, :], scores.dtype)  # i - j
        if self.positions == "alibi":
            scores = scores - ops.cast(ops.convert_to_tensor(self._slopes), scores.dtype)[:, None, None] * behind
        return ops.where(behind >= 0, scores, ops.full_like(scores, _MASKED))

    def call(self, inputs):
        steps = ops.shape(inputs)[1]
        weights = ops.softmax(self.scores(inputs), axis=-1)
        mixed = ops.matmul(weights, self._split_heads(self.value(inputs), steps))
        mixed = ops.reshape(ops.transpose(mixed, (0, 2, 1, 3)), (ops.shape(inputs)[0], steps, -1))
        return self.output_projection(mixed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"heads": self.heads, "key_dim": self.key_dim, "positions": self.positions, "base": self.base})
        return config


def with_query_token(tokens, query_token: int) -> np.ndarray:
    """Append a column holding ``query_token``: the step at which the model answers.

    >>> with_query_token(np.array([[5, 1, 2], [5, 2, 1]]), 16)
    array([[ 5,  1,  2, 16],
           [ 5,  2,  1, 16]], dtype=int32)
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be a 2-D integer array (sequences, steps), got shape {tokens.shape}")
    query_token = require_int("query_token", query_token, minimum=0)
    column = np.full((tokens.shape[0], 1), query_token)
    return np.concatenate([tokens, column], axis=1).astype(np.int32)


def query_task(pairs: int, length: int, *, vocabulary_size: int = 17, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The marker-order task of ``length`` steps, the last of which is the query token.

    The first ``length - 1`` steps come from
    :func:`pe_lib.course.order_tasks.marker_order_task` with token ids below
    ``vocabulary_size - 1``; the query token is ``vocabulary_size - 1``.

    >>> tokens, labels = query_task(1, 7, seed=3)
    >>> tokens
    array([[13,  1,  5,  6,  2, 13, 16],
           [13,  2,  5,  6,  1, 13, 16]], dtype=int32)
    >>> labels
    array([1, 0], dtype=int32)
    """
    length = require_int("length", length, minimum=3)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=FILLER_START + 2)
    tokens, labels = marker_order_task(pairs, length - 1, vocabulary_size=vocabulary_size - 1, seed=seed)
    return with_query_token(tokens, vocabulary_size - 1), labels


def extrapolation_model(
    method: str,
    *,
    train_length: int,
    max_length: int = 512,
    vocabulary_size: int = 17,
    depth: int = 32,
    heads: int = 4,
    learning_rate: float = 5e-3,
    seed: int = 0,
) -> keras.Model:
    """A compiled one-block causal Transformer that answers at its last step.

    Token vectors (plus a position table for ``"sinusoidal"`` and
    ``"learned"``) go through one :class:`PositionalSelfAttention` with a
    residual connection and layer normalisation; a dense layer reads one logit
    from the last step, which has seen the whole sequence. Token vectors start
    with unit-variance entries, the scale of the sinusoidal table, so that
    attention is not uniform from the start. Adam clips the gradient norm to 1.

    Args:
        method: one of :data:`METHODS`.
        train_length: the training length; the ``"learned"`` table has this
            many rows and refuses longer inputs.
        max_length: rows of the ``"sinusoidal"`` table.
        vocabulary_size: number of token ids.
        depth: size of the token vectors; a multiple of ``heads``.
        heads: attention heads.
        learning_rate: Adam's learning rate.
        seed: seed for the initial weights.

    Returns:
        A ``keras.Model`` from token ids ``(batch, steps)`` to logits
        ``(batch, 1)``; its attention layer is named ``"attention"`` and its
        token embedding ``"embedding"``.

    Example:
        >>> model = extrapolation_model("learned", train_length=8)
        >>> tuple(model(np.ones((2, 8), dtype="int32")).shape)
        (2, 1)
        >>> model(np.ones((2, 9), dtype="int32"))
        Traceback (most recent call last):
        ...
        ValueError: ...the input has 9 steps but max_length is 8...
    """
    method = require_choice("method", method, METHODS)
    train_length = require_int("train_length", train_length, minimum=2)
    max_length = require_int("max_length", max_length, minimum=1)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=1)
    depth = require_int("depth", depth, minimum=1)
    heads = require_int("heads", heads, minimum=1)
    learning_rate = require_positive_float("learning_rate", learning_rate)
    seed = require_int("seed", seed, minimum=0)
    if depth % heads:
        raise ValueError(f"depth must be a multiple of heads, got depth={depth} and heads={heads}")

    keras.utils.set_random_seed(seed)
    tokens = keras.Input(shape=(None,), dtype="int32", name="tokens")
    unit = keras.initializers.RandomNormal(stddev=1.0)
    x = keras.layers.Embedding(vocabulary_size, depth, embeddings_initializer=unit, name="embedding")(tokens)
    if method == "sinusoidal":
        x = PositionalEncoding(max_length, name="positions")(x)
    elif method == "learned":
        x = LearnedPositionEmbedding(train_length, initializer=unit, name="positions")(x)
    attention = PositionalSelfAttention(
        heads, depth // heads, positions=method if method in ATTENTION_POSITIONS else "none", name="attention"
    )
    x = keras.layers.LayerNormalization(name="norm")(x + attention(x))
    logit = keras.layers.Dense(1, name="logit")(x[:, -1, :])
    model = keras.Model(tokens, logit, name=f"extrapolation_{method}")
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate, global_clipnorm=1.0),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0, name="accuracy")],
    )
    return model


def answer_scores(model: keras.Model, token: int, distances) -> np.ndarray:
    """The score the last (query) step gives ``token`` ``distance`` steps back, per head.

    For ``"rope"``, ``"alibi"`` and ``"none"`` models the score depends on
    the two tokens and their distance only, so it is computed once, in NumPy,
    from the trained weights: RoPE with :func:`pe_lib.rope.apply_rope`, ALiBi
    by subtracting :math:`m_h \\times` distance.

    Args:
        model: a model from :func:`extrapolation_model` without a position table.
        token: the token id of the key.
        distances: a 1-D array of distances ``>= 0`` between query and key.

    Returns:
        A float64 array of shape ``(heads, len(distances))``.

    Example:
        >>> model = extrapolation_model("alibi", train_length=8, heads=2, depth=8)
        >>> scores = answer_scores(model, 1, [0, 1, 2])
        >>> (np.diff(scores, axis=1) * 256).round(6)
        array([[-16., -16.],
               [ -1.,  -1.]])
    """
    attention = model.get_layer("attention")
    if not isinstance(attention, PositionalSelfAttention) or any(
        layer.name == "positions" for layer in model.layers
    ):
        raise ValueError(f"model must be a 'rope', 'alibi' or 'none' extrapolation model, got {model.name!r}")
    token = require_int("token", token, minimum=0)
    distances = np.asarray(distances)
    if distances.ndim != 1 or not np.issubdtype(distances.dtype, np.integer) or np.any(distances < 0):
        raise ValueError(f"distances must be a 1-D array of integers >= 0, got {distances.tolist()!r}")
    table = model.get_layer("embedding").embeddings.numpy().astype(np.float64)
    query_token = table.shape[0] - 1
    heads, key_dim = attention.heads, attention.key_dim
    query = (table[query_token] @ attention.query.kernel.numpy()).reshape(heads, key_dim)
    key = (table[token] @ attention.key.kernel.numpy()).reshape(heads, key_dim)
    if attention.positions == "rope":
        # Query at position d, key at position 0: the offset is d, whatever the length.
        rotated = apply_rope(np.repeat(query[:, None, :], len(distances), axis=1), distances, base=attention.base)
        scores = np.einsum("hnd,hd->hn", rotated, key)
    else:
        scores = np.repeat((query * key).sum(axis=1)[:, None], len(distances), axis=1)
    scores = scores / np.sqrt(key_dim)
    if attention.positions == "alibi":
        scores = scores - alibi_slopes(heads)[:, None] * distances[None, :]
    return scores


@dataclasses.dataclass(frozen=True)
class ExtrapolationRun:
    """What :func:`run_extrapolation` returns for one method.

    Attributes:
        method: one of :data:`METHODS`.
        model: the trained model.
        accuracy: test accuracy by length; ``None`` where the model refused
            sequences that long.
    """

    method: str
    model: keras.Model
    accuracy: dict[int, float | None]


def run_extrapolation(
    method: str,
    *,
    train_length: int = 16,
    test_lengths: tuple[int, ...] = (16, 32, 64),
    pairs: int = 2000,
    test_pairs: int = 300,
    epochs: int = 3,
    batch_size: int = 100,
    seed: int = 0,
    **model_options,
) -> ExtrapolationRun:
    """Train an :func:`extrapolation_model` at one length and test it at several.

    Args:
        method: one of :data:`METHODS`.
        train_length: steps per training sequence, the query step included.
        test_lengths: lengths to test at, each with fresh sequences.
        pairs: mirror pairs in the training set (twice as many sequences).
        test_pairs: mirror pairs in each test set.
        epochs: passes over the training set.
        batch_size: sequences per training step.
        seed: one seed for the weights, the data and the shuffling.
        **model_options: passed on to :func:`extrapolation_model`.

    Returns:
        An :class:`ExtrapolationRun`. A ``"learned"`` model raises
        ``ValueError`` on sequences longer than ``train_length``; its
        accuracy there is ``None``.

    Example:
        >>> run = run_extrapolation("learned", train_length=6, test_lengths=(6, 12),
        ...                         pairs=16, test_pairs=8, epochs=1, depth=8, heads=2)
        >>> run.accuracy[12] is None
        True
    """
    method = require_choice("method", method, METHODS)
    train_length = require_int("train_length", train_length, minimum=3)
    test_lengths = tuple(require_int("test_lengths", length, minimum=3) for length in test_lengths)
    pairs = require_int("pairs", pairs, minimum=1)
    test_pairs = require_int("test_pairs", test_pairs, minimum=1)
    epochs = require_int("epochs", epochs, minimum=1)
    batch_size = require_int("batch_size", batch_size, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    model_options.setdefault("max_length", max(train_length, *test_lengths))
    vocabulary_size = model_options.get("vocabulary_size", 17)
    seeds = [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(1 + len(test_lengths))]

    model = extrapolation_model(method, train_length=train_length, seed=seed, **model_options)
    tokens, labels = query_task(pairs, train_length, vocabulary_size=vocabulary_size, seed=seeds[0])
    keras.utils.set_random_seed(seed)
    model.fit(tokens, labels, batch_size=batch_size, epochs=epochs, shuffle=True, verbose=0)
    accuracy = {}
    for length, data_seed in zip(test_lengths, seeds[1:]):
        test_tokens, test_labels = query_task(test_pairs, length, vocabulary_size=vocabulary_size, seed=data_seed)
        try:
            accuracy[length] = order_accuracy(model, test_tokens, test_labels)
        except ValueError:  # a learned table has no rows past the training length
            accuracy[length] = None
    return ExtrapolationRun(method=method, model=model, accuracy=accuracy)
