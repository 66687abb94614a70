r"""ALiBi, attention with linear biases (Press, Smith and Lewis, 2022).

ALiBi adds no vector to the tokens. Each head :math:`h` subtracts from the
score of query :math:`i` and key :math:`j` a penalty proportional to their
distance,

.. math::

    s_{ij} = \frac{q_i \cdot k_j}{\sqrt{d}} - m_h\,(i - j), \qquad j \le i,

with a fixed slope :math:`m_h` per head. For :math:`n` heads, :math:`n` a power
of two, the slopes are the geometric sequence :math:`2^{-8/n}, 2^{-16/n},
\dots, 2^{-8}`. For other head counts the paper takes all the slopes of the
largest power of two below :math:`n` and fills up with every other slope of
the next power of two, which fall between them.

The paper's form is causal: keys after the query are masked. A *symmetric*
form, :math:`-m_h\,|i - j|`, is a common extension to encoders; it is not in
the paper, and it cannot tell a key before the query from one after it.

Peers: Hugging Face's BLOOM and MPT add :math:`m_h\,j` instead of
:math:`-m_h\,(i - j)`. The two differ by :math:`m_h\,i`, a constant along each
row (one query), which the softmax ignores, so they give the same attention.
:func:`alibi_block` gives the bias of any block of queries and keys, so a long
sequence or a cached decoding step never needs the whole ``(L, L)`` matrix;
the Keras twin is :class:`pe_lib.layers.AlibiBias`.
"""

from __future__ import annotations

import math

import numpy as np

from pe_lib._checks import require_choice, require_float_dtype, require_int

#: The forms of the bias matrix, the paper's causal one and a symmetric extension.
FORMS = ("causal", "symmetric")


def _power_of_two_slopes(heads: int) -> np.ndarray:
    return 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)


def alibi_slopes(heads: int) -> np.ndarray:
    """The slope :math:`m_h` of each head, largest first.

    Args:
        heads: the number of attention heads, ``>= 1``.

    Returns:
        A float64 array of ``heads`` slopes in ``(0, 1)``.

    Example:
        >>> alibi_slopes(8) * 256
        array([128.,  64.,  32.,  16.,   8.,   4.,   2.,   1.])
        >>> alibi_slopes(2)
        array([0.0625    , 0.00390625])
    """
    heads = require_int("heads", heads, minimum=1)
    below = 2 ** int(math.floor(math.log2(heads)))
    if below == heads:
        return _power_of_two_slopes(heads)
    extra = _power_of_two_slopes(2 * below)[0::2][: heads - below]
    return np.concatenate([_power_of_two_slopes(below), extra])


def alibi_block(query_positions, key_positions, heads: int, *, form: str = "causal",
                dtype="float64") -> np.ndarray:
    r"""The bias of the queries at ``query_positions`` and the keys at ``key_positions``.

    Args:
        query_positions: a 1-D integer array of query positions :math:`i`.
        key_positions: a 1-D integer array of key positions :math:`j`.
        heads: number of heads, ``>= 1``.
        form: ``"causal"`` or ``"symmetric"``, as for :func:`alibi_bias`.
        dtype: a floating-point dtype for the result. The distances
            :math:`i - j` are exact integers; only the product with the
            slope is rounded.

    Returns:
        An array of shape ``(heads, len(query_positions), len(key_positions))``.

    Example:
        The last query of a sequence of a million positions, against its
        three nearest keys:

        >>> alibi_block([999_999], [999_997, 999_998, 999_999], 1) * 256
        array([[[-2., -1.,  0.]]])
    """
    form = require_choice("form", form, FORMS)
    dtype = require_float_dtype("dtype", dtype)
    slopes = alibi_slopes(heads)
    queries = _as_positions("query_positions", query_positions)
    keys = _as_positions("key_positions", key_positions)
    behind = (queries[:, None] - keys[None, :]).astype(np.float64)  # i - j, exact below 2**53
    # 0.0 - x, not -x: the diagonal is +0.0, never the -0.0 that prints as "-0.".
    if form == "symmetric":
        return (0.0 - slopes[:, None, None] * np.abs(behind)).astype(dtype)
    bias = 0.0 - slopes[:, None, None] * behind
    return np.where(behind < 0, -np.inf, bias).astype(dtype)


def _as_positions(name: str, positions) -> np.ndarray:
    array = np.asarray(positions)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be a 1-D array of integers, got {positions!r}")
    return array.astype(np.int64)


def alibi_bias(length: int, heads: int, *, form: str = "causal", dtype="float64") -> np.ndarray:
    r"""The bias added to the attention scores of each head.

    Args:
        length: number of positions, ``>= 1``.
        heads: number of heads, ``>= 1``; head ``h`` uses ``alibi_slopes(heads)[h]``.
        form: ``"causal"``: :math:`-m_h (i - j)` for keys at or before the
            query and :math:`-\infty` after it, so that a softmax gives those
            keys no weight; ``"symmetric"``: :math:`-m_h |i - j|` everywhere.

        dtype: a floating-point dtype for the result.

    Returns:
        An array of shape ``(heads, length, length)``; entry
        ``[h, i, j]`` is the bias of query ``i`` and key ``j`` in head ``h``.

    Example:
        >>> alibi_bias(4, 1)[0] * 256
        array([[  0., -inf, -inf, -inf],
               [ -1.,   0., -inf, -inf],
               [ -2.,  -1.,   0., -inf],
               [ -3.,  -2.,  -1.,   0.]])
        >>> alibi_bias(3, 2, form="symmetric")[0] * 16
        array([[ 0., -1., -2.],
               [-1.,  0., -1.],
               [-2., -1.,  0.]])
    """
    length = require_int("length", length, minimum=1)
    positions = np.arange(length)
    return alibi_block(positions, positions, heads, form=form, dtype=dtype)
