"""Exact values from the definitions, shared by the tests: never from pe_lib's own formulas.

mpmath at 40 digits or exact integers, except :func:`reference_attention`,
which is NumPy float64 written out from the definition of attention.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np


def exact_angle_rates(depth, base=10000):
    """theta_i = base^(-2i/depth) for each pair, in mpmath at 40 digits."""
    with mpmath.workdps(40):
        return [mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * i) / depth) for i in range(depth // 2)]


def exact_alibi_slopes(heads: int) -> list:
    """Press, Smith and Lewis's slopes, with mpmath: 2^(-8k/n) for the largest power of two n <= heads,
    then the odd-numbered slopes of 2n for the heads left over."""
    n = 2 ** (heads.bit_length() - 1)
    with mpmath.workdps(40):
        slopes = [mpmath.power(2, -mpmath.mpf(8 * k) / n) for k in range(1, n + 1)]
        slopes += [mpmath.power(2, -mpmath.mpf(8 * k) / (2 * n)) for k in range(1, 2 * n + 1, 2)][: heads - n]
    return slopes


@functools.cache  # a table of 300 by 300 offsets asks for each of its 599 offsets 300 times
def exact_t5_bucket(offset: int, *, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """Raffel et al.'s bucket of the offset j - i, its log thresholds compared exactly (mpmath)."""
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    first = per_direction if bidirectional and offset > 0 else 0
    distance = abs(offset) if bidirectional else max(-offset, 0)
    exact = per_direction // 2
    if distance < exact:
        return first + distance
    with mpmath.workdps(50):
        position = mpmath.log(mpmath.mpf(distance) / exact) / mpmath.log(mpmath.mpf(max_distance) / exact)
        return first + min(exact + int(mpmath.floor(position * (per_direction - exact))), per_direction - 1)


def reference_attention(x, kernels, *, heads, key_dim, method="none", base=10000.0, window=None,
                        sink_tokens=0, sinks=None, temperature=None, qk_norm_epsilon=None):
    """Causal multi-head self-attention in NumPy float64, written out from its definition.

    RoPE rotates feature i with feature i + d/2 by the angle p / base^(2i/d)
    (the half-split pairing); with ``qk_norm_epsilon`` each query and key is
    then divided by its root mean square, sqrt(mean(t^2) + epsilon); a
    query's temperature multiplies it after any rotation; key j is visible
    to query i when j <= i and, with a window, i - j < window or j < sink_tokens; a sink logit joins each head's softmax.
    """
    wq, wk, wv, wo = kernels
    steps = x.shape[1]
    split = lambda t: t.reshape(x.shape[0], steps, heads, key_dim).transpose(0, 2, 1, 3)
    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    p = np.arange(steps, dtype=np.float64)
    if method == "rope":
        half = key_dim // 2
        angles = p[:, None] / base ** (2 * np.arange(half) / key_dim)
        cos, sin = np.cos(angles), np.sin(angles)

        def rotate(t):
            a, b = t[..., :half], t[..., half:]
            return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)

        q, k = rotate(q), rotate(k)
    if qk_norm_epsilon is not None:
        q, k = (t / np.sqrt(np.mean(t**2, axis=-1, keepdims=True) + qk_norm_epsilon) for t in (q, k))
    if temperature is not None:
        if temperature["kind"] == "llama4":
            factor = 1 + temperature["attn_scale"] * np.log(1 + np.floor((p + 1) / temperature["floor_scale"]))
        elif temperature["kind"] == "log_length":
            trained = temperature["trained_length"]
            factor = np.where(p + 1 > trained, np.log(p + 1) / np.log(trained), 1.0)
        else:
            factor = np.full(steps, temperature["factor"])
        q = q * factor[:, None]
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(key_dim)
    i, j = np.arange(steps)[:, None], np.arange(steps)[None, :]
    visible = j <= i
    if window is not None:
        visible &= (i - j < window) | (j < sink_tokens)
    scores = np.where(visible, scores, -np.inf)
    if sinks is not None:
        sink = np.broadcast_to(np.asarray(sinks)[None, :, None, None], (*scores.shape[:3], 1))
        scores = np.concatenate([scores, sink], axis=-1)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    if sinks is not None:
        weights = weights[..., :-1]
    mixed = (weights @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], steps, heads * key_dim)
    return mixed @ wo
