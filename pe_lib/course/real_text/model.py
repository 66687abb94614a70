r"""A small causal character-level language model, one definition for every position method.

:func:`language_model` stacks pre-normalised Transformer blocks, each a
causal :class:`~pe_lib.layers.PositionalSelfAttention` and a two-layer
feed-forward network, both inside residual connections, and reads a logit
per character of the vocabulary at every step. The method of
:mod:`pe_lib.methods` decides where the positions go: a table added to the
token vectors (``"sinusoidal"``, ``"learned"``), a rotation of queries and
keys in every block (``"rope"`` and its context-extension variants), a bias
on every block's scores (``"alibi"``, ``"t5"``), or nowhere (``"none"``).
A ``"t5"`` model learns one table of bucket biases for all its blocks, as
T5 does (:func:`share_bias_table`). A per-layer scheme of
:mod:`pe_lib.layer_schemes` (``"rope_nope"``: RoPE in three blocks of four,
no positions in the fourth, as Llama 4) gives each block its own method.

:func:`bits_per_character` scores the logits: the mean of
:math:`-\log_2 p(\text{next character})`.
"""

from __future__ import annotations

import math

import keras
import numpy as np

from pe_lib._checks import require_int, require_multiple, require_positive_float
from pe_lib.course.model_inputs import attention_method, token_vectors
from pe_lib.layer_schemes import LayerScheme, resolve_positions
from pe_lib.layers import PositionalSelfAttention, T5RelativeBias
from pe_lib.methods import METHODS, PositionMethod


def language_model(
    method: str | PositionMethod | LayerScheme,
    *,
    train_length: int,
    vocabulary_size: int,
    max_length: int = 1024,
    depth: int = 64,
    heads: int = 4,
    layers: int = 2,
    feed_forward: int = 4,
    seed: int = 0,
    method_options: dict | None = None,
) -> keras.Model:
    """An uncompiled causal character-level Transformer language model.

    Token vectors start with unit-variance entries, the scale of the
    sinusoidal table; a ``"learned"`` table starts the same way. Every block
    computes ``x + attention(norm(x))`` and then ``x + dense(relu(dense(norm(x))))``,
    and a last normalisation precedes the read-out.

    Args:
        method: a name from :data:`pe_lib.methods.METHODS` or its entry, or a
            per-layer scheme: a name from :data:`pe_lib.layer_schemes.SCHEMES`
            or the :class:`~pe_lib.layer_schemes.LayerScheme` itself.
        train_length: the training length :math:`L`; a ``"learned"`` table
            has this many rows and refuses longer inputs.
        vocabulary_size: number of character ids.
        max_length: rows of the ``"sinusoidal"`` table, the longest input.
        depth: size of the token vectors, a multiple of ``heads``.
        heads: attention heads per block.
        layers: number of blocks.
        feed_forward: width of the feed-forward layer, in multiples of ``depth``.
        seed: seed of the initial weights.
        method_options: more arguments for every block's attention layer,
            such as ``{"scale": 4.0}`` for ``"rope_pi"``
            (:class:`~pe_lib.layers.PositionalSelfAttention`); a scheme
            carries its options per layer and takes none here.

    Returns:
        A ``keras.Model`` from ids ``(batch, steps)`` to logits
        ``(batch, steps, vocabulary_size)``; the logits at step ``t`` depend on
        the ids at steps ``0..t`` only.

    Example:
        >>> model = language_model("alibi", train_length=8, vocabulary_size=5, depth=8, heads=2)
        >>> tuple(model(np.zeros((3, 8), dtype="int32")).shape)
        (3, 8, 5)
        >>> language_model("learned", train_length=8, vocabulary_size=5, depth=8, heads=2,
        ...                ).count_params() - model.count_params()
        64

        A scheme's blocks differ, each as its :class:`~pe_lib.layer_schemes.LayerPositions` says:

        >>> hybrid = language_model("rope_nope", train_length=8, vocabulary_size=5, depth=8, heads=2,
        ...                         layers=4)
        >>> [hybrid.get_layer(f"attention_{block}").method for block in range(4)]
        ['rope', 'rope', 'rope', 'none']
    """
    positions = resolve_positions(method)
    train_length = require_int("train_length", train_length, minimum=1)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=1)
    max_length = require_int("max_length", max_length, minimum=1)
    depth = require_int("depth", depth, minimum=1)
    heads = require_int("heads", heads, minimum=1)
    layers = require_int("layers", layers, minimum=1)
    feed_forward = require_int("feed_forward", feed_forward, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    require_multiple("depth", depth, "heads", heads)
    if isinstance(positions, LayerScheme):
        if method_options is not None:
            raise ValueError(f"method_options must be None for a per-layer scheme (its layers carry their "
                             f"options), got {method_options!r}")
        per_layer = positions.layers(layers)
        entry = METHODS["none"]  # nothing is added to the token vectors
    else:
        per_layer, entry = None, positions

    tokens, x = token_vectors(
        entry, train_length=train_length, max_length=max_length,
        vocabulary_size=vocabulary_size, depth=depth, seed=seed)
    inside = attention_method(entry)
    first_table = None
    for block in range(layers):
        if per_layer is None:
            options = {"method": inside, "method_options": method_options}
        else:
            options = per_layer[block].attention_options()
        attention = PositionalSelfAttention(
            heads, depth // heads, **options, name=f"attention_{block}")
        if isinstance(attention.positions, T5RelativeBias):
            if first_table is None:
                first_table = attention
            else:  # one table of bucket biases for every block, as in T5
                share_bias_table(first_table, attention)
        # pre-normalised: x + f(norm(x)), for attention and feed-forward
        norm_a = keras.layers.LayerNormalization(name=f"norm_{block}a")
        x = x + attention(norm_a(x))
        norm_b = keras.layers.LayerNormalization(name=f"norm_{block}b")
        hidden = keras.layers.Dense(
            feed_forward * depth, activation="relu",
            name=f"hidden_{block}")(norm_b(x))
        x = x + keras.layers.Dense(depth, name=f"back_{block}")(hidden)
    x = keras.layers.LayerNormalization(name="norm")(x)
    logits = keras.layers.Dense(vocabulary_size, name="logits")(x)
    return keras.Model(tokens, logits,
                       name=f"language_model_{positions.name}")


def share_bias_table(first: PositionalSelfAttention,
                     later: PositionalSelfAttention) -> None:
    """Make ``later`` add the bias of ``first``'s T5 table: one table for every block, as in T5.

    T5 learns its bucket biases in the first block and adds the same ones in
    every block (Hugging Face's ``has_relative_attention_bias`` is true for
    the first block only). Here each block's
    :class:`~pe_lib.layers.T5RelativeBias` gives up its own table and reads
    ``first``'s, so the model holds, trains and counts a single one.

    Example:
        >>> model = language_model("t5", train_length=8, vocabulary_size=5, depth=8, heads=2, layers=3)
        >>> tables = [w for w in model.weights if w.path.endswith("positions/embeddings")]
        >>> [tuple(w.shape) for w in tables]
        [(32, 2)]
    """
    for attention in (first, later):
        if not isinstance(attention.positions, T5RelativeBias):
            raise ValueError(f"both blocks must add a T5 bias, got {attention.method!r} in {attention.name!r}")
    table = first.positions.embeddings
    if tuple(later.positions.embeddings.shape) != tuple(table.shape):
        raise ValueError(f"the tables must have one shape, got {tuple(table.shape)} and "
                         f"{tuple(later.positions.embeddings.shape)}")
    del later.positions.embeddings  # Keras forgets the block's own table
    later.positions.embeddings = table


def position_losses(logits, targets) -> np.ndarray:
    r"""The loss of each prediction in bits, :math:`-\log_2 p(\text{target})`, in float64.

    Args:
        logits: ``(..., vocabulary_size)`` unnormalised log-probabilities.
        targets: integer ids of shape ``logits.shape[:-1]``.

    Returns:
        An array of shape ``targets.shape``.

    Example:
        Probabilities 1/4, 1/4 and 1/2 (logits ``log 1, log 1, log 2``):

        >>> logits = np.log([[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]])
        >>> position_losses(logits, [2, 0])
        array([1., 2.])
    """
    logits = np.asarray(logits, dtype=np.float64)
    targets = np.asarray(targets)
    if logits.ndim < 1 or targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets must have shape {logits.shape[:-1]} (logits without the last axis), "
                         f"got {targets.shape}")
    if not np.issubdtype(targets.dtype, np.integer) or np.any((targets < 0) | (targets >= logits.shape[-1])):
        raise ValueError(f"targets must be integer ids in [0, {logits.shape[-1]}), got {targets!r}")
    top = logits.max(axis=-1, keepdims=True)
    log_total = np.log(np.exp(logits - top).sum(axis=-1)) + top[..., 0]
    chosen = np.take_along_axis(logits, targets[..., None].astype(np.intp), axis=-1)[..., 0]
    return (log_total - chosen) / math.log(2.0)


def bits_per_character(logits, targets) -> float:
    """The mean of :func:`position_losses`: bits per character.

    >>> bits_per_character(np.zeros((2, 3, 4)), np.zeros((2, 3), dtype=int))
    2.0
    """
    return float(position_losses(logits, targets).mean())
