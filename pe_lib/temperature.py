r"""Attention temperature: a factor on the queries that grows with the position.

Softmax attention over :math:`n` keys spreads its weight thinner as
:math:`n` grows. Several long-context models counter this by multiplying each
query, and so its logits, by a factor :math:`\tau_m \ge 1` that depends on the
query's position :math:`m` (or by a constant, for a fixed context):

- ``"llama4"``, Llama 4's ``attn_temperature_tuning``, used in its layers
  without positions (NoPE) only:
  :math:`\tau_m = 1 + a \ln\!\big(1 + \lfloor (m + 1) / F \rfloor\big)`,
  with ``attn_scale`` :math:`a = 0.1` and ``floor_scale`` :math:`F = 8192`:
  1 for the first :math:`F - 1` positions, then a step every :math:`F`.
- ``"log_length"``, log-n scaling (Chiang and Cholak, 2022; Qwen's
  ``use_logn_attn``): :math:`\tau_m = \log_L (m + 1)` once :math:`m + 1 > L`
  (the trained context), 1 before.
- ``"constant"``: one factor for every position; YaRN's attention factor
  :math:`f` on queries and keys is the constant :math:`f^2` on the logits
  (:func:`pe_lib.rope_scaling.attention_factor`), and DeepSeek-V3's
  softmax scale is multiplied by the constant
  :math:`(0.1 \ln 40 + 1)^2`.

The integer part of ``"llama4"`` is exact (integer floor division); the
logarithms are float64.

Every kind takes one more option, ``index``: which number of a query the
attention layer passes as :math:`m` (:class:`pe_lib.layers.PositionalSelfAttention`).
``"position"`` (the default) is its position, which starts again in each
packed document and skips pads; ``"cache_position"`` is its step in the row,
pads and earlier documents counted, plus the steps already in the cache, as
Hugging Face's ``Llama4TextAttention`` indexes it (``cache_position``,
``arange(T) + past_seen_tokens``). On one document without pads they are
the same numbers; in a packed row the first gives each document the factors
it would have alone, the second those of its place in the row.

>>> query_temperature("llama4", [0, 8190, 8191, 16383]).round(4).tolist()
[1.0, 1.0, 1.0693, 1.1099]
>>> query_temperature("log_length", [0, 2047, 4095], trained_length=2048).round(4).tolist()
[1.0, 1.0, 1.0909]
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_choice, require_int, require_positive_float

#: What a temperature is indexed by (its option ``index``): see the module's text.
INDEXES = ("position", "cache_position")

#: The kinds of temperature, with their options and defaults (``index`` besides, every kind).
TEMPERATURES = {
    "llama4": {"floor_scale": 8192, "attn_scale": 0.1},
    "log_length": {"trained_length": None},
    "constant": {"factor": None},
}


def _positions(positions) -> np.ndarray:
    array = np.asarray(positions)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"positions must be integers, got {positions!r} (dtype {array.dtype})")
    if np.any(array < 0):
        raise ValueError(f"positions must be >= 0, got {positions!r}")
    return array.astype(np.int64)


def temperature_options(kind: str, options: dict) -> dict:
    """``options`` of the temperature ``kind`` with its defaults filled in; unknown or missing ones refused.

    >>> temperature_options("llama4", {})
    {'floor_scale': 8192, 'attn_scale': 0.1, 'index': 'position'}
    >>> temperature_options("log_length", {})
    Traceback (most recent call last):
    ...
    ValueError: trained_length is required for the temperature kind='log_length'
    """
    kind = require_choice("kind", kind, tuple(TEMPERATURES))
    unknown = sorted(set(options) - set(TEMPERATURES[kind]) - {"index"})
    if unknown:
        raise ValueError(
            f"{', '.join(unknown)} not an option of the temperature kind={kind!r} "
            f"(its options: {', '.join(TEMPERATURES[kind])}, index)"
        )
    filled = {**TEMPERATURES[kind], "index": "position", **options}
    filled["index"] = require_choice("index", filled["index"], INDEXES)
    for name, value in filled.items():
        if value is None:
            raise ValueError(f"{name} is required for the temperature kind={kind!r}")
    if kind == "llama4":
        filled["floor_scale"] = require_int("floor_scale", filled["floor_scale"], minimum=1)
        filled["attn_scale"] = require_positive_float("attn_scale", filled["attn_scale"])
    elif kind == "log_length":
        filled["trained_length"] = require_int("trained_length", filled["trained_length"], minimum=2)
    else:
        filled["factor"] = require_positive_float("factor", filled["factor"])
    return filled


def query_temperature(kind: str, positions, **options) -> np.ndarray:
    r"""The factor :math:`\tau_m` on the query at each position :math:`m`, in float64.

    Args:
        kind: one of :data:`TEMPERATURES`.
        positions: integer positions :math:`m \ge 0`, of any shape.
        **options: the kind's options (:data:`TEMPERATURES`), Hugging Face's
            names for ``"llama4"``; ``index`` is accepted and changes nothing
            here (the caller chooses the positions it passes).

    Returns:
        A float64 array of the shape of ``positions``.

    >>> query_temperature("constant", [0, 5], factor=1.25).tolist()
    [1.25, 1.25]
    """
    options = temperature_options(kind, options)
    positions = _positions(positions)
    if kind == "llama4":
        steps = (positions + 1) // options["floor_scale"]
        return 1.0 + options["attn_scale"] * np.log1p(steps.astype(np.float64))
    if kind == "log_length":
        trained = options["trained_length"]
        count = (positions + 1).astype(np.float64)
        return np.where(positions + 1 > trained, np.log(count) / np.log(float(trained)), 1.0)
    return np.full(positions.shape, options["factor"])
