"""Why one wave cannot label positions, and what many waves (or bits) do instead."""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int


def binary_code(length: int, bits: int) -> np.ndarray:
    """Positions ``0 .. length-1`` written in binary, least significant bit first.

    Bit ``b`` flips every ``2**b`` positions, so it repeats with period
    ``2**(b+1)``: the square-wave cousin of a sinusoid. Past ``2**bits``
    positions the counter wraps round and codes repeat.

    >>> binary_code(4, 2)
    array([[0, 0],
           [1, 0],
           [0, 1],
           [1, 1]])
    """
    length = require_int("length", length, minimum=0)
    bits = require_int("bits", bits, minimum=1)
    return (np.arange(length)[:, None] >> np.arange(bits)) & 1
