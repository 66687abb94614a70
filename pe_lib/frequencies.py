r"""The frequencies of the sinusoidal encoding: a geometric series of wavelengths.

Column pair :math:`i` of a depth-:math:`d` encoding turns at the angle rate
:math:`\omega_i = N^{-2i/d}` radians per position, so its wavelength is
:math:`\lambda_i = 2\pi N^{2i/d}`. Consecutive wavelengths differ by the constant
factor :math:`N^{2/d}`: they run from :math:`2\pi` up to, but never reaching,
:math:`2\pi N`.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int, require_positive_float


def angle_rates(depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""Angle rates :math:`\omega_i = \text{base}^{-2i/\text{depth}}`, one per sine column.

    There are ``ceil(depth / 2)`` of them, in float64.

    >>> angle_rates(4)
    array([1.  , 0.01])
    """
    depth = require_int("depth", depth, minimum=1)
    base = require_positive_float("base", base)
    pair_index = np.arange((depth + 1) // 2, dtype=np.float64)
    return base ** (-2.0 * pair_index / depth)


def wavelengths(depth: int, *, base: float = 10000.0) -> np.ndarray:
    r"""Wavelengths :math:`\lambda_i = 2\pi\,\text{base}^{2i/\text{depth}}`, in positions.

    >>> wavelengths(4).round(3)
    array([  6.283, 628.319])
    """
    return 2.0 * np.pi / angle_rates(depth, base=base)
