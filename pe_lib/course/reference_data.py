"""The recorded reference data the chapters check against, found beside the library.

Released models' configurations and the values other libraries computed live
in the clone's ``tests/data``; a chapter reads them through
:func:`reference_data`, so that it runs from any folder of the clone.

>>> reference_data("model_configs").name
'model_configs'
"""

from __future__ import annotations

from pathlib import Path

#: The clone's folder of recorded reference data.
REFERENCE_FOLDER = Path(__file__).resolve().parents[2] / "tests" / "data"


def reference_data(name: str) -> Path:
    """The path of ``tests/data/<name>`` in the clone that holds this library.

    >>> reference_data("hf_reference.json").is_file()
    True
    >>> reference_data("no_such_file.json")
    Traceback (most recent call last):
    ...
    FileNotFoundError: name='no_such_file.json': no such file or folder in the clone's tests/data
    """
    path = REFERENCE_FOLDER / name
    if not path.exists():
        raise FileNotFoundError(f"name={name!r}: no such file or folder in the clone's tests/data")
    return path
