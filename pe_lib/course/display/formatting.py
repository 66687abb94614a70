"""Numbers in the prose: one precision rule for each kind of number.

The chapters quote computed numbers with myst-nb's ``glue``. Each number is
glued as text, already formatted, so the page never shows a NumPy repr and the
same kind of number always reads the same way:

============  ==========================================  ==================
kind          what it is for                              example
============  ==========================================  ==================
``count``     integers: lengths, positions, parameters    ``9,089``
``value``     entries of encodings, sines, cosines,       ``-0.3123``
              scores, slopes: four decimals
``precise``   a value whose eighth decimal matters        ``0.99999974``
``measure``   wavelengths, distances, norms, accuracies   ``37.97``
              and other quantities: two decimals
``tiny``      errors and other values spanning powers     ``3.0 × 10⁻⁸``
              of ten: two significant digits
``seconds``   run times: one decimal                      ``36.6``
``ratio``     a ratio between two measurements            ``1.37×``
``bound``     a tolerance an error is asserted to stay    ``10⁻¹²``
              below: an exact power of ten
``binary``    an exact power of two, such as a float32    ``2⁻²⁴``
              step
============  ==========================================  ==================

Minus signs are typeset as the minus sign (U+2212), and a value that rounds to
zero is written without a sign.

>>> format_number(9089, "count"), format_number(-0.31234, "value")
('9,089', '−0.3123')
>>> format_number(2.99e-8, "tiny"), format_number(1.3712, "ratio")
('3.0 × 10⁻⁸', '1.37×')
"""

from __future__ import annotations

import math
import numbers

#: Each kind of number and the rule that writes it.
KINDS = ("count", "value", "precise", "measure", "tiny", "seconds", "ratio", "bound", "binary")

_DECIMALS = {"value": 4, "precise": 8, "measure": 2, "seconds": 1, "ratio": 2}
_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_MINUS = "\u2212"


def _real(value, kind: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"value must be a real number, got {value!r} ({type(value).__name__})")
    if not math.isfinite(float(value)):
        raise ValueError(f"value must be finite to be written as a {kind!r} number, got {value!r}")
    return float(value)


def _signed(text: str) -> str:
    """Use the typographic minus, and drop the sign of a value that rounds to zero."""
    if text.startswith("-"):
        return text[1:] if float(text) == 0.0 else _MINUS + text[1:]
    return text


def _power_of_ten(number: float, value) -> str:
    """``10⁻¹²`` for 1e-12: a stated tolerance, never a measured round-off error."""
    exponent = round(math.log10(number)) if number > 0 else None
    if exponent is None or f"{number:.15e}" != f"{10.0**exponent:.15e}":
        raise ValueError(
            f"value must be a power of ten to be written as a 'bound' (the tolerance "
            f"an error is asserted to stay below), got {value!r}"
        )
    return f"10{str(exponent).translate(_SUPERSCRIPTS)}" if exponent != 1 else "10"


def format_number(value, kind: str) -> str:
    """Write ``value`` for the prose, by the rule for its ``kind`` (one of :data:`KINDS`).

    Args:
        value: a real number (Python or NumPy); a ``count`` must be a whole number.
        kind: which rule to use; see the table above.

    Returns:
        The text to show.

    Example:
        >>> format_number(37.9737, "measure"), format_number(0.99999974, "precise")
        ('37.97', '0.99999974')
        >>> format_number(-2e-17, "value")
        '0.0000'
        >>> format_number(1e-12, "bound"), format_number(2.0**-24, "binary")
        ('10⁻¹²', '2⁻²⁴')
        >>> format_number(2.5, "count")
        Traceback (most recent call last):
        ...
        ValueError: value must be a whole number to be written as a 'count', got 2.5
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {kind!r}")
    number = _real(value, kind)
    if kind == "count":
        if number != int(number):
            raise ValueError(f"value must be a whole number to be written as a 'count', got {value!r}")
        return _signed(f"{int(number):,}")
    if kind == "bound":
        return _power_of_ten(number, value)
    if kind == "binary":
        mantissa, exponent = math.frexp(number)
        if mantissa != 0.5:
            raise ValueError(f"value must be a power of two to be written as 'binary', got {value!r}")
        return f"2{str(exponent - 1).translate(_SUPERSCRIPTS)}"
    if kind == "tiny":
        if number == 0.0:
            return "0"
        mantissa, exponent = f"{number:.1e}".split("e")
        return _signed(f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPTS)}")
    text = _signed(f"{number:.{_DECIMALS[kind]}f}")
    return text + "×" if kind == "ratio" else text


def rounded_up(value, decimals: int = 2) -> float:
    """``value`` rounded up to ``decimals`` places: a bound the prose states as "at
    most" that still holds once printed, where rounding to nearest could break it.

    >>> rounded_up(0.0341), rounded_up(0.171)
    (0.04, 0.18)
    """
    scale = 10**decimals
    return math.ceil(value * scale) / scale


class GluedText(str):
    """Text glued for the prose: the page quotes it, so a cell ending with it shows nothing.

    >>> GluedText("0.7854") == "0.7854"
    True
    """

    def _ipython_display_(self) -> None:
        """Nothing to show under the cell: the number appears where the prose quotes it."""


def glue_number(name: str, value, kind: str) -> GluedText:
    """Glue ``value``, formatted by :func:`format_number`, as text under ``name``.

    Call it in a cell tagged ``remove-cell`` and quote the number in the prose
    with ``{eval}`name```. The book reads the glued text (``_ext/glued_expressions.py``);
    JupyterLab's MyST renderer evaluates ``name`` in the kernel, where this puts the
    same text. Returns the text, so a check beside it can read it.
    """
    from myst_nb import glue

    text = format_number(value, kind)
    glue(name, text, display=False)
    _define_in_kernel(name, text)
    return GluedText(text)


def _define_in_kernel(name: str, text: str) -> None:
    """Bind ``name`` to ``text`` in the running IPython kernel, for ``{eval}`name``` in JupyterLab."""
    if not name.isidentifier():
        raise ValueError(f"name must be a Python identifier, so that {{eval}}`name` can show it; got {name!r}")
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: there is no notebook to show it in
        return
    shell = get_ipython()
    if shell is None:
        return
    glued = shell.user_ns.setdefault("_pe_course_glued", set())
    if name in shell.user_ns and name not in glued:
        raise ValueError(f"name {name!r} is already a variable of the notebook; glue the number under "
                         f"another name, or the prose would show that variable instead")
    glued.add(name)
    shell.user_ns[name] = text
