"""Read an answers file written in the sandbox, trusting nothing in it.

The file is opened without following links, must be a plain file of at most
:data:`FILE_LIMIT` bytes, and is decoded into plain values and NumPy arrays
of numeric dtypes only; anything else makes it malformed.

>>> decode({"__ndarray__": ["float64", [2], [0.5, 1.0]]})
array([0.5, 1. ])
>>> decode({"__error__": ["NameError", "name 'x' is not defined"]})
Raised(kind='NameError', message="name 'x' is not defined")
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path

import numpy as np

#: Largest answers file read, in bytes.
FILE_LIMIT = 64 << 20
_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64"}


class Malformed(ValueError):
    """The answers file is missing, too large, or not what the runner writes."""


@dataclasses.dataclass(frozen=True)
class Raised:
    """A probe or cell that raised instead of giving a value."""

    kind: str
    message: str


def clean(text: object, limit: int = 80) -> str:
    """Text from a submission made safe for a CSV cell: printable, one line, capped.

    >>> clean("line one\\nline\\x00two" + "x" * 100, limit=20)
    'line one line?two...'
    """
    text = "".join(c if c.isprintable() else ("?" if c not in "\n\t" else " ") for c in str(text))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def decode(value):
    """The plain value or array that the runner encoded as ``value``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not (isinstance(value, dict) and len(value) == 1):
        raise Malformed("an answer is not in the runner's format")
    (tag, content), = value.items()
    if tag == "__ndarray__":
        dtype, shape, flat = content
        if dtype not in _DTYPES or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise Malformed("an array answer is not numeric")
        array = np.array(flat, dtype=dtype)
        if array.ndim != 1 or array.size != int(np.prod(shape, dtype=np.int64)):
            raise Malformed("an array answer has the wrong number of values")
        return array.reshape(shape)
    if tag == "__error__":
        kind, message = content
        return Raised(clean(kind, 40), clean(message))
    if tag in ("__list__", "__tuple__"):
        items = [decode(item) for item in content]
        return tuple(items) if tag == "__tuple__" else items
    if tag == "__dict__" and isinstance(content, dict):
        return {str(key): decode(item) for key, item in content.items()}
    raise Malformed("an answer is not in the runner's format")


def read(path: Path) -> dict:
    """``{"cell_errors": [...], "answers": {...}}`` decoded from ``path``."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise Malformed("no answers were written") from error
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise Malformed("the answers file is not a plain file")
    with os.fdopen(descriptor, "rb") as handle:
        if info.st_size > FILE_LIMIT:
            raise Malformed(f"the answers file is larger than {FILE_LIMIT >> 20} MiB")
        raw = handle.read(FILE_LIMIT + 1)
    try:
        data = json.loads(raw)
        errors = [(int(n), clean(kind, 40), clean(message)) for n, kind, message in data["cell_errors"]]
        answers = {str(key): decode(item) for key, item in data["answers"].items()}
    except Malformed:
        raise
    except Exception as error:
        raise Malformed("the answers file is not in the runner's format") from error
    return {"cell_errors": errors, "answers": answers, "raw": data["answers"]}
