"""The sinusoidal encoding as a Keras layer: precompute the table, crop it, add it."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from pe_lib._checks import require_choice, require_int, require_positive_float
from pe_lib.layers._length_check import check_positions, check_steps
from pe_lib.layouts import LAYOUTS
from pe_lib.sinusoidal import sinusoidal_encoding


def table_dtype(compute_dtype: str) -> str:
    """The dtype a position table is kept in: float64 under a float64 policy, else float32.

    Half-precision policies compute in float16 or bfloat16, but the table is
    kept in float32 and rounded only when it is added, row by row.

    >>> table_dtype("float16"), table_dtype("bfloat16"), table_dtype("float64")
    ('float32', 'float32', 'float64')
    """
    return "float64" if compute_dtype == "float64" else "float32"


def check_input_shape(layer_name: str, input_shape, depth: int | None = None) -> None:
    """Raise ``ValueError`` unless ``input_shape`` is ``(batch, steps, depth)`` with a known depth.

    >>> check_input_shape("PositionalEncoding", (None, None, 8))
    >>> check_input_shape("PositionalEncoding", (None, 8))
    Traceback (most recent call last):
    ...
    ValueError: PositionalEncoding expects inputs of shape (batch, steps, depth), got shape (None, 8)
    """
    shape = tuple(input_shape)
    if len(shape) != 3:
        raise ValueError(f"{layer_name} expects inputs of shape (batch, steps, depth), got shape {shape}")
    if shape[-1] is None:
        raise ValueError(f"{layer_name} needs a known depth (last dimension), got shape {shape}")
    if depth is not None and shape[-1] != depth:
        raise ValueError(f"{layer_name} was built for depth {depth}, got inputs of shape {shape}")


@keras.saving.register_keras_serializable(package="pe_lib")
class PositionalEncoding(keras.layers.Layer):
    """Adds the sinusoidal position encoding to a sequence of vectors.

    The layer keeps a ``(max_length, depth)`` table computed once, in float64,
    by :func:`~pe_lib.sinusoidal.sinusoidal_encoding` and stored in float32 (float64 under
    a float64 policy). Each call crops the table to the number of steps of its
    input and adds it to every sequence in the batch. The table is a constant,
    not a weight: the layer has no parameters and a saved model does not store
    it. Under a mixed-precision policy the table is rounded to the compute
    dtype only when it is added, so position 2049 is never confused with 2048.

    The layer passes any Keras mask through unchanged. An input longer than
    ``max_length`` raises ``ValueError`` (or, for a length known only at run
    time inside a compiled TensorFlow function, ``InvalidArgumentError``).

    For cached decoding, one step at a time, ``layer(x, start=t)`` adds the
    rows of positions ``t .. t + steps - 1`` (keras-hub's
    ``SinePositionEncoding`` calls it ``start_index``); ``start + steps`` must
    not exceed ``max_length``. ``layer(x, positions=p)`` adds row ``p[b, t]``
    to step ``t`` of row ``b`` instead: each row of a left-padded batch at
    its own positions (``cumsum(mask) - 1``,
    :func:`pe_lib.position_ids.left_padded_position_ids`, then
    :meth:`PositionalSelfAttention.next_positions
    <pe_lib.layers.PositionalSelfAttention.next_positions>` while decoding).

    Args:
        max_length: the largest number of positions the layer encodes.
        base: the constant ``N`` of the angle rates ``N**(-2i/depth)``.
        layout: ``"interleaved"`` (sin, cos, sin, ...) or ``"half-split"``
            (all sines, then all cosines).
        **kwargs: other arguments for ``keras.layers.Layer``, such as
            ``name`` and ``dtype``.

    Example:

    >>> import numpy as np
    >>> import pe_lib
    >>> from pe_lib.layers import PositionalEncoding
    >>> layer = PositionalEncoding(max_length=50)
    >>> inputs = np.zeros((2, 10, 16), dtype="float32")
    >>> outputs = layer(inputs)
    >>> tuple(outputs.shape)
    (2, 10, 16)
    >>> bool(np.allclose(outputs[1], pe_lib.sinusoidal_encoding(10, 16)))
    True
    >>> step = layer(np.zeros((2, 1, 16), dtype="float32"), start=9)
    >>> bool(np.allclose(step[0], pe_lib.sinusoidal_encoding(1, 16, start=9)))
    True
    >>> rows = layer(np.zeros((2, 1, 16), dtype="float32"), positions=np.array([[9], [3]]))
    >>> bool(np.allclose(rows[1], pe_lib.sinusoidal_encoding(1, 16, start=3)))
    True
    """

    def __init__(self, max_length: int, base: float = 10000.0, layout: str = "interleaved", **kwargs):
        super().__init__(**kwargs)
        self.max_length = require_int("max_length", max_length, minimum=1)
        self.base = require_positive_float("base", base)
        self.layout = require_choice("layout", layout, LAYOUTS)
        self.supports_masking = True
        self.depth = None
        self._table = None

    def build(self, input_shape) -> None:
        check_input_shape(type(self).__name__, input_shape)
        check_steps(type(self).__name__, input_shape[-2], self.max_length)
        self.depth = int(input_shape[-1])
        table = sinusoidal_encoding(
            self.max_length, self.depth, base=self.base, layout=self.layout,
            dtype=table_dtype(self.compute_dtype),
        )
        self._table = ops.convert_to_tensor(table)

    @property
    def table(self) -> np.ndarray:
        """The full ``(max_length, depth)`` table as a NumPy array (after ``build``)."""
        if self._table is None:
            raise ValueError(f"{self.name} is not built yet: call it on an input first")
        return ops.convert_to_numpy(self._table)

    def call(self, inputs, start=0, positions=None):
        check_input_shape(type(self).__name__, inputs.shape, self.depth)
        if positions is not None:
            return inputs + ops.cast(self._rows(inputs, start, positions), inputs.dtype)
        if isinstance(start, int):
            start = require_int("start", start, minimum=0)
            if start == 0:
                steps = check_steps(type(self).__name__, ops.shape(inputs)[-2], self.max_length)
                return inputs + ops.cast(self._table[:steps], inputs.dtype)
            steps = ops.shape(inputs)[-2]
            if isinstance(steps, int) and start + steps > self.max_length:
                raise ValueError(
                    f"{type(self).__name__}: start={start} plus {steps} steps passes max_length "
                    f"{self.max_length}; build the layer with a larger max_length"
                )
        rows = ops.slice(self._table, (start, 0), (ops.shape(inputs)[-2], self.depth))
        return inputs + ops.cast(rows, inputs.dtype)

    def _rows(self, inputs, start, positions):
        """The rows of ``positions`` ``(steps,)`` or ``(batch, steps)``, ``(..., steps, depth)``."""
        if not (isinstance(start, int) and start == 0):
            raise ValueError(f"{type(self).__name__}: give start or "
                             f"positions, not both (got start={start!r})")
        positions = check_positions(type(self).__name__, positions,
                                    ops.shape(inputs)[-2], self.max_length)
        return ops.take(self._table, positions, axis=0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"max_length": self.max_length, "base": self.base, "layout": self.layout})
        return config
