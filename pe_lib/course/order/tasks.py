"""An order-sensitive task: which of two marker tokens comes first?

Each sequence holds random filler tokens and two markers, ``FIRST_MARKER``
and ``SECOND_MARKER``, at two different positions. Its label is 1 when
``FIRST_MARKER`` comes before ``SECOND_MARKER`` and 0 otherwise.

The sequences come in mirror pairs: row ``2k + 1`` is row ``2k`` with the two
markers swapped, so it holds the same tokens in a different order and has the
opposite label. A model that cannot see positions gives both rows of a pair
the same answer and is therefore right on exactly half of them: chance is
built into the data, not estimated from it.
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int

#: Token id 0 is left free for padding.
PADDING = 0
#: The marker whose position the label asks about.
FIRST_MARKER = 1
#: The other marker.
SECOND_MARKER = 2
#: Filler tokens are drawn from ``FILLER_START .. vocabulary_size - 1``.
FILLER_START = 3


def marker_order_task(
    pairs: int, length: int, *, vocabulary_size: int = 16, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Token sequences with two markers, labelled 1 when ``FIRST_MARKER`` comes first.

    Args:
        pairs: number of mirror pairs; the result has ``2 * pairs`` rows.
        length: steps per sequence, ``>= 2`` (room for both markers).
        vocabulary_size: number of token ids, ``>= 4`` (padding, two
            markers and at least one filler).
        seed: seed of the NumPy generator; the same seed gives the same data.

    Returns:
        ``(tokens, labels)``: an int32 array of shape ``(2 * pairs, length)``
        and an int32 array of shape ``(2 * pairs,)``, half ones and half zeros.

    Example:
        >>> tokens, labels = marker_order_task(1, 6, seed=3)
        >>> tokens
        array([[13,  1,  5,  6,  2, 13],
               [13,  2,  5,  6,  1, 13]], dtype=int32)
        >>> labels
        array([1, 0], dtype=int32)
    """
    pairs = require_int("pairs", pairs, minimum=0)
    length = require_int("length", length, minimum=2)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=FILLER_START + 1)
    seed = require_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)

    fillers = rng.integers(FILLER_START, vocabulary_size, size=(pairs, length))
    # Two different positions per pair: sort random keys and keep the first two.
    places = np.argsort(rng.random((pairs, length)), axis=1)[:, :2]
    rows = np.arange(pairs)
    tokens = np.repeat(fillers[:, None, :], 2, axis=1)
    tokens[rows, 0, places[:, 0]] = FIRST_MARKER
    tokens[rows, 0, places[:, 1]] = SECOND_MARKER
    tokens[rows, 1, places[:, 0]] = SECOND_MARKER
    tokens[rows, 1, places[:, 1]] = FIRST_MARKER
    first_leads = places[:, 0] < places[:, 1]
    labels = np.stack([first_leads, ~first_leads], axis=1)
    return tokens.reshape(2 * pairs, length).astype(np.int32), labels.reshape(-1).astype(np.int32)


def adjacent_markers_task(
    pairs: int, length: int, *, vocabulary_size: int = 16, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Token sequences with two markers, labelled 1 when the markers are neighbours.

    A task only the offset answers. In each mirror pair, row ``2k`` holds
    the markers side by side, in a random order; row ``2k + 1`` holds the
    same tokens with the second of them moved two or more steps from the
    first (the filler there takes its place). A model that cannot see
    positions sees one bag of tokens twice and is right on exactly half.

    Args:
        pairs: number of mirror pairs; the result has ``2 * pairs`` rows.
        length: steps per sequence, ``>= 4`` (room to move a marker away).
        vocabulary_size: number of token ids, ``>= 4``.
        seed: seed of the NumPy generator; the same seed gives the same data.

    Returns:
        ``(tokens, labels)`` as :func:`marker_order_task` gives them; the
        labels alternate 1, 0.

    Example:
        >>> tokens, labels = adjacent_markers_task(1, 6, seed=3)
        >>> tokens
        array([[13,  4,  5,  6,  1,  2],
               [ 2,  4,  5,  6,  1, 13]], dtype=int32)
        >>> labels
        array([1, 0], dtype=int32)
    """
    pairs = require_int("pairs", pairs, minimum=0)
    length = require_int("length", length, minimum=4)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=FILLER_START + 1)
    seed = require_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)

    tokens = np.repeat(rng.integers(FILLER_START, vocabulary_size, size=(pairs, 1, length)), 2, axis=1)
    for k in range(pairs):
        start = int(rng.integers(0, length - 1))
        order = rng.permutation([FIRST_MARKER, SECOND_MARKER])
        far = [step for step in range(length) if abs(step - start) >= 2]
        moved = int(rng.choice(far))
        near, apart = tokens[k]
        near[start:start + 2] = order
        apart[start], apart[start + 1], apart[moved] = order[0], near[moved], order[1]
    labels = np.tile(np.array([1, 0], dtype=np.int32), pairs)
    return tokens.reshape(2 * pairs, length).astype(np.int32), labels


def _as_rows(tokens) -> np.ndarray:
    """``tokens`` as an array of rows ``(sequences, steps)``, or a ``ValueError`` naming its shape."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 2:
        raise ValueError(f"tokens must be 2-D (sequences, steps), got shape {tokens.shape}")
    return tokens


def with_fillers(
    tokens: np.ndarray, steps: int, *, before: bool = False, vocabulary_size: int = 16, seed: int = 0
) -> np.ndarray:
    """``tokens`` lengthened by ``steps`` random fillers after each row (in front with ``before``).

    The markers keep their order, so each row keeps its label; only their
    positions move (by ``steps`` with ``before``) and the sequence grows.

    >>> with_fillers(np.array([[1, 2]]), 3, seed=0)
    array([[ 1,  2, 14, 11,  9]], dtype=int32)
    >>> with_fillers(np.array([[1, 2]]), 3, before=True, seed=0)
    array([[14, 11,  9,  1,  2]], dtype=int32)
    """
    tokens = _as_rows(tokens)
    steps = require_int("steps", steps, minimum=0)
    vocabulary_size = require_int("vocabulary_size", vocabulary_size, minimum=FILLER_START + 1)
    seed = require_int("seed", seed, minimum=0)
    fillers = np.random.default_rng(seed).integers(FILLER_START, vocabulary_size, size=(len(tokens), steps))
    parts = (fillers, tokens) if before else (tokens, fillers)
    return np.concatenate(parts, axis=1).astype(np.int32)


def marker_positions(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``FIRST_MARKER`` and ``SECOND_MARKER`` in each row.

    >>> tokens, _ = marker_order_task(1, 6, seed=3)
    >>> marker_positions(tokens)
    (array([1, 4]), array([4, 1]))
    """
    tokens = _as_rows(tokens)
    for marker in (FIRST_MARKER, SECOND_MARKER):
        counts = np.sum(tokens == marker, axis=1)
        if np.any(counts != 1):
            row = int(np.argmax(counts != 1))
            raise ValueError(f"tokens row {row} holds marker {marker} {int(counts[row])} times, not once")
    return np.argmax(tokens == FIRST_MARKER, axis=1), np.argmax(tokens == SECOND_MARKER, axis=1)


def swap_markers(tokens: np.ndarray) -> np.ndarray:
    """The same sequences with the two markers exchanged: a reordering of each row.

    >>> swap_markers(np.array([[1, 7, 2]]))
    array([[2, 7, 1]])
    """
    tokens = np.asarray(tokens)
    swapped = tokens.copy()
    swapped[tokens == FIRST_MARKER] = SECOND_MARKER
    swapped[tokens == SECOND_MARKER] = FIRST_MARKER
    return swapped
