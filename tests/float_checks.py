"""Comparing a transcendental result with its exact value, within a stated number of ulp.

NumPy picks its ``power``, ``exp``, ``log``, ``sin`` and ``cos`` loops by the
processor's vector instructions: on AVX-512 they come from Intel's SVML, whose
published worst case is 4 ulp, elsewhere from the C library (below 1 ulp). So a
result of one of them is never compared bit for bit with another code path or
with a correctly rounded value: it is compared with the exact value (mpmath,
exact fractions) within :data:`TRANSCENDENTAL_ULP` steps of the result's format.
"""

from __future__ import annotations

import mpmath
import numpy as np

# NumPy's AVX-512 loops (SVML) are accurate to 4 ulp; the C library's to 1.
TRANSCENDENTAL_ULP = 4


def ulp_of(value, dtype=np.float64) -> mpmath.mpf:
    """The spacing of ``dtype`` at the exact ``value`` (its smallest spacing at zero)."""
    info = np.finfo(dtype)
    magnitude = abs(mpmath.mpf(value))
    exponent = int(info.minexp) if magnitude == 0 else max(int(mpmath.floor(mpmath.log(magnitude, 2))), int(info.minexp))
    return mpmath.ldexp(1, exponent - int(info.nmant))


def ulp_errors(actual, expected, *, dtype=None, of=None) -> np.ndarray:
    """How many steps of ``dtype`` each entry of ``actual`` lies from the exact ``expected``.

    ``expected`` may hold mpmath numbers, fractions or floats (taken as exact).
    ``of`` measures the step at a fixed magnitude instead of at each value: for a
    sum of terms, give the largest term.

    >>> float(ulp_errors([0.1], [mpmath.mpf(1) / 10])[0]) < 0.5
    True
    """
    actual = np.asarray(actual)
    dtype = np.dtype(dtype or (actual.dtype if actual.dtype.kind == "f" else np.float64))
    flat_actual = actual.astype(np.float64).ravel()
    flat_expected = np.asarray(expected, dtype=object).ravel()
    if flat_actual.size != flat_expected.size:
        raise ValueError(f"actual has {flat_actual.size} entries and expected {flat_expected.size}")
    with mpmath.workdps(60):
        errors = [
            abs(mpmath.mpf(float(a)) - mpmath.mpf(e)) / ulp_of(e if of is None else of, dtype)
            for a, e in zip(flat_actual, flat_expected)
        ]
    return np.array([float(error) for error in errors]).reshape(actual.shape)


def assert_within_ulp(actual, expected, *, ulp: float = TRANSCENDENTAL_ULP, dtype=None, of=None) -> None:
    """Fail unless every entry of ``actual`` is within ``ulp`` steps of the exact ``expected``."""
    errors = ulp_errors(actual, expected, dtype=dtype, of=of)
    if errors.size and not np.all(errors <= ulp):
        worst = np.unravel_index(np.argmax(errors), errors.shape)
        raise AssertionError(
            f"{np.count_nonzero(errors > ulp)} of {errors.size} entries are more than {ulp} ulp "
            f"from the exact value; the worst, at {worst}, is {errors[worst]:.3g} ulp off"
        )
