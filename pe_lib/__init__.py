"""pe_lib: the library behind *Positional encoding, from first principles*.

Each module holds one idea of the course, in the order the chapters meet them:

- :mod:`pe_lib.order`: self-attention ignores word order until positions are added.
- :mod:`pe_lib.periodicity`: why one wave cannot label positions and many can.
- :mod:`pe_lib.frequencies`: angle rates and the geometric series of wavelengths.
- :mod:`pe_lib.sinusoidal`: the sinusoidal encoding table itself.
- :mod:`pe_lib.variants`: a mis-copied formula, and the properties it loses.
- :mod:`pe_lib.tables`: small tables of rates and values to check by hand.
- :mod:`pe_lib.rotation`: moving by k positions is a block rotation M_k.
- :mod:`pe_lib.similarity`: dot products and distances depend on the offset only.
- :mod:`pe_lib.precision`: why angles must not be formed in float32.
- :mod:`pe_lib.plotting`: the course's figure style.

The most used functions are importable from the top level:

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
