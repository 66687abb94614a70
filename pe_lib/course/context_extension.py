r"""Longer contexts for a RoPE model: position interpolation, NTK-aware scaling, YaRN.

A RoPE model trained on sequences of :math:`L` steps has only seen the angles
:math:`m\theta_i` for :math:`m < L`. To run it at :math:`sL` steps, three
methods change the angle rates :math:`\theta_i = N^{-2i/d}` for a scale
:math:`s`, without touching the weights (registry names in brackets):

- position interpolation (Chen et al., 2023), ``"rope_pi"``: every rate
  divided by :math:`s`, so positions up to :math:`sL` turn as far as positions
  up to :math:`L` did (Hugging Face ``rope_type="linear"``);
- NTK-aware scaling (bloc97, 2023), ``"rope_ntk"``: the base raised to
  :math:`N s^{d/(d-2)}`, which leaves the fastest pair alone and divides the
  slowest by exactly :math:`s` (Hugging Face ``rope_type="dynamic"`` applies
  it with a scale that grows with the length);
- YaRN (Peng et al., 2023), ``"rope_yarn"``: pairs that turn many times
  within :math:`L` keep their rate, pairs that turn less than once are
  interpolated, with a linear ramp between; queries and keys are also
  multiplied by :math:`0.1 \ln s + 1` (Hugging Face ``rope_type="yarn"``).

``"rope"`` keeps the rates.

>>> scaled_angle_rates("rope_pi", 4, scale=2.0)
array([0.5  , 0.005])
"""

from __future__ import annotations

import contextlib

import numpy as np

from pe_lib._checks import require_choice, require_even, require_int, require_positive_float
from pe_lib.frequencies import angle_rates

#: Plain RoPE and its three context-extension methods.
METHODS = ("rope", "rope_pi", "rope_ntk", "rope_yarn")


def yarn_ramp(rotations, alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    r"""YaRN's :math:`\gamma(r)`: 0 below ``alpha`` rotations, 1 above ``beta``, linear between.

    >>> yarn_ramp([0.5, 1.0, 16.5, 32.0, 100.0])
    array([0. , 0. , 0.5, 1. , 1. ])
    """
    alpha = require_positive_float("alpha", alpha)
    beta = require_positive_float("beta", beta)
    if beta <= alpha:
        raise ValueError(f"beta must be larger than alpha, got alpha={alpha} and beta={beta}")
    return np.clip((np.asarray(rotations, dtype=np.float64) - alpha) / (beta - alpha), 0.0, 1.0)


def _require_scale(scale) -> float:
    scale = require_positive_float("scale", scale)
    if scale < 1.0:
        raise ValueError(f"scale must be at least 1 (a longer context), got {scale}")
    return scale


def scaled_angle_rates(
    method: str,
    depth: int,
    *,
    scale: float = 1.0,
    original_length: int | None = None,
    base: float = 10000.0,
    alpha: float = 1.0,
    beta: float = 32.0,
) -> np.ndarray:
    r"""The angle rates :math:`\theta'_i` of a RoPE model stretched by ``scale``.

    Args:
        method: one of :data:`METHODS`.
        depth: the feature size :math:`d` of a query or key, even.
        scale: the stretch :math:`s \ge 1`, the new length over the trained one.
        original_length: the trained length :math:`L`; needed by
            ``"rope_yarn"``, which measures each pair by its rotations
            :math:`r_i = L\theta_i / 2\pi`.
        base: the base :math:`N` the model was trained with.
        alpha, beta: YaRN's ramp ends, in rotations (the paper's 1 and 32).

    Returns:
        A float64 array of ``depth // 2`` rates.

    Example:
        NTK-aware scaling keeps the fastest pair and slows the slowest by ``scale``:

        >>> rates = scaled_angle_rates("rope_ntk", 8, scale=4.0)
        >>> (rates / angle_rates(8)).round(4)
        array([1.    , 0.63  , 0.3969, 0.25  ])
    """
    method = require_choice("method", method, METHODS)
    depth = require_even("depth", depth, reason="RoPE rotates the features in pairs")
    scale = _require_scale(scale)
    rates = angle_rates(depth, base=base)
    if method == "rope":
        return rates
    if method == "rope_pi":
        return rates / scale
    if method == "rope_ntk":
        if depth < 4:
            raise ValueError(f"depth must be at least 4 for NTK-aware scaling, got {depth}")
        return angle_rates(depth, base=base * scale ** (depth / (depth - 2)))
    if original_length is None:
        raise ValueError("original_length is needed for 'rope_yarn': the ramp counts rotations within it")
    original_length = require_int("original_length", original_length, minimum=1)
    keep = yarn_ramp(original_length * rates / (2 * np.pi), alpha, beta)
    return (1.0 - keep) * rates / scale + keep * rates


def yarn_attention_factor(scale: float) -> float:
    r"""YaRN's :math:`\sqrt{1/t} = 0.1 \ln s + 1`, which multiplies queries and keys alike.

    The scores are multiplied by its square; 1 at :math:`s = 1`.

    >>> round(yarn_attention_factor(4.0), 4), yarn_attention_factor(1.0)
    (1.1386, 1.0)
    """
    return 0.1 * float(np.log(_require_scale(scale))) + 1.0


def attention_factor(method: str, scale: float) -> float:
    """What multiplies each rotated query and key: YaRN's factor for ``"rope_yarn"``, 1 otherwise.

    >>> attention_factor("rope_pi", 4.0), round(attention_factor("rope_yarn", 4.0), 4)
    (1.0, 1.1386)
    """
    method = require_choice("method", method, METHODS)
    return yarn_attention_factor(scale) if method == "rope_yarn" else 1.0


@contextlib.contextmanager
def scaled_rope(model, method: str, scale: float, *, original_length: int):
    """Run a trained RoPE extrapolation model with stretched rates, inside a ``with`` block.

    The model comes from :func:`pe_lib.course.extrapolation.extrapolation_model`
    with ``method="rope"``; its weights are not changed. Call it eagerly
    (``model(tokens)``, as :func:`pe_lib.course.order_classifier.order_accuracy`
    does) inside the block; the original rates come back on leaving it.

    Example:
        >>> import keras
        >>> from pe_lib.course.extrapolation import extrapolation_model
        >>> model = extrapolation_model("rope", train_length=8, depth=8, heads=2)
        >>> tokens = np.ones((1, 8), dtype="int32")
        >>> with scaled_rope(model, "rope", 2.0, original_length=8):
        ...     same = keras.ops.convert_to_numpy(model(tokens))
        >>> bool(np.allclose(same, keras.ops.convert_to_numpy(model(tokens))))
        True
    """
    attention = model.get_layer("attention")
    if getattr(attention, "positions", None) != "rope":
        raise ValueError(f"model must be a RoPE extrapolation model, got {model.name!r}")
    rates = scaled_angle_rates(
        method, attention.key_dim, scale=scale, base=attention.base, original_length=original_length
    )
    factor = attention_factor(method, scale)
    saved = attention._rates
    rotate = attention._rotate
    attention._rates = rates.astype("float32")
    if factor != 1.0:
        attention._rotate = lambda x, steps: rotate(x, steps) * factor
    try:
        yield model
    finally:
        attention._rates = saved
        if factor != 1.0:
            del attention._rotate
