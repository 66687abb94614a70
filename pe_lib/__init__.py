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
- :mod:`pe_lib.layers`: the encodings as Keras layers (fixed, learned, token plus position).
- :mod:`pe_lib.order_tasks`: a task that only a model that knows positions can solve.
- :mod:`pe_lib.order_classifier`: a small Transformer trained on it, with and without positions.
- :mod:`pe_lib.relative`: Shaw-style clipped relative positions.
- :mod:`pe_lib.t5_buckets`: T5's relative-position buckets.
- :mod:`pe_lib.alibi`: ALiBi's per-head slopes and linear biases.
- :mod:`pe_lib.rope`: rotary position embedding, in both feature layouts.
- :mod:`pe_lib.extrapolation`: training short and testing long, for each method.
- :mod:`pe_lib.mistakes`: common mistakes, made executable.
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
