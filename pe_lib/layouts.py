"""How the two members of each feature pair are arranged in a vector.

Sinusoidal encodings and RoPE both work on pairs of features, one pair per
angle rate, and both come in two arrangements, the same two:

- ``"interleaved"``: pair :math:`i` is features :math:`(2i, 2i + 1)`: the
  paper's sinusoidal table (sin, cos, sin, cos, ...), the RoFormer paper and
  GPT-J for RoPE;
- ``"half-split"``: pair :math:`i` is features :math:`(i, i + \\lceil d/2 \\rceil)`:
  the first half of the vector against the second. For the sinusoidal table it
  is all the sines, then all the cosines (the layout often called
  "concatenated", as in tensor2tensor); for RoPE it is the pairing of GPT-NeoX
  and Llama, Hugging Face's ``rotate_half`` and keras-hub's ``RotaryEmbedding``.

:func:`interleaved_to_half_split` turns one arrangement into the other.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int

#: The two arrangements of feature pairs, in sinusoidal tables and in RoPE alike.
LAYOUTS = ("interleaved", "half-split")


def interleaved_to_half_split(depth: int) -> np.ndarray:
    """Feature order that turns the interleaved layout into the half-split one.

    ``x[..., interleaved_to_half_split(d)]`` puts the first member of every
    pair (the even features) first, then the second members (the odd ones). An
    odd depth, which only sinusoidal tables allow, ends its first half with the
    lone sine column.

    >>> interleaved_to_half_split(6)
    array([0, 2, 4, 1, 3, 5])
    >>> interleaved_to_half_split(5)
    array([0, 2, 4, 1, 3])
    """
    depth = require_int("depth", depth, minimum=1)
    return np.concatenate([np.arange(0, depth, 2), np.arange(1, depth, 2)])
