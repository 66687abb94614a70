"""Argument checks shared by pe_lib: every error names the argument and its value."""

from __future__ import annotations

import math
import numbers

import numpy as np


def require_int(name: str, value, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` or raise, naming ``name``.

    Booleans and floats are refused even when they hold a whole number:
    ``length=5.0`` is more likely a bug than an intention.

    >>> require_int("length", 5, minimum=0)
    5
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def require_positive_float(name: str, value) -> float:
    """Return ``value`` as a finite ``float`` > 0 or raise, naming ``name``.

    >>> require_positive_float("base", 10000)
    10000.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def require_fraction(name: str, value) -> float:
    """Return ``value`` as a ``float`` in ``(0, 1]`` or raise, naming ``name``.

    >>> require_fraction("rotary_fraction", 0.25)
    0.25
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1], got {value!r} ({type(value).__name__})")
    value = float(value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return value


def require_choice(name: str, value, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise, naming ``name``.

    >>> require_choice("layout", "interleaved", ("interleaved", "half-split"))
    'interleaved'
    """
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def require_float_dtype(name: str, value) -> np.dtype:
    """Return ``np.dtype(value)`` if it is a floating-point type, else raise.

    >>> require_float_dtype("dtype", "float32")
    dtype('float32')
    """
    try:
        dtype = np.dtype(value)
    except TypeError as error:
        raise TypeError(f"{name} must be a floating-point dtype, got {value!r}") from error
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"{name} must be a floating-point dtype, got {value!r}")
    return dtype


def require_even(name: str, value, *, reason: str) -> int:
    """Return ``value`` as an even ``int`` >= 2 or raise, naming ``name`` and saying why.

    >>> require_even("depth", 4, reason="the columns must pair up")
    4
    """
    value = require_int(name, value, minimum=1)
    if value % 2:
        raise ValueError(f"{name} must be even ({reason}), got {value}")
    return value


def require_multiple(name: str, value: int, of_name: str, of: int) -> int:
    """Return ``value`` if ``of`` divides it, or raise, naming both.

    >>> require_multiple("depth", 8, "heads", 4)
    8
    >>> require_multiple("depth", 10, "heads", 4)
    Traceback (most recent call last):
    ...
    ValueError: depth must be a multiple of heads, got depth=10 and heads=4
    """
    if value % of:
        raise ValueError(f"{name} must be a multiple of {of_name}, got {name}={value} and {of_name}={of}")
    return value
