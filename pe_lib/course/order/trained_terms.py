"""The four terms of a trained order classifier's attention scores, head by head.

:func:`head_terms` splits the scores of one head of a trained
:func:`pe_lib.course.order.mixing.mixing_classifier` (with the code added)
into the four terms of
:func:`pe_lib.course.lessons.attention_terms.score_terms`, for a batch of
sequences; :func:`head_measures` says how far each term is from a function
of the offset ``j - i`` and how large it is.

>>> from pe_lib.course.order.mixing import mixing_classifier
>>> from pe_lib.course.order.tasks import marker_order_task
>>> model = mixing_classifier("add", token_depth=8)
>>> sequences, _ = marker_order_task(3, 12, seed=5)
>>> terms = head_terms(model, sequences, head=0)
>>> terms["position_position"].shape
(6, 12, 12)
>>> sorted(head_measures(terms, sequences))
['pp_by_key', 'pp_rho', 'pp_size', 'pt_rho', 'pt_size', 'tp_rho', 'tp_size', 'tt_size']
"""

from __future__ import annotations

import keras
import numpy as np

import pe_lib
from pe_lib._checks import require_int
from pe_lib.course.lessons import attention_terms


def head_terms(model, sequences, head: int) -> dict[str, np.ndarray]:
    """The four terms and the total of one head's scores, one ``(steps, steps)`` table per sequence.

    Keras's attention biases are left out: they add terms that depend on one side only.
    """
    sequences = np.asarray(sequences)
    if sequences.ndim != 2:
        raise ValueError(f"sequences must be (sequences, steps), got shape {sequences.shape}")
    attention = model.get_layer("attention")
    query_kernels = keras.ops.convert_to_numpy(attention.query_dense.kernel)
    key_kernels = keras.ops.convert_to_numpy(attention.key_dense.kernel)
    head = require_int("head", head, minimum=0)
    if head >= query_kernels.shape[1]:
        raise ValueError(
            f"head must be below {query_kernels.shape[1]}, got {head}")
    token_table = keras.ops.convert_to_numpy(
        model.get_layer("token_embedding").embeddings)
    steps, depth = sequences.shape[1], token_table.shape[1]
    codes = pe_lib.sinusoidal_encoding(steps, depth, dtype="float64")
    split = [attention_terms.score_terms(
                 token_table[sequence], codes,
                 query_kernels[:, head], key_kernels[:, head])
             for sequence in sequences]
    return {name: np.stack([getattr(terms, name) for terms in split])
            for name in (*attention_terms.TERM_NAMES, "total")}


_SHORT_NAMES = dict(zip(("tt", "tp", "pt", "pp"), attention_terms.TERM_NAMES))


def _grouped(values, *labels) -> float:
    """``residual_share`` of ``values`` grouped by every combination of the labels (each below 100)."""
    combined = sum(np.broadcast_to(label, values.shape) * 100**place for place, label in enumerate(labels))
    return attention_terms.residual_share(values, combined)


def head_measures(terms: dict[str, np.ndarray], sequences) -> dict[str, float]:
    """How far each term of :func:`head_terms` is from a function of the offset, and how large it is.

    Returns ``pp_rho`` (the position-position term given the offset ``j - i``),
    ``pp_by_key`` (the same term given the key's position ``j`` alone),
    ``tp_rho`` and ``pt_rho`` (a cross term given its token and the offset,
    over given its token alone), and ``tt_size``, ``tp_size``, ``pt_size`` and
    ``pp_size`` (the spread of each term over that of the score).
    """
    sequences = np.asarray(sequences)
    steps = sequences.shape[1]
    offsets = np.subtract.outer(np.arange(steps), np.arange(steps)).T  # j - i
    key_steps = np.broadcast_to(np.arange(steps), (steps, steps))
    query_tokens, key_tokens = sequences[:, :, None], sequences[:, None, :]
    total = terms["total"].std()
    return {
        "pp_rho": _grouped(terms["position_position"], offsets),
        "pp_by_key": _grouped(terms["position_position"], key_steps),
        "tp_rho": _grouped(terms["token_position"], query_tokens, offsets)
        / _grouped(terms["token_position"], query_tokens),
        "pt_rho": _grouped(terms["position_token"], key_tokens, offsets)
        / _grouped(terms["position_token"], key_tokens),
        **{f"{short}_size": terms[name].std() / total for short, name in _SHORT_NAMES.items()},
    }
