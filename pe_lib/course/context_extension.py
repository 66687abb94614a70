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

The rates are computed once, in :mod:`pe_lib.rope_scaling`; this module
gives the chapter its vocabulary and :func:`scaled_rope`, which runs a
trained model with the rates of another method.
"""

from __future__ import annotations

import contextlib

import numpy as np

from pe_lib._checks import require_choice
from pe_lib.methods import method_names
from pe_lib.rope import rotation_tables
# yarn_ramp and yarn_attention_factor are imported for the chapter, which takes them from here.
from pe_lib.rope_scaling import scaled_rates, yarn_attention_factor, yarn_ramp  # noqa: F401

#: Plain RoPE and its three context-extension methods, from the registry.
METHODS = method_names("queries and keys")


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

    :func:`pe_lib.rope_scaling.scaled_rates`, with the method checked against
    :data:`METHODS`.

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

        >>> from pe_lib.frequencies import angle_rates
        >>> rates = scaled_angle_rates("rope_ntk", 8, scale=4.0)
        >>> (rates / angle_rates(8)).round(4)
        array([1.    , 0.63  , 0.3969, 0.25  ])
    """
    method = require_choice("method", method, METHODS)
    return scaled_rates(method, depth, scale=scale, original_length=original_length, base=base,
                        alpha=alpha, beta=beta)


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
    with ``method="rope"``; its weights are not changed. Its
    :class:`~pe_lib.layers.RotaryEmbedding` gets the rates of ``method`` for the
    duration of the block. Call the model eagerly (``model(tokens)``, as
    :func:`pe_lib.course.order_classifier.order_accuracy` does) inside the
    block; the original rates come back on leaving it.
    :func:`pe_lib.course.extrapolation.evaluate_with_scaling` does the same
    by building a second model with the trained weights.

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
    if getattr(attention, "method", None) != "rope":
        raise ValueError(f"model must be a RoPE extrapolation model, got {model.name!r}")
    rotary = attention.positions
    if not rotary.built:  # build it now, or building at the first call would undo the swap
        rotary.build((None, attention.heads, None, attention.key_dim))
    rates = scaled_angle_rates(
        method, attention.key_dim, scale=scale, base=attention.base, original_length=original_length
    )
    saved = rotary.rates, rotary._tables, rotary.attention_factor
    rotary.rates, rotary._tables = rates, rotation_tables(rates)
    rotary.attention_factor = attention_factor(method, scale)
    try:
        yield model
    finally:
        rotary.rates, rotary._tables, rotary.attention_factor = saved
