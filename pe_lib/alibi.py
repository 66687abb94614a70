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
"""

from __future__ import annotations

import math

import numpy as np

from pe_lib._checks import require_choice, require_int

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


def alibi_bias(length: int, heads: int, *, form: str = "causal") -> np.ndarray:
    r"""The bias added to the attention scores of each head.

    Args:
        length: number of positions, ``>= 1``.
        heads: number of heads, ``>= 1``; head ``h`` uses ``alibi_slopes(heads)[h]``.
        form: ``"causal"``: :math:`-m_h (i - j)` for keys at or before the
            query and :math:`-\infty` after it, so that a softmax gives those
            keys no weight; ``"symmetric"``: :math:`-m_h |i - j|` everywhere.

    Returns:
        A float64 array of shape ``(heads, length, length)``; entry
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
    form = require_choice("form", form, FORMS)
    slopes = alibi_slopes(heads)
    positions = np.arange(length)
    behind = (positions[:, None] - positions[None, :]).astype(np.float64)  # i - j
    # 0.0 - x, not -x: the diagonal is +0.0, never the -0.0 that prints as "-0.".
    if form == "symmetric":
        return 0.0 - slopes[:, None, None] * np.abs(behind)
    bias = 0.0 - slopes[:, None, None] * behind
    return np.where(behind < 0, -np.inf, bias)
