r"""Three ways to write the RoPE rotation, for teaching and timing.

- :func:`rope_complex`: neighbouring features as complex numbers, multiplied
  by :math:`e^{\mathrm{i} m\theta_i}` (the interleaved layout; Meta's Llama code);
- :func:`rope_efficient`: :math:`x \odot c_m + \operatorname{rotate\_half}(x) \odot s_m`
  (the half-split layout; the Hugging Face port), :math:`O(d)` per vector;
- :func:`rope_matrix`: one block-diagonal :math:`d \times d` matrix per
  position, :math:`O(d^2)` per vector.

All three agree with :func:`pe_lib.rope.apply_rope` in their layout. The
tables (:func:`cos_sin_tables`, :func:`rotation_matrices`) are computed once
per length, as a model would.

>>> x = np.array([[1.0, 0.0]] * 2)
>>> rope_efficient(x, *cos_sin_tables(2, 2)).round(4)
array([[1.    , 0.    ],
       [0.5403, 0.8415]])
"""

from __future__ import annotations

import numpy as np

from pe_lib import rope


def rope_complex(x, positions, base=10000.0):
    """Rotate ``x`` of shape ``(..., length, d)``, pairing neighbours.

    >>> rope_complex(np.array([[0.0, 1.0]]), [1]).round(4)
    array([[-0.8415,  0.5403]])
    """
    x = np.asarray(x, dtype=np.float64)
    z = x[..., 0::2] + 1j * x[..., 1::2]  # torch.view_as_complex
    angles = rope.rope_angles(positions, x.shape[-1], base=base)
    freqs_cis = np.exp(1j * angles)  # precompute_freqs_cis
    turned = z * freqs_cis
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = turned.real, turned.imag  # view_as_real
    return out


def rotate_half(x):
    """(-x[d/2:], x[:d/2]): each half-split pair turned by a right angle.

    >>> rotate_half(np.array([1.0, 2.0, 3.0, 4.0]))
    array([-3., -4.,  1.,  2.])
    """
    x = np.asarray(x)
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def cos_sin_tables(length, depth, base=10000.0):
    """The (length, depth) tables c_m and s_m: each angle once per half.

    >>> cos, sin = cos_sin_tables(2, 4)
    >>> sin.round(4)
    array([[0.    , 0.    , 0.    , 0.    ],
           [0.8415, 0.01  , 0.8415, 0.01  ]])
    """
    angles = rope.rope_angles(np.arange(length), depth, base=base)
    angles = np.concatenate([angles, angles], axis=-1)
    return np.cos(angles), np.sin(angles)


def rotation_matrices(length, depth, base=10000.0):
    """One depth x depth rotation R_m per position, half-split pairs.

    >>> rotation_matrices(2, 2)[1].round(4)
    array([[ 0.5403, -0.8415],
           [ 0.8415,  0.5403]])
    """
    cos, sin = cos_sin_tables(length, depth, base=base)
    half = depth // 2
    first, second = np.arange(half), np.arange(half, depth)
    matrices = np.zeros((length, depth, depth))
    matrices[:, first, first] = cos[:, :half]
    matrices[:, second, second] = cos[:, :half]
    matrices[:, first, second] = -sin[:, :half]
    matrices[:, second, first] = sin[:, :half]
    return matrices


def rope_efficient(x, cos, sin):
    """Rotate x of shape (..., length, depth): O(depth) per vector."""
    return x * cos + rotate_half(x) * sin


def rope_matrix(x, matrices):
    """Rotate x of shape (..., length, depth): O(depth**2) per vector."""
    return (matrices @ x[..., None])[..., 0]
