r"""Why attention needs positions: on its own it cannot see word order.

Self-attention treats its input as a collection of token vectors. Reorder the
tokens and the outputs come back reordered in exactly the same way: the layer
is *permutation-equivariant*. Anything that then pools over the tokens, such
as their mean, cannot tell "dog bites man" from "man bites dog". Adding a
positional encoding to the inputs breaks the symmetry.

This module holds the chapter's tiny tokenizer and the two measurements:
:func:`permutation_gap` (how far a function is from equivariance) and
:func:`pooled_gap` (how far apart two sequences' mean-pooled outputs are).
Keras is imported only inside the functions that need it, so
``import pe_lib`` stays light.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(sentence: str) -> list[str]:
    """Split ``sentence`` into lower-case words and punctuation marks, in order.

    Lower-casing makes "The" and "the" one token, so a repeated word gets one
    vocabulary entry and one embedding.

    >>> tokenize("The quick brown fox jumps over the lazy dog .")
    ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog', '.']
    >>> tokenize("Dog bites man!")
    ['dog', 'bites', 'man', '!']
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {sentence!r} ({type(sentence).__name__})")
    return _TOKEN.findall(sentence.lower())


def build_vocabulary(tokens: Sequence[str]) -> dict[str, int]:
    """Number the distinct ``tokens`` 0, 1, 2, ... in order of first appearance.

    >>> build_vocabulary(["the", "cat", "saw", "the", "dog"])
    {'the': 0, 'cat': 1, 'saw': 2, 'dog': 3}
    """
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of str, not one str: got {tokens!r}")
    vocabulary: dict[str, int] = {}
    for token in tokens:
        if not isinstance(token, str):
            raise TypeError(f"tokens must all be str, got {token!r} ({type(token).__name__})")
        vocabulary.setdefault(token, len(vocabulary))
    return vocabulary


def token_ids(tokens: Sequence[str], vocabulary: Mapping[str, int]) -> np.ndarray:
    """The id of each token: an ``int32`` array of shape ``(len(tokens),)``.

    Args:
        tokens: the tokens of one sentence, e.g. from :func:`tokenize`.
        vocabulary: token to id, e.g. from :func:`build_vocabulary`.

    >>> vocabulary = {"dog": 0, "bites": 1, "man": 2}
    >>> token_ids(["man", "bites", "dog"], vocabulary)
    array([2, 1, 0], dtype=int32)
    """
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of str, not one str: got {tokens!r}")
    unknown = [token for token in tokens if token not in vocabulary]
    if unknown:
        raise ValueError(f"tokens contains {unknown[0]!r}, which is not in vocabulary")
    return np.array([vocabulary[token] for token in tokens], dtype=np.int32).reshape(len(tokens))


def self_attention(layer, **call_options) -> Callable[[np.ndarray], np.ndarray]:
    """Turn an attention layer into the function ``x -> layer(x, x)`` on NumPy arrays.

    Self-attention is attention whose queries and values (and keys) are the
    same sequence. The returned function takes a ``(batch, steps, depth)``
    array and returns the layer's output as a NumPy array.

    Args:
        layer: a layer called as ``layer(query, value, **call_options)``, such
            as ``keras.layers.MultiHeadAttention``.
        **call_options: passed on at every call, e.g. ``use_causal_mask=True``.

    >>> import keras
    >>> keras.utils.set_random_seed(0)
    >>> attend = self_attention(keras.layers.MultiHeadAttention(num_heads=1, key_dim=4))
    >>> attend(np.ones((1, 3, 4), dtype="float32")).shape
    (1, 3, 4)
    """
    if not callable(layer):
        raise TypeError(f"layer must be callable, got {layer!r} ({type(layer).__name__})")

    def attend(inputs: np.ndarray) -> np.ndarray:
        return _to_numpy(layer(inputs, inputs, **call_options))

    return attend


def permutation_gap(function: Callable, inputs, permutation) -> float:
    r"""How far ``function`` is from permutation-equivariance on ``inputs``.

    Reorders the steps (axis ``-2``) of ``inputs`` so that new step ``j``
    holds old step ``permutation[j]``, and returns the largest absolute
    difference between ``function(reordered inputs)`` and ``function(inputs)``
    reordered the same way: :math:`\max |f(PX) - P f(X)|`. An equivariant
    function gives 0, up to floating-point rounding.

    Args:
        function: maps an array of shape ``(..., steps, depth)`` to an array
            of shape ``(..., steps, features)``.
        inputs: an array with at least two axes; axis ``-2`` is the steps.
        permutation: each of ``0 .. steps-1`` exactly once.

    >>> x = np.arange(6.0).reshape(3, 2)
    >>> permutation_gap(lambda v: 2 * v, x, [2, 0, 1])          # acts on each step
    0.0
    >>> permutation_gap(lambda v: np.cumsum(v, axis=-2), x, [2, 0, 1])  # running total
    5.0
    """
    _require_callable(function)
    inputs = _require_steps("inputs", inputs)
    permutation = _require_permutation(permutation, inputs.shape[-2])
    f_of_px = _call_on_steps(function, inputs[..., permutation, :], "inputs")
    p_of_fx = _call_on_steps(function, inputs, "inputs")[..., permutation, :]
    _require_same_shape(f_of_px, p_of_fx)
    return _largest_difference(f_of_px, p_of_fx)  # max |f(PX) - P f(X)|


def pooled_gap(function: Callable, first, second) -> float:
    """Largest absolute difference between the mean-pooled outputs of two sequences.

    Each sequence is passed through ``function`` and its outputs are averaged
    over the steps (axis ``-2``): one summary vector per sequence, the way a
    classifier might summarise a sentence. The sequences may differ in length.

    Args:
        function: maps ``(..., steps, depth)`` to ``(..., steps, features)``.
        first, second: arrays with at least two axes; axis ``-2`` is the steps.

    >>> dog_bites_man = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> man_bites_dog = dog_bites_man[::-1]
    >>> pooled_gap(lambda v: v ** 2, dog_bites_man, man_bites_dog)
    0.0
    """
    _require_callable(function)
    first = _require_steps("first", first)
    second = _require_steps("second", second)
    first_summary = _call_on_steps(function, first, "first").mean(axis=-2)
    second_summary = _call_on_steps(function, second, "second").mean(axis=-2)
    if first_summary.shape != second_summary.shape:
        raise ValueError(
            f"the summaries of first and second differ in shape: "
            f"{first_summary.shape} and {second_summary.shape}"
        )
    return _largest_difference(first_summary, second_summary)


def _to_numpy(value) -> np.ndarray:
    if isinstance(value, (np.ndarray, np.generic, list, tuple, int, float, str)):
        return np.asarray(value)
    import keras  # only here: a layer's output needs its backend to convert it

    return np.asarray(keras.ops.convert_to_numpy(value))


def _require_callable(function) -> None:
    if not callable(function):
        raise TypeError(f"function must be callable, got {function!r} ({type(function).__name__})")


def _require_steps(name: str, value) -> np.ndarray:
    array = _to_numpy(value)
    if array.ndim < 2:
        raise ValueError(f"{name} must have at least two axes (steps, depth), got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got dtype {array.dtype}")
    return array


def _require_permutation(permutation, steps: int) -> np.ndarray:
    array = np.asarray(permutation)
    if array.size == 0:
        array = array.astype(np.int64)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"permutation must be a 1-D sequence of integers, got {permutation!r}")
    if not np.array_equal(np.sort(array), np.arange(steps)):
        raise ValueError(
            f"permutation must hold each of 0..{steps - 1} exactly once, got {array.tolist()}"
        )
    return array


def _call_on_steps(function: Callable, inputs: np.ndarray, name: str) -> np.ndarray:
    outputs = _to_numpy(function(inputs))
    if outputs.ndim < 2 or outputs.shape[:-1] != inputs.shape[:-1]:
        raise ValueError(
            f"function must keep the leading axes of {name}: it mapped shape {inputs.shape} "
            f"to {outputs.shape}"
        )
    return outputs


def _require_same_shape(f_of_px: np.ndarray, p_of_fx: np.ndarray) -> None:
    if f_of_px.shape != p_of_fx.shape:
        raise ValueError(
            f"function returned shape {f_of_px.shape} for reordered inputs "
            f"but {p_of_fx.shape} for the originals"
        )


def _largest_difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0))
