r"""LongRoPE: a searched factor per pair, one set below the trained length and one above.

LongRoPE (Ding et al., 2024) divides the rate of each pair by its own factor
:math:`\lambda_i`, found by a search rather than by a formula:

.. math::

    \theta'_i = \frac{\theta_i}{\lambda_i}, \qquad \theta_i = N^{-2i/d} .

A model carries two sets of factors: ``short_factor`` for inputs that fit the
trained context :math:`L` and ``long_factor`` for longer ones. Which set is
used depends on the current length :math:`n` (the last position plus one):
the short set while :math:`n \le L`, the long set once :math:`n > L`. Every
query and key is also multiplied by an attention factor, whatever the set,

.. math::

    f = \sqrt{1 + \ln s / \ln L}, \qquad s = L_{\max} / L ,

so that the logits grow by :math:`f^2` (1 when :math:`s \le 1`).

The switch has a price in cached decoding: keys rotated while the input was
short carry the short rates, and a query past :math:`L` is rotated with the
long ones, so its scores against those keys no longer depend on the offset
alone. Hugging Face's module recomputes the rates when the length crosses
:math:`L` and keeps them until it falls back below.

Names in the peers: the registry name is ``"rope_longrope"``. Hugging Face
``rope_type="longrope"`` (formerly ``"su"``; Phi-3's 128k variants, Phi-3.5, Phi-4-mini) with
``short_factor``, ``long_factor``, ``attention_factor``, ``factor`` (here
``scale``), ``original_max_position_embeddings`` (here ``original_length``)
and ``max_position_embeddings`` (:math:`L_{\max}`, whose ratio to
:math:`L` is the scale when ``factor`` is absent). keras-hub's peer is its
Phi-3 model's ``Phi3SuScaledRotaryEmbedding``.

>>> longrope_rates(4, [1.0, 2.0], [4.0, 8.0], 16, length=16)
array([1.   , 0.005])
>>> longrope_rates(4, [1.0, 2.0], [4.0, 8.0], 16, length=17)
array([0.25   , 0.00125])
>>> round(longrope_attention_factor(32.0, 4096), 6)
1.190238
"""

from __future__ import annotations

import math

import numpy as np

from pe_lib._checks import require_even, require_int, require_positive_float
from pe_lib.frequencies import angle_rates

_ODD_DEPTH = "RoPE rotates the features in pairs"


def _factors(name: str, values, pairs: int) -> np.ndarray:
    """``values`` as ``pairs`` finite positive float64 factors, or an error naming ``name``."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{name} must be a sequence of {pairs} numbers, got {values!r}")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a sequence of {pairs} numbers, got {values!r}") from error
    if array.shape != (pairs,):
        raise ValueError(f"{name} must hold one factor per pair, {pairs} numbers; got shape {array.shape}")
    if not np.all(np.isfinite(array) & (array > 0)):
        raise ValueError(f"{name} must hold finite numbers > 0, got {values!r}")
    return array


def uses_long_factors(length: int, original_length: int) -> bool:
    """Whether a length of ``length`` positions runs on the long factors: ``length > original_length``.

    >>> uses_long_factors(4096, 4096), uses_long_factors(4097, 4096)
    (False, True)
    """
    length = require_int("length", length, minimum=1)
    original_length = require_int("original_length", original_length, minimum=1)
    return length > original_length


def longrope_rates(depth: int, short_factor, long_factor, original_length: int, *, length: int,
                   base: float = 10000.0) -> np.ndarray:
    r"""The rates :math:`\theta_i / \lambda_i` at ``length`` positions.

    Args:
        depth: the number of rotated features, even.
        short_factor: ``depth // 2`` factors, used while ``length`` is at most
            ``original_length``.
        long_factor: ``depth // 2`` factors, used beyond it.
        original_length: the trained context :math:`L`.
        length: the current length :math:`n`, the last position plus one.
        base: the base :math:`N`.

    Returns:
        ``depth // 2`` float64 rates.

    >>> longrope_rates(4, [1.0, 1.0], [2.0, 4.0], 8, length=9) * [1, 100]
    array([0.5 , 0.25])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    short = _factors("short_factor", short_factor, depth // 2)
    long = _factors("long_factor", long_factor, depth // 2)
    factors = long if uses_long_factors(length, original_length) else short
    return angle_rates(depth, base=require_positive_float("base", base)) / factors


def longrope_attention_factor(scale: float, original_length: int) -> float:
    r"""LongRoPE's factor on queries and keys: :math:`\sqrt{1 + \ln s / \ln L}`, or 1 for :math:`s \le 1`.

    ``scale`` is :math:`s`, the new context over the trained one (Phi-3.5-mini:
    131072 / 4096 = 32); ``original_length`` is :math:`L`.

    >>> longrope_attention_factor(1.0, 4096)
    1.0
    >>> round(longrope_attention_factor(32.0, 4096) ** 2, 6)
    1.416667
    """
    scale = require_positive_float("scale", scale)
    original_length = require_int("original_length", original_length, minimum=2)
    if scale <= 1.0:
        return 1.0
    return math.sqrt(1.0 + math.log(scale) / math.log(original_length))
