r"""Context extension for RoPE: new angle rates for longer inputs, no retraining.

A model trained with RoPE on sequences of :math:`L` positions has only seen
angles :math:`m\theta_i` with :math:`m < L`. To run it on :math:`sL` positions
(:math:`s > 1`, the *scale*, Hugging Face's ``factor``), each method below
changes the rates :math:`\theta_i = N^{-2i/d}`, and the rotation is applied
as before (:func:`pe_lib.rope.apply_rope` with ``rates=``). Registry names
first, then the peers':

- ``"rope_pi"``, position interpolation (Chen et al., 2023): every rate
  divided by :math:`s` (:func:`interpolation_rates`). Hugging Face
  ``rope_type="linear"``; keras-hub ``scaling_factor``.
- ``"rope_ntk"``, NTK-aware scaling (bloc97, 2023): the base raised to
  :math:`N s^{d/(d-2)}`, fixed once (:func:`ntk_rates`). The fastest pair keeps
  its rate, the slowest is divided by :math:`s`. No peer ships this static
  form; it is ``"rope_dynamic"`` frozen at one length.
- ``"rope_dynamic"``, dynamic NTK (emozilla, 2023): the same base change with
  the scale chosen at run time from the current length :math:`n`,
  :math:`s_n = \max(1,\ s\,n/L - (s - 1))` (:func:`dynamic_ntk_rates`). Hugging
  Face ``rope_type="dynamic"``. (keras-hub's ``rope_type="dynamic"`` divides
  every rate, the fastest included, by :math:`s^{d/(d-2)}`; that is neither.)
- ``"rope_yarn"``, YaRN as its authors' code and Hugging Face's
  ``rope_type="yarn"`` ship it (:func:`yarn_rates`): a ramp *linear in the
  pair index* between the pairs that turn ``beta_fast`` = 32 and
  ``beta_slow`` = 1 times over :math:`L`, rounded outwards to whole pairs
  (``truncate``, on by default), keeps the fast pairs and interpolates the
  slow ones. keras-hub's ``rope_type="yarn"`` (0.32) computes the same:
  its ``truncate`` defaults to True as here, it clips the ramp's ends to
  ``[0, d - 1]`` as here, and its ``truncate=True`` and ``False`` give this
  method's ``truncate=True`` and ``False`` (neither caps the positions).
- ``"rope_yarn_paper"``, YaRN as the paper's equation reads
  (:func:`yarn_paper_rates`): the ramp is linear in the number of turns
  :math:`r_i` itself, between :math:`\alpha = 1` and :math:`\beta = 32`. Both
  agree on which pairs are kept and which fully interpolated; in between the
  rates differ (by a factor of 2.3 for ``d=64, s=8, L=2048``, pair 14).
- ``"rope_llama3"``, Llama 3.1's frequency-dependent scaling
  (:func:`llama3_rates`), Hugging Face ``rope_type="llama3"``: pairs with a
  wavelength shorter than :math:`L/4` (``high_freq_factor``) keep their rate,
  those longer than :math:`L/1` (``low_freq_factor``) are divided by :math:`s`,
  and a ramp linear in the turns joins them. It is the paper's YaRN ramp with
  :math:`\alpha = 1, \beta = 4` and no attention factor.
- ``"rope_longrope"``, LongRoPE (Phi-3's 128k variants, Phi-3.5, Phi-4-mini), Hugging Face
  ``rope_type="longrope"``: a searched factor per pair, ``short_factor`` up
  to the trained length and ``long_factor`` beyond it, and the attention
  factor :math:`\sqrt{1 + \ln s / \ln L}` (:mod:`pe_lib.longrope`).

Both YaRNs also multiply queries and keys each by an *attention factor*, by
default :math:`0.1 \ln s + 1`, so that the logits grow by its square
(:func:`attention_factor`); the shipped form takes Hugging Face's
``attention_factor``, ``mscale`` and ``mscale_all_dim`` (DeepSeek) options.

Rates and factors are float64, computed from the formulas in double
precision (the peers compute them in float32).
"""

from __future__ import annotations

import math

import numpy as np

from pe_lib import longrope
from pe_lib._checks import require_even, require_int, require_positive_float
from pe_lib.frequencies import angle_rates

_ODD_DEPTH = "RoPE rotates the features in pairs"

#: The context-extension methods, by registry name.
SCALINGS = ("rope_pi", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_yarn_paper", "rope_llama3")

#: The methods whose rates are searched, not given by a formula (their reference is :mod:`pe_lib.longrope`).
SEARCHED = ("rope_longrope",)

#: The methods that need the trained context ``original_length``.
NEED_ORIGINAL_LENGTH = ("rope_dynamic", "rope_yarn", "rope_yarn_paper", "rope_llama3", "rope_longrope")

#: The methods whose rates follow the current ``length``.
FOLLOW_LENGTH = ("rope_dynamic", "rope_longrope")

#: The options of the rates of each method, with their defaults.
RATE_OPTIONS = {
    "rope": {},
    "rope_pi": {},
    "rope_ntk": {},
    "rope_dynamic": {},
    "rope_yarn": {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True},
    "rope_yarn_paper": {"alpha": 1.0, "beta": 32.0},
    "rope_llama3": {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "rope_longrope": {"short_factor": None, "long_factor": None},
}

#: The options of the attention factor of each method that has one.
FACTOR_OPTIONS = {"rope_yarn": ("attention_factor", "mscale", "mscale_all_dim"),
                  "rope_longrope": ("attention_factor",)}


def _require_scale(scale) -> float:
    scale = require_positive_float("scale", scale)
    if scale < 1.0:
        raise ValueError(f"scale must be >= 1 (the factor by which the context grows), got {scale!r}")
    return scale


def _require_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return bool(value)


def _require_pair(low_name: str, low, high_name: str, high) -> tuple[float, float]:
    low, high = require_positive_float(low_name, low), require_positive_float(high_name, high)
    if high <= low:
        raise ValueError(f"{high_name} must exceed {low_name}, got {low_name}={low!r} and {high_name}={high!r}")
    return low, high


def _mix(rates: np.ndarray, kept: np.ndarray, scale: float) -> np.ndarray:
    r"""The rates :math:`(1 - \gamma_i)\,\theta_i / s + \gamma_i\,\theta_i` for the kept shares :math:`\gamma_i`."""
    return (1.0 - kept) * rates / scale + kept * rates


def scale_from_lengths(max_length: int, original_length: int) -> float:
    """The scale as the ratio of the new context to the trained one.

    Hugging Face's YaRN takes this ratio when a configuration gives
    ``max_position_embeddings`` and ``original_max_position_embeddings`` but
    no ``factor`` (DeepSeek-V3: 163840 / 4096).

    >>> scale_from_lengths(163840, 4096)
    40.0
    """
    max_length = require_int("max_length", max_length, minimum=1)
    original_length = require_int("original_length", original_length, minimum=1)
    if max_length < original_length:
        raise ValueError(
            f"max_length must be >= original_length, got max_length={max_length} and "
            f"original_length={original_length}"
        )
    return max_length / original_length


# --- position interpolation and NTK-aware scaling ------------------------------------------


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


def dynamic_ntk_scale(length: int, scale: float, original_length: int) -> float:
    r"""The scale dynamic NTK uses at ``length`` positions: :math:`\max(1,\ s\,n/L - (s - 1))`.

    Up to the trained length :math:`L` it is 1 (plain RoPE); beyond it grows
    linearly with :math:`n`, by :math:`s` per :math:`L` positions. This is
    Hugging Face's ``rope_type="dynamic"`` with ``factor`` :math:`s` and
    ``max_position_embeddings`` :math:`L`, where :math:`n` is the largest
    position plus one.

    >>> dynamic_ntk_scale(1000, 2.0, 4096), dynamic_ntk_scale(8192, 2.0, 4096)
    (1.0, 3.0)
    """
    length = require_int("length", length, minimum=1)
    scale = _require_scale(scale)
    original_length = require_int("original_length", original_length, minimum=1)
    if length <= original_length:
        return 1.0
    return scale * length / original_length - (scale - 1.0)


def dynamic_ntk_rates(depth: int, scale: float, original_length: int, length: int, *,
                      base: float = 10000.0) -> np.ndarray:
    r"""Dynamic NTK: :func:`ntk_rates` at the scale :func:`dynamic_ntk_scale` of ``length``.

    At the trained length the rates are plain RoPE's; at twice that length,
    with ``scale`` 1, they are NTK-aware scaling's for :math:`s = 2`:

    >>> dynamic_ntk_rates(4, 1.0, 16, 16) * [1, 100]
    array([1., 1.])
    >>> dynamic_ntk_rates(4, 1.0, 16, 32) * [1, 200]
    array([1., 1.])
    """
    return ntk_rates(depth, dynamic_ntk_scale(length, scale, original_length), base=base)


# --- YaRN as shipped ---------------------------------------------------------------------


def yarn_correction_dim(turns: float, depth: int, original_length: int, *, base: float = 10000.0) -> float:
    r"""The pair index, as a real number, of the pair that turns ``turns`` times over :math:`L`.

    Pair :math:`i` turns :math:`L N^{-2i/d} / 2\pi` times, so
    :math:`i = d \ln\big(L / (2\pi r)\big) / (2 \ln N)`: the YaRN code's
    ``find_correction_dim``.

    >>> round(yarn_correction_dim(32, 128, 4096), 4), round(yarn_correction_dim(1, 128, 4096), 4)
    (20.9445, 45.0269)
    """
    turns = require_positive_float("turns", turns)
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    original_length = require_int("original_length", original_length, minimum=1)
    base = require_positive_float("base", base)
    if base == 1.0:
        raise ValueError("base must differ from 1 (every pair would turn at the same rate), got 1.0")
    return depth * math.log(original_length / (2.0 * math.pi * turns)) / (2.0 * math.log(base))


def yarn_correction_range(depth: int, original_length: int, *, base: float = 10000.0,
                          beta_fast: float = 32.0, beta_slow: float = 1.0,
                          truncate: bool = True) -> tuple[float, float]:
    r"""The pair indices where the shipped YaRN ramp starts and ends.

    The start is the pair that turns ``beta_fast`` times over :math:`L`, the
    end the pair that turns ``beta_slow`` times (:func:`yarn_correction_dim`).
    With ``truncate`` (Hugging Face's default) the start is rounded down and
    the end up, to whole pairs, as in the YaRN authors' code; without it they
    stay real numbers. Both are then clipped to ``[0, depth - 1]``, as the
    peers do.

    >>> yarn_correction_range(128, 4096)
    (20.0, 46.0)
    >>> [round(end, 4) for end in yarn_correction_range(128, 4096, truncate=False)]
    [20.9445, 45.0269]
    """
    beta_slow, beta_fast = _require_pair("beta_slow", beta_slow, "beta_fast", beta_fast)
    truncate = _require_bool("truncate", truncate)
    low = yarn_correction_dim(beta_fast, depth, original_length, base=base)
    high = yarn_correction_dim(beta_slow, depth, original_length, base=base)
    if truncate:
        low, high = float(math.floor(low)), float(math.ceil(high))
    return max(low, 0.0), min(high, float(depth - 1))


def yarn_pair_ramp(depth: int, original_length: int, *, base: float = 10000.0,
                   beta_fast: float = 32.0, beta_slow: float = 1.0, truncate: bool = True) -> np.ndarray:
    r"""The share :math:`\gamma_i` of its own rate that each pair keeps under the shipped YaRN.

    :math:`\gamma_i = 1 - \operatorname{clip}\big((i - a) / (b - a), 0, 1\big)`
    with :math:`(a, b)` from :func:`yarn_correction_range` (and :math:`b`
    moved to :math:`a + 0.001` if they meet, as the peers do): 1 up to pair
    :math:`a`, 0 from pair :math:`b` on, linear in :math:`i` between.

    >>> yarn_pair_ramp(8, 2048)
    array([1. , 1. , 0.5, 0. ])
    """
    low, high = yarn_correction_range(depth, original_length, base=base, beta_fast=beta_fast,
                                      beta_slow=beta_slow, truncate=truncate)
    if high == low:
        high += 0.001
    pairs = np.arange(depth // 2, dtype=np.float64)
    return 1.0 - np.clip((pairs - low) / (high - low), 0.0, 1.0)


def yarn_rates(depth: int, scale: float, original_length: int, *, base: float = 10000.0,
               beta_fast: float = 32.0, beta_slow: float = 1.0, truncate: bool = True) -> np.ndarray:
    r"""YaRN's rates as shipped: :math:`(1 - \gamma_i)\,\theta_i / s + \gamma_i\,\theta_i`.

    :math:`\gamma_i` is :func:`yarn_pair_ramp`, linear in the pair index.
    This is what the YaRN authors' code and Hugging Face's
    ``rope_type="yarn"`` compute (``beta_fast``, ``beta_slow`` and ``truncate``
    are theirs). With :math:`L = 2048` and :math:`d = 8` the ramp runs from
    pair 1 to pair 3:

    >>> (yarn_rates(8, 4.0, 2048) / angle_rates(8)).round(3)
    array([1.   , 1.   , 0.625, 0.25 ])
    """
    scale = _require_scale(scale)
    kept = yarn_pair_ramp(depth, original_length, base=base, beta_fast=beta_fast,
                          beta_slow=beta_slow, truncate=truncate)
    return _mix(angle_rates(depth, base=base), kept, scale)


# --- YaRN as the paper writes it, and Llama 3 ----------------------------------------------


def yarn_turns(depth: int, original_length: int, *, base: float = 10000.0) -> np.ndarray:
    r"""How many turns each pair makes over the original context: :math:`r_i = L / \lambda_i`.

    >>> yarn_turns(8, 2048).round(2)
    array([325.95,  32.59,   3.26,   0.33])
    """
    depth = require_even("depth", depth, reason=_ODD_DEPTH)
    original_length = require_int("original_length", original_length, minimum=1)
    return original_length * angle_rates(depth, base=base) / (2.0 * math.pi)


def yarn_ramp(turns, alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    r"""The paper's :math:`\gamma(r)`: 0 below ``alpha`` turns, 1 above ``beta``, linear between.

    A pair with :math:`\gamma = 1` keeps its rate, one with :math:`\gamma = 0`
    is interpolated fully. The paper's :math:`\alpha = 1`, :math:`\beta = 32`
    are the values of the shipped YaRN's ``beta_slow`` and ``beta_fast``.

    >>> yarn_ramp([0.5, 1.0, 16.5, 32.0, 100.0])
    array([0. , 0. , 0.5, 1. , 1. ])
    >>> yarn_ramp(yarn_turns(8, 2048)).round(3)
    array([1.   , 1.   , 0.073, 0.   ])
    """
    alpha, beta = _require_pair("alpha", alpha, "beta", beta)
    return np.clip((np.asarray(turns, dtype=np.float64) - alpha) / (beta - alpha), 0.0, 1.0)


def yarn_paper_rates(depth: int, scale: float, original_length: int, *, base: float = 10000.0,
                     alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    r"""YaRN's rates as the paper's equation reads: the ramp :func:`yarn_ramp` of the turns.

    The same pairs are kept and fully interpolated as by :func:`yarn_rates`;
    in between the ramp follows the turns :math:`r_i`, which fall
    geometrically with :math:`i`, instead of the pair index:

    >>> (yarn_paper_rates(8, 4.0, 2048) / angle_rates(8)).round(3)
    array([1.   , 1.   , 0.305, 0.25 ])
    """
    scale = _require_scale(scale)
    kept = yarn_ramp(yarn_turns(depth, original_length, base=base), alpha, beta)
    return _mix(angle_rates(depth, base=base), kept, scale)


def llama3_rates(depth: int, scale: float, original_length: int, *, base: float = 10000.0,
                 low_freq_factor: float = 1.0, high_freq_factor: float = 4.0) -> np.ndarray:
    r"""Llama 3.1's rates: three bands of wavelengths :math:`\lambda_i = 2\pi/\theta_i`.

    - :math:`\lambda_i < L / h` (``high_freq_factor`` :math:`h`): kept;
    - :math:`\lambda_i > L / \ell` (``low_freq_factor`` :math:`\ell`): divided by :math:`s`;
    - between: :math:`(1 - \gamma_i)\,\theta_i/s + \gamma_i\,\theta_i` with
      :math:`\gamma_i = (L/\lambda_i - \ell) / (h - \ell)`, linear in the turns.

    Hugging Face ``rope_type="llama3"``: ``factor`` is ``scale``,
    ``original_max_position_embeddings`` is ``original_length``. Llama-3.1-8B
    uses ``scale=8``, ``original_length=8192``, ``base=500000``, :math:`\ell = 1`,
    :math:`h = 4`.

    >>> (llama3_rates(8, 8.0, 64) / angle_rates(8)).round(4)
    array([1.    , 0.1304, 0.125 , 0.125 ])

    With :math:`\ell = h` there is no ramp: Llama 4 Scout (:math:`\ell = h = 1`,
    ``scale=16``, ``original_length=8192``) keeps the pairs that turn more
    than :math:`h` times and divides the others, as Hugging Face computes it
    (which warns, and gives NaN for a pair turning exactly :math:`h` times;
    here such a pair is divided):

    >>> (llama3_rates(8, 16.0, 64, low_freq_factor=1.0, high_freq_factor=1.0) / angle_rates(8)).tolist()
    [1.0, 1.0, 0.0625, 0.0625]
    """
    scale = _require_scale(scale)
    turns = yarn_turns(depth, original_length, base=base)
    if low_freq_factor == high_freq_factor:
        high_freq_factor = require_positive_float("high_freq_factor", high_freq_factor)
        return _mix(angle_rates(depth, base=base), (turns > high_freq_factor).astype(np.float64), scale)
    low_freq_factor, high_freq_factor = _require_pair(
        "low_freq_factor", low_freq_factor, "high_freq_factor", high_freq_factor
    )
    kept = yarn_ramp(turns, low_freq_factor, high_freq_factor)
    return _mix(angle_rates(depth, base=base), kept, scale)


# --- the attention factor ----------------------------------------------------------------


def yarn_attention_factor(scale: float, *, mscale: float | None = None,
                          mscale_all_dim: float | None = None) -> float:
    r"""YaRN's factor on queries and keys: :math:`0.1 \ln s + 1` (1 when ``scale`` is 1).

    With DeepSeek's ``mscale`` :math:`a` and ``mscale_all_dim`` :math:`b`
    (both or neither) it is :math:`(0.1\,a \ln s + 1) / (0.1\,b \ln s + 1)`,
    as in Hugging Face. Each of queries and keys is multiplied by it, so the
    logits grow by its square. DeepSeek-V3 sets :math:`a = b = 1`, so this
    factor on queries and keys is 1, but its temperature is not gone: Hugging
    Face's DeepSeek attention multiplies the softmax scale by
    :math:`(0.1\,b \ln s + 1)^2`, which for :math:`s = 40` is
    :math:`(1 + 0.1 \ln 40)^2 \approx 1.874` (:func:`yarn_softmax_factor`).

    >>> round(yarn_attention_factor(4.0), 4), yarn_attention_factor(40.0, mscale=1.0, mscale_all_dim=1.0)
    (1.1386, 1.0)
    """
    scale = _require_scale(scale)
    if (mscale is None) != (mscale_all_dim is None):
        raise ValueError(
            f"mscale and mscale_all_dim are used together (a ratio), got mscale={mscale!r} "
            f"and mscale_all_dim={mscale_all_dim!r}"
        )

    def magnitude(weight: float) -> float:
        return 1.0 if scale <= 1.0 else 0.1 * weight * math.log(scale) + 1.0

    if mscale is None:
        return magnitude(1.0)
    mscale = require_positive_float("mscale", mscale)
    mscale_all_dim = require_positive_float("mscale_all_dim", mscale_all_dim)
    return magnitude(mscale) / magnitude(mscale_all_dim)


def yarn_softmax_factor(scale: float, mscale_all_dim: float) -> float:
    r"""DeepSeek's YaRN temperature on the softmax scale: :math:`(0.1\,b \ln s + 1)^2`.

    Hugging Face's ``DeepseekV3Attention`` multiplies its
    :math:`1/\sqrt{d}` by this when ``rope_scaling`` has ``mscale_all_dim``
    :math:`b` (1 when :math:`s \le 1` or :math:`b = 0`).

    >>> round(yarn_softmax_factor(40.0, 1.0), 4)
    1.8739
    """
    scale = _require_scale(scale)
    if isinstance(mscale_all_dim, bool) or not isinstance(mscale_all_dim, (int, float)) or mscale_all_dim < 0:
        raise ValueError(f"mscale_all_dim must be a number >= 0, got {mscale_all_dim!r}")
    if scale <= 1.0 or mscale_all_dim == 0:
        return 1.0
    return (0.1 * mscale_all_dim * math.log(scale) + 1.0) ** 2


def attention_factor(method: str, scale: float = 1.0, *, attention_factor: float | None = None,
                     mscale: float | None = None, mscale_all_dim: float | None = None,
                     original_length: int | None = None) -> float:
    """What multiplies each rotated query and key under ``method``.

    Both YaRNs: :func:`yarn_attention_factor`; ``"rope_longrope"``:
    :func:`pe_lib.longrope.longrope_attention_factor`, which needs
    ``original_length``. For ``"rope_yarn"`` and ``"rope_longrope"`` an
    explicit ``attention_factor`` replaces it, as in Hugging Face. Every other
    method: 1.

    >>> round(attention_factor("rope_longrope", 32.0, original_length=4096), 4)
    1.1902

    >>> attention_factor("rope_pi", 4.0), round(attention_factor("rope_yarn", 4.0), 4)
    (1.0, 1.1386)
    >>> attention_factor("rope_yarn", 4.0, attention_factor=1.25)
    1.25
    """
    _require_method(method)
    given = {"attention_factor": attention_factor, "mscale": mscale, "mscale_all_dim": mscale_all_dim}
    _refuse_unused(method, {name: value for name, value in given.items() if value is not None},
                   FACTOR_OPTIONS.get(method, ()))
    if method in ("rope_yarn", "rope_longrope") and attention_factor is not None:
        return require_positive_float("attention_factor", attention_factor)
    if method == "rope_longrope":
        if original_length is None:
            raise ValueError("original_length is required for method='rope_longrope' (its attention factor)")
        _require_scale(scale)
        return longrope.longrope_attention_factor(scale, original_length)
    if method in ("rope_yarn", "rope_yarn_paper"):
        return yarn_attention_factor(scale, mscale=mscale, mscale_all_dim=mscale_all_dim)
    _require_scale(scale)
    return 1.0


# --- one entry point ---------------------------------------------------------------------


def _require_method(method) -> str:
    if method not in ("rope", *SCALINGS, *SEARCHED):
        raise ValueError(
            f"method must be one of 'rope', {', '.join(map(repr, SCALINGS + SEARCHED))}; got {method!r}")
    return method


def split_options(method: str, options: dict) -> tuple[dict, dict]:
    """``options`` split into those of the rates and those of the attention factor of ``method``.

    An option that ``method`` does not use is refused, naming it.

    >>> split_options("rope_yarn", {"beta_fast": 16.0, "mscale": 1.0, "mscale_all_dim": 1.0})
    ({'beta_fast': 16.0}, {'mscale': 1.0, 'mscale_all_dim': 1.0})
    >>> split_options("rope_pi", {"truncate": False})
    Traceback (most recent call last):
    ...
    ValueError: truncate is not an option of method='rope_pi' (its options: none)
    """
    method = _require_method(method)
    allowed = (*RATE_OPTIONS[method], *FACTOR_OPTIONS.get(method, ()))
    _refuse_unused(method, options, allowed)
    rates = {name: value for name, value in options.items() if name in RATE_OPTIONS[method]}
    return rates, {name: value for name, value in options.items() if name not in rates}


def _refuse_unused(method: str, given: dict, allowed) -> None:
    unused = sorted(set(given) - set(allowed))
    if unused:
        raise ValueError(
            f"{', '.join(unused)} {'is' if len(unused) == 1 else 'are'} not an option of method={method!r} "
            f"(its options: {', '.join(allowed) or 'none'})"
        )


def scaled_rates(method: str, depth: int, *, scale: float = 1.0, original_length: int | None = None,
                 base: float = 10000.0, length: int | None = None, **options) -> np.ndarray:
    """The rates of RoPE (``"rope"``) or of one of its :data:`SCALINGS`.

    Args:
        method: ``"rope"`` or a name from :data:`SCALINGS`.
        depth: the number of rotated features, even.
        scale: the factor :math:`s \\ge 1` (Hugging Face's ``factor``);
            ``"rope"`` ignores it.
        original_length: the trained context :math:`L`, for the methods of
            :data:`NEED_ORIGINAL_LENGTH`.
        base: the base :math:`N`.
        length: the current length :math:`n`, for ``"rope_dynamic"`` and
            ``"rope_longrope"`` only (which factors LongRoPE uses: the short
            ones when it is left out, as in Hugging Face).
        **options: the method's options, :data:`RATE_OPTIONS` (e.g.
            ``beta_fast`` for ``"rope_yarn"``); any other is refused.

    >>> scaled_rates("rope_pi", 4, scale=2.0)
    array([0.5  , 0.005])
    >>> rates = scaled_rates("rope_yarn", 8, scale=4.0, original_length=2048, beta_fast=64.0)
    >>> rates / angle_rates(8)
    array([1.  , 0.75, 0.5 , 0.25])
    """
    method = _require_method(method)
    _refuse_unused(method, options, RATE_OPTIONS[method])
    if length is not None and method not in FOLLOW_LENGTH:
        raise ValueError(
            f"length is used by methods {', '.join(map(repr, FOLLOW_LENGTH))} only, "
            f"got length={length!r} for {method!r}"
        )
    if method in NEED_ORIGINAL_LENGTH and original_length is None:
        raise ValueError(f"original_length is required for method={method!r} (the trained context)")
    if method == "rope":
        _require_scale(scale)
        return angle_rates(require_even("depth", depth, reason=_ODD_DEPTH), base=base)
    if method == "rope_pi":
        return interpolation_rates(depth, scale, base=base)
    if method == "rope_ntk":
        return ntk_rates(depth, scale, base=base)
    if method == "rope_dynamic":
        if length is None:
            raise ValueError("length is required for method='rope_dynamic' (the scale follows it)")
        return dynamic_ntk_rates(depth, scale, original_length, length, base=base)
    if method == "rope_longrope":
        # As Hugging Face: no length is the short set; an absent set of factors is all ones.
        _require_scale(scale)
        pairs = require_even("depth", depth, reason=_ODD_DEPTH) // 2
        factors = {name: np.ones(pairs) if options.get(name) is None else options[name]
                   for name in ("short_factor", "long_factor")}
        return longrope.longrope_rates(depth, factors["short_factor"], factors["long_factor"], original_length,
                                       length=original_length if length is None else length, base=base)
    function = {"rope_yarn": yarn_rates, "rope_yarn_paper": yarn_paper_rates, "rope_llama3": llama3_rates}[method]
    return function(depth, scale, original_length, base=base, **options)
