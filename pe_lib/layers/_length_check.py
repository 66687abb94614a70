"""The checks a table of positions makes: the input is no longer than the table, each row asked for is in it."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from pe_lib.layers._masking import concrete


def check_steps(layer_name: str, steps, max_length: int):
    """Return ``steps``, or raise if that many positions do not fit in ``max_length`` rows.

    ``steps`` is a Python int when the length is known (static shapes, eager
    calls); the check is then made here and raises ``ValueError``. When the
    length is only known at run time (a ``None`` dimension inside a compiled
    TensorFlow function) the check becomes an assertion in the graph, which
    raises ``InvalidArgumentError`` with the same message when it runs; the
    returned ``steps`` then depends on that assertion, so slicing with it
    cannot run before the check.

    >>> check_steps("PositionalEncoding", 12, 16)
    12
    >>> check_steps("PositionalEncoding", 20, 16)
    Traceback (most recent call last):
    ...
    ValueError: PositionalEncoding: the input has 20 steps but max_length is 16; build the layer with a larger max_length
    """
    message = (
        f"{layer_name}: the input has {{}} steps but max_length is {max_length}; "
        "build the layer with a larger max_length"
    )
    if steps is None:
        return steps
    if isinstance(steps, int):
        if steps > max_length:
            raise ValueError(message.format(steps))
        return steps
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        check = tf.debugging.assert_less_equal(
            tf.cast(steps, "int64"), tf.constant(max_length, "int64"), message=message.format("more")
        )
        with tf.control_dependencies([check]):
            steps = tf.identity(steps)
    return steps


def check_rows(layer_name: str, start: int, steps, max_length: int) -> None:
    """Raise if rows ``start`` to ``start + steps - 1`` pass the table's ``max_length`` rows.

    >>> check_rows("LearnedPositionEmbedding", 60, 5, 64)
    Traceback (most recent call last):
    ...
    ValueError: LearnedPositionEmbedding: start=60 plus 5 steps passes max_length 64; build the layer with a larger max_length
    """
    if isinstance(steps, int) and start + steps > max_length:
        raise ValueError(f"{layer_name}: start={start} plus {steps} steps passes max_length {max_length}; "
                         "build the layer with a larger max_length")


def check_positions(layer_name: str, positions, steps, max_length: int):
    """``positions`` as int32 ``(steps,)`` or ``(batch, steps)``, each a row of the table, or an error.

    The shape is checked whenever it is known; the values (whole numbers from
    0 to ``max_length - 1``) on eager calls, where they are known.

    >>> tuple(check_positions("PositionalEncoding", np.array([[0, 0, 1]]), 3, 4).shape)
    (1, 3)
    >>> check_positions("PositionalEncoding", np.array([[0, 4, 5]]), 3, 4)
    Traceback (most recent call last):
    ...
    ValueError: PositionalEncoding: positions must be whole numbers from 0 to max_length - 1 = 3, got 4 in [[0, 4, 5]]
    """
    tensor = ops.convert_to_tensor(positions)
    shape = tuple(tensor.shape)
    if len(shape) not in (1, 2) or (isinstance(steps, int) and shape[-1] not in (None, steps)):
        raise ValueError(f"{layer_name}: positions must have shape (steps,) or (batch, steps) with "
                         f"steps = {steps}, got shape {shape}")
    values = concrete(tensor)
    if values is not None:
        inside = (values == np.round(values)) & (values >= 0) & (values < max_length)
        if not inside.all():
            raise ValueError(f"{layer_name}: positions must be whole numbers from 0 to max_length - 1 = "
                             f"{max_length - 1}, got {values[~inside].ravel()[0].item()!r} in {values.tolist()!r}")
    return ops.cast(tensor, "int32")
