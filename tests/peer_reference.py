"""The values Hugging Face transformers and keras-hub compute, as ``tests/data/make_hf_reference.py`` and
``tests/data/make_keras_hub_reference.py`` recorded them.

The course never imports the peers; their outputs were generated once in an
environment of their own, with the versions in ``PEER["versions"]`` and
``KERAS_HUB["versions"]``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

#: Everything the script recorded, by section.
PEER = json.loads((Path(__file__).parent / "data" / "hf_reference.json").read_text())

#: What keras-hub's ``SinePositionEncoding`` and ``RotaryEmbedding`` compute, by section.
KERAS_HUB = json.loads((Path(__file__).parent / "data" / "keras_hub_reference.json").read_text())

#: One float32 step at 1, the precision of every value the peers compute.
FLOAT32_STEP = 2.0**-23


def array(values) -> np.ndarray:
    """A recorded list as a float64 array."""
    return np.asarray(values, dtype=np.float64)


def float32_angle_tolerance(positions, rates) -> np.ndarray:
    """How far a float32 cosine or sine of ``position * rate`` may sit from the exact one.

    The peers form the angle in float32 (one rounding of the rate, one of the
    product: each at most half a step of the angle) and take its cosine in
    float32: 2 steps of the angle plus 2 steps at 1, per position and pair.
    """
    angles = np.abs(np.multiply.outer(np.asarray(positions, dtype=np.float64), rates))
    return 2 * FLOAT32_STEP * (angles + 1.0)
