r"""Train short, test long: which ways of giving positions survive longer inputs.

The task is :func:`pe_lib.course.order.tasks.marker_order_task` with one extra step
at the end, a *query* token at which the model answers: does marker A come
before marker B? The model, :func:`extrapolation_model`, is one block of causal
self-attention, :class:`~pe_lib.layers.PositionalSelfAttention`, and a linear read-out at the
query step. It learns the order from where the markers are, so it needs
positions, given by any method of the registry (:mod:`pe_lib.methods`), for
example:

- ``"sinusoidal"``: the fixed sinusoidal table added to the token vectors;
- ``"learned"``: a trained table added to the token vectors, with as many rows
  as the training sequences have steps, so longer inputs are refused;
- ``"rope"``: queries and keys rotated by their positions (:mod:`pe_lib.rope`);
- ``"alibi"``: a linear distance penalty on the scores (:mod:`pe_lib.alibi`);
- ``"t5"``, ``"shaw"``: learned relative biases (:mod:`pe_lib.t5`, :mod:`pe_lib.shaw`);
- ``"none"``: nothing. The query step then sees its keys as a set, so the two
  rows of a mirror pair get the same answer and the accuracy is exactly 1/2.

:func:`run_extrapolation` trains one model at one length and tests it at that
length and longer ones; :func:`evaluate_with_scaling` tests a model trained
with plain RoPE at longer lengths with a context-extension variant
(``"rope_pi"``, ``"rope_ntk"``, ``"rope_dynamic"``, ``"rope_yarn"``, ...)
put in at test time, without retraining.
"""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
from keras import ops

from pe_lib._checks import require_int, require_multiple, require_positive_float
from pe_lib.alibi import alibi_block
from pe_lib.course.model_inputs import attention_method, token_vectors
from pe_lib.course.order.classifier import order_accuracy
from pe_lib.course.order.tasks import FILLER_START, marker_order_task
from pe_lib.layers import PositionalSelfAttention
from pe_lib.methods import PositionMethod, get_method
from pe_lib.rope import apply_rope
from pe_lib.rope_scaling import NEED_ORIGINAL_LENGTH

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
    :func:`pe_lib.course.order.tasks.marker_order_task` with token ids below
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
    method: str | PositionMethod,
    *,
    train_length: int,
    max_length: int = 512,
    vocabulary_size: int = 17,
    depth: int = 32,
    heads: int = 4,
    learning_rate: float = 5e-3,
    seed: int = 0,
    method_options: dict | None = None,
) -> keras.Model:
    """A compiled one-block causal Transformer that answers at its last step.

    Token vectors (plus a position table for a method that acts on the
    input, ``"sinusoidal"`` or ``"learned"``) go through one
    :class:`~pe_lib.layers.PositionalSelfAttention` with a
    residual connection and layer normalisation; a dense layer reads one logit
    from the last step, which has seen the whole sequence. Token vectors start
    with unit-variance entries, the scale of the sinusoidal table, so that
    attention is not uniform from the start. Adam clips the gradient norm to 1.

    Args:
        method: a name from :data:`pe_lib.methods.METHODS`, or its entry.
        train_length: the training length; a table that does not extrapolate
            (``"learned"``) has this many rows and refuses longer inputs.
        max_length: rows of a table that does (``"sinusoidal"``).
        vocabulary_size: number of token ids.
        depth: size of the token vectors; a multiple of ``heads``.
        heads: attention heads.
        learning_rate: Adam's learning rate.
        seed: seed for the initial weights.
        method_options: more arguments for the method's attention layer,
            e.g. ``{"scale": 4.0}`` for ``"rope_pi"``
            (:class:`~pe_lib.layers.PositionalSelfAttention`).

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
    train_length = require_int("train_length", train_length, minimum=2)
    max_length = require_int("max_length", max_length, minimum=1)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=1)
    depth = require_int("depth", depth, minimum=1)
    heads = require_int("heads", heads, minimum=1)
    learning_rate = require_positive_float("learning_rate", learning_rate)
    seed = require_int("seed", seed, minimum=0)
    require_multiple("depth", depth, "heads", heads)
    entry = get_method(method)

    # Token ids to vectors, plus a table if the method acts on the input.
    tokens, x = token_vectors(
        entry, train_length=train_length, max_length=max_length,
        vocabulary_size=vocabulary_size, depth=depth, seed=seed)
    # Causal self-attention, with the method if it acts inside attention.
    attention = PositionalSelfAttention(
        heads, depth // heads, method=attention_method(entry),
        method_options=method_options, name="attention")
    x = keras.layers.LayerNormalization(name="norm")(x + attention(x))
    # One logit, read at the last step: the query token.
    logit = keras.layers.Dense(1, name="logit")(x[:, -1, :])
    model = keras.Model(tokens, logit, name=f"extrapolation_{entry.name}")
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate, global_clipnorm=1.0),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0,
                                              name="accuracy")],
    )
    return model


def answer_scores(model: keras.Model, token: int, distances) -> np.ndarray:
    """The score the last (query) step gives ``token`` ``distance`` steps back, per head.

    For a model of the RoPE family, ``"alibi"`` or ``"none"`` the score
    depends on the two tokens and their distance only, so it is computed once,
    in NumPy, from the trained weights: RoPE with
    :func:`pe_lib.rope.apply_rope` (at the rates of the model's rotary layer),
    ALiBi with :func:`pe_lib.alibi.alibi_block`.

    Args:
        model: a model from :func:`extrapolation_model` whose method is ``"none"``,
            ``"alibi"`` or of the RoPE family.
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
    if not isinstance(attention, PositionalSelfAttention) or not (
        attention.method in ("none", "alibi") or attention.acts_on == "queries and keys"
    ) or any(layer.name == "positions" for layer in model.layers):
        raise ValueError(f"model must be a RoPE-family, 'alibi' or 'none' extrapolation model, got {model.name!r}")
    token = require_int("token", token, minimum=0)
    distances = np.asarray(distances)
    if distances.ndim != 1 or not np.issubdtype(distances.dtype, np.integer) or np.any(distances < 0):
        raise ValueError(f"distances must be a 1-D array of integers >= 0, got {distances.tolist()!r}")

    def weights(variable):
        return keras.ops.convert_to_numpy(variable).astype(np.float64)

    table = weights(model.get_layer("embedding").embeddings)
    query_token = table.shape[0] - 1
    heads, key_dim = attention.heads, attention.key_dim
    query = (table[query_token] @ weights(attention.query.kernel)).reshape(heads, key_dim)
    key = (table[token] @ weights(attention.key.kernel)).reshape(heads, key_dim)
    if attention.acts_on == "queries and keys":
        rotary = attention.positions
        if rotary.method == "rope_dynamic":
            raise ValueError("answer_scores needs fixed rates; 'rope_dynamic' changes them with the length")
        if not rotary.built:
            rotary.build((None, heads, None, key_dim))
        # Query at position d, key at position 0: the offset is d, whatever the length.
        rotated = apply_rope(np.repeat(query[:, None, :], len(distances), axis=1), distances,
                             rates=rotary.rates, layout=rotary.layout, rotary_fraction=rotary.rotary_fraction)
        scores = np.einsum("hnd,hd->hn", rotated, key) * rotary.attention_factor**2
    else:
        scores = np.repeat((query * key).sum(axis=1)[:, None], len(distances), axis=1)
    scores = scores / np.sqrt(key_dim)
    if attention.method == "alibi":
        scores = scores + alibi_block(distances, [0], heads)[:, :, 0]
    return scores


@dataclasses.dataclass(frozen=True)
class ExtrapolationRun:
    """What :func:`run_extrapolation` returns for one method.

    Attributes:
        method: a name from :data:`pe_lib.methods.METHODS`.
        model: the trained model.
        accuracy: test accuracy by length; ``None`` where the model refused
            sequences that long.
        train_length: the training length.
        seed: the run's seed.
        model_options: the options the model was built with.
        test_pairs: mirror pairs in each test set.
    """

    method: str
    model: keras.Model
    accuracy: dict[int, float | None]
    train_length: int = 16
    seed: int = 0
    model_options: dict = dataclasses.field(default_factory=dict)
    test_pairs: int = 300


def _test_seeds(seed: int, test_lengths: tuple[int, ...]) -> list[int]:
    """The training-data seed, then one data seed per test length."""
    children = np.random.SeedSequence(seed).spawn(1 + len(test_lengths))
    return [int(child.generate_state(1)[0]) for child in children]


def run_extrapolation(
    method: str | PositionMethod,
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
        method: a name from :data:`pe_lib.methods.METHODS`, or its entry.
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
    entry = get_method(method)
    method = entry.name
    train_length = require_int("train_length", train_length, minimum=3)
    test_lengths = tuple(require_int("test_lengths", length, minimum=3) for length in test_lengths)
    pairs = require_int("pairs", pairs, minimum=1)
    test_pairs = require_int("test_pairs", test_pairs, minimum=1)
    epochs = require_int("epochs", epochs, minimum=1)
    batch_size = require_int("batch_size", batch_size, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    model_options.setdefault("max_length", max(train_length, *test_lengths))
    vocabulary_size = model_options.get("vocabulary_size", 17)
    seeds = _test_seeds(seed, test_lengths)

    model = extrapolation_model(entry, train_length=train_length, seed=seed, **model_options)
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
    return ExtrapolationRun(method=method, model=model, accuracy=accuracy, train_length=train_length,
                            seed=seed, model_options=dict(model_options), test_pairs=test_pairs)


def stretched_model(run: ExtrapolationRun, method: str | PositionMethod, *, scale: float | None = None,
                    **options) -> keras.Model:
    """The model of a plain-RoPE ``run`` with ``method``'s rates, its trained weights copied.

    The model is built as :func:`run_extrapolation` built ``run.model``, with
    ``method`` in place of ``"rope"``, its ``scale`` (left out for ``"rope"``)
    and, for the methods that need one, the original length ``run.train_length``;
    nothing is retrained. :func:`evaluate_with_scaling` tests such models.

    Example:
        >>> run = run_extrapolation("rope", train_length=6, test_lengths=(6,), pairs=16,
        ...                         test_pairs=8, epochs=1, depth=8, heads=2)
        >>> model = stretched_model(run, "rope_yarn", scale=4.0)
        >>> round(model.get_layer("attention").positions.attention_factor, 4)
        1.1386
    """
    if run.method != "rope":
        raise ValueError(f"run must be a run of 'rope' (trained without scaling), got {run.method!r}")
    entry = get_method(method)
    if entry.acts_on != "queries and keys":
        raise ValueError(f"method must be 'rope' or one of its scaling variants, got {method!r}")
    options_of_run = {key: value for key, value in run.model_options.items() if key != "method_options"}
    method_options = dict(run.model_options.get("method_options") or {}, **options)
    if scale is not None:
        method_options["scale"] = require_positive_float("scale", scale)
    if entry.name in NEED_ORIGINAL_LENGTH:
        method_options["original_length"] = run.train_length
    model = extrapolation_model(entry, train_length=run.train_length, seed=run.seed,
                                method_options=method_options, **options_of_run)
    model.set_weights(run.model.get_weights())
    return model


def evaluate_with_scaling(run: ExtrapolationRun, method: str | PositionMethod, lengths, *, scale: float | None = None,
                          **options) -> dict[int, float]:
    r"""Test a model trained with plain RoPE at longer lengths, with a scaling put in at test time.

    This is how context extension is used in practice: the model is trained
    once with ``"rope"`` at ``run.train_length`` :math:`L`; to test it at a
    length :math:`n`, its trained weights are copied into the same model
    built with ``method`` (and original length :math:`L` for the methods that
    need one). Nothing is retrained; only the angle rates (and, for YaRN,
    the attention factor) change. With ``method="rope"`` it tests the
    unscaled model.

    The scale is :math:`s = \max(1, n / L)` at each length when ``scale`` is
    left out, as if each test length were known in advance; a given
    ``scale`` is used at every length, as a released model's configuration
    fixes its factor. For ``"rope_dynamic"`` ``scale`` is Hugging Face's
    ``factor``, 1 when left out: the layer picks its scale from each length.

    Each length is tested on the same sequences as :func:`run_extrapolation`
    used for it (other lengths get their own seeded sequences), so the
    accuracies compare directly with ``run.accuracy``.

    Args:
        run: an :class:`ExtrapolationRun` of ``"rope"``.
        method: ``"rope"`` or one of its context-extension variants
            (:data:`pe_lib.rope_scaling.SCALINGS`).
        lengths: test lengths, each ``>= 3``.
        scale: the scale at every length; by default each length's own.
        **options: the method's options, e.g. ``beta_fast=16.0`` for
            ``"rope_yarn"`` (:class:`~pe_lib.layers.RotaryEmbedding`).

    Returns:
        The test accuracy by length.

    Example:
        >>> run = run_extrapolation("rope", train_length=6, test_lengths=(6,), pairs=16,
        ...                         test_pairs=8, epochs=1, depth=8, heads=2)
        >>> accuracy = evaluate_with_scaling(run, "rope_pi", (6, 12))
        >>> accuracy[6] == run.accuracy[6], sorted(accuracy)
        (True, [6, 12])
        >>> evaluate_with_scaling(run, "rope_dynamic", (6,)) == {6: run.accuracy[6]}
        True
    """
    if run.method != "rope":
        raise ValueError(f"run must be a run of 'rope' (trained without scaling), got {run.method!r}")
    entry = get_method(method)
    if entry.acts_on != "queries and keys":
        raise ValueError(f"method must be 'rope' or one of its scaling variants, got {method!r}")
    method = entry.name
    lengths = tuple(require_int("lengths", length, minimum=3) for length in lengths)
    if scale is not None:
        scale = require_positive_float("scale", scale)
    vocabulary_size = run.model_options.get("vocabulary_size", 17)
    known = dict(zip(run.accuracy, _test_seeds(run.seed, tuple(run.accuracy))[1:]))
    models, accuracy = {}, {}
    for length in lengths:
        if method == "rope":
            stretch = None
        elif method == "rope_dynamic":
            stretch = 1.0 if scale is None else scale
        else:
            stretch = max(1.0, length / run.train_length) if scale is None else scale
        if stretch not in models:
            models[stretch] = stretched_model(run, entry, scale=stretch, **options)
        data_seed = known.get(length, int(np.random.SeedSequence([run.seed, length]).generate_state(1)[0]))
        tokens, labels = query_task(run.test_pairs, length, vocabulary_size=vocabulary_size, seed=data_seed)
        accuracy[length] = order_accuracy(models[stretch], tokens, labels)
    return accuracy
