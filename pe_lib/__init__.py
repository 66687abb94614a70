"""pe_lib: the library behind *Positional encoding, from first principles*.

Each module holds one idea of the course:

- :mod:`pe_lib.frequencies`: angle rates and the geometric series of wavelengths.
- :mod:`pe_lib.sinusoidal`: the sinusoidal encoding table itself.
- :mod:`pe_lib.periodicity`: why one wave cannot label positions and many can.
- :mod:`pe_lib.plotting`: the course's figure style (imported on demand).

>>> import pe_lib
>>> pe_lib.sinusoidal_encoding(1, 4).tolist()
[[0.0, 1.0, 0.0, 1.0]]
"""

from pe_lib.frequencies import angle_rates, wavelengths
from pe_lib.periodicity import PositionPair, binary_code, nearest_pairs
from pe_lib.sinusoidal import (
    LAYOUTS,
    interleaved_to_concatenated,
    sine_and_cosine_counts,
    sinusoidal_encoding,
)

__all__ = [
    "LAYOUTS",
    "PositionPair",
    "angle_rates",
    "binary_code",
    "interleaved_to_concatenated",
    "nearest_pairs",
    "sine_and_cosine_counts",
    "sinusoidal_encoding",
    "wavelengths",
]
