"""Decode what the runner sends back, trusting nothing in it.

Each answer arrives as one line of JSON (see :mod:`classroom.runner`). A
line is refused before it is parsed when it is longer than
:data:`LINE_LIMIT` bytes or holds more than :data:`ITEM_LIMIT` lists,
dictionaries and items, so that the grader's memory is bounded whatever the
structure (parsing a megabyte of ``[],[],…`` would otherwise take hundreds).
Arrays travel as base64 of their bytes, one item each, in a standard dtype.
A line that cannot be read costs that answer only: it becomes
:class:`Unreadable`, with a reason that names no value from the submission.

>>> decode({"__ndarray__": ["float64", [2], "AAAAAAAA4D8AAAAAAADwPw=="]})
array([0.5, 1. ])
>>> decode({"__error__": ["ValueError", "the hidden input was 7"]})
Raised(kind='ValueError', message='')
>>> decode({"__error__": ["Secret_7", ""]}).kind
'an exception of its own class'
"""

from __future__ import annotations

import base64
import binascii
import builtins
import dataclasses
import json
import math

import numpy as np

#: Longest line of one answer, in bytes.
LINE_LIMIT = 4 << 20
#: Most bytes of answers from one submission.
TOTAL_LIMIT = 64 << 20
#: Most lists, dictionaries and items in one answer (counted before parsing).
ITEM_LIMIT = 20_000
#: Most items in all the answers of one submission.
TOTAL_ITEMS = 200_000
#: Most numbers in one array.
SIZE_LIMIT = 200_000
_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64"}
#: Exception names shown as they are; any other is a class the student made,
#: whose name could carry what the probe passed it.
KNOWN_KINDS = frozenset(
    [name for name, value in vars(builtins).items()
     if isinstance(value, type) and issubclass(value, BaseException)]
    + ["OutOfTime", "LinAlgError", "AxisError", "NotData"])
#: What the runner's codes for an answer that is not data mean.
NOT_DATA = {
    "objects": "is an array of Python objects, not numbers",
    "complex": "is complex, not real",
    "dtype": "is an array that does not hold numbers",
    "range": "holds numbers too large for float64",
    "nested": "is nested too deeply",
    "items": "holds too many items",
    "size": f"holds more than {SIZE_LIMIT} numbers",
    "type": "is not numbers, text, lists or arrays",
    "ellipsis": "still ... (not answered)",
}


class Malformed(ValueError):
    """What came back is not what the runner sends; the message says why."""


@dataclasses.dataclass(frozen=True)
class Raised:
    """A probe or cell that raised instead of giving a value.

    For a probe, ``message`` is always empty: its text could carry the
    hidden inputs. A cell's message is kept (cells run before any probe).
    """

    kind: str
    message: str = ""


@dataclasses.dataclass(frozen=True)
class Unreadable:
    """An answer that came back but cannot be read; ``reason`` is the grader's own text."""

    reason: str


def clean(text: object, limit: int = 80) -> str:
    """Text from a submission made safe for a CSV cell: printable, one line, capped.

    >>> clean("line one\\nline\\x00two" + "x" * 100, limit=20)
    'line one line?two...'
    """
    text = "".join(c if c.isprintable() else ("?" if c not in "\n\t" else " ") for c in str(text))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def safe_kind(kind: object) -> str:
    """An exception's name if it is a known one, else a phrase that reveals nothing."""
    return str(kind) if str(kind) in KNOWN_KINDS else "an exception of its own class"


def items(raw: bytes) -> int:
    """An upper bound on the containers and items ``raw`` JSON parses into.

    >>> items(b'[[], [], {"a": 1}]')
    6
    """
    return raw.count(b"[") + raw.count(b"{") + raw.count(b",")


def _array(content) -> np.ndarray:
    if not (isinstance(content, list) and len(content) == 3):
        raise Malformed("an array answer is not in the runner's format")
    dtype, shape, data = content
    if dtype not in _DTYPES:
        raise Malformed("an array answer does not hold numbers")
    if not (isinstance(shape, list) and len(shape) <= 32
            and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= SIZE_LIMIT for n in shape)):
        raise Malformed("an array answer has no valid shape")
    size = math.prod(shape)
    if size > SIZE_LIMIT:
        raise Malformed(f"an array answer holds more than {SIZE_LIMIT} numbers")
    if isinstance(data, str):
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise Malformed("an array answer is not in the runner's format") from None
        kind = np.dtype(dtype).newbyteorder("<")
        if len(raw) != size * kind.itemsize:
            raise Malformed("an array answer has the wrong number of values")
        return np.frombuffer(raw, dtype=kind).astype(np.dtype(dtype)).reshape(shape)
    if isinstance(data, list):  # the form of builds made before arrays travelled as bytes
        array = np.array(data, dtype=dtype)
        if array.ndim != 1 or array.size != size:
            raise Malformed("an array answer has the wrong number of values")
        return array.reshape(shape)
    raise Malformed("an array answer is not in the runner's format")


def decode(value, depth: int = 0):
    """The plain value, array or :class:`Raised` that the runner encoded as ``value``."""
    if depth > 8:
        raise Malformed("an answer is nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(item, depth + 1) for item in value]
    if not (isinstance(value, dict) and len(value) == 1):
        raise Malformed("an answer is not in the runner's format")
    (tag, content), = value.items()
    if tag == "__ndarray__":
        return _array(content)
    if tag == "__error__":
        if not (isinstance(content, list) and content and isinstance(content[0], str)):
            raise Malformed("an error is not in the runner's format")
        if content[0] == "NotData" and len(content) > 1 and content[1] in NOT_DATA:
            return Raised("NotData", str(content[1]))
        return Raised(safe_kind(content[0]))
    if tag in ("__list__", "__tuple__") and isinstance(content, list):
        decoded = [decode(item, depth + 1) for item in content]
        return tuple(decoded) if tag == "__tuple__" else decoded
    if tag == "__dict__" and isinstance(content, dict):
        return {str(key): decode(item, depth + 1) for key, item in content.items()}
    raise Malformed("an answer is not in the runner's format")


def parse_line(raw: bytes):
    """The JSON value of one line, refused before parsing when it is too large."""
    if len(raw) > LINE_LIMIT:
        raise Malformed(f"is larger than {LINE_LIMIT >> 20} MiB")
    if items(raw) > ITEM_LIMIT:
        raise Malformed(f"holds more than {ITEM_LIMIT} items")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise Malformed("is not in the runner's format") from None


def cell_errors(value) -> list[tuple[int, str, str]]:
    """The cells' report, ``[(number, kind, message), ...]``, cleaned and capped."""
    if not (isinstance(value, dict) and isinstance(value.get("cell_errors"), list)):
        raise Malformed("the cells' report is not in the runner's format")
    found = []
    for entry in value["cell_errors"][:50]:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], int)):
            raise Malformed("the cells' report is not in the runner's format")
        number, kind, message = entry
        found.append((number, clean(kind, 40), clean(message)))
    return found
