"""Small plausible bugs, each caught by its witness input, and the classes they stand for.

Each expected value is derived independently of the implementation: with
mpmath, exact fractions or integer arithmetic, from the formula of Hugging Face
transformers (or the paper) as written in the test.
"""

import math
from fractions import Fraction

import keras
import mpmath
import numpy as np
import pytest
from float_checks import assert_within_ulp

import pe_lib
from pe_lib.alibi import alibi_block
from pe_lib.layers import (
    AlibiBias,
    PositionalSelfAttention,
    RotaryEmbedding,
    ShawRelativePositions,
    T5RelativeBias,
)
from pe_lib.rope import rope_angles, rotary_depth
from pe_lib.rope_scaling import (
    dynamic_ntk_scale,
    llama3_rates,
    yarn_correction_range,
    yarn_ramp,
    yarn_rates,
)
from pe_lib.t5 import bucket_starts, relative_position_bucket

to_numpy = keras.ops.convert_to_numpy


def has_float64():
    return keras.backend.standardize_dtype(keras.ops.convert_to_tensor(np.zeros(1)).dtype) == "float64"


def exact_rates(depth, base=10000):
    """theta_i = base^(-2i/d) at 40 digits."""
    with mpmath.workdps(40):
        return [mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * i) / depth) for i in range(depth // 2)]


def exact_rotation(x, positions, rates, layout="half-split", factor=1):
    """Rotate the last axis of ``x`` (rows, depth) by ``position * rate`` at 40 digits, as mpmath numbers."""
    half = len(rates)
    out = []
    with mpmath.workdps(40):
        for row, m in enumerate(positions):
            values = [mpmath.mpf(float(v)) for v in x[row]]
            for i, rate in enumerate(rates):
                angle = mpmath.mpf(int(m)) * mpmath.mpf(rate)
                c, s = mpmath.cos(angle), mpmath.sin(angle)
                a, b = (i, i + half) if layout == "half-split" else (2 * i, 2 * i + 1)
                xa, xb = values[a], values[b]
                values[a], values[b] = (xa * c - xb * s) * factor, (xa * s + xb * c) * factor
            out.append(values)
    return out


# --- YaRN's correction range: the start rounded down, the end up ---------------------------


def hf_correction_range(depth, length, base=10000, beta_fast=32, beta_slow=1):
    """Hugging Face's find_correction_range at 40 digits: floor of the start, ceil of the end, clipped."""
    with mpmath.workdps(40):
        def dim(turns):
            return depth * mpmath.log(mpmath.mpf(length) / (turns * 2 * mpmath.pi)) / (2 * mpmath.log(base))

        low, high = dim(mpmath.mpf(beta_fast)), dim(mpmath.mpf(beta_slow))
        margin = min(abs(low - mpmath.nint(low)), abs(high - mpmath.nint(high)))
        return max(int(mpmath.floor(low)), 0), min(int(mpmath.ceil(high)), depth - 1), margin


def test_yarn_range_at_a_long_context_rounds_its_end_up():
    # 64 ln(65536 / 2 pi) / ln 1e4 = 64.29, rounded up to 65 (not down to 64 or 63).
    assert hf_correction_range(128, 65536)[:2] == (40, 65)
    assert yarn_correction_range(128, 65536) == (40.0, 65.0)
    rates = yarn_rates(128, 4.0, 65536)
    exact = exact_rates(128)
    # Pair i keeps gamma = 1 - (i - 40) / 25 of its rate and takes (1 - gamma) / 4 of it:
    # pair 50 runs at 0.6 + 0.4 / 4 = 0.7 of its rate.
    shares = [1 - Fraction(i - 40, 25) for i in range(41, 64)]
    # mpmath takes a Fraction only from 1.4 on: pass its numerator and denominator.
    kept = [share + (1 - share) / 4 for share in shares]
    expected = [exact[i] * mpmath.mpf(k.numerator) / k.denominator for i, k in zip(range(41, 64), kept)]
    assert_within_ulp(rates[41:64], expected, ulp=8)
    assert shares[50 - 41] + (1 - shares[50 - 41]) / 4 == Fraction(7, 10)


@pytest.mark.parametrize("depth", [8, 64, 128])
@pytest.mark.parametrize("length", [2, 16, 100, 2048, 4096, 8192, 65536, 131072])
@pytest.mark.parametrize(("base", "beta_fast", "beta_slow"), [(10000, 32, 1), (500000, 32, 1), (10000, 16, 2)])
def test_yarn_range_rounds_as_hugging_face_everywhere(depth, length, base, beta_fast, beta_slow):
    low, high, margin = hf_correction_range(depth, length, base, beta_fast, beta_slow)
    assert margin > 1e-9  # no end lies within round-off of a whole pair
    got = yarn_correction_range(depth, length, base=float(base), beta_fast=float(beta_fast),
                                beta_slow=float(beta_slow))
    assert got == (float(low), float(high))


# --- degenerate but valid contexts -------------------------------------------------------


def test_yarn_with_a_context_shorter_than_one_turn_keeps_only_the_fastest_pair():
    # depth 8, L = 2: both ends clip to pair 0, which Hugging Face widens by 0.001
    # (linear_ramp_factor), so pair 0 keeps its rate and every other one is divided by 4.
    low, high, _ = hf_correction_range(8, 2)
    assert (low, high) == (0, 0)
    rates = yarn_rates(8, 4.0, 2)
    assert np.all(np.isfinite(rates))
    assert_within_ulp(rates, [r * share for r, share in zip(exact_rates(8), [1, 0.25, 0.25, 0.25])])


@pytest.mark.parametrize(
    "call",
    [
        lambda: yarn_ramp([1, 2, 3], 2.0, 2.0),
        lambda: yarn_rates(8, 4.0, 64, beta_fast=2.0, beta_slow=2.0),
        lambda: pe_lib.rope_scaling.yarn_paper_rates(8, 4.0, 64, alpha=3.0, beta=3.0),
    ],
)
def test_ramps_refuse_equal_ends(call):
    with pytest.raises(ValueError, match="must exceed"):
        call()


def test_llama3_with_equal_factors_cuts_without_a_ramp():
    # Llama 4 Scout ships low_freq_factor == high_freq_factor: no band is ramped. For
    # depth 8 the wavelengths are 2*pi * (1, 10, 100, 1000); both bounds are 64 / 2 = 32,
    # so pair 0 keeps its rate and the three slower pairs are divided by the factor 4.
    rates = llama3_rates(8, 4.0, 64, low_freq_factor=2, high_freq_factor=2)
    assert np.all(np.isfinite(rates))
    assert_within_ulp(rates, [r * share for r, share in zip(exact_rates(8), [1, 0.25, 0.25, 0.25])])


def test_dynamic_ntk_at_its_trained_length_is_plain_rope():
    # Hugging Face scales only when the length exceeds the trained one; 3.3 * 3 / 3 - 2.3
    # is 0.9999999999999996 in floating point, below the smallest valid scale.
    assert dynamic_ntk_scale(3, 3.3, 3) == 1.0
    for length in (1, 2, 3):
        assert dynamic_ntk_scale(length, 3.3, 3) == 1.0
    assert dynamic_ntk_scale(4, 3.3, 3) > 1.0
    x = np.random.default_rng(0).normal(size=(1, 3, 8))
    out = to_numpy(RotaryEmbedding("rope_dynamic", scale=3.3, original_length=3)(x.astype("float32")))
    expected = exact_rotation(x[0], range(3), exact_rates(8))
    np.testing.assert_allclose(out[0], np.array(expected, dtype=np.float64), rtol=0, atol=2e-6)


# --- the rotated depth: the product rounded down, as Hugging Face's int() ------------------


def test_rotary_depth_rounds_the_product_down():
    # 10 * 0.46 = 4.6000000000000005 -> 4; 10 * 0.35 = 3.5 -> 3, odd, refused.
    assert rotary_depth(10, 0.46) == 4
    with pytest.raises(ValueError, match="rotates 3 features"):
        rotary_depth(10, 0.35)


@pytest.mark.parametrize("depth", [2, 4, 6, 10, 64, 80, 96, 128])
def test_rotary_depth_matches_int_of_the_float_product(depth):
    for hundredths in range(1, 101):
        fraction = hundredths / 100
        # the IEEE product is the exact product rounded to the nearest double
        expected = math.floor(float(Fraction(depth) * Fraction(fraction)))
        if expected < 2 or expected % 2:
            with pytest.raises(ValueError, match="rotary_fraction"):
                rotary_depth(depth, fraction)
        else:
            assert rotary_depth(depth, fraction) == expected


# --- dtypes: what is computed in float64 stays float64 -------------------------------------


def test_dynamic_ntk_on_float64_input_forms_its_angles_in_float64():
    if not has_float64():
        pytest.skip("this backend holds no float64 tensors (JAX without jax_enable_x64)")
    position, depth = 2**21 - 1, 8
    x = np.random.default_rng(1).normal(size=(1, 1, depth))
    layer = RotaryEmbedding("rope_dynamic", scale=2.0, original_length=2**20)
    out = to_numpy(layer(x, positions=np.array([position])))
    assert out.dtype == np.float64
    # length 2**21: s' = 2 * 2**21 / 2**20 - 1 = 3, base 1e4 * 3**(8/6)
    with mpmath.workdps(40):
        base = 10000 * mpmath.power(3, mpmath.mpf(depth) / (depth - 2))
        rates = [mpmath.power(base, -mpmath.mpf(2 * i) / depth) for i in range(depth // 2)]
    expected = np.array(exact_rotation(x[0], [position], rates), dtype=np.float64)
    # angles near 2e6 radians: a float64 angle is within 1e-9 of them, a float32 one 0.1 away
    np.testing.assert_allclose(out[0], expected, rtol=0, atol=1e-8)


STATIC_ROPES = [
    ("rope", {}),
    ("rope_pi", {"scale": 4.0}),
    ("rope_ntk", {"scale": 4.0}),
    ("rope_yarn", {"scale": 4.0, "original_length": 64}),
    ("rope_yarn_paper", {"scale": 4.0, "original_length": 64}),
    ("rope_llama3", {"scale": 8.0, "original_length": 64}),
]


@pytest.mark.parametrize(("method", "options"), STATIC_ROPES)
@pytest.mark.parametrize("layout", ["half-split", "interleaved"])
def test_float64_policy_on_float32_input_rounds_the_exact_rotation_once(method, options, layout):
    if not has_float64():
        pytest.skip("this backend holds no float64 tensors (JAX without jax_enable_x64)")
    start, steps, depth = 2**30 + 12345, 8, 64
    x = np.random.default_rng(2).normal(size=(1, steps, depth)).astype("float32")
    layer = RotaryEmbedding(method, layout=layout, dtype="float64", **options)
    out = to_numpy(layer(x, start_index=start))
    assert out.dtype == np.float32
    # the angles of the layer's float64 rates, exactly; the output is their rotation
    # rounded once to float32 (plus float64 round-off, far below a float32 step)
    expected = np.array(exact_rotation(x[0], range(start, start + steps), [float(r) for r in layer.rates],
                                       layout=layout, factor=mpmath.mpf(layer.attention_factor)), dtype=np.float64)
    allowed = np.spacing(np.abs(expected).astype(np.float32)).astype(np.float64) / 2 + 2.0**-40
    error = np.abs(out[0].astype(np.float64) - expected)
    assert np.all(error <= allowed), f"{np.count_nonzero(error > allowed)} of {error.size} entries off"


# --- Shaw's value term reaches the attention output ---------------------------------------


def shaw_attention(x, layer):
    """Shaw et al.'s causal self-attention in float64 from the layer's weights, written out."""
    heads, key_dim = layer.heads, layer.key_dim
    wq, wk, wv, wo = (to_numpy(dense.kernel).astype(np.float64)
                      for dense in (layer.query, layer.key, layer.value, layer.output_projection))
    keys_table = to_numpy(layer.positions.key_table).astype(np.float64)
    values_table = to_numpy(layer.positions.value_table).astype(np.float64)
    k = layer.positions.max_distance
    steps = x.shape[0]
    out = np.zeros((steps, heads * key_dim))
    for h in range(heads):
        cols = slice(h * key_dim, (h + 1) * key_dim)
        q, kk, v = x @ wq[:, cols], x @ wk[:, cols], x @ wv[:, cols]
        for i in range(steps):
            rows = [min(max(j - i, -k), k) + k for j in range(i + 1)]  # keys j <= i
            scores = np.array([q[i] @ (kk[j] + keys_table[r]) for j, r in zip(range(i + 1), rows)])
            scores /= math.sqrt(key_dim)
            weights = np.exp(scores - scores.max())
            weights /= weights.sum()
            out[i, cols] = sum(w * (v[j] + values_table[r]) for w, j, r in zip(weights, range(i + 1), rows))
    return out @ wo


def test_shaw_attention_adds_the_value_vectors():
    layer = PositionalSelfAttention(2, 2, method="shaw", method_options={"max_distance": 2,
                                                                        "initializer": "random_normal"})
    x = np.random.default_rng(3).normal(size=(1, 6, 4)).astype("float32")
    out = to_numpy(layer(x))[0]
    expected = shaw_attention(x[0].astype(np.float64), layer)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


# --- T5's buckets in causal attention ------------------------------------------------------


def test_causal_bucket_starts_use_every_bucket_for_the_past():
    # Causal: 32 buckets back, 16 exact; bucket b >= 16 starts at the smallest n with
    # 16 + floor(16 ln(n / 16) / ln 8) >= b, i.e. n >= 16 * 8**((b - 16) / 16)
    # (never a whole number for 16 < b < 32).
    with mpmath.workdps(40):
        expected = list(range(17)) + [int(mpmath.ceil(16 * mpmath.power(8, mpmath.mpf(b - 16) / 16)))
                                      for b in range(17, 32)]
    assert expected[17:20] == [19, 21, 24]
    assert bucket_starts(bidirectional=False).tolist() == expected
    assert bucket_starts(bidirectional=False, num_buckets=8, max_distance=16).tolist() == [0, 1, 2, 3, 4, 6, 8, 12]


# --- positions at and past 2**24, where float32 has no odd integers ------------------------

BIG = 2**24 + 1  # float32(2**24 + 1) is 2**24


def test_rope_angles_keep_positions_past_two_to_the_24():
    # depth 2: one pair at rate 1, so the angle is the position itself
    assert rope_angles([BIG, BIG + 2], 2)[:, 0].tolist() == [16777217.0, 16777219.0]
    assert_within_ulp(rope_angles([BIG], 4)[0, 1], [BIG * exact_rates(4)[1]])


def test_alibi_block_keeps_positions_past_two_to_the_24():
    # one head: slope 2**-8; distances 2**24 + 1 and 1
    block = alibi_block([BIG], [0, 2**24], 1)
    assert block.tolist() == [[[-(2**24 + 1) / 256, -1 / 256]]]


def test_alibi_layer_keeps_positions_past_two_to_the_24():
    if not has_float64():
        pytest.skip("this backend holds no float64 tensors (JAX without jax_enable_x64)")
    bias = to_numpy(AlibiBias(1, dtype="float64")(np.zeros((1, 2)), np.zeros((2, 2)), query_start=BIG,
                                                   key_start=2**24 - 1))
    assert bias.tolist() == [[[-2 / 256, -1 / 256]]]  # query 2**24 + 1, keys 2**24 - 1 and 2**24


def test_t5_buckets_tell_two_to_the_24_from_the_next_distance():
    # 4 causal buckets: 2 exact, then n >= sqrt(2 D) opens bucket 3. With D = 2**47 + 1,
    # sqrt(2**48 + 2) lies just above 2**24, so 2**24 is in bucket 2 and 2**24 + 1 in 3:
    # (2**24)**2 < 2 D <= (2**24 + 1)**2 in integers.
    assert (2**24) ** 2 < 2 * (2**47 + 1) <= (2**24 + 1) ** 2
    buckets = relative_position_bucket([-(2**24), -BIG], bidirectional=False, num_buckets=4, max_distance=2**47 + 1)
    assert buckets.tolist() == [2, 3]


def test_t5_and_shaw_layers_place_blocks_past_two_to_the_24():
    t5 = T5RelativeBias(1, num_buckets=8, max_distance=16, embeddings_initializer="random_normal")
    bias = to_numpy(t5(np.zeros((1, 2), "float32"), np.zeros((4, 2), "float32"), query_start=BIG, key_start=BIG - 3))
    table = to_numpy(t5.embeddings)[:, 0]
    # offsets j - i: query BIG sees -3 .. 0; bidirectional, 4 buckets a side: 0 -> 0, -1 -> 1, -2, -3 -> 2
    assert bias[0, 0].tolist() == table[[2, 2, 1, 0]].tolist()
    shaw = ShawRelativePositions(max_distance=1)
    shaw(np.zeros((1, 1, 2), "float32"))
    rows = to_numpy(shaw.indices(1, 4, query_start=BIG, key_start=BIG - 2))
    assert rows.tolist() == [[0, 0, 1, 2]]  # offsets -2, -1, 0, +1 clipped to +-1, plus 1


def test_sinusoidal_rows_past_two_to_the_24_are_correctly_rounded():
    start, depth = 2**24 - 1, 8
    table = pe_lib.sinusoidal_encoding(3, depth, start=start)
    with mpmath.workdps(40):
        exact = []
        for p in range(start, start + 3):
            row = []
            for column in range(depth):
                angle = p * mpmath.power(10000, -mpmath.mpf(2 * (column // 2)) / depth)
                row.append(mpmath.sin(angle) if column % 2 == 0 else mpmath.cos(angle))
            exact.append(row)
    # float32 entries of float64 angles: within half a float32 step plus the float64 angle error
    reference = np.array(exact, dtype=np.float64)
    allowed = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64) / 2 + 2**25 * 2.0**-51
    assert np.all(np.abs(table - reference) <= allowed)
    assert not np.array_equal(table[1], table[2])


# --- every rate option of every RoPE variant, away from its default, reaches the layer ----


def hf_rates(method, depth, scale, length, base, options):
    """The rates of Hugging Face's rope_type for ``method``, at 40 digits, from its formulas."""
    with mpmath.workdps(40):
        theta = [mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * i) / depth) for i in range(depth // 2)]
        turns = [length * t / (2 * mpmath.pi) for t in theta]
        if method == "rope_yarn":
            def dim(r):
                return depth * mpmath.log(length / (r * 2 * mpmath.pi)) / (2 * mpmath.log(base))

            low, high = dim(options["beta_fast"]), dim(options["beta_slow"])
            if options.get("truncate", True):
                low, high = mpmath.floor(low), mpmath.ceil(high)
            low, high = max(low, 0), min(high, depth - 1)
            kept = [1 - min(max((i - low) / (high - low), 0), 1) for i in range(depth // 2)]
        elif method == "rope_yarn_paper":
            alpha, beta = options["alpha"], options["beta"]
            kept = [min(max((r - alpha) / (beta - alpha), 0), 1) for r in turns]
        else:  # rope_llama3: kept above high turns, interpolated below low, smooth between
            low, high = options["low_freq_factor"], options["high_freq_factor"]
            kept = [min(max((r - low) / (high - low), 0), 1) for r in turns]
        return [t * k + t / scale * (1 - k) for t, k in zip(theta, kept)]


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("rope_yarn", {"beta_fast": 16.0, "beta_slow": 2.0}),
        ("rope_yarn", {"beta_fast": 16.0, "beta_slow": 2.0, "truncate": False}),
        ("rope_yarn_paper", {"alpha": 2.0, "beta": 16.0}),
        ("rope_llama3", {"low_freq_factor": 2.0, "high_freq_factor": 8.0}),
    ],
)
def test_rate_options_away_from_their_defaults_reach_the_layer(method, options):
    depth, scale, length, base = 32, 4.0, 512, 500000.0
    layer = RotaryEmbedding(method, base=base, scale=scale, original_length=length, **options)
    layer(np.zeros((1, 2, depth), "float32"))
    expected = hf_rates(method, depth, scale, length, base, options)
    assert_within_ulp(layer.rates, expected, ulp=16)
    defaults = RotaryEmbedding(method, base=base, scale=scale, original_length=length)
    defaults(np.zeros((1, 2, depth), "float32"))
    assert not np.allclose(layer.rates, defaults.rates, rtol=1e-6)
