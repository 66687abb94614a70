r"""RoPE as a Keras layer: rotate queries or keys by their positions.

The keras.ops twin of :func:`pe_lib.rope.apply_rope`; tests check one against
the other.
"""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from pe_lib._checks import require_choice, require_int, require_positive_float
from pe_lib.layouts import LAYOUTS
from pe_lib.methods import method_names
from pe_lib.rope import rotation_tables
from pe_lib.rope_scaling import scaled_rates, yarn_attention_factor



@keras.saving.register_keras_serializable(package="pe_lib")
class RotaryEmbedding(keras.layers.Layer):
    r"""Rotates each feature pair of its input by the angle of its position.

    The input is a tensor of queries or keys with a sequence axis and a feature
    axis, by default ``(batch, sequence, heads, head_dim)`` as in keras-hub and
    GPT-J (``sequence_axis=1``, ``feature_axis=-1``); for
    ``(batch, heads, sequence, head_dim)`` pass ``sequence_axis=2``. The output
    has the input's shape and dtype, except under a mixed policy
    (``mixed_float16``, ``mixed_bfloat16``): there, like any Keras layer, it
    has the policy's compute dtype. Either way the rotation is computed in
    float32 (float64 for float64 inputs) and cast at the end.

    Angles are never formed in float32. Each position is split into four
    8-bit digits; the cosine and sine of ``digit * 256**k * rate`` are
    tabulated once in float64 (reduced modulo :math:`2\pi`) and the four
    rotations are composed by angle addition in the compute dtype, so a
    float32 rotation is accurate to a few float32 steps at every position
    below :math:`2^{31}`.

    Names in the peers: ``base`` is Hugging Face's ``rope_theta`` and
    keras-hub's ``max_wavelength``; ``layout="half-split"`` is the pairing
    of Hugging Face's ``rotate_half`` and keras-hub's layer, ``"interleaved"``
    that of GPT-J and the RoFormer paper; ``scale`` is keras-hub's
    ``scaling_factor`` and Hugging Face's ``rope_scaling["factor"]``.

    Args:
        method: ``"rope"`` or a context-extension variant, ``"rope_pi"``,
            ``"rope_ntk"``, ``"rope_yarn"`` (see :mod:`pe_lib.rope_scaling`).
        base: the constant :math:`N` of the rates :math:`N^{-2i/d}`.
        layout: ``"half-split"`` or ``"interleaved"``.
        scale: the context-extension factor :math:`s \ge 1` (variants only).
        original_length: the trained context :math:`L` (``"rope_yarn"`` only).
        sequence_axis: the axis of positions.
        feature_axis: the axis of features; its size is even.
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
    """

    def __init__(self, method: str = "rope", base: float = 10000.0, layout: str = "half-split",
                 scale: float = 1.0, original_length: int | None = None,
                 sequence_axis: int = 1, feature_axis: int = -1, **kwargs):
        # No autocasting: the rotation is computed in float32 or float64 whatever the
        # inputs' dtype, and _output_dtype picks the dtype of the result.
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self.method = require_choice("method", method, method_names("queries and keys"))
        self.base = require_positive_float("base", base)
        self.layout = require_choice("layout", layout, LAYOUTS)
        self.scale = require_positive_float("scale", scale)
        self.original_length = (
            None if original_length is None else require_int("original_length", original_length, minimum=1)
        )
        self.sequence_axis = require_int("sequence_axis", sequence_axis)
        self.feature_axis = require_int("feature_axis", feature_axis)
        self.depth = None
        self.rates = None
        self._tables = None
        self.attention_factor = 1.0

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
        if depth is None or depth % 2:
            raise ValueError(
                f"{self.name}: the feature axis must have a known even size (RoPE rotates pairs), "
                f"got shape {tuple(input_shape)}"
            )
        self.depth = int(depth)
        #: the float64 angle rates, after any scaling (a NumPy array)
        self.rates = scaled_rates(self.method, self.depth, scale=self.scale,
                                  original_length=self.original_length, base=self.base)
        self._tables = rotation_tables(self.rates)
        self.attention_factor = yarn_attention_factor(self.scale) if self.method == "rope_yarn" else 1.0

    def _cos_sin(self, positions, dtype):
        """cos and sin of ``positions * rates``, composed from the digit tables."""
        cos = sin = None
        for level, (cos_table, sin_table) in enumerate(self._tables):
            digit = ops.mod(ops.floor_divide(positions, 256**level), 256)
            c = ops.take(ops.convert_to_tensor(cos_table, dtype), digit, axis=0)
            s = ops.take(ops.convert_to_tensor(sin_table, dtype), digit, axis=0)
            if cos is None:
                cos, sin = c, s
            else:
                cos, sin = cos * c - sin * s, sin * c + cos * s
        return cos, sin

    def call(self, inputs, start_index=0, positions=None):
        """Rotate ``inputs`` by the angles of their positions.

        Args:
            inputs: the queries or keys.
            start_index: position of the first step (cached decoding), an int.
            positions: integer positions, shape ``(sequence,)`` or
                ``(batch, sequence)``; replaces ``start_index``.
        """
        inputs = ops.convert_to_tensor(inputs)
        rank = len(inputs.shape)
        sequence, feature = self._axes(rank)
        x = ops.moveaxis(inputs, (sequence, feature), (rank - 2, rank - 1))
        steps = ops.shape(x)[-2]
        if positions is None:
            positions = ops.arange(steps, dtype="int32") + ops.cast(start_index, "int32")
        positions = ops.cast(positions, "int32")
        dtype = keras.backend.standardize_dtype(inputs.dtype)
        compute = "float64" if dtype == "float64" else "float32"
        cos, sin = self._cos_sin(positions, compute)
        if len(positions.shape) == 2:  # (batch, sequence): one row of positions per batch entry
            cos = ops.reshape(cos, (ops.shape(cos)[0],) + (1,) * (rank - 3) + tuple(ops.shape(cos)[1:]))
            sin = ops.reshape(sin, ops.shape(cos))
        values = ops.cast(x, compute)
        half = self.depth // 2
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
        rotated = ops.cast(rotated, self._output_dtype(dtype))
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
            "feature_axis": self.feature_axis,
        })
        return config
