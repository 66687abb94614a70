"""Every option of every method in the registry, exercised away from its default.

:func:`declared_options` reads the options from the code itself: each keyword
with a default of each registry entry's NumPy reference and Keras layer (its
constructor and its call; for :class:`~pe_lib.layers.RotaryEmbedding`, the
options the entry's method takes), and of each attention option's reference.
Each must have a check in :data:`CHECKS`, or a reason in
:data:`NOT_EXERCISED` for why it has none, so an option added later without a
test fails :func:`test_every_declared_option_has_a_check`.

Each check sets the option to a value other than its default, compares the
result with an independent value (mpmath, exact integers, a hand value, or
NumPy float64 written out from the definition), and asserts that the default
gives something else: the option is seen to act, the way it says.
"""

from __future__ import annotations

import inspect
import math

import keras
import mpmath
import numpy as np
import pytest

import pe_lib
from float_checks import TRANSCENDENTAL_ULP, assert_within_ulp
from exact_values import exact_alibi_slopes, exact_angle_rates, exact_t5_bucket, reference_attention
from pe_lib import rope_scaling
from pe_lib.alibi import alibi_block
from pe_lib.layer_schemes import LayerPositions
from pe_lib.layers import (
    AlibiBias,
    LearnedPositionEmbedding,
    PositionalEncoding,
    PositionalSelfAttention,
    RotaryEmbedding,
    ShawRelativePositions,
    T5RelativeBias,
)
from pe_lib.longrope import longrope_rates
from pe_lib.methods import ATTENTION_OPTIONS, METHODS
from pe_lib.rope import apply_rope, rotary_depth
from pe_lib.sinks import softmax_with_sink, window_mask
from pe_lib.t5 import relative_position_bucket
from pe_lib.temperature import TEMPERATURES, query_temperature

to_numpy = keras.ops.convert_to_numpy

#: What a ``RotaryEmbedding`` takes for every method of the RoPE family.
ROTARY_COMMON = ("base", "layout", "sequence_axis", "feature_axis", "rotary_fraction")
#: ... and for every context-extension method (the scale, or the lengths it is the ratio of).
ROTARY_SCALED = ("scale", "max_length", "original_length")


def _defaulted(function, skip=()) -> list[str]:
    return [name for name, parameter in inspect.signature(function).parameters.items()
            if parameter.default is not inspect.Parameter.empty and name not in skip]


def declared_options() -> set[tuple[str, str, str]]:
    """``(entry, where, option)`` for every option with a default in the registry."""
    found = set()
    for name, entry in METHODS.items():
        if entry.reference is not None:
            found |= {(name, "reference", option) for option in _defaulted(entry.reference)}
        if entry.layer is None:
            continue
        if entry.layer is RotaryEmbedding:
            options = [*ROTARY_COMMON, *(ROTARY_SCALED if name != "rope" else ()),
                       *rope_scaling.RATE_OPTIONS[name], *rope_scaling.FACTOR_OPTIONS.get(name, ())]
            calls = ["start_index", "positions"] + (["length"] if name in rope_scaling.FOLLOW_LENGTH else [])
        else:
            options = _defaulted(entry.layer.__init__, skip=("self",))
            calls = _defaulted(entry.layer.call, skip=("self",))
        found |= {(name, "layer", option) for option in options}
        found |= {(name, "call", option) for option in calls}
    for name, option in ATTENTION_OPTIONS.items():
        reference = option.reference
        if inspect.isclass(reference):
            found |= {(name, "reference", field.name) for field in __import__("dataclasses").fields(reference)
                      if field.name != "method"}
        else:
            found |= {(name, "reference", argument) for argument in _defaulted(reference)}
        if name == "temperature":
            found |= {(name, kind, argument) for kind, arguments in TEMPERATURES.items() for argument in arguments}
    return found


#: Options no check here sets, each with the reason; none so far.
NOT_EXERCISED: dict[tuple[str, str, str], str] = {}

CHECKS: dict[tuple[str, str, str], object] = {}


def check(*keys):
    def register(function):
        for key in keys:
            assert key not in CHECKS, key
            CHECKS[key] = function
        return function
    return register


def assert_moved(changed, default, bound, what):
    """The option acts: the result with it differs from the default's by more than the bound."""
    gap = np.max(np.abs(np.asarray(changed, np.float64) - np.asarray(default, np.float64)))
    assert gap > 10 * np.max(bound), f"{what}: the option changes nothing measurable ({gap:.3g})"


# --- exact values ---------------------------------------------------------------------------

mpmath.mp.dps = 40


def exact_rates(method, depth, *, base=10000.0, scale=1.0, original_length=None, length=None, **options):
    """The rates of ``method`` from their definitions (the papers and Hugging Face), in mpmath."""
    theta = exact_angle_rates(depth, base)
    s = mpmath.mpf(scale)
    two_pi = 2 * mpmath.pi
    if method == "rope":
        return theta
    if method == "rope_pi":
        return [t / s for t in theta]
    if method == "rope_ntk":
        return exact_angle_rates(depth, mpmath.mpf(base) * s ** (mpmath.mpf(depth) / (depth - 2)))
    if method == "rope_dynamic":
        if length <= original_length:
            return theta
        grown = s * length / original_length - (s - 1)
        return exact_angle_rates(depth, mpmath.mpf(base) * grown ** (mpmath.mpf(depth) / (depth - 2)))
    if method == "rope_longrope":
        factors = options["long_factor"] if length > original_length else options["short_factor"]
        return [t / mpmath.mpf(f) for t, f in zip(theta, factors)]
    if method == "rope_yarn":
        fast, slow = options.get("beta_fast", 32.0), options.get("beta_slow", 1.0)

        def dim(turns):  # the pair index that makes `turns` turns over the trained context
            return depth * mpmath.log(original_length / (turns * two_pi)) / (2 * mpmath.log(base))

        low, high = dim(fast), dim(slow)
        if options.get("truncate", True):
            low, high = mpmath.floor(low), mpmath.ceil(high)
        low, high = max(low, 0), min(high, depth - 1)
        high = high + mpmath.mpf("0.001") if high == low else high
        kept = [1 - min(max((i - low) / (high - low), 0), 1) for i in range(depth // 2)]
    elif method == "rope_yarn_paper":
        alpha, beta = options.get("alpha", 1.0), options.get("beta", 32.0)
        kept = [min(max((original_length * t / two_pi - alpha) / (beta - alpha), 0), 1) for t in theta]
    elif method == "rope_llama3":
        low_factor, high_factor = options.get("low_freq_factor", 1.0), options.get("high_freq_factor", 4.0)
        kept = []
        for t in theta:
            wavelength = two_pi / t
            if wavelength < original_length / high_factor:
                kept.append(1)
            elif wavelength > original_length / low_factor:
                kept.append(0)
            else:
                kept.append((original_length / wavelength - low_factor) / (high_factor - low_factor))
    else:
        raise ValueError(method)
    return [(1 - g) * t / s + g * t for g, t in zip(kept, theta)]


def exact_factor(method, scale, original_length, **options):
    """What multiplies rotated queries and keys: YaRN's and LongRoPE's factors, from their papers."""
    if options.get("attention_factor") is not None:
        return mpmath.mpf(options["attention_factor"])
    s = mpmath.mpf(scale)
    if method in ("rope_yarn", "rope_yarn_paper") and s > 1:
        if "mscale" in options:
            return (options["mscale"] * mpmath.log(s) / 10 + 1) / (options["mscale_all_dim"] * mpmath.log(s) / 10 + 1)
        return mpmath.log(s) / 10 + 1
    if method == "rope_longrope" and s > 1:
        return mpmath.sqrt(1 + mpmath.log(s) / mpmath.log(original_length))
    return mpmath.mpf(1)


def exact_rotation(x, positions, rates, *, layout="half-split", factor=1):
    """Rotate the last axis of ``x`` (steps, depth): the first 2 * len(rates) features, pair by pair."""
    x = np.asarray(x, np.float64)
    out = x.copy()
    half = len(rates)
    for row, p in enumerate(positions):
        for i, rate in enumerate(rates):
            angle = mpmath.mpf(int(p)) * rate
            c, s = mpmath.cos(angle), mpmath.sin(angle)
            a, b = (i, i + half) if layout == "half-split" else (2 * i, 2 * i + 1)
            xa, xb = mpmath.mpf(x[row, a]), mpmath.mpf(x[row, b])
            out[row, a], out[row, b] = float(factor * (xa * c - xb * s)), float(factor * (xa * s + xb * c))
    return out


def rotation_bound(positions, rates) -> float:
    """A float64 rotation at angles up to A: the angle off by a few steps of A, cos and sin by a few ulp."""
    largest = max(abs(int(p)) for p in positions) * float(max(rates)) + 1
    return 64 * largest * 2.0**-52


# --- the RoPE family: each layer option, against mpmath ----------------------------------------

DEPTH = 16
#: Per method: the layer's settings the checks start from, and the trained context.
ROPE_SETTINGS = {
    "rope": {},
    "rope_pi": {"scale": 4.0},
    "rope_ntk": {"scale": 4.0},
    "rope_dynamic": {"scale": 4.0, "original_length": 16},
    "rope_yarn": {"scale": 4.0, "original_length": 4096},
    "rope_yarn_paper": {"scale": 4.0, "original_length": 4096},
    "rope_llama3": {"scale": 4.0, "original_length": 4096},
    "rope_longrope": {"scale": 4.0, "original_length": 16, "short_factor": [1.0] * 8,
                      "long_factor": [1.0 + i / 2 for i in range(8)]},
}
#: A value other than the default for each option.
ROPE_VALUES = {
    "base": 500.0, "layout": "interleaved", "rotary_fraction": 0.5, "scale": 2.5,
    "beta_fast": 16.0, "beta_slow": 4.0, "truncate": False, "attention_factor": 1.25,
    "mscale": 2.0, "mscale_all_dim": 1.0, "alpha": 4.0, "beta": 64.0,
    "low_freq_factor": 0.5, "high_freq_factor": 8.0,
    "short_factor": [1.0 + i / 4 for i in range(8)], "long_factor": [2.0] * 8,
}
STEPS = 40


def rope_case(method, **changes):
    """(the layer's output, the exact rotation, the bound) for settings ``changes`` over ROPE_SETTINGS."""
    settings = {k: v for k, v in {**ROPE_SETTINGS[method], **changes}.items() if v is not None}
    layer_settings = {k: v for k, v in settings.items() if not k.startswith("_")}
    positions = settings.pop("_positions", np.arange(STEPS))
    length = settings.pop("_length", int(np.max(positions)) + 1)
    x = np.random.default_rng(5).normal(size=(1, len(positions), DEPTH))
    layer = RotaryEmbedding(method, dtype="float64", **layer_settings)
    call = {"positions": np.asarray(positions)} if changes.get("_positions") is not None else {}
    if changes.get("_length") is not None:
        call["length"] = length
    out = to_numpy(layer(x, **call))[0]
    rotated = rotary_depth(DEPTH, settings.pop("rotary_fraction", 1.0))
    layout = settings.pop("layout", "half-split")
    if "max_length" in settings:
        settings.setdefault("scale", settings["max_length"] / settings["original_length"])
        settings.pop("max_length")
    factor_options = {k: settings.pop(k) for k in ("attention_factor", "mscale", "mscale_all_dim") if k in settings}
    rates = exact_rates(method, rotated, length=length, **settings)
    factor = exact_factor(method, settings.get("scale", 1.0), settings.get("original_length"), **factor_options)
    expected = exact_rotation(x[0], positions, rates, layout=layout, factor=factor)
    expected[:, rotated:] = x[0, :, rotated:]
    return out, expected, rotation_bound(positions, rates)


def check_rope_layer_option(method, where, option):
    if option in ("sequence_axis", "feature_axis"):
        return check_rope_axes(method, option)
    value = ROPE_VALUES.get(option)
    if option == "max_length":  # the scale as the ratio 2.5 of the lengths
        original = ROPE_SETTINGS[method].get("original_length", 16)
        changes = {"max_length": original * 5 // 2, "original_length": original, "scale": None}
    elif option == "original_length":
        if method in ("rope_pi", "rope_ntk"):  # it enters only as the denominator of max_length's ratio
            changes = {"original_length": 32, "max_length": 256, "scale": None}
        else:
            changes = {"original_length": 2 * ROPE_SETTINGS[method]["original_length"]}
    elif option == "short_factor":
        changes = {option: value, "_positions": np.arange(10)}  # 10 <= 16 positions: the short factors
    elif option == "rotary_fraction" and method == "rope_longrope":  # one factor per rotated pair
        changes = {option: value, "short_factor": [1.0] * 4, "long_factor": ROPE_SETTINGS[method]["long_factor"][:4]}
    else:
        changes = {option: value}
    if option in ("mscale", "mscale_all_dim"):
        changes = {"mscale": ROPE_VALUES["mscale"], "mscale_all_dim": ROPE_VALUES["mscale_all_dim"]}
    out, expected, bound = rope_case(method, **changes)
    np.testing.assert_allclose(out, expected, rtol=0, atol=bound, err_msg=f"{method} with {option}")
    _, default, _ = rope_case(method, **{k: v for k, v in changes.items() if k.startswith("_")})
    assert_moved(expected, default, bound, f"{method} {option}")


def check_rope_axes(method, option):
    """The same rotation with the positions or the features on another axis."""
    x = np.random.default_rng(5).normal(size=(1, STEPS, DEPTH))  # the input of rope_case
    plain = to_numpy(RotaryEmbedding(method, dtype="float64", **ROPE_SETTINGS[method])(x))
    if option == "sequence_axis":  # positions on axis 2 of (batch, heads, steps, depth)
        moved = np.broadcast_to(x[:, None], (1, 2, STEPS, DEPTH))
        out = to_numpy(RotaryEmbedding(method, dtype="float64", sequence_axis=2, **ROPE_SETTINGS[method])(moved))
        np.testing.assert_array_equal(out[:, 1], plain)
        default = x  # with the default (axis 1, the heads) nothing of the steps would rotate alike
        assert not np.allclose(out[:, 1], default)
    else:  # features on axis 1 of (batch, depth, steps)
        out = to_numpy(RotaryEmbedding(method, dtype="float64", sequence_axis=2, feature_axis=1,
                                       **ROPE_SETTINGS[method])(x.transpose(0, 2, 1)))
        np.testing.assert_array_equal(out.transpose(0, 2, 1), plain)
    _, expected, bound = rope_case(method)
    np.testing.assert_allclose(plain[0], expected, rtol=0, atol=bound)


def check_rope_call_option(method, where, option):
    if option == "start_index":
        x = np.random.default_rng(7).normal(size=(1, 5, DEPTH))
        layer = RotaryEmbedding(method, dtype="float64", **ROPE_SETTINGS[method])
        out = to_numpy(layer(x, start_index=7))[0]
        positions = np.arange(7, 12)
        settings = {k: v for k, v in ROPE_SETTINGS[method].items()}
        length = 12
        rates = exact_rates(method, DEPTH, length=length, **{k: v for k, v in settings.items()})
        factor = exact_factor(method, settings.get("scale", 1.0), settings.get("original_length"))
        expected = exact_rotation(x[0], positions, rates, factor=factor)
        bound = rotation_bound(positions, rates)
        np.testing.assert_allclose(out, expected, rtol=0, atol=bound)
        assert_moved(out, to_numpy(layer(x))[0], bound, f"{method} start_index")
        return
    if option == "positions":
        positions = np.array([3, 1, 4, 1, 5, 9, 2, 6])
        out, expected, bound = rope_case(method, _positions=positions)
    else:  # length: the rates of a longer context than the positions reach (LongRoPE: 10 short positions)
        positions = np.arange(10 if method == "rope_longrope" else STEPS)
        out, expected, bound = rope_case(method, _positions=positions, _length=100)
    np.testing.assert_allclose(out, expected, rtol=0, atol=bound, err_msg=f"{method} call {option}")
    _, default, _ = rope_case(method, _positions=np.arange(len(positions)) if option == "length" else None)
    if option == "positions":
        default = default[: len(positions)]
    assert_moved(expected, default, bound, f"{method} call {option}")


for _method, _entry in METHODS.items():
    if _entry.layer is RotaryEmbedding:
        for _key in [k for k in declared_options() if k[0] == _method and k[1] in ("layer", "call")]:
            CHECKS[_key] = check_rope_layer_option if _key[1] == "layer" else check_rope_call_option


# --- the RoPE family: each reference's options, against mpmath --------------------------------

#: pow is within 4 ulp; a rate that mixes theta/s and theta over a ramp whose ends are
#: logarithms adds a few more, amplified by at most s (1 - gamma (1 - 1/s) >= 1/s).
RATE_ULP = 16 * TRANSCENDENTAL_ULP


def rates_of(method, *, base=10000.0, **options):
    settings = {k: v for k, v in ROPE_SETTINGS[method].items() if k not in ("short_factor", "long_factor")}
    scale, original = settings.get("scale", 1.0), settings.get("original_length", 16)
    reference = METHODS[method].reference
    if method == "rope_pi" or method == "rope_ntk":
        return reference(DEPTH, scale, base=base), exact_rates(method, DEPTH, base=base, scale=scale)
    if method == "rope_dynamic":
        return (reference(DEPTH, scale, original, 40, base=base),
                exact_rates(method, DEPTH, base=base, scale=scale, original_length=original, length=40))
    if method == "rope_longrope":
        short, long = ROPE_SETTINGS[method]["short_factor"], ROPE_SETTINGS[method]["long_factor"]
        return (longrope_rates(DEPTH, short, long, original, length=40, base=base),
                exact_rates(method, DEPTH, base=base, original_length=original, length=40,
                            short_factor=short, long_factor=long))
    return (reference(DEPTH, scale, original, base=base, **options),
            exact_rates(method, DEPTH, base=base, scale=scale, original_length=original, **options))


@check(*[(m, "reference", o) for m in ("rope_pi", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_yarn_paper",
                                       "rope_llama3", "rope_longrope")
         for o in ["base", *rope_scaling.RATE_OPTIONS[m]] if (m, "reference", o) in declared_options()])
def check_rate_option(method, where, option):
    value = ROPE_VALUES[option]
    changed, exact = rates_of(method, **({"base": value} if option == "base" else {option: value}))
    assert_within_ulp(changed, exact, ulp=RATE_ULP)
    default, _ = rates_of(method)
    assert not np.array_equal(changed, default), f"{method}'s {option} changes no rate"


@check(("rope", "reference", "positions"), ("rope", "reference", "base"), ("rope", "reference", "layout"),
       ("rope", "reference", "rates"), ("rope", "reference", "rotary_fraction"),
       ("rope", "reference", "sequence_axis"), ("rope", "reference", "feature_axis"))
def check_apply_rope_option(method, where, option):
    x = np.random.default_rng(8).normal(size=(STEPS, DEPTH))
    positions, rates, layout, rotated = np.arange(STEPS), exact_angle_rates(DEPTH, 10000.0), "half-split", DEPTH
    if option == "positions":
        positions = np.array([3, 1, 4, 1, 5, 9, 2, 6] * 5)
        out = apply_rope(x, positions)
    elif option == "base":
        rates = exact_angle_rates(DEPTH, 500.0)
        out = apply_rope(x, base=500.0)
    elif option == "layout":
        layout = "interleaved"
        out = apply_rope(x, layout=layout)
    elif option == "rates":
        rates = [mpmath.mpf(1) / (i + 2) for i in range(DEPTH // 2)]
        out = apply_rope(x, rates=np.array([float(r) for r in rates]))
    elif option == "rotary_fraction":
        rotated = rotary_depth(DEPTH, 0.5)
        rates = exact_angle_rates(rotated, 10000.0)
        out = apply_rope(x, rotary_fraction=0.5)
    elif option == "sequence_axis":  # (steps, heads, depth): the positions on axis 0
        out = apply_rope(np.broadcast_to(x[:, None], (STEPS, 3, DEPTH)), sequence_axis=0)[:, 2]
    else:  # (depth, steps): the features on axis 0
        out = apply_rope(x.T, feature_axis=0, sequence_axis=1).T
    expected = exact_rotation(x, positions, rates, layout=layout)
    bound = rotation_bound(positions, rates)
    np.testing.assert_allclose(out, expected, rtol=0, atol=bound, err_msg=f"apply_rope with {option}")
    if option not in ("sequence_axis", "feature_axis"):
        assert_moved(expected, exact_rotation(x, np.arange(STEPS), exact_angle_rates(DEPTH, 10000.0)), bound,
                     f"apply_rope {option}")


# --- sinusoidal -------------------------------------------------------------------------------

def exact_table(positions, depth, base=10000.0, layout="interleaved"):
    rows = []
    for p in positions:
        angles = [mpmath.mpf(int(p)) * r for r in exact_angle_rates(2 * math.ceil(depth / 2), base)]
        sines, cosines = [mpmath.sin(a) for a in angles], [mpmath.cos(a) for a in angles]
        if layout == "interleaved":
            row = [v for pair in zip(sines, cosines) for v in pair][:depth]
        else:
            row = sines[: math.ceil(depth / 2)] + cosines[: depth // 2]
        rows.append([float(v) for v in row])
    return np.array(rows)


@check(("sinusoidal", "reference", "base"), ("sinusoidal", "reference", "layout"),
       ("sinusoidal", "reference", "start"), ("sinusoidal", "reference", "dtype"),
       ("sinusoidal", "layer", "base"), ("sinusoidal", "layer", "layout"), ("sinusoidal", "call", "start"))
def check_sinusoidal_option(method, where, option):
    values = {"base": 100.0, "layout": "half-split", "start": 1000, "dtype": "float64"}
    setting = {option: values[option]}
    start = setting.get("start", 0)
    positions = np.arange(start, start + 12)
    expected = exact_table(positions, 6, base=setting.get("base", 10000.0), layout=setting.get("layout", "interleaved"))
    default = exact_table(np.arange(12), 6)
    if where == "reference":
        got = pe_lib.sinusoidal_encoding(12, 6, **setting)
        assert got.dtype == np.dtype(setting.get("dtype", "float32"))
    else:
        layer = PositionalEncoding(max_length=1100, dtype="float64", **({} if where == "call" else setting))
        got = to_numpy(layer(np.zeros((1, 12, 6)), **(setting if where == "call" else {})))[0]
    as_float64 = where != "reference" or option == "dtype"
    # float64: the angle within a few steps of its size, sin and cos within 4 ulp; float32: one rounding more
    bound = (8 * positions.max() + TRANSCENDENTAL_ULP) * 2.0**-52 + (0 if as_float64 else 2.0**-24)
    np.testing.assert_allclose(got, expected, rtol=0, atol=bound, err_msg=f"sinusoidal {where} {option}")
    if option == "dtype":  # float64 keeps what the float32 default rounds away
        assert_moved(got, pe_lib.sinusoidal_encoding(12, 6), bound, "sinusoidal dtype")
    else:
        assert_moved(expected, default, bound, f"sinusoidal {where} {option}")


@check(("learned", "layer", "initializer"))
def check_learned_initializer(method, where, option):
    layer = LearnedPositionEmbedding(max_length=4, initializer=keras.initializers.Constant(0.25))
    x = np.random.default_rng(9).normal(size=(1, 4, 3)).astype("float32")
    got = to_numpy(layer(x))
    np.testing.assert_array_equal(got, x + np.float32(0.25))  # exact: x + 1/4 in float32 is the rounded sum
    assert_moved(got, to_numpy(LearnedPositionEmbedding(max_length=4)(x)), 2.0**-24, "learned initializer")



@check(("sinusoidal", "call", "positions"))
def check_sinusoidal_positions(method, where, option):
    """Two rows at their own positions (a left-padded row repeats 0), against mpmath's tables."""
    positions = np.array([[0, 0, 0, 1, 2, 3], [1000, 1001, 1002, 1003, 1004, 1005]])
    layer = PositionalEncoding(max_length=1100, dtype="float64")
    got = to_numpy(layer(np.zeros((2, 6, 6)), positions=positions))
    bound = (8 * positions.max() + TRANSCENDENTAL_ULP) * 2.0**-52
    for row, places in zip(got, positions):
        np.testing.assert_allclose(row, exact_table(places, 6), rtol=0, atol=bound)
    assert_moved(got[1], exact_table(np.arange(6), 6), bound, "sinusoidal positions")


@check(("learned", "call", "positions"))
def check_learned_positions(method, where, option):
    layer = LearnedPositionEmbedding(max_length=8, initializer="random_normal")
    x = np.random.default_rng(11).normal(size=(2, 3, 2)).astype("float32")
    positions = np.array([[0, 0, 1], [5, 6, 7]])
    got = to_numpy(layer(x, positions=positions))
    table = to_numpy(layer.table)
    np.testing.assert_array_equal(got, x + table[positions])  # one float32 sum each, as the layer makes
    assert_moved(got, to_numpy(layer(x)), 2.0**-24, "learned positions")


@check(("learned", "call", "start"))
def check_learned_start(method, where, option):
    layer = LearnedPositionEmbedding(max_length=8, initializer="random_normal")
    x = np.random.default_rng(10).normal(size=(1, 3, 2)).astype("float32")
    got = to_numpy(layer(x, start=5))
    table = to_numpy(layer.table)
    np.testing.assert_array_equal(got, x + table[5:8])  # rows 5, 6, 7: one float32 sum each, as the layer makes
    assert_moved(got, to_numpy(layer(x)), 2.0**-24, "learned start")

# --- ALiBi, T5, Shaw ---------------------------------------------------------------------------

def exact_alibi(query_positions, key_positions, heads, form):
    slopes = exact_alibi_slopes(heads)
    out = np.empty((heads, len(query_positions), len(key_positions)))
    for h, m in enumerate(slopes):
        for a, i in enumerate(query_positions):
            for b, j in enumerate(key_positions):
                d = int(i) - int(j)
                out[h, a, b] = float(-m * abs(d)) if form == "symmetric" or d >= 0 else -1e9
    return out


@check(("alibi", "reference", "form"), ("alibi", "reference", "dtype"), ("alibi", "layer", "form"),
       ("alibi", "call", "keys"), ("alibi", "call", "query_start"), ("alibi", "call", "key_start"),
       ("alibi", "call", "query_positions"), ("alibi", "call", "key_positions"))
def check_alibi_option(method, where, option):
    queries, keys = np.arange(6), np.arange(6)
    form = "symmetric" if option == "form" else "causal"
    if where == "reference":
        dtype = "float32" if option == "dtype" else "float64"
        got = alibi_block(queries, keys, 12, form=form, dtype=dtype)
        assert got.dtype == np.dtype(dtype)
    else:
        call, zeros = {}, np.zeros((1, 6, 4))
        if option == "keys":
            keys = np.arange(9)
            call = {"keys": np.zeros((1, 9, 4))}
            queries = np.arange(3, 9)  # by default the queries are the last of the keys
        elif option == "query_start":
            queries, call = np.arange(2**24 + 1, 2**24 + 7), {"query_start": 2**24 + 1}
        elif option == "key_start":
            keys, call = np.arange(-3, 3), {"key_start": -3}
        elif option == "query_positions":  # one row of a batch, its own positions
            queries = np.array([0, 2, 2, 5, 7, 2**24 + 1])
            call = {"query_positions": queries[None]}
        elif option == "key_positions":  # two left pads at position 0, then the tokens
            keys = np.array([0, 0, 0, 1, 2, 3])
            call = {"key_positions": keys[None]}
        got = to_numpy(AlibiBias(12, form=form, dtype="float64")(zeros, **call))[0]
    expected = exact_alibi(queries, keys, 12, form)
    visible = expected > -1e9
    single = where == "reference" and option == "dtype"
    bound = np.abs(expected) * (2.0**-24 if single else 2 * TRANSCENDENTAL_ULP * 2.0**-52)
    np.testing.assert_allclose(got[visible], expected[visible], rtol=0, atol=bound[visible].max() + 1e-300)
    default = exact_alibi(np.arange(6), np.arange(6), 12, "causal")
    if single:
        assert np.any(got.astype(np.float64) != alibi_block(queries, keys, 12))  # rounded to float32
    elif expected.shape == default.shape:
        assert_moved(np.where(visible, expected, 0), np.where(default > -1e9, default, 0), bound.max(),
                     f"alibi {where} {option}")


T5_VALUES = {"bidirectional": False, "num_buckets": 16, "max_distance": 40}


@check(("t5", "reference", "bidirectional"), ("t5", "reference", "num_buckets"), ("t5", "reference", "max_distance"),
       ("t5", "layer", "bidirectional"), ("t5", "layer", "num_buckets"), ("t5", "layer", "max_distance"),
       ("t5", "layer", "embeddings_initializer"), ("t5", "call", "keys"), ("t5", "call", "query_start"),
       ("t5", "call", "key_start"), ("t5", "call", "query_positions"), ("t5", "call", "key_positions"))
def check_t5_option(method, where, option):
    settings = {"bidirectional": True, "num_buckets": 32, "max_distance": 128}
    settings.update({option: T5_VALUES[option]} if option in T5_VALUES else {})
    offsets = np.arange(-300, 301)
    expected = np.array([exact_t5_bucket(int(o), **settings) for o in offsets])
    default = np.array([exact_t5_bucket(int(o), bidirectional=True, num_buckets=32, max_distance=128)
                        for o in offsets])
    if where == "reference":
        np.testing.assert_array_equal(relative_position_bucket(offsets, **settings), expected)
        assert np.any(expected != default)
        return
    # the layer: a table whose entry is its bucket number, read back through the bias
    initializer = option == "embeddings_initializer"
    layer = T5RelativeBias(1, embeddings_initializer=keras.initializers.Constant(0.5) if initializer else "zeros",
                           **{k: v for k, v in settings.items()})
    if initializer:
        assert np.all(to_numpy(layer(np.zeros((1, 3, 2)))) == 0.5)
        assert np.all(to_numpy(T5RelativeBias(1)(np.zeros((1, 3, 2)))) == 0.0)
        return
    layer.embeddings.assign(np.arange(settings["num_buckets"], dtype=np.float32)[:, None])
    queries, keys, call = np.arange(300), np.arange(300), {}
    if option == "keys":
        keys, call = np.arange(301), {"keys": np.zeros((1, 301, 2))}
        queries = np.arange(1, 301)
    elif option == "query_start":
        queries, call = np.arange(2**24 + 1, 2**24 + 301), {"query_start": 2**24 + 1}
        keys = np.arange(300)
    elif option == "key_start":
        keys, call = np.arange(2**24, 2**24 + 300), {"key_start": 2**24}
        queries = np.arange(300)  # the queries' default places, 0..299, before keys from 2**24
    elif option == "query_positions":  # one row of a batch, its own positions
        queries = np.arange(300) * 3
        call = {"query_positions": queries[None]}
    elif option == "key_positions":
        keys = np.maximum(np.arange(300) - 40, 0)  # 40 left pads, at position 0
        call = {"key_positions": keys[None]}
    got = to_numpy(layer(np.zeros((1, 300, 2)), **call))[0, 0]
    want = np.array([[exact_t5_bucket(int(j - i), **settings) for j in keys] for i in queries])
    np.testing.assert_array_equal(got, want)
    plain = np.array([[exact_t5_bucket(int(j - i), bidirectional=True, num_buckets=32, max_distance=128)
                       for j in np.arange(300)] for i in np.arange(300)])
    assert got.shape != plain.shape or np.any(got != plain)


@check(("shaw", "layer", "max_distance"), ("shaw", "layer", "initializer"), ("shaw", "call", "keys"),
       ("shaw", "call", "query_start"), ("shaw", "call", "key_start"), ("shaw", "call", "query_positions"),
       ("shaw", "call", "key_positions"))
def check_shaw_option(method, where, option):
    rng = np.random.default_rng(10)
    q = rng.normal(size=(5, 4))
    k = 1 if option == "max_distance" else 16
    initializer = keras.initializers.Constant(0.5) if option == "initializer" else "glorot_uniform"
    layer = ShawRelativePositions(max_distance=k, initializer=initializer, dtype="float64")
    layer.build((5, 4))
    table = to_numpy(layer.key_table)
    queries, keys, call = np.arange(5), np.arange(5), {}
    if option == "keys":
        keys, call = np.arange(8), {"keys": np.zeros((8, 4))}
        queries = np.arange(3, 8)
    elif option == "query_start":
        queries, call = np.arange(2**24 + 1, 2**24 + 6), {"query_start": 2**24 + 1}
    elif option == "key_start":
        keys, call = np.arange(-2, 3), {"key_start": -2}
    elif option == "query_positions":  # one row of a batch, its own positions
        queries = np.array([0, 3, 3, 7, 40])
        call = {"query_positions": queries[None]}
    elif option == "key_positions":
        keys = np.array([0, 0, 1, 5, 30])
        call = {"key_positions": keys}
    got = to_numpy(layer(q, **call))
    if option == "query_positions":
        got = got[0]
    with mpmath.workdps(40):
        want = np.array([[float(mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in
                                            zip(q[r], table[min(max(int(j - i), -k), k) + k])) / 2)
                          for j in keys] for r, i in enumerate(queries)])
    bound = 8 * 2.0**-52 * np.abs(q).sum(axis=1, keepdims=True) * np.abs(table).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=bound.max())
    if option == "initializer":
        np.testing.assert_array_equal(table, 0.5)
        assert np.allclose(got, q.sum(axis=1, keepdims=True) * 0.25)
    elif option == "max_distance":
        assert table.shape == (3, 4) and len({tuple(table[min(max(j - i, -1), 1) + 1]) for i in range(5)
                                              for j in range(5)}) == 3
    else:
        default = np.array([[float(np.dot(q[r], table[min(max(j - i, -k), k) + k])) / 2 for j in range(5)]
                            for r, i in enumerate(range(5))])
        assert got.shape != default.shape or np.abs(got - default).max() > 10 * bound.max()


# --- the attention options ---------------------------------------------------------------------

@check(("window", "reference", "window"), ("window", "reference", "sink_tokens"))
def check_window_option(method, where, option):
    i, j = np.arange(8)[:, None], np.arange(8)[None, :]
    window, sinks = 3, (2 if option == "sink_tokens" else 0)
    want = (j <= i) & ((i - j < window) | (j < sinks))
    got = window_mask(np.arange(8), np.arange(8), window=window, sink_tokens=sinks)
    np.testing.assert_array_equal(got, want)
    assert np.any(got != window_mask(np.arange(8), np.arange(8), window=3 if option == "sink_tokens" else None))


@check(("sink_logit", "reference", "mask"))
def check_sink_mask(method, where, option):
    scores = np.random.default_rng(11).normal(size=(2, 4, 4))
    mask = np.tril(np.ones((4, 4), bool))
    sinks = np.array([0.5, -1.0])
    got = softmax_with_sink(scores, sinks, mask=mask)
    with mpmath.workdps(40):
        want = np.zeros_like(scores)
        for h in range(2):
            for a in range(4):
                terms = [mpmath.exp(scores[h, a, b]) if mask[a, b] else mpmath.mpf(0) for b in range(4)]
                total = mpmath.fsum(terms) + mpmath.exp(sinks[h])
                want[h, a] = [float(t / total) for t in terms]
    assert_within_ulp(got, want, ulp=4 * TRANSCENDENTAL_ULP, of=1.0)
    assert np.any(softmax_with_sink(scores, sinks)[~np.broadcast_to(mask, scores.shape)] > 0)


@check(("rotary_fraction", "reference", "rotary_fraction"))
def check_rotary_fraction(method, where, option):
    # the rotated features: the fraction of the width, rounded down to an even number (hand values)
    assert [rotary_depth(16, f) for f in (0.25, 0.4, 0.5, 1.0)] == [4, 6, 8, 16]
    assert rotary_depth(16) == 16
    with pytest.raises(ValueError, match="rotary_fraction=0.5 of depth 10 rotates 5 features"):
        rotary_depth(10, 0.5)


@check(*[("temperature", kind, argument) for kind, arguments in TEMPERATURES.items() for argument in arguments])
def check_temperature_option(method, kind, option):
    positions = np.arange(0, 40)
    values = {"floor_scale": 4, "attn_scale": 0.5, "trained_length": 8, "factor": 1.5}
    options = {name: values[name] for name in TEMPERATURES[kind]}  # every option of the kind away from default
    got = query_temperature(kind, positions, **options)
    with mpmath.workdps(40):
        if kind == "llama4":
            want = [1 + options["attn_scale"] * mpmath.log(1 + (p + 1) // options["floor_scale"]) for p in positions]
        elif kind == "log_length":
            want = [mpmath.log(p + 1) / mpmath.log(options["trained_length"]) if p + 1 > options["trained_length"]
                    else mpmath.mpf(1) for p in positions]
        else:
            want = [mpmath.mpf(options["factor"])] * len(positions)
    assert_within_ulp(got, want, ulp=2 * TRANSCENDENTAL_ULP)
    if TEMPERATURES[kind][option] is not None:
        assert np.any(got != query_temperature(kind, positions, **{**options, option: TEMPERATURES[kind][option]}))


def attention_with_kernels(kernels, **options):
    """A float64 PositionalSelfAttention of 2 heads of 4, built for 8 features, with ``kernels``
    as its query, key, value and output kernels."""
    layer = PositionalSelfAttention(heads=2, key_dim=4, dtype="float64", **options)
    layer.build((None, 7, 8))
    for dense, kernel in zip((layer.query, layer.key, layer.value, layer.output_projection), kernels):
        dense.kernel.assign(kernel)
    return layer


@check(*[("layer_scheme", "reference", name) for name in ("options", "window", "sink_tokens", "sink_logit",
                                                          "temperature")])
def check_layer_positions_field(method, where, option):
    """A scheme layer built from LayerPositions computes what its fields say (float64 reference)."""
    fields = {"options": {"scale": 4.0, "base": 500.0}, "window": 3, "sink_tokens": 1, "sink_logit": True,
              "temperature": {"kind": "constant", "factor": 1.5}}
    given = {option: fields[option]}
    if option == "sink_tokens":
        given["window"] = 3
    name = "rope_pi" if option == "options" else "none"
    positions = LayerPositions(name, **given)
    if option == "options":
        assert_within_ulp(positions.rates(8), exact_rates("rope_pi", 8, base=500.0, scale=4.0), ulp=RATE_ULP)
    rng = np.random.default_rng(12)
    x = rng.normal(size=(1, 7, 8))
    kernels = [rng.normal(size=(8, 8)) / np.sqrt(8) for _ in range(4)]
    layer = attention_with_kernels(kernels, **positions.attention_options())
    sinks = None
    if positions.sink_logit:
        sinks = np.array([1.0, -0.5])
        layer.sinks.assign(sinks)
    got = to_numpy(layer(x))
    options = positions.attention_options()
    if option == "options":
        # position interpolation divides every rate by the scale: RoPE at base 500 with positions / 4
        got_rates = [float(r) for r in exact_rates("rope_pi", 4, base=500.0, scale=4.0)]
        assert np.allclose(to_numpy(layer.positions.rates), got_rates, rtol=1e-13)
        return
    want = reference_attention(x, kernels, heads=2, key_dim=4, window=options["window"],
                               sink_tokens=options["sink_tokens"], sinks=sinks, temperature=options["temperature"])
    bound = 64 * 2.0**-53 * np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    plain = reference_attention(x, kernels, heads=2, key_dim=4, window=3 if option == "sink_tokens" else None)
    assert_moved(want, plain, bound, f"LayerPositions {option}")


@check(("layer_scheme", "reference", "chunk_size"), ("layer_scheme", "reference", "qk_norm"))
def check_layer_positions_chunk_and_norm(method, where, option):
    """Llama 4's RoPE-layer options, from LayerPositions to the layer, by what they must do.

    chunk_size: the queries of a chunk see only its keys, so a chunk's outputs are the
    layer's outputs on that chunk alone, at its positions. qk_norm: queries and keys are
    scaled to unit length after the rotation, so scaling the query kernel changes nothing.
    """
    positions = LayerPositions("rope", **{option: 3 if option == "chunk_size" else True})
    rng = np.random.default_rng(13)
    x = rng.normal(size=(1, 7, 8))
    kernels = [rng.normal(size=(8, 8)) / np.sqrt(8) for _ in range(4)]
    layer = attention_with_kernels(kernels, **positions.attention_options())
    got = to_numpy(layer(x))
    bound = 64 * 2.0**-53 * np.abs(got).max()
    if option == "chunk_size":
        alone = to_numpy(layer(x[:, 3:6], position_ids=np.arange(3, 6)[None]))
        np.testing.assert_allclose(got[:, 3:6], alone, rtol=0, atol=bound)
        whole = attention_with_kernels(kernels, method="rope")
        assert_moved(got, to_numpy(whole(x)), bound, "LayerPositions chunk_size")
    else:
        plain = attention_with_kernels(kernels, method="rope")
        assert_moved(got, to_numpy(plain(x)), bound, "LayerPositions qk_norm")
        before = to_numpy(plain(x))
        layer.query.kernel.assign(10 * kernels[0])
        plain.query.kernel.assign(10 * kernels[0])
        # Llama 4's norm adds rms_norm_eps = 1e-5 to the mean square: unit length to about 1e-5
        assert np.abs(to_numpy(layer(x)) - got).max() < 1e-4 * np.abs(got).max()
        assert np.abs(to_numpy(plain(x)) - before).max() > 1e-2 * np.abs(before).max()


# --- several position axes, and packed rows -----------------------------------------------------

def exact_axis_rotation(x, positions_per_pair, rates):
    """Half-split rotation of each row of ``x`` with pair ``i`` turned by ``positions_per_pair[i][row]``."""
    x = np.asarray(x, np.float64)
    out = x.copy()
    half = len(rates)
    for row in range(x.shape[0]):
        for i, rate in enumerate(rates):
            angle = mpmath.mpf(int(positions_per_pair[i][row])) * rate
            c, s = mpmath.cos(angle), mpmath.sin(angle)
            xa, xb = mpmath.mpf(x[row, i]), mpmath.mpf(x[row, i + half])
            out[row, i], out[row, i + half] = float(xa * c - xb * s), float(xa * s + xb * c)
    return out


@check(("mrope_section", "reference", "base"))
def check_mrope_base(method, where, option):
    from pe_lib.multimodal_rope import apply_mrope

    x = np.random.default_rng(3).normal(size=(5, 8))
    positions = np.array([[0, 1, 2, 3, 4], [7, 7, 9, 9, 11], [2, 30, 5, 41, 8]])
    axis_of_pair = (0, 1, 2, 2)  # mrope_section (1, 1, 2)
    base = 500.0
    rates = [mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / 8) for i in range(4)]
    want = exact_axis_rotation(x, [positions[axis] for axis in axis_of_pair], rates)
    got = apply_mrope(x, positions, mrope_section=(1, 1, 2), base=base)
    bound = 64 * 45 * 2.0**-52
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    assert_moved(got, apply_mrope(x, positions, mrope_section=(1, 1, 2)), bound, "M-RoPE base")


@check(("mrope_section", "reference", "interleaved"))
def check_mrope_interleaved(method, where, option):
    from pe_lib.multimodal_rope import apply_mrope

    x = np.random.default_rng(5).normal(size=(5, 8))
    positions = np.array([[0, 1, 2, 3, 4], [7, 7, 9, 9, 11], [2, 30, 5, 41, 8]])
    axis_of_pair = (0, 1, 2, 0)  # mrope_section (2, 1, 1) dealt out in turn: time, row, column, time
    rates = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / 8) for i in range(4)]
    want = exact_axis_rotation(x, [positions[axis] for axis in axis_of_pair], rates)
    got = apply_mrope(x, positions, mrope_section=(2, 1, 1), interleaved=True)
    bound = 64 * 45 * 2.0**-52
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    assert_moved(got, apply_mrope(x, positions, mrope_section=(2, 1, 1)), bound, "M-RoPE interleaved")

@check(("axial", "reference", "base"))
def check_axial_base(method, where, option):
    from pe_lib.multimodal_rope import apply_axial_rope

    x = np.random.default_rng(4).normal(size=(6, 8))
    rows, columns = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 0, 1]) * 13
    base = 300.0
    # two pairs per axis, with the rates of a head of 4 features
    half = [mpmath.mpf(base) ** (-mpmath.mpf(2 * j) / 4) for j in range(2)]
    want = exact_axis_rotation(x, [rows, rows, columns, columns], half + half)
    got = apply_axial_rope(x, rows, columns, base=base)
    bound = 64 * 14 * 2.0**-52
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    assert_moved(got, apply_axial_rope(x, rows, columns), bound, "axial RoPE base")


@check(("packed_positions", "reference", "start"))
def check_packed_start(method, where, option):
    from pe_lib.position_ids import packed_position_ids

    assert packed_position_ids([3, 1, 2], start=4).tolist() == [4, 5, 6, 4, 4, 5]
    assert packed_position_ids([3, 1, 2]).tolist() == [0, 1, 2, 0, 0, 1]


# --- the tests (after every check is registered) ----------------------------------------------

def test_every_declared_option_has_a_check():
    declared = declared_options()
    missing = sorted(declared - set(CHECKS) - set(NOT_EXERCISED))
    stale = sorted((set(CHECKS) | set(NOT_EXERCISED)) - declared)
    assert not missing, f"options with no check away from their default: {missing}"
    assert not stale, f"checks of options the registry no longer declares: {stale}"


@pytest.mark.parametrize("key", sorted(CHECKS), ids=lambda key: "-".join(key))
def test_option_away_from_its_default(key):
    CHECKS[key](*key)
