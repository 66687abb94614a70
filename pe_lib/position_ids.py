r"""Position ids when the input is not one sequence from position 0: packed, left-padded, multimodal.

- *Packed sequences.* Training packs several documents into one row, with
  no padding between them; each document's positions start again at 0
  (:func:`packed_position_ids`, Hugging Face's
  ``DataCollatorWithFlattening``), and attention must stay inside each
  document. :func:`packed_documents` recovers the documents from the
  positions, as Hugging Face's masks do (``find_packed_sequence_indices``):
  a new document starts wherever a position is not its predecessor plus one;
  :func:`packed_mask` is the causal mask that keeps each query in its own
  document.
- *Left padding.* A batch of prompts of different lengths for generation
  is padded on the left, so that every row ends at its last real token.
  The positions then come from the attention mask: a real token's position
  is the number of real tokens before it; pads get 0
  (:func:`left_padded_position_ids`, Hugging Face's
  ``_prepare_position_ids_for_generation``).
- *Text and images* (Qwen2-VL): :func:`mrope_position_ids` gives each token
  a time, row and column for :func:`pe_lib.multimodal_rope.apply_mrope`;
  :func:`patch_positions` gives the vision tower's patches their row and
  column for :func:`pe_lib.multimodal_rope.apply_axial_rope`.

>>> packed_position_ids([3, 2]).tolist()
[0, 1, 2, 0, 1]
>>> left_padded_position_ids([[0, 1, 1], [1, 1, 1]]).tolist()
[[0, 0, 1], [0, 1, 2]]
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int


def packed_position_ids(lengths, *, start: int = 0) -> np.ndarray:
    """The positions of documents of ``lengths`` packed into one row: each starts again at ``start``.

    >>> packed_position_ids([2, 1, 3]).tolist()
    [0, 1, 0, 0, 1, 2]
    """
    lengths = [require_int("lengths", length, minimum=1) for length in lengths]
    start = require_int("start", start, minimum=0)
    if not lengths:
        raise ValueError("lengths must hold at least one document length, got none")
    return np.concatenate([np.arange(length) for length in lengths]) + start


def packed_documents(position_ids) -> np.ndarray:
    """Which document each step belongs to, numbered from 0 in each row, found from the positions.

    A document starts at the first step and wherever a position is not the
    previous one plus one.

    >>> packed_documents([[0, 1, 2, 0, 0, 1]]).tolist()
    [[0, 0, 0, 1, 2, 2]]
    """
    positions = np.asarray(position_ids)
    if not np.issubdtype(positions.dtype, np.integer) or positions.ndim < 1 or positions.shape[-1] < 1:
        raise ValueError(f"position_ids must be integers with a sequence axis, got {position_ids!r}")
    steps = np.diff(positions, axis=-1)
    return np.concatenate([np.zeros(positions.shape[:-1] + (1,), dtype=np.int64),
                           np.cumsum(steps != 1, axis=-1)], axis=-1)


def packed_mask(position_ids) -> np.ndarray:
    """The causal mask of packed documents: query ``i`` sees key ``j <= i`` of its own document.

    >>> packed_mask([0, 1, 0]).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    documents = packed_documents(position_ids)
    steps = documents.shape[-1]
    causal = np.tril(np.ones((steps, steps), dtype=bool))
    return causal & (documents[..., :, None] == documents[..., None, :])


def left_padded_position_ids(attention_mask) -> np.ndarray:
    """Positions from an attention mask of 1 (token) and 0 (pad): tokens count from 0, pads get 0.

    >>> left_padded_position_ids([0, 0, 1, 1]).tolist()
    [0, 0, 0, 1]
    """
    mask = np.asarray(attention_mask)
    if mask.ndim < 1 or not np.isin(mask, (0, 1)).all():
        raise ValueError(f"attention_mask must hold 0 and 1 along a sequence axis, got {attention_mask!r}")
    mask = mask.astype(np.int64)
    return np.where(mask == 1, np.cumsum(mask, axis=-1) - 1, 0)


def patch_positions(height: int, width: int, *, merge: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of each patch of a ``height`` x ``width`` grid, in the vision tower's order.

    Qwen2-VL's vision tower lists the patches block by block, ``merge`` x
    ``merge`` patches at a time (the blocks later merged into one token),
    blocks and patches within them in reading order.

    >>> [a.tolist() for a in patch_positions(2, 4, merge=2)]
    [[0, 0, 1, 1, 0, 0, 1, 1], [0, 1, 0, 1, 2, 3, 2, 3]]
    """
    height, width = require_int("height", height, minimum=1), require_int("width", width, minimum=1)
    merge = require_int("merge", merge, minimum=1)
    if height % merge or width % merge:
        raise ValueError(f"height and width must be multiples of merge={merge}, got {height} and {width}")
    rows, columns = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    blocks = (height // merge, merge, width // merge, merge)
    return (rows.reshape(blocks).transpose(0, 2, 1, 3).ravel(),
            columns.reshape(blocks).transpose(0, 2, 1, 3).ravel())


def mrope_position_ids(segments, *, merge: int = 1, time_interval: float = 1.0,
                       attention_mask=None) -> np.ndarray:
    """Time, row and column positions ``(3, length)`` of text, images and videos, as Qwen2-VL numbers them.

    Args:
        segments: in order, an ``int`` for that many text tokens,
            ``(height, width)`` for an image of that many patches, or
            ``(frames, height, width)`` for a video of ``frames`` time steps
            (``video_grid_thw``, frames already merged in time).
        merge: patches merged into one token along each side
            (``spatial_merge_size``, 2 in Qwen2-VL).
        time_interval: positions per video time step: 1 in Qwen2-VL;
            ``tokens_per_second * second_per_grid_t`` in Qwen2.5-VL. The time
            position of step ``f`` is ``p + floor(f * time_interval)``.
        attention_mask: 1 (token) and 0 (pad) per step of the row: the
            segments fill the steps marked 1 in order, and pads get 0
            (``get_rope_index`` with an ``attention_mask``, left padding).

    A text token at position :math:`p` is :math:`(p, p, p)`. An image
    starting at :math:`p` has ``height/merge`` x ``width/merge`` tokens at
    :math:`(p, p + r, p + c)`, row by row; a video repeats them for each time
    step. What follows starts at ``p + max(rows, columns)``, whatever the
    video's time positions reached, as in transformers.

    >>> mrope_position_ids([2, (2, 4), 1], merge=2).tolist()
    [[0, 1, 2, 2, 4], [0, 1, 2, 2, 4], [0, 1, 2, 3, 4]]
    >>> mrope_position_ids([(2, 2, 2), 1], merge=2, time_interval=2.5)[0].tolist()
    [0, 2, 1]
    >>> mrope_position_ids([2], attention_mask=[0, 1, 1]).tolist()
    [[0, 0, 1], [0, 0, 1], [0, 0, 1]]
    """
    merge = require_int("merge", merge, minimum=1)
    interval = float(time_interval)
    if not np.isfinite(interval) or interval < 0:
        raise ValueError(f"time_interval must be a finite number >= 0, got {time_interval!r}")
    pieces, start = [], 0
    for segment in segments:
        if isinstance(segment, (int, np.integer)) and not isinstance(segment, bool):
            count = require_int("segments", segment, minimum=1)
            pieces.append(np.tile(np.arange(start, start + count), (3, 1)))
            start += count
            continue
        try:
            sizes = tuple(segment)
        except TypeError:
            sizes = ()
        if len(sizes) not in (2, 3):
            raise TypeError(f"segments must hold text lengths, (height, width) of images or (frames, height, "
                            f"width) of videos, got {segment!r}")
        frames = require_int("frames", sizes[0], minimum=1) if len(sizes) == 3 else 1
        height, width = require_int("height", sizes[-2], minimum=1), require_int("width", sizes[-1], minimum=1)
        if height % merge or width % merge:
            raise ValueError(f"an image's height and width must be multiples of merge={merge}, "
                             f"got {height} and {width}")
        times, rows, columns = np.meshgrid(np.floor(np.arange(frames) * interval).astype(np.int64),
                                           np.arange(height // merge), np.arange(width // merge), indexing="ij")
        pieces.append(np.stack([times.ravel(), rows.ravel(), columns.ravel()]) + start)
        start += max(height, width) // merge
    if not pieces:
        raise ValueError("segments must hold at least one text or image, got none")
    positions = np.concatenate(pieces, axis=1)
    if attention_mask is None:
        return positions
    mask = np.asarray(attention_mask)
    if mask.ndim != 1 or not np.isin(mask, (0, 1)).all() or int(mask.sum()) != positions.shape[1]:
        raise ValueError(f"attention_mask must be 0 and 1 along the row with one 1 per token of the segments "
                         f"({positions.shape[1]}), got {attention_mask!r}")
    padded = np.zeros((3, mask.size), dtype=np.int64)
    padded[:, mask == 1] = positions
    return padded


def mrope_deltas(position_ids, attention_mask=None) -> np.ndarray:
    """Hugging Face's ``rope_deltas``: the largest position plus one, less the number of tokens, per row.

    In generation the text after the prompt is at ``tokens_so_far + rope_deltas``
    (transformers 5 counts the tokens with the attention mask): one past the
    largest position of any axis. ``position_ids`` is ``(3, length)`` or
    ``(3, batch, length)``.

    >>> mrope_deltas(mrope_position_ids([2, (2, 4), 1], merge=2)).tolist()
    [0]
    >>> mrope_deltas(mrope_position_ids([1, (4, 6)], merge=2)).tolist()
    [-3]
    """
    positions = np.asarray(position_ids)
    if positions.ndim == 2:
        positions = positions[:, None]
    if positions.ndim != 3 or not np.issubdtype(positions.dtype, np.integer):
        raise ValueError(f"position_ids must be integers of shape (axes, length) or (axes, batch, length), "
                         f"got {position_ids!r}")
    mask = np.ones(positions.shape[1:], dtype=np.int64) if attention_mask is None else np.asarray(attention_mask)
    mask = mask.reshape(positions.shape[1:])
    largest = np.where(mask[None] == 1, positions, -1).max(axis=(0, 2))
    return largest + 1 - mask.sum(axis=-1)


def image_blocks(token_type_ids) -> np.ndarray:
    """The image block of each step, numbered from 0 in each row, and -1 for text (type 0).

    A block is a run of image tokens (type 1); Gemma 3 lets the tokens of one
    block see each other both ways (Hugging Face's
    ``get_block_sequence_ids_for_mask``).

    >>> image_blocks([[0, 1, 1, 0, 1]]).tolist()
    [[-1, 0, 0, -1, 1]]
    """
    types = np.asarray(token_type_ids)
    if types.ndim < 1 or not np.issubdtype(types.dtype, np.integer):
        raise ValueError(f"token_type_ids must be integers along a sequence axis, got {token_type_ids!r}")
    image = types == 1
    previous = np.concatenate([np.zeros(image.shape[:-1] + (1,), bool), image[..., :-1]], axis=-1)
    starts = image & ~previous
    return np.where(image, np.cumsum(starts, axis=-1) - 1, -1)
