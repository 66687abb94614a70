r"""Context extension for RoPE: new angle rates for longer inputs, no retraining.

A model trained with RoPE on sequences of :math:`L` positions has only seen
angles :math:`m\theta_i` with :math:`m < L`. To run it on :math:`sL` positions
(:math:`s > 1`, the *scale*), each method below changes the rates
:math:`\theta_i = N^{-2i/d}` once, and the rotation is applied as before
(:func:`pe_lib.rope.apply_rope` with ``rates=``).

- Position interpolation (Chen et al., 2023), ``"rope_pi"``: every rate
  divided by :math:`s`, so positions up to :math:`sL` turn by angles the model
  saw during training. Hugging Face ``rope_type="linear"``; keras-hub
  ``scaling_factor``.
- NTK-aware scaling (bloc97, 2023), ``"rope_ntk"``: the base raised to
  :math:`N' = N s^{d/(d-2)}`. The fastest pair (:math:`i = 0`) keeps its rate;
  the slowest (:math:`i = d/2 - 1`) is divided by :math:`s` exactly; the others
  in between, geometrically. Hugging Face ``rope_type="dynamic"`` applies the
  same formula with :math:`s` chosen from the current length.
- YaRN (Peng et al., 2023), ``"rope_yarn"``: each pair is judged by how many
  turns it makes over the original context, :math:`r_i = L / \lambda_i` with
  :math:`\lambda_i = 2\pi/\theta_i`. Pairs with :math:`r_i > \beta` (many turns,
  wavelength much shorter than :math:`L`) are left alone; pairs with
  :math:`r_i < \alpha` (wavelength longer than :math:`L`) are interpolated by
  :math:`s`; in between a linear ramp :math:`\gamma = (r_i - \alpha)/(\beta - \alpha)`
  mixes the two: :math:`\theta'_i = (1 - \gamma)\,\theta_i / s + \gamma\,\theta_i`.
  The paper's :math:`\alpha = 1`, :math:`\beta = 32`. YaRN also sharpens the
  softmax: queries and keys are each multiplied by :math:`0.1 \ln s + 1`
  (:func:`yarn_attention_factor`), Hugging Face's ``attention_factor``, which
  it applies to the cosine and sine tables.

All rates are float64.
"""

from __future__ import annotations

import math

import numpy as np

from pe_lib._checks import require_even, require_int, require_positive_float
from pe_lib.frequencies import angle_rates

_ODD_DEPTH = "RoPE rotates the features in pairs"


def _require_scale(scale) -> float:
    scale = require_positive_float("scale", scale)
    if scale < 1.0:
        raise ValueError(f"scale must be >= 1 (the factor by which the context grows), got {scale!r}")
    return scale


def interpolation_rates(depth: int, scale: float, *, base: float = 10000.0) -> np.ndarray:
    r"""Position interpolation: the RoPE rates divided by ``scale``.

    Position :math:`m` then turns by :math:`m\theta_i/s`, the angle of
    position :math:`m/s`: positions up to :math:`sL` land inside the trained
    range.

    >>> interpolation_rates(4, 2.0)
    array([0.5  , 0.005])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    scale = _require_scale(scale)
    return angle_rates(depth, base=base) / scale


def ntk_base(depth: int, scale: float, *, base: float = 10000.0) -> float:
    r"""The NTK-aware base :math:`N s^{d/(d-2)}`.

    >>> ntk_base(4, 2.0)
    40000.0
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    if depth < 4:
        raise ValueError(f"depth must be >= 4 for NTK-aware scaling (d/(d-2)), got {depth}")
    scale = _require_scale(scale)
    base = require_positive_float("base", base)
    return base * scale ** (depth / (depth - 2))


def ntk_rates(depth: int, scale: float, *, base: float = 10000.0) -> np.ndarray:
    r"""NTK-aware scaling: the RoPE rates of the base :func:`ntk_base`.

    The first rate stays 1; the last is divided by ``scale``:

    >>> ntk_rates(4, 2.0) * [1, 200]
    array([1., 1.])
    """
    return angle_rates(depth, base=ntk_base(depth, scale, base=base))


def yarn_turns(depth: int, original_length: int, *, base: float = 10000.0) -> np.ndarray:
    r"""How many turns each pair makes over the original context: :math:`r_i = L / \lambda_i`.

    >>> yarn_turns(8, 2048).round(2)
    array([325.95,  32.59,   3.26,   0.33])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    original_length = require_int("original_length", original_length, minimum=1)
    return original_length * angle_rates(depth, base=base) / (2.0 * math.pi)


def yarn_ramp(turns, alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    r"""YaRN's :math:`\gamma(r)`: 0 below ``alpha`` turns, 1 above ``beta``, linear between.

    A pair with :math:`\gamma = 1` keeps its rate, one with :math:`\gamma = 0`
    is interpolated fully. The paper's :math:`\alpha = 1`, :math:`\beta = 32`
    are Hugging Face's ``beta_slow`` and ``beta_fast``.

    >>> yarn_ramp([0.5, 1.0, 16.5, 32.0, 100.0])
    array([0. , 0. , 0.5, 1. , 1. ])
    >>> yarn_ramp(yarn_turns(8, 2048)).round(3)
    array([1.   , 1.   , 0.073, 0.   ])
    """
    alpha = require_positive_float("alpha", alpha)
    beta = require_positive_float("beta", beta)
    if beta <= alpha:
        raise ValueError(f"beta must exceed alpha, got alpha={alpha!r} and beta={beta!r}")
    return np.clip((np.asarray(turns, dtype=np.float64) - alpha) / (beta - alpha), 0.0, 1.0)


def yarn_rates(depth: int, scale: float, original_length: int, *, base: float = 10000.0,
               alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    r"""YaRN's rates: :math:`(1 - \gamma_i)\,\theta_i / s + \gamma_i\,\theta_i`.

    With :math:`L = 2048` the two fast pairs turn 326 and 33 times and are
    kept; the slowest turns 0.33 times and is interpolated:

    >>> (yarn_rates(8, 4.0, 2048) / angle_rates(8)).round(3)
    array([1.   , 1.   , 0.305, 0.25 ])
    """
    scale = _require_scale(scale)
    ramp = yarn_ramp(yarn_turns(depth, original_length, base=base), alpha, beta)
    rates = angle_rates(depth, base=base)
    return (1.0 - ramp) * rates / scale + ramp * rates


def yarn_attention_factor(scale: float) -> float:
    r"""YaRN's factor :math:`0.1 \ln s + 1` on queries and keys (1 when ``scale`` is 1).

    >>> round(yarn_attention_factor(4.0), 4)
    1.1386
    """
    scale = _require_scale(scale)
    return 0.1 * math.log(scale) + 1.0


#: The context-extension variants, by registry name.
SCALINGS = ("rope_pi", "rope_ntk", "rope_yarn")


def scaled_rates(method: str, depth: int, *, scale: float = 1.0, original_length: int | None = None,
                 base: float = 10000.0, alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    """The rates of RoPE (``"rope"``) or of one of its :data:`SCALINGS`.

    ``original_length``, ``alpha`` and ``beta`` are used by ``"rope_yarn"`` only.

    >>> scaled_rates("rope_pi", 4, scale=2.0)
    array([0.5  , 0.005])
    """
    if method == "rope":
        _require_scale(scale)
        return angle_rates(require_even("depth", depth, reason=_ODD_DEPTH), base=base)
    if method == "rope_pi":
        return interpolation_rates(depth, scale, base=base)
    if method == "rope_ntk":
        return ntk_rates(depth, scale, base=base)
    if method == "rope_yarn":
        if original_length is None:
            raise ValueError("original_length is required for method='rope_yarn' (the ramp counts turns within it)")
        return yarn_rates(depth, scale, original_length, base=base, alpha=alpha, beta=beta)
    raise ValueError(f"method must be one of 'rope', {', '.join(map(repr, SCALINGS))}; got {method!r}")
