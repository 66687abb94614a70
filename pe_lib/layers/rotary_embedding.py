r"""RoPE as a Keras layer: rotate queries or keys by their positions.

The keras.ops twin of :func:`pe_lib.rope.apply_rope`, with the rates of any
RoPE method of :mod:`pe_lib.rope_scaling`; tests check one against the other.
"""

from __future__ import annotations

import functools

import keras
import numpy as np
from keras import ops

from pe_lib import rope_scaling
from pe_lib._checks import require_choice, require_fraction, require_int, require_positive_float
from pe_lib.frequencies import angle_rates
from pe_lib.layouts import LAYOUTS
from pe_lib.methods import method_names
from pe_lib.multimodal_rope import pair_axes
from pe_lib.rope import rotary_depth, rotation_tables

#: The options of the context-extension methods, each ``None`` (the method's default) unless given.
SCALING_OPTIONS = ("beta_fast", "beta_slow", "truncate", "attention_factor", "mscale", "mscale_all_dim",
                   "alpha", "beta", "low_freq_factor", "high_freq_factor", "short_factor", "long_factor")


@functools.cache
def _backend_has_float64() -> bool:
    """Whether the backend keeps float64 tensors (JAX does only with ``jax_enable_x64``)."""
    tensor = ops.convert_to_tensor(np.zeros(1, dtype=np.float64))
    return keras.backend.standardize_dtype(tensor.dtype) == "float64"


def _as_list(name: str, factors):
    """LongRoPE's factors as a list of floats (JSON-ready for ``get_config``), or ``None``."""
    if factors is None:
        return None
    try:
        array = np.asarray(factors, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a sequence of numbers, got {factors!r}") from error
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers, one per pair; got shape {array.shape}")
    if not np.all(np.isfinite(array) & (array > 0)):  # None becomes nan on the way in
        raise ValueError(f"{name} must hold positive finite numbers, one per pair; got {factors!r}")
    return [float(value) for value in array]


@keras.saving.register_keras_serializable(package="pe_lib")
class RotaryEmbedding(keras.layers.Layer):
    r"""Rotates each feature pair of its input by the angle of its position.

    The input is a tensor of queries or keys with a sequence axis and a feature
    axis, by default ``(batch, sequence, heads, head_dim)`` as in keras-hub and
    GPT-J (``sequence_axis=1``, ``feature_axis=-1``); for
    ``(batch, heads, sequence, head_dim)`` pass ``sequence_axis=2``. The output
    has the input's shape and dtype, except under a mixed policy
    (``mixed_float16``, ``mixed_bfloat16``): there, like any Keras layer, it
    has the policy's compute dtype.

    *Dtypes.* The rotation is computed in float64 for float64 inputs (or a
    float64 policy) and in float32 otherwise, and rounded once to the output
    dtype: float64 results are accurate to a few float64 steps, float32 ones
    to a few float32 steps, and float16 and bfloat16 ones to within one step
    of their dtype (results within :math:`2^{-20}` of zero, relative to the
    input, to within that), at every position below :math:`2^{31}`. No angle is
    formed in the compute dtype: each position is split into four 8-bit
    digits, the cosine and sine of ``digit * 256**k * rate`` are tabulated
    once in float64 with the products unrounded
    (:func:`pe_lib.rope.rotation_tables`), converted to the compute dtype,
    and the four rotations are composed by angle addition.

    *Dynamic NTK* (``method="rope_dynamic"``) chooses its scale from the
    length it is called with, :math:`n` = the last position plus one (or
    ``length=``): plain RoPE up to ``original_length``, NTK-aware scaling
    with :math:`s_n = s\,n/L - (s - 1)` beyond
    (:func:`pe_lib.rope_scaling.dynamic_ntk_scale`). Its rates change with
    :math:`n`, so they cannot be tabulated: the angles are products formed
    in float64 (float32 on a backend without float64, JAX without
    ``jax_enable_x64``, where they carry an error near
    :math:`m\theta\,2^{-24}` radians). Keys rotated by an earlier call keep
    the rates of that call's length: in cached decoding, a query at length
    :math:`n` meets cached keys rotated for shorter lengths, and its scores
    no longer depend on the offset alone. Hugging Face's
    ``rope_type="dynamic"`` caches rotated keys too, and its module does not
    follow the length down: it keeps the rates of the longest length it has
    been called with until a call shorter than ``original_length`` resets
    them to plain RoPE's. After a call at 16,383 positions
    (``original_length`` 4096, ``scale`` 2), a call at 8,191 positions gets
    the rates of 16,383, not those of 8,191 that this layer (and a fresh
    Hugging Face module) computes; ``length=16383`` here reproduces it.
    For consistent scores cache the keys unrotated and rotate the whole cache
    with the query's ``length`` at each step.

    *LongRoPE* (``method="rope_longrope"``) keeps two sets of digit tables,
    those of ``short_factor`` and of ``long_factor``, and uses the long set
    once the length (the last position plus one, or ``length=``) exceeds
    ``original_length`` (:mod:`pe_lib.longrope`); its attention factor
    multiplies queries and keys at every length.

    Names in the peers: ``base`` is Hugging Face's ``rope_theta`` and
    keras-hub's ``max_wavelength``; ``layout="half-split"`` is the pairing
    of Hugging Face's ``rotate_half`` and keras-hub's layer, ``"interleaved"``
    that of GPT-J and the RoFormer paper; ``scale`` is keras-hub's
    ``scaling_factor`` and Hugging Face's ``rope_scaling["factor"]``,
    ``original_length`` its ``original_max_position_embeddings`` (for
    ``"rope_dynamic"``, its ``max_position_embeddings``), ``max_length`` its
    ``max_position_embeddings`` where the factor is their ratio;
    ``rotary_fraction`` is its ``partial_rotary_factor``. The other options
    keep Hugging Face's names and defaults (:mod:`pe_lib.rope_scaling`).

    Args:
        method: ``"rope"`` or a context-extension method of
            :mod:`pe_lib.rope_scaling`: ``"rope_pi"``, ``"rope_ntk"``,
            ``"rope_dynamic"``, ``"rope_yarn"``, ``"rope_yarn_paper"``,
            ``"rope_llama3"``.
        base: the constant :math:`N` of the rates :math:`N^{-2i/d}`.
        layout: ``"half-split"`` or ``"interleaved"``.
        scale: the context-extension factor :math:`s \ge 1` (variants only);
            by default ``max_length / original_length`` if ``max_length`` is
            given, else 1.
        original_length: the trained context :math:`L` (all variants but
            ``"rope_pi"`` and ``"rope_ntk"``).
        sequence_axis: the axis of positions.
        feature_axis: the axis of features; its size is even.
        rotary_fraction: the share of each vector's features that is rotated
            (:func:`pe_lib.rope.rotary_depth`); the rest pass through
            untouched, and the rates are those of the rotated depth.
        max_length: the new context, to take ``scale`` as its ratio to
            ``original_length``; if ``scale`` is given too they must agree.
        beta_fast, beta_slow, truncate: ``"rope_yarn"``'s ramp
            (:func:`pe_lib.rope_scaling.yarn_rates`).
        attention_factor, mscale, mscale_all_dim: ``"rope_yarn"``'s attention
            factor (:func:`pe_lib.rope_scaling.yarn_attention_factor`).
        alpha, beta: ``"rope_yarn_paper"``'s ramp ends, in turns.
        low_freq_factor, high_freq_factor: ``"rope_llama3"``'s bands.
        mrope_section: pairs turned by each position axis, e.g. ``(16, 24, 24)``
            for Qwen2-VL's M-RoPE (time, row, column;
            :func:`pe_lib.multimodal_rope.apply_mrope`); the call then needs
            ``positions`` of shape ``(axes, sequence)`` or ``(axes, batch,
            sequence)``, and the half-split layout.
        axial: with ``mrope_section``, give each section the rates of a head
            of twice its pairs, as 2-D axial RoPE does for image patches
            (:func:`pe_lib.multimodal_rope.apply_axial_rope`; plain
            ``"rope"`` only).
        mrope_interleaved: with ``mrope_section``, deal the pairs out to the
            axes in turn, Qwen3-VL's interleaved M-RoPE
            (:func:`pe_lib.multimodal_rope.pair_axes`).
        proportional: Hugging Face's ``rope_type="proportional"`` (Gemma 4):
            the first ``int(rotary_fraction * depth // 2)`` pairs of the whole
            head (feature :math:`i` with :math:`i + d/2`) turn with the rates
            of the whole head, :math:`N^{-2i/d}` (divided by ``scale`` with
            ``"rope_pi"``), and the other pairs do not turn (rate 0). Unlike
            plain partial rotary, the turned features are not the first ones
            and their rates are not those of a narrower head.
        short_factor, long_factor: ``"rope_longrope"``'s factors, one per
            rotated pair (lists of numbers; all ones when left out, as plain
            RoPE); ``attention_factor`` replaces its
            :math:`\sqrt{1 + \ln s / \ln L}`.
        **kwargs: other arguments for ``keras.layers.Layer``.

    Example:
        >>> import numpy as np
        >>> from pe_lib.rope import apply_rope
        >>> x = np.random.default_rng(0).normal(size=(2, 5, 3, 8)).astype("float32")
        >>> layer = RotaryEmbedding()
        >>> out = keras.ops.convert_to_numpy(layer(x, start_index=7))
        >>> reference = apply_rope(x, np.arange(7, 12), sequence_axis=1)
        >>> bool(np.allclose(out, reference, atol=1e-6)), out.dtype
        (True, dtype('float32'))
        >>> half = RotaryEmbedding(dtype="mixed_float16")
        >>> keras.backend.standardize_dtype(half(x).dtype)
        'float16'

        Llama-3.1-8B's settings, and a partial rotary layer that leaves the
        second half of each head alone:

        >>> llama = RotaryEmbedding("rope_llama3", base=500000.0, scale=8.0, original_length=8192)
        >>> partial = RotaryEmbedding(rotary_fraction=0.5)
        >>> bool(np.array_equal(keras.ops.convert_to_numpy(partial(x))[..., 4:], x[..., 4:]))
        True
    """

    def __init__(self, method: str = "rope", base: float = 10000.0, layout: str = "half-split",
                 scale: float | None = None, original_length: int | None = None,
                 sequence_axis: int = 1, feature_axis: int = -1, *, rotary_fraction: float = 1.0,
                 max_length: int | None = None, beta_fast: float | None = None, beta_slow: float | None = None,
                 truncate: bool | None = None, attention_factor: float | None = None,
                 mscale: float | None = None, mscale_all_dim: float | None = None,
                 alpha: float | None = None, beta: float | None = None,
                 low_freq_factor: float | None = None, high_freq_factor: float | None = None,
                 short_factor=None, long_factor=None, mrope_section=None, axial: bool = False,
                 mrope_interleaved: bool = False, proportional: bool = False, **kwargs):
        # No autocasting: the rotation is computed in float32 or float64 whatever the
        # inputs' dtype, and _output_dtype picks the dtype of the result.
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self.method = require_choice("method", method, method_names("queries and keys"))
        self.base = require_positive_float("base", base)
        self.layout = require_choice("layout", layout, LAYOUTS)
        self.original_length = (
            None if original_length is None else require_int("original_length", original_length, minimum=1)
        )
        if self.method in rope_scaling.NEED_ORIGINAL_LENGTH and self.original_length is None:
            raise ValueError(f"original_length is required for method={self.method!r} (the trained context)")
        self.max_length = None if max_length is None else require_int("max_length", max_length, minimum=1)
        self.scale = None if scale is None else require_positive_float("scale", scale)
        self.sequence_axis = require_int("sequence_axis", sequence_axis)
        self.feature_axis = require_int("feature_axis", feature_axis)
        self.rotary_fraction = require_fraction("rotary_fraction", rotary_fraction)
        given = {
            "beta_fast": beta_fast, "beta_slow": beta_slow, "truncate": truncate,
            "attention_factor": attention_factor, "mscale": mscale, "mscale_all_dim": mscale_all_dim,
            "alpha": alpha, "beta": beta, "low_freq_factor": low_freq_factor,
            "high_freq_factor": high_freq_factor,
            "short_factor": _as_list("short_factor", short_factor),
            "long_factor": _as_list("long_factor", long_factor),
        }
        self.options = {name: value for name, value in given.items() if value is not None}
        if not isinstance(axial, bool):
            raise TypeError(f"axial must be True or False, got {axial!r}")
        if axial and (mrope_section is None or self.method != "rope"):
            raise ValueError(f"axial=True needs mrope_section and method 'rope', got mrope_section={mrope_section!r} "
                             f"and method={self.method!r}")
        if mrope_section is not None and self.layout != "half-split":
            raise ValueError(f"mrope_section needs layout='half-split' (Qwen2-VL's), got {self.layout!r}")
        for name, flag in (("mrope_interleaved", mrope_interleaved), ("proportional", proportional)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        if mrope_interleaved and (mrope_section is None or axial):
            raise ValueError(f"mrope_interleaved=True needs mrope_section and not axial, got "
                             f"mrope_section={mrope_section!r}, axial={axial!r}")
        if proportional and (self.method not in ("rope", "rope_pi") or self.layout != "half-split"
                             or mrope_section is not None):
            raise ValueError(f"proportional=True is for methods 'rope' and 'rope_pi' in the half-split layout "
                             f"without mrope_section (Gemma 4's), got method={self.method!r}, "
                             f"layout={self.layout!r}")
        #: pairs per position axis (M-RoPE, axial RoPE), or ``None`` for one position per step
        self.mrope_section = None if mrope_section is None else tuple(int(n) for n in mrope_section)
        self._pair_axes = None if mrope_section is None else pair_axes(self.mrope_section,
                                                                        interleaved=mrope_interleaved)
        self.axial = axial
        self.mrope_interleaved = mrope_interleaved
        self.proportional = proportional
        self._rate_options, factor_options = rope_scaling.split_options(self.method, self.options)
        #: the scale :math:`s` the rates use
        self.effective_scale = self._resolve_scale()
        #: what multiplies each rotated query and key (YaRN's factor, else 1)
        if self.method == "rope_longrope":
            factor_options["original_length"] = self.original_length
        self.attention_factor = rope_scaling.attention_factor(self.method, self.effective_scale, **factor_options)
        self.depth = None
        self.rotated_depth = None
        self.rates = None
        self._tables = None
        self._long_tables = None

    def _resolve_scale(self) -> float:
        if self.max_length is None:
            return 1.0 if self.scale is None else self.scale
        if self.original_length is None:
            raise ValueError("max_length needs original_length: the scale is their ratio")
        ratio = rope_scaling.scale_from_lengths(self.max_length, self.original_length)
        if self.scale is not None and not np.isclose(self.scale, ratio, rtol=1e-12, atol=0.0):
            raise ValueError(
                f"scale={self.scale!r} disagrees with max_length / original_length = "
                f"{self.max_length} / {self.original_length} = {ratio!r}; give one or the other"
            )
        return ratio

    def _axes(self, rank: int) -> tuple[int, int]:
        axes = []
        for name, axis in (("sequence_axis", self.sequence_axis), ("feature_axis", self.feature_axis)):
            if not -rank <= axis < rank:
                raise ValueError(f"{self.name}: {name}={axis} is outside inputs of rank {rank}")
            axes.append(axis % rank)
        if axes[0] == axes[1]:
            raise ValueError(f"{self.name}: sequence_axis and feature_axis are the same axis ({axes[0]})")
        return axes[0], axes[1]

    def build(self, input_shape) -> None:
        _, feature = self._axes(len(input_shape))
        depth = input_shape[feature]
        if depth is None or (depth % 2 and (self.rotary_fraction == 1.0 or self.proportional)):
            raise ValueError(
                f"{self.name}: the feature axis must have a known even size (RoPE rotates pairs), "
                f"got shape {tuple(input_shape)}"
            )
        self.depth = int(depth)
        try:
            self.rotated_depth = self.depth if self.proportional else rotary_depth(self.depth, self.rotary_fraction)
        except ValueError as error:
            raise ValueError(f"{self.name}: inputs of shape {tuple(input_shape)}: {error}") from None
        if self.mrope_section is not None and self._pair_axes.size != self.rotated_depth // 2:
            raise ValueError(f"{self.name}: mrope_section={self.mrope_section} has {self._pair_axes.size} pairs, "
                             f"the rotated depth {self.rotated_depth} has {self.rotated_depth // 2}")
        length = {"length": self.original_length} if self.method in rope_scaling.FOLLOW_LENGTH else {}
        #: the float64 angle rates, after any scaling (a NumPy array); for
        #: ``"rope_dynamic"``, those at the trained length
        self.rates = rope_scaling.scaled_rates(self.method, self.rotated_depth, scale=self.effective_scale,
                                  original_length=self.original_length, base=self.base,
                                  **length, **self._rate_options)
        if self.axial:
            self.rates = np.concatenate([angle_rates(2 * count, base=self.base) for count in self.mrope_section])
        if self.proportional:  # the pairs past int(fraction * d // 2) do not turn
            self.rates = np.where(np.arange(self.depth // 2) < int(self.rotary_fraction * self.depth // 2),
                                  self.rates, 0.0)
        self._tables = rotation_tables(self.rates)
        if self.method == "rope_longrope":
            long_rates = rope_scaling.scaled_rates(
                self.method, self.rotated_depth, scale=self.effective_scale, original_length=self.original_length,
                base=self.base, length=self.original_length + 1, **self._rate_options)
            self._long_tables = rotation_tables(long_rates)

    def _cos_sin(self, positions, dtype, tables=None):
        """cos and sin of ``positions * rates``, composed from the digit tables."""
        cos = sin = None
        for level, (cos_table, sin_table) in enumerate(self._tables if tables is None else tables):
            digit = ops.mod(ops.floor_divide(positions, 256**level), 256)
            c = ops.take(ops.convert_to_tensor(cos_table, dtype), digit, axis=0)
            s = ops.take(ops.convert_to_tensor(sin_table, dtype), digit, axis=0)
            if cos is None:
                cos, sin = c, s
            else:
                cos, sin = cos * c - sin * s, sin * c + cos * s
        return cos, sin

    def _dynamic_cos_sin(self, positions, length, dtype):
        """cos and sin of ``positions * rates``, the rates of dynamic NTK at ``length``."""
        exact = "float64" if _backend_has_float64() else "float32"
        factor, trained, depth = self.effective_scale, float(self.original_length), self.rotated_depth
        scale = ops.maximum(ops.cast(length, exact) * (factor / trained) - (factor - 1.0), 1.0)
        pairs = np.arange(depth // 2, dtype=np.float64)
        # theta_i = (N s^(d/(d-2)))^(-2i/d) = exp(-(2i/d) ln N - (2i/(d-2)) ln s)
        plain = ops.convert_to_tensor(-2.0 * pairs / depth * np.log(self.base), exact)
        slope = ops.convert_to_tensor(-2.0 * pairs / (depth - 2), exact)
        rates = ops.exp(plain + slope * ops.log(scale))
        angles = ops.cast(positions, exact)[..., None] * rates
        return ops.cast(ops.cos(angles), dtype), ops.cast(ops.sin(angles), dtype)

    def call(self, inputs, start_index=0, positions=None, length=None, attention_mask=None):
        """Rotate ``inputs`` by the angles of their positions.

        Args:
            inputs: the queries or keys.
            start_index: position of the first step (cached decoding), an int.
            positions: integer positions, shape ``(sequence,)`` or
                ``(batch, sequence)``; replaces ``start_index``.
            length: for ``"rope_dynamic"`` only, the length whose scale the
                rates use; by default the last position plus one.
            attention_mask: ``(batch, sequence)`` of 1 (token) and 0 (pad),
                for left-padded inputs: a token's position is the number of
                tokens before it, a pad's 0, as Hugging Face's generation
                computes them (:func:`pe_lib.position_ids.left_padded_position_ids`);
                replaces ``positions`` and ``start_index``.
        """
        if length is not None and self.method not in rope_scaling.FOLLOW_LENGTH:
            raise ValueError(f"{self.name}: length is used by methods 'rope_dynamic' and 'rope_longrope' only")
        inputs = ops.convert_to_tensor(inputs)
        rank = len(inputs.shape)
        sequence, feature = self._axes(rank)
        x = ops.moveaxis(inputs, (sequence, feature), (rank - 2, rank - 1))
        steps = ops.shape(x)[-2]
        if attention_mask is not None:
            if positions is not None:
                raise ValueError(f"{self.name}: give positions or attention_mask, not both")
            mask = ops.cast(attention_mask, "int32")
            positions = ops.where(mask == 1, ops.cumsum(mask, axis=-1) - 1, 0)
        if self.mrope_section is not None:
            return self._call_sections(inputs, x, positions, rank, sequence, feature, dtype=None)
        if positions is None:
            positions = ops.arange(steps, dtype="int32") + ops.cast(start_index, "int32")
        positions = ops.cast(positions, "int32")
        dtype = keras.backend.standardize_dtype(inputs.dtype)
        compute = "float64" if "float64" in (dtype, self.compute_dtype) else "float32"
        if self.method == "rope_dynamic":
            length = ops.max(positions) + 1 if length is None else length
            cos, sin = self._dynamic_cos_sin(positions, length, compute)
        elif self.method == "rope_longrope":
            length = ops.max(positions) + 1 if length is None else length
            short_cos, short_sin = self._cos_sin(positions, compute)
            long_cos, long_sin = self._cos_sin(positions, compute, self._long_tables)
            use_long = ops.greater(ops.cast(length, "int32"), self.original_length)
            cos, sin = ops.where(use_long, long_cos, short_cos), ops.where(use_long, long_sin, short_sin)
        else:
            cos, sin = self._cos_sin(positions, compute)
        if len(positions.shape) == 2:  # (batch, sequence): one row of positions per batch entry
            cos = ops.reshape(cos, (ops.shape(cos)[0],) + (1,) * (rank - 3) + tuple(ops.shape(cos)[1:]))
            sin = ops.reshape(sin, ops.shape(cos))
        values = ops.cast(x[..., : self.rotated_depth], compute)
        half = self.rotated_depth // 2
        if self.layout == "half-split":
            first, second = values[..., :half], values[..., half:]
        else:
            pairs = ops.reshape(values, tuple(ops.shape(values)[:-1]) + (half, 2))
            first, second = pairs[..., 0], pairs[..., 1]
        new_first, new_second = first * cos - second * sin, first * sin + second * cos
        if self.layout == "half-split":
            rotated = ops.concatenate([new_first, new_second], axis=-1)
        else:
            rotated = ops.reshape(ops.stack([new_first, new_second], axis=-1), ops.shape(values))
        if self.attention_factor != 1.0:
            rotated = rotated * self.attention_factor
        output = self._output_dtype(dtype)
        rotated = ops.cast(rotated, output)
        if self.rotated_depth < self.depth:  # partial rotary: the other features pass through
            rotated = ops.concatenate([rotated, ops.cast(x[..., self.rotated_depth:], output)], axis=-1)
        return ops.moveaxis(rotated, (rank - 2, rank - 1), (sequence, feature))

    def _call_sections(self, inputs, x, positions, rank, sequence, feature, dtype):
        """M-RoPE and axial RoPE: each section of pairs turned by the position of its axis."""
        if positions is None or len(ops.shape(positions)) not in (2, 3) or \
                ops.shape(positions)[0] != len(self.mrope_section):
            raise ValueError(f"{self.name}: mrope_section={self.mrope_section} needs positions of shape "
                             f"({len(self.mrope_section)}, sequence) or ({len(self.mrope_section)}, batch, "
                             f"sequence), got {None if positions is None else tuple(ops.shape(positions))}")
        positions = ops.cast(positions, "int32")
        dtype = keras.backend.standardize_dtype(inputs.dtype)
        compute = "float64" if "float64" in (dtype, self.compute_dtype) else "float32"
        cos = sin = 0.0
        for axis in range(len(self.mrope_section)):  # each pair takes the angle of its axis (exactly: x 1 or 0)
            axis_cos, axis_sin = self._cos_sin(positions[axis], compute)
            chosen = ops.convert_to_tensor((self._pair_axes == axis).astype(np.float64), compute)
            cos, sin = cos + axis_cos * chosen, sin + axis_sin * chosen
        if len(positions.shape) == 3:  # (axes, batch, sequence): one row of positions per batch entry
            cos = ops.reshape(cos, (ops.shape(cos)[0],) + (1,) * (rank - 3) + tuple(ops.shape(cos)[1:]))
            sin = ops.reshape(sin, ops.shape(cos))
        values = ops.cast(x[..., : self.rotated_depth], compute)
        half = self.rotated_depth // 2
        first_half, second_half = values[..., :half], values[..., half:]
        rotated = ops.concatenate([first_half * cos - second_half * sin, first_half * sin + second_half * cos],
                                  axis=-1)
        if self.attention_factor != 1.0:
            rotated = rotated * self.attention_factor
        output = self._output_dtype(dtype)
        rotated = ops.cast(rotated, output)
        if self.rotated_depth < self.depth:
            rotated = ops.concatenate([rotated, ops.cast(x[..., self.rotated_depth:], output)], axis=-1)
        return ops.moveaxis(rotated, (rank - 2, rank - 1), (sequence, feature))

    def _output_dtype(self, input_dtype: str) -> str:
        """The compute dtype under a mixed policy, else the dtype of the inputs."""
        policy = self.dtype_policy
        if policy.compute_dtype != policy.variable_dtype:  # mixed_float16, mixed_bfloat16
            return policy.compute_dtype
        return input_dtype

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "method": self.method, "base": self.base, "layout": self.layout, "scale": self.scale,
            "original_length": self.original_length, "sequence_axis": self.sequence_axis,
            "feature_axis": self.feature_axis, "rotary_fraction": self.rotary_fraction,
            "max_length": self.max_length, "mrope_section": None if self.mrope_section is None
            else list(self.mrope_section), "axial": self.axial, "mrope_interleaved": self.mrope_interleaved,
            "proportional": self.proportional,
        })
        config.update({name: self.options.get(name) for name in SCALING_OPTIONS})
        return config

