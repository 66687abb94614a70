"""Every position layer under every dtype policy: the dtype it documents, the value it should hold.

Each layer is called under ``float32``, ``float64`` and the two mixed policies
(``mixed_float16``, ``mixed_bfloat16``: float32 weights, half-precision
arithmetic), on inputs of the policy's dtype and of another. Its output must
have the dtype the layer documents (the compute dtype) and lie within a bound
derived from that dtype of an independent reference: mpmath, exact arithmetic,
or NumPy float64 written out from the definition, never ``pe_lib``'s own
formula. Under ``float64`` the bounds are a few float64 steps, each 2**29
times finer than one float32 step, so a layer that silently computes in
float32 when float64 is asked fails here.

A rounding to a format of ``b`` significant bits moves a value ``v`` by at
most half its step, :math:`2^{-b}|v|` (:func:`half_step`); each bound below is
the sum of the roundings the layer documents, plus the error of a float64
transcendental (a few ulp, :data:`float_checks.TRANSCENDENTAL_ULP`).

The tests run on TensorFlow, whose tensors hold float64 (JAX does only with
``JAX_ENABLE_X64``; there the float64 cases are skipped).
"""

from __future__ import annotations

import keras
import ml_dtypes
import mpmath
import numpy as np
import pytest

from float_checks import TRANSCENDENTAL_ULP
from exact_values import exact_alibi_slopes, exact_t5_bucket, reference_attention
from pe_lib.layer_schemes import LayerPositions, gemma3_scheme, llama4_scheme
from pe_lib.layers import (
    AlibiBias,
    LearnedPositionEmbedding,
    PositionalEncoding,
    PositionalSelfAttention,
    ShawRelativePositions,
    T5RelativeBias,
)

to_numpy = keras.ops.convert_to_numpy

#: policy -> (compute dtype, variable dtype), as Keras documents its policies.
POLICIES = {
    "float32": ("float32", "float32"),
    "float64": ("float64", "float64"),
    "mixed_float16": ("float16", "float32"),
    "mixed_bfloat16": ("bfloat16", "float32"),
}
#: significant bits of each format (the hidden bit included).
BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
#: the smallest normal exponent of each format, below which the step stops shrinking.
MIN_EXPONENT = {"float64": -1022, "float32": -126, "float16": -14, "bfloat16": -126}
#: each policy with an input of its own dtype and one of another dtype (the layer casts it).
CASES = [(policy, own) for policy, (own, _) in POLICIES.items()] + [
    ("float32", "float64"), ("float64", "float32"), ("mixed_float16", "float32"), ("mixed_bfloat16", "float32"),
]


def numpy_dtype(name: str):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def half_step(values, dtype: str) -> np.ndarray:
    """Half the spacing of ``dtype`` at each of ``values``: the most one rounding moves it."""
    magnitude = np.abs(np.asarray(values, dtype=np.float64))
    exponent = np.floor(np.log2(np.where(magnitude > 0, magnitude, 1.0)))
    exponent = np.maximum(np.where(magnitude > 0, exponent, MIN_EXPONENT[dtype]), MIN_EXPONENT[dtype])
    return np.ldexp(1.0, (exponent - BITS[dtype]).astype(int))


def unit(dtype: str) -> float:
    """The unit roundoff of ``dtype``: a rounding moves a value by at most this fraction of it."""
    return 2.0 ** -BITS[dtype]


def rounded(values, *dtypes: str) -> np.ndarray:
    """``values`` rounded to nearest, even, through each format in turn, back as float64."""
    out = np.asarray(values, dtype=np.float64)
    for dtype in dtypes:
        out = out.astype(numpy_dtype(dtype)).astype(np.float64)
    return out


def as_float64(tensor) -> np.ndarray:
    return np.asarray(to_numpy(tensor)).astype(np.float64)


def dtype_of(tensor) -> str:
    return keras.backend.standardize_dtype(tensor.dtype)


def has_float64() -> bool:
    return dtype_of(keras.ops.convert_to_tensor(np.zeros(1))) == "float64"


@pytest.fixture(params=CASES, ids=[f"{policy}-on-{given}" for policy, given in CASES])
def case(request):
    """``(policy, input dtype)``; the float64 cases skip where the backend holds no float64."""
    policy, given = request.param
    if "float64" in (policy, given) and not has_float64():
        pytest.skip("this backend holds no float64 tensors (JAX without jax_enable_x64)")
    return policy, given


def inputs_of(values, given: str):
    """``values`` as a tensor of dtype ``given`` (bfloat16 from float32, by Keras's own cast)."""
    if given == "bfloat16":
        return keras.ops.cast(np.asarray(values, np.float32), "bfloat16")
    return np.asarray(values).astype(given)


def received(values, given: str, compute: str) -> np.ndarray:
    """What the layer computes with: ``values`` as :func:`inputs_of` gives them, cast to ``compute``."""
    return rounded(values, *(["float32"] if given == "bfloat16" else []), given, compute)


def assert_within(actual, expected, bound, what: str) -> None:
    error = np.abs(np.asarray(actual, np.float64) - np.asarray(expected, np.float64))
    bound = np.broadcast_to(bound, error.shape)
    assert np.all(np.isfinite(actual)), f"{what}: non-finite outputs"
    worst = np.unravel_index(np.argmax(error - bound), error.shape)
    assert np.all(error <= bound), (
        f"{what}: {np.count_nonzero(error > bound)} of {error.size} entries out of bound; "
        f"at {worst} the error is {error[worst]:.3g} against a bound of {bound[worst]:.3g}"
    )


# --- PositionalEncoding: the sinusoidal table ----------------------------------------------

PE_ROWS = [0, 1, 2, 1000, 2047, 2048, 2049, 4095]


def exact_sinusoidal(positions, depth, base=10000):
    """sin and cos of p / base^(2i/depth), interleaved, with mpmath at 40 digits."""
    with mpmath.workdps(40):
        rows = []
        for p in positions:
            row = []
            for column in range(depth):
                angle = mpmath.mpf(p) / mpmath.power(base, mpmath.mpf(2 * (column // 2)) / depth)
                row.append(mpmath.sin(angle) if column % 2 == 0 else mpmath.cos(angle))
            rows.append(row)
        return np.array([[float(v) for v in row] for row in rows]), np.array(
            [[float(p) / base ** (2 * (c // 2) / depth) for c in range(depth)] for p in positions])


def test_positional_encoding_holds_the_table_in_the_documented_dtype(case):
    """Table in float64 (float64 policy) or float32, rounded to the compute dtype when added.

    Error: the float64 angle p * w is off by at most 5 steps of its size (w from
    ``pow``, 4 ulp, then one product), and sin or cos adds 4 ulp; then one
    rounding to the table's dtype and one to the compute dtype.
    """
    policy, given = case
    compute, _ = POLICIES[policy]
    layer = PositionalEncoding(max_length=4096, dtype=policy)
    outputs = layer(inputs_of(np.zeros((2, 4096, 6)), given))
    assert dtype_of(outputs) == compute
    got = as_float64(outputs)[1, PE_ROWS]
    exact, angles = exact_sinusoidal(PE_ROWS, 6)
    table = "float64" if policy == "float64" else "float32"
    float64_error = 2 * (5 * angles + TRANSCENDENTAL_ULP) * unit("float64")
    bound = float64_error + half_step(exact, table) + half_step(exact, compute)
    if compute == "float64":
        bound = float64_error  # the table is the float64 value; nothing more is rounded
    assert_within(got, exact, bound, f"PositionalEncoding under {policy}")
    # Position 2049 is not position 2048 rounded: its rows differ by far more than the bound.
    assert np.all(np.abs(got[PE_ROWS.index(2049)] - got[PE_ROWS.index(2048)])[:2] > 10 * bound.max())


def test_positional_encoding_adds_in_the_compute_dtype(case):
    """x + table, the sum rounded once more in the compute dtype."""
    policy, given = case
    compute, _ = POLICIES[policy]
    x = np.random.default_rng(0).uniform(-1, 1, size=(1, 64, 4))
    outputs = PositionalEncoding(max_length=64, dtype=policy)(inputs_of(x, given))
    exact, angles = exact_sinusoidal(range(64), 4)
    x_seen = received(x[0], given, compute)  # what the layer receives, after its autocast
    table = "float64" if policy == "float64" else "float32"
    bound = (2 * (5 * angles + TRANSCENDENTAL_ULP) * unit("float64") + half_step(exact, table)
             + half_step(exact, compute) + half_step(x_seen + exact, compute) * (compute != "float64")
             + 2 * unit("float64") * np.abs(x_seen + exact))
    assert dtype_of(outputs) == compute
    assert_within(as_float64(outputs)[0], x_seen + exact, bound, f"PositionalEncoding + x under {policy}")


# --- LearnedPositionEmbedding: a trained table ---------------------------------------------

def test_learned_table_is_kept_in_the_variable_dtype_and_added_in_the_compute_dtype(case):
    """The table is a weight in the variable dtype, cast to the compute dtype when added."""
    policy, given = case
    compute, variable = POLICIES[policy]
    rng = np.random.default_rng(1)
    table = rng.uniform(-1, 1, size=(16, 8))  # float64 values, most not float32 numbers
    x = rng.uniform(-1, 1, size=(2, 16, 8))
    layer = LearnedPositionEmbedding(max_length=16, dtype=policy)
    layer.build((None, 16, 8))
    layer.table.assign(table)
    assert dtype_of(layer.table) == variable
    outputs = layer(inputs_of(x, given))
    assert dtype_of(outputs) == compute
    x_seen = received(x, given, compute)
    kept = rounded(table, variable)
    if compute == "float64":
        # float64 inputs and table: the sum is rounded once (a float32 table would be 2**-25 off)
        assert_within(as_float64(outputs), x_seen + kept, half_step(x_seen + kept, "float64"),
                      f"LearnedPositionEmbedding under {policy}")
        np.testing.assert_array_equal(to_numpy(layer.table), table)
        return
    added = rounded(kept, compute)
    assert_within(as_float64(outputs), x_seen + added, half_step(x_seen + added, compute),
                  f"LearnedPositionEmbedding under {policy}")


# --- AlibiBias: slopes times distances -----------------------------------------------------

@pytest.mark.parametrize("form", ["causal", "symmetric"])
def test_alibi_bias_is_the_exact_product_rounded_as_documented(case, form):
    """-m_h (i - j) formed in float32 (float64 under a float64 policy), rounded once to the compute dtype.

    Under float64 the block sits past 2**24, where float32 holds no odd
    distance: a float32 computation is off by a whole slope there. Twelve
    heads: four of the slopes are irrational (2^-1/2, 2^-3/2, ...).
    """
    policy, given = case
    compute, _ = POLICIES[policy]
    far = compute == "float64"
    query_start, key_start = (2**24 + 1, 0) if far else (37, 0)
    queries, keys = np.zeros((1, 5, 4)), np.zeros((1, 48, 4))
    layer = AlibiBias(heads=12, form=form, dtype=policy)
    bias = layer(inputs_of(queries, given), inputs_of(keys, given), query_start=query_start, key_start=key_start)
    assert dtype_of(bias) == compute and tuple(bias.shape) == (1, 12, 5, 48)
    got = as_float64(bias)[0]
    slopes = exact_alibi_slopes(12)
    behind = (query_start + np.arange(5))[:, None] - (key_start + np.arange(48))[None, :]
    with mpmath.workdps(40):
        exact = np.array([[[float(-m * abs(int(d)) if form == "symmetric" else -m * int(d)) for d in row]
                           for row in behind] for m in slopes])
    exact_dtype = "float64" if far else "float32"
    # the slope rounded to exact_dtype, the product rounded in it, then one rounding to the compute dtype
    distance = np.abs(behind)[None].astype(np.float64)
    slope_error = (half_step(np.array([float(m) for m in slopes]), exact_dtype)
                   + 2 * TRANSCENDENTAL_ULP * half_step(np.array([float(m) for m in slopes]), "float64"))
    bound = (slope_error[:, None, None] * distance
             + half_step(exact, exact_dtype) + half_step(exact, compute) * (compute != exact_dtype))
    visible = np.broadcast_to(behind >= 0, got.shape) if form == "causal" else np.ones(got.shape, bool)
    assert_within(got[visible], exact[visible], bound[visible], f"AlibiBias({form}) under {policy}")
    if form == "causal" and not far:  # the far block has every key behind its queries
        masked = got[~visible]
        assert masked.size and np.all(masked == (-32752.0 if compute == "float16" else rounded(-1e9, compute)))
    if far:  # the float32 distance of 2**24 + 1 would be 2**24: a whole slope off, far past the bound
        assert float(min(slopes)) > 1e5 * bound.max()


# --- T5RelativeBias: a learned scalar per bucket --------------------------------------------

@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bias_is_its_bucket_s_weight_rounded_to_the_compute_dtype(case, bidirectional):
    """The weight (variable dtype) of each offset's bucket, cast to the compute dtype: exact roundings.

    The block straddles 2**24 (queries from 2**24 + 1, keys from 0 and from
    2**24 - 40), where float32 positions would merge offsets.
    """
    policy, given = case
    compute, variable = POLICIES[policy]
    layer = T5RelativeBias(heads=3, bidirectional=bidirectional, num_buckets=16, max_distance=64, dtype=policy)
    weights = np.random.default_rng(2).uniform(-1, 1, size=(16, 3))
    layer.embeddings.assign(weights)
    assert dtype_of(layer.embeddings) == variable
    query_start = 2**24 + 1
    for key_start, keys in ((2**24 - 40, 90), (0, 4)):
        bias = layer(inputs_of(np.zeros((2, 6, 4)), given), inputs_of(np.zeros((2, keys, 4)), given),
                     query_start=query_start, key_start=key_start)
        assert dtype_of(bias) == compute and tuple(bias.shape) == (2, 3, 6, keys)
        offsets = (key_start + np.arange(keys))[None, :] - (query_start + np.arange(6))[:, None]
        buckets = np.array([[exact_t5_bucket(int(o), bidirectional=bidirectional, num_buckets=16,
                                             max_distance=64) for o in row] for row in offsets])
        expected = rounded(weights, variable, compute)[buckets].transpose(2, 0, 1)
        np.testing.assert_array_equal(as_float64(bias)[1], expected)


# --- ShawRelativePositions: key and value vectors per clipped offset --------------------------

def test_shaw_terms_are_the_exact_sums_within_the_rounding_of_the_compute_dtype(case):
    r"""q_i . w^K_clip(j-i) / sqrt(d) and sum_j a_ij w^V_clip(j-i), against exact sums.

    A sum of d products computed in a format of unit u is within
    (d + 2) u sum |terms| of the exact sum (Higham's gamma bound, one more
    u for the division); the operands are first rounded to the variable
    dtype and the compute dtype (u each, on each factor).
    """
    policy, given = case
    compute, variable = POLICIES[policy]
    rng = np.random.default_rng(3)
    depth, steps, k = 4, 7, 2
    queries = rng.uniform(-1, 1, size=(2, steps, depth))
    keys_table, values_table = rng.uniform(-1, 1, size=(2, 2 * k + 1, depth))
    weights = rng.dirichlet(np.ones(steps), size=(2, steps))
    layer = ShawRelativePositions(max_distance=k, dtype=policy)
    layer.build((None, steps, depth))
    layer.key_table.assign(keys_table)
    layer.value_table.assign(values_table)
    key_term = layer(inputs_of(queries, given))
    value_term = layer.value_term(keras.ops.cast(weights, compute))
    assert dtype_of(key_term) == compute and dtype_of(value_term) == compute
    rows = np.clip(np.arange(steps)[None, :] - np.arange(steps)[:, None], -k, k) + k  # clip(j - i, k) + k
    a_seen = rounded(weights, compute)
    u = unit(compute)
    stored = unit(variable) + u  # each table entry: rounded to the variable dtype, then to the compute dtype
    inputs_error = unit(given) + u if given != compute else u * (compute != "float64")
    with mpmath.workdps(40):
        exact_keys = np.array([[[float(mpmath.fsum(mpmath.mpf(q) * mpmath.mpf(w)
                                                   for q, w in zip(queries[b, i], keys_table[rows[i, j]])) / 2)
                                 for j in range(steps)] for i in range(steps)] for b in range(2)])
        exact_values = np.array([[[float(mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(values_table[rows[i, j], f])
                                                      for j, a in enumerate(a_seen[b, i])))
                                   for f in range(depth)] for i in range(steps)] for b in range(2)])
    size_keys = np.einsum("bid,ijd->bij", np.abs(queries), np.abs(keys_table[rows])) / 2
    size_values = np.einsum("bij,ijd->bid", a_seen, np.abs(values_table[rows]))
    key_bound = ((depth + 2) * u + stored + inputs_error) * size_keys * 1.01
    value_bound = ((steps + 2) * u + stored) * size_values * 1.01
    assert_within(as_float64(key_term), exact_keys, key_bound, f"Shaw key term under {policy} on {given}")
    assert_within(as_float64(value_term), exact_values, value_bound, f"Shaw value term under {policy}")


# --- PositionalSelfAttention: sinks, temperature and the layers of a scheme ------------------

#: Layers as the schemes of released models build them: Gemma 3's local layer
#: (RoPE in a sliding window), Llama 4's NoPE layer (query temperature), a
#: gpt-oss-style layer (window, first tokens kept, a sink logit per head), a
#: RoPE layer with Llama 4's qk-norm (computed in float32, or float64 under a
#: float64 policy, whatever the compute dtype). The constant factor 1.7 has no
#: exact float32 value, so a factor rounded to float32 fails under float64.
SCHEME_LAYERS = {
    "gemma3-local": gemma3_scheme(1, sliding_window=3)[0],
    "llama4-nope": llama4_scheme(4, floor_scale=2, attn_scale=0.5)[3],
    "sinks": LayerPositions("none", window=3, sink_tokens=1, sink_logit=True),
    "constant-temperature": LayerPositions("none", temperature={"kind": "constant", "factor": 1.7}),
    "log-length-temperature": LayerPositions("none", temperature={"kind": "log_length", "trained_length": 3}),
    "qk-norm": LayerPositions("rope", qk_norm=True),
}

#: How many unit roundoffs of the compute dtype an output may be off, relative to
#: the largest output; measured errors are below a quarter of it in every policy.
ATTENTION_UNITS = 64


@pytest.mark.parametrize("scheme", sorted(SCHEME_LAYERS))
def test_self_attention_of_each_scheme_layer_computes_in_the_compute_dtype(case, scheme):
    """The output dtype is the compute dtype, and the values those of a float64 reference
    within ATTENTION_UNITS roundings of the compute dtype; the option the layer
    carries moves the reference by more than that bound, so a dropped option fails."""
    policy, given = case
    compute, variable = POLICIES[policy]
    positions = SCHEME_LAYERS[scheme]
    options = positions.attention_options()
    heads, key_dim, depth, steps = 2, 4, 8, 9
    layer = PositionalSelfAttention(heads=heads, key_dim=key_dim, dtype=policy, **options)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, steps, depth))
    layer.build((None, steps, depth))
    kernels = [rng.normal(size=(depth, heads * key_dim)) / np.sqrt(depth) for _ in range(3)]
    kernels.append(rng.normal(size=(heads * key_dim, depth)) / np.sqrt(heads * key_dim))
    for dense, kernel in zip((layer.query, layer.key, layer.value, layer.output_projection), kernels):
        dense.kernel.assign(kernel)
    sinks = None
    if positions.sink_logit:
        sinks = np.array([1.3, -0.7])  # not float32 numbers: a sink rounded to float32 fails under float64
        layer.sinks.assign(sinks)
    outputs = layer(inputs_of(x, given))
    assert dtype_of(outputs) == compute
    seen = [rounded(kernel, variable, compute) for kernel in kernels]
    x_seen = received(x, given, compute)
    settings = dict(heads=heads, key_dim=key_dim, method=options["method"], base=options["base"],
                    window=options["window"], sink_tokens=options["sink_tokens"])
    epsilon = 1e-5 if options.get("qk_norm") else None  # Hugging Face's rms_norm_eps, the default
    expected = reference_attention(x_seen, seen, sinks=sinks, temperature=options["temperature"],
                                   qk_norm_epsilon=epsilon, **settings)
    bound = ATTENTION_UNITS * unit(compute) * np.abs(expected).max()
    assert_within(as_float64(outputs), expected, bound, f"{scheme} under {policy} on {given}")
    if compute in ("float32", "float64"):
        rotated = scheme in ("gemma3-local", "qk-norm")  # without the option, RoPE alone
        without = reference_attention(x_seen, seen, sinks=None, temperature=None,
                                      **{**settings, "window": None, "sink_tokens": 0,
                                         "method": "rope" if rotated else "none"})
        assert np.abs(without - expected).max() > 100 * bound


def test_alibi_scores_of_self_attention_are_added_in_the_compute_dtype(case):
    """ALiBi's penalty joins the scores in the compute dtype: under float64 the slopes of 12 heads,
    four of them irrational (2^-1/2, ...), are not rounded to float32 on the way. Hidden keys
    hold the masked score of the compute dtype, finite in float16."""
    policy, given = case
    compute, variable = POLICIES[policy]
    heads, key_dim, depth, steps = 12, 2, 4, 5
    layer = PositionalSelfAttention(heads=heads, key_dim=key_dim, method="alibi", dtype=policy)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(1, steps, depth))
    layer.build((None, steps, depth))
    kernels = [rng.normal(size=(depth, heads * key_dim)) / np.sqrt(depth) for _ in range(2)]
    layer.query.kernel.assign(kernels[0])
    layer.key.kernel.assign(kernels[1])
    scores = layer.scores(inputs_of(x, given))
    assert dtype_of(scores) == compute
    x_seen = received(x, given, compute)
    wq, wk = (rounded(kernel, variable, compute) for kernel in kernels)
    q = (x_seen[0] @ wq).reshape(steps, heads, key_dim).transpose(1, 0, 2)
    k = (x_seen[0] @ wk).reshape(steps, heads, key_dim).transpose(1, 0, 2)
    i, j = np.arange(steps)[:, None], np.arange(steps)[None, :]
    slopes = np.array([float(m) for m in exact_alibi_slopes(heads)])
    expected = q @ k.transpose(0, 2, 1) / np.sqrt(key_dim) - slopes[:, None, None] * (i - j)
    visible = np.broadcast_to(j <= i, expected.shape)
    bound = ATTENTION_UNITS * unit(compute) * np.abs(expected[visible]).max()
    assert_within(as_float64(scores)[0][visible], expected[visible], bound, f"ALiBi scores under {policy}")
    # a hidden key's score is finite in the compute dtype: half of float16's most negative value
    masked = as_float64(scores)[0][~visible]
    assert np.all(masked == (-32752.0 if compute == "float16" else rounded(-1e9, compute)))
