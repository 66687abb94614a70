"""pe_lib: the library behind *Positional encoding, from first principles*.

The package root holds what a user of Transformers imports: the position
methods, each as a NumPy reference and as a Keras 3 layer.

- :mod:`pe_lib.methods`: the registry of position methods (``"sinusoidal"``,
  ``"learned"``, ``"rope"`` and its context-extension variants ``"rope_pi"``,
  ``"rope_ntk"``, ``"rope_dynamic"``, ``"rope_yarn"``, ``"rope_yarn_paper"``,
  ``"rope_llama3"``, ``"rope_longrope"``, then ``"alibi"``, ``"t5"``, ``"shaw"``, ``"none"``):
  each one's NumPy reference and Keras layer, looked up by name.
- :mod:`pe_lib.frequencies`: angle rates and the geometric series of wavelengths.
- :mod:`pe_lib.layouts`: the two arrangements of feature pairs.
- :mod:`pe_lib.sinusoidal`: the sinusoidal encoding table.
- :mod:`pe_lib.rope`: rotary position embedding, in both layouts.
- :mod:`pe_lib.rope_scaling`: context extension for RoPE (PI, NTK-aware,
  dynamic NTK, YaRN as shipped and as the paper writes it, Llama 3, and
  ``"rope_longrope"``).
- :mod:`pe_lib.longrope`: LongRoPE's searched factors per pair (Phi-3).
- :mod:`pe_lib.layer_schemes`: a position method per layer (Gemma 3, Llama 4).
- :mod:`pe_lib.temperature`: a factor on the queries by position (Llama 4).
- :mod:`pe_lib.sinks`: sliding windows and attention sinks (StreamingLLM, gpt-oss).
- :mod:`pe_lib.alibi`: ALiBi's per-head slopes and linear biases.
- :mod:`pe_lib.t5`: T5's relative-position buckets, exact.
- :mod:`pe_lib.shaw`: Shaw et al.'s clipped relative positions.
- :mod:`pe_lib.layers`: the Keras 3 layers, one per file.

- :mod:`pe_lib.similarity`: the dot product and distance of two sinusoidal
  encodings depend only on how far apart they are.
- :mod:`pe_lib.uniqueness`: the closest two positions of any code, the test
  of a unique encoding.

:mod:`pe_lib.course` holds what the course uses to teach: the experiments,
the figures' style, the worked tables, the mistakes made executable and the
formatting of the numbers in the prose. Nothing in the package root imports it.

The most used functions are importable from the top level:

>>> import pe_lib
>>> pe_lib.sinusoidal_encoding(1, 4).tolist()
[[0.0, 1.0, 0.0, 1.0]]
"""

from pe_lib.frequencies import angle_rates, wavelengths
from pe_lib.layouts import LAYOUTS, interleaved_to_half_split
from pe_lib.sinusoidal import sine_and_cosine_counts, sinusoidal_encoding
from pe_lib.uniqueness import PositionPair, nearest_pairs

__all__ = [
    "LAYOUTS",
    "PositionPair",
    "angle_rates",
    "interleaved_to_half_split",
    "nearest_pairs",
    "sine_and_cosine_counts",
    "sinusoidal_encoding",
    "wavelengths",
]
