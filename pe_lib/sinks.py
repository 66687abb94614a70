r"""Sliding windows and attention sinks: which keys a query may see, and where spare weight goes.

A *sliding window* of :math:`w` keys lets the query at position :math:`i` see
the keys :math:`j` with :math:`i - w < j \le i` (Mistral, Gemma's local layers,
gpt-oss's banded layers; Hugging Face's ``sliding_window``). Softmax weights
must sum to 1, and trained models park the weight they do not need on the first
tokens, whatever those hold; dropping those tokens from the window ruins the
model. Two remedies, both *attention sinks*:

- StreamingLLM (Xiao et al., 2024) keeps the first :math:`k` keys
  (``sink_tokens``, 4 in the paper) visible beside the window
  (:func:`window_mask`);
- gpt-oss learns one *sink logit* :math:`s_h` per head, a score for a key
  that is not there: the weights become
  :math:`e^{x_j} / (e^{s_h} + \sum_k e^{x_k})` and may sum to less than 1
  (:func:`softmax_with_sink`; Hugging Face's ``sinks`` parameter of
  ``GptOssAttention``).

>>> window_mask(np.arange(5), np.arange(5), window=2, sink_tokens=1).astype(int)
array([[1, 0, 0, 0, 0],
       [1, 1, 0, 0, 0],
       [1, 1, 1, 0, 0],
       [1, 0, 1, 1, 0],
       [1, 0, 0, 1, 1]])
>>> softmax_with_sink(np.zeros((1, 1, 2)), [0.0]).tolist()
[[[0.3333333333333333, 0.3333333333333333]]]
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int


def _positions(name: str, positions) -> np.ndarray:
    array = np.asarray(positions)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must be a 1-D array of integers, got {positions!r}")
    return array.astype(np.int64)


def window_mask(query_positions, key_positions, *, window: int | None = None, sink_tokens: int = 0) -> np.ndarray:
    r"""Which keys each query may attend to: causal, within ``window``, or among the first ``sink_tokens``.

    Args:
        query_positions: the positions :math:`i` of the queries, 1-D integers.
        key_positions: the positions :math:`j` of the keys, 1-D integers.
        window: the number of most recent keys a query sees, itself included
            (:math:`i - j < w`), as Hugging Face's ``sliding_window``; ``None``
            for no window.
        sink_tokens: the number of first keys (:math:`j < k`) that every later
            query sees as well (StreamingLLM's attention sinks).

    Returns:
        A boolean array ``(queries, keys)``, True where the key is visible.

    >>> window_mask([3], np.arange(4), window=1).tolist()
    [[False, False, False, True]]
    """
    queries = _positions("query_positions", query_positions)[:, None]
    keys = _positions("key_positions", key_positions)[None, :]
    sink_tokens = require_int("sink_tokens", sink_tokens, minimum=0)
    visible = keys <= queries
    if window is not None:
        window = require_int("window", window, minimum=1)
        visible &= (queries - keys < window) | (keys < sink_tokens)
    elif sink_tokens:
        raise ValueError(f"sink_tokens={sink_tokens} needs a window (without one every key is visible)")
    return visible


def softmax_with_sink(scores, sink_logits, *, mask=None) -> np.ndarray:
    r"""Softmax over the keys with one extra logit per head that takes weight and gives nothing.

    Args:
        scores: ``(..., heads, queries, keys)`` logits.
        sink_logits: ``heads`` numbers :math:`s_h`.
        mask: an optional boolean ``(queries, keys)`` array, False where a key
            is hidden (its weight is 0).

    Returns:
        float64 weights of the shape of ``scores``; each row sums to
        :math:`1 - e^{s_h} / (e^{s_h} + \sum_k e^{x_k}) < 1`.

    >>> softmax_with_sink(np.log([[[1.0, 2.0]]]), [np.log(1.0)]).round(4).tolist()
    [[[0.25, 0.5]]]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim < 3:
        raise ValueError(f"scores must have shape (..., heads, queries, keys), got shape {scores.shape}")
    sinks = np.asarray(sink_logits, dtype=np.float64)
    if sinks.shape != (scores.shape[-3],) or not np.all(np.isfinite(sinks)):
        raise ValueError(
            f"sink_logits must be {scores.shape[-3]} finite numbers, one per head; got {sink_logits!r}"
        )
    sink = np.broadcast_to(sinks[:, None, None], scores.shape[:-1] + (1,))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        scores = np.where(mask, scores, -np.inf)
    joined = np.concatenate([scores, sink], axis=-1)
    joined = np.exp(joined - joined.max(axis=-1, keepdims=True))
    return (joined / joined.sum(axis=-1, keepdims=True))[..., :-1]
