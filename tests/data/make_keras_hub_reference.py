"""Make tests/data/keras_hub_reference.json: what keras-hub's position layers compute, for pe_lib's tests.

Run it in an environment of its own, never the course's (the course never
imports keras_hub):

    python3 -m venv /tmp/khenv
    /tmp/khenv/bin/pip install keras-hub "jax[cpu]"
    KERAS_BACKEND=jax /tmp/khenv/bin/python tests/data/make_keras_hub_reference.py

Made with keras-hub 0.32.0, keras 3.15.1, JAX 0.10.2 (CPU) and NumPy 2.4.6;
the file records the versions it was made with.

Each section calls a keras-hub layer on a fixed input drawn from a seeded
NumPy generator and records the input and the output (float32 values written
exactly, as Python floats):

- ``sine_position_encoding``: ``keras_hub.layers.SinePositionEncoding`` for a
  few (length, width, ``max_wavelength``, ``start_index``); the layer returns
  the encoding alone, for the caller to add.
- ``rotary_embedding``: ``keras_hub.layers.RotaryEmbedding`` (its default
  ``rope_type="linear"``) for a few (input shape, ``max_wavelength``,
  ``scaling_factor``, ``sequence_axis``, ``feature_axis``, ``start_index``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).with_name("keras_hub_reference.json")


def floats(tensor) -> list:
    return np.asarray(keras.ops.convert_to_numpy(tensor), dtype=np.float64).tolist()


def random(shape, seed) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def sine_position_encoding() -> list:
    cases = []
    for length, width, max_wavelength, start_index in ((16, 8, 10000, 0), (40, 32, 10000, 0), (12, 7, 10000, 0),
                                                       (20, 16, 100, 0), (4, 16, 10000, 1000)):
        x = random((1, length, width), seed=length * 100 + width)
        layer = keras_hub.layers.SinePositionEncoding(max_wavelength=max_wavelength)
        encoding = layer(x, start_index=start_index)
        cases.append({"length": length, "width": width, "max_wavelength": max_wavelength,
                      "start_index": start_index, "x": floats(x), "encoding": floats(encoding)})
    return cases


def rotary_embedding() -> list:
    cases = []
    for shape, max_wavelength, scaling_factor, sequence_axis, feature_axis, start_index in (
            ((1, 16, 2, 8), 10000, 1.0, 1, -1, 0),          # (batch, sequence, heads, head_dim)
            ((1, 24, 1, 32), 10000, 4.0, 1, -1, 0),         # linear scaling (position interpolation)
            ((1, 12, 1, 16), 500000, 1.0, 1, -1, 0),        # Llama 3's base
            ((2, 2, 10, 8), 10000, 2.0, 2, -1, 0),          # (batch, heads, sequence, head_dim)
            ((1, 8, 10), 10000, 1.0, 2, 1, 0),              # (batch, features, sequence)
            ((1, 4, 1, 32), 10000, 1.0, 1, -1, 1000)):      # one decoding step far along
        x = random(shape, seed=sum(shape) + int(scaling_factor) + start_index)
        layer = keras_hub.layers.RotaryEmbedding(max_wavelength=max_wavelength, scaling_factor=scaling_factor,
                                                 sequence_axis=sequence_axis, feature_axis=feature_axis)
        rotated = layer(x, start_index=start_index)
        cases.append({"shape": list(shape), "max_wavelength": max_wavelength, "scaling_factor": scaling_factor,
                      "sequence_axis": sequence_axis, "feature_axis": feature_axis, "start_index": start_index,
                      "rope_type": layer.rope_type, "x": floats(x), "rotated": floats(rotated)})
    return cases


def main() -> None:
    versions = {name: importlib.metadata.version(name) for name in ("keras-hub", "keras", "jax", "jaxlib", "numpy")}
    versions["python"] = platform.python_version()
    data = {
        "made_by": "tests/data/make_keras_hub_reference.py", "versions": versions,
        "keras_backend": keras.backend.backend(),
        "sine_position_encoding": sine_position_encoding(), "rotary_embedding": rotary_embedding(),
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes) with {sys.executable}")


if __name__ == "__main__":
    main()
