r"""Longer contexts for a RoPE model: the recipes of the RoPE chapter, by registry name.

A RoPE model trained on sequences of :math:`L` steps has only seen the angles
:math:`m\theta_i` for :math:`m < L`. To run it at :math:`sL` steps, each
method changes the angle rates :math:`\theta_i = N^{-2i/d}` for a scale
:math:`s`, without touching the weights (registry names in brackets):

- position interpolation (Chen et al., 2023), ``"rope_pi"``: every rate
  divided by :math:`s` (Hugging Face ``rope_type="linear"``);
- NTK-aware scaling (bloc97, 2023), ``"rope_ntk"``: the base raised to
  :math:`N s^{d/(d-2)}`, which leaves the fastest pair alone and divides the
  slowest by exactly :math:`s`;
- dynamic NTK, ``"rope_dynamic"``: the same, with the scale chosen from the
  current length (Hugging Face ``rope_type="dynamic"``);
- YaRN (Peng et al., 2023) as its code ships it, ``"rope_yarn"``: pairs that
  turn more than 32 times within :math:`L` keep their rate, pairs that turn
  less than once are interpolated, with a ramp linear in the pair index
  between; queries and keys are also multiplied by :math:`0.1 \ln s + 1`
  (Hugging Face ``rope_type="yarn"``);
- YaRN as the paper's equation reads, ``"rope_yarn_paper"``: the same ends,
  the ramp linear in the number of turns;
- Llama 3.1's scaling, ``"rope_llama3"``: the paper's ramp between 1 and 4
  turns, no attention factor (Hugging Face ``rope_type="llama3"``).

``"rope"`` keeps the rates.

>>> scaled_angle_rates("rope_pi", 4, scale=2.0)
array([0.5  , 0.005])

The rates are computed once, in :mod:`pe_lib.rope_scaling`; this module
gives the chapter its vocabulary. A trained model is run with the rates of
another method by :func:`pe_lib.course.extrapolation.experiment.evaluate_with_scaling`.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_choice
from pe_lib.methods import method_names
# yarn_ramp, yarn_pair_ramp and yarn_attention_factor are imported for the chapter, which takes them from here.
from pe_lib.rope_scaling import (  # noqa: F401
    attention_factor,
    scaled_rates,
    yarn_attention_factor,
    yarn_pair_ramp,
    yarn_ramp,
)

#: Plain RoPE and its context-extension methods, from the registry.
METHODS = method_names("queries and keys")


def scaled_angle_rates(
    method: str,
    depth: int,
    *,
    scale: float = 1.0,
    original_length: int | None = None,
    base: float = 10000.0,
    length: int | None = None,
    **options,
) -> np.ndarray:
    r"""The angle rates :math:`\theta'_i` of a RoPE model stretched by ``scale``.

    :func:`pe_lib.rope_scaling.scaled_rates`, with the method checked against
    :data:`METHODS`.

    Args:
        method: one of :data:`METHODS`.
        depth: the feature size :math:`d` of a query or key, even.
        scale: the stretch :math:`s \ge 1`, the new length over the trained one
            (for ``"rope_dynamic"``, Hugging Face's ``factor``).
        original_length: the trained length :math:`L`; needed by all methods
            but ``"rope"``, ``"rope_pi"`` and ``"rope_ntk"``.
        base: the base :math:`N` the model was trained with.
        length: the current length, for ``"rope_dynamic"``.
        **options: the method's options, e.g. ``beta_fast`` for
            ``"rope_yarn"`` or ``alpha`` for ``"rope_yarn_paper"``.

    Returns:
        A float64 array of ``depth // 2`` rates.

    Example:
        NTK-aware scaling keeps the fastest pair and slows the slowest by ``scale``:

        >>> from pe_lib.frequencies import angle_rates
        >>> rates = scaled_angle_rates("rope_ntk", 8, scale=4.0)
        >>> (rates / angle_rates(8)).round(4)
        array([1.    , 0.63  , 0.3969, 0.25  ])
    """
    method = require_choice("method", method, METHODS)
    return scaled_rates(method, depth, scale=scale, original_length=original_length, base=base,
                        length=length, **options)
