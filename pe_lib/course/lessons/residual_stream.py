r"""Why positions survive a deep stack: the residual stream, measured in NumPy.

A Transformer block does not replace its input; it adds to it,
:math:`h_{l+1} = h_l + F_l(h_l)`, so the input :math:`x + PE` (tokens plus
position codes) is still a term of every later :math:`h_l`. :func:`run_stack`
passes inputs through a stack of blocks with random weights, with the residual
connection or without it (each block's output replacing its input), and
:func:`position_recoverability` measures how much of the position code a
linear read-out can still recover from the result.

>>> blocks = random_blocks(8, 2, heads=2, seed=0)
>>> states = run_stack(np.zeros((1, 3, 8)), blocks)
>>> len(states), states[-1].shape
(3, (1, 3, 8))
"""

from __future__ import annotations

import numpy as np

from pe_lib._checks import require_int, require_multiple


def random_blocks(depth: int, count: int, *, heads: int = 4, seed: int = 0) -> list[dict]:
    """Weights of ``count`` blocks (attention, then a feed-forward layer), drawn at random.

    Every matrix has entries of variance ``1 / fan_in``, the usual start of
    training, so each block's output is of the same size as its normalised input.

    Args:
        depth: width of the vectors, a multiple of ``heads``.
        count: number of blocks, ``>= 0``.
        heads: attention heads per block.
        seed: seed of the NumPy generator.

    Returns:
        A list with a dict for each block, holding the arrays ``query``,
        ``key``, ``value`` and ``output`` (``depth x depth``), ``expand``
        (``depth x 4 depth``) and ``project`` (``4 depth x depth``), and the
        number of ``heads``.
    """
    depth = require_int("depth", depth, minimum=1)
    count = require_int("count", count, minimum=0)
    heads = require_int("heads", heads, minimum=1)
    require_multiple("depth", depth, "heads", heads)
    rng = np.random.default_rng(require_int("seed", seed, minimum=0))

    def matrix(rows, columns):
        return rng.normal(size=(rows, columns)) / np.sqrt(rows)

    return [
        {
            "query": matrix(depth, depth), "key": matrix(depth, depth),
            "value": matrix(depth, depth), "output": matrix(depth, depth),
            "expand": matrix(depth, 4 * depth), "project": matrix(4 * depth, depth),
            "heads": heads,
        }
        for _ in range(count)
    ]


def layer_norm(h: np.ndarray) -> np.ndarray:
    """Each vector shifted to mean 0 and scaled to mean square 1 (no learned gain).

    >>> layer_norm(np.array([[1.0, 3.0]]))
    array([[-1.,  1.]])
    """
    centred = h - h.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-12)


def _times(h: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``h @ matrix`` for a stack of sequences, as one matrix product.

    One large product instead of one per sequence: many small BLAS calls on
    several threads cost far more than the arithmetic.
    """
    return (h.reshape(-1, h.shape[-1]) @ matrix).reshape(*h.shape[:-1], matrix.shape[-1])


def attention_layer(h: np.ndarray, block: dict) -> np.ndarray:
    """A block's attention, F(h): normalise, then multi-head self-attention.

    >>> block = random_blocks(4, 1, heads=2)[0]
    >>> attention_layer(np.ones((1, 3, 4)), block).shape
    (1, 3, 4)
    """
    normed = layer_norm(h)
    queries, keys, values = (_times(normed, block[name])
                             for name in ("query", "key", "value"))
    heads = block["heads"]
    width = h.shape[-1] // heads
    mixed = np.empty_like(values)
    for head in range(heads):
        part = slice(head * width, (head + 1) * width)
        # einsum's own loops: the products per sequence are too small for BLAS.
        scores = np.einsum("sqd,skd->sqk", queries[..., part],
                           keys[..., part]) / np.sqrt(width)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        mixed[..., part] = np.einsum("sqk,skd->sqd", weights,
                                     values[..., part])
    return _times(mixed, block["output"])


def feed_forward_layer(h: np.ndarray, block: dict) -> np.ndarray:
    """A block's feed-forward layer F(h): normalise, widen, ReLU, project.

    >>> block = random_blocks(4, 1, heads=2)[0]
    >>> feed_forward_layer(np.ones((1, 3, 4)), block).shape
    (1, 3, 4)
    """
    widened = _times(layer_norm(h), block["expand"])
    return _times(np.maximum(widened, 0.0), block["project"])


def run_stack(inputs, blocks: list[dict], *,
              residual: bool = True) -> list[np.ndarray]:
    """The hidden states of a stack of pre-norm blocks: the input, then one per block.

    With ``residual=True`` each block adds to its input,
    ``h = h + attention_layer(h)`` then ``h = h + feed_forward_layer(h)``, as
    in a Transformer. With ``residual=False`` each layer replaces it (its
    output normalised, so the size stays the same): what a stack without
    residual connections passes on.

    Args:
        inputs: an array of shape ``(sequences, steps, depth)``.
        blocks: from :func:`random_blocks`, of the same ``depth``.
        residual: whether each block adds to its input or replaces it.

    Returns:
        ``len(blocks) + 1`` arrays of the shape of ``inputs``, in float64.

    Example:
        With every weight zero, a residual block adds nothing:

        >>> blocks = random_blocks(4, 3, heads=2)
        >>> zero = [{**b, **{k: 0 * v for k, v in b.items() if k != "heads"}} for b in blocks]
        >>> x = np.arange(24.0).reshape(2, 3, 4)
        >>> all(np.array_equal(h, x) for h in run_stack(x, zero))
        True
    """
    h = np.asarray(inputs, dtype=np.float64)
    if h.ndim != 3:
        raise ValueError(f"inputs must be 3-D (sequences, steps, depth), got shape {h.shape}")
    for number, block in enumerate(blocks):
        if block["query"].shape[0] != h.shape[-1]:
            raise ValueError(
                f"blocks[{number}] works on depth {block['query'].shape[0]}, "
                f"but inputs have depth {h.shape[-1]}"
            )
    states = [h]
    for block in blocks:
        for layer in (attention_layer, feed_forward_layer):
            if residual:
                h = h + layer(h, block)  # h + F(h): added to the stream
            else:
                h = layer_norm(layer(h, block))  # F(h) replaces h
        states.append(h)
    return states


def position_recoverability(hidden, codes, *, train_share: float = 0.5) -> float:
    r"""How much of the position code a linear read-out recovers from ``hidden``: an :math:`R^2`.

    A linear map (with a constant) is fitted by least squares from the hidden
    vectors of the first ``train_share`` of the sequences to the code of each
    step's position, and scored on the other sequences:
    :math:`R^2 = 1 - \text{residual sum of squares} / \text{total sum of squares}`
    of the codes. 1 means the positions can be read off exactly, 0 (or a
    little below) that a linear read-out does no better than the mean code.

    Args:
        hidden: an array of shape ``(sequences, steps, depth)``.
        codes: the position codes, shape ``(steps, code_depth)``.
        train_share: the share of sequences the read-out is fitted on.

    Returns:
        :math:`R^2` on the held-out sequences, a float.

    Example:
        Codes passed through any invertible linear map give 1; hidden
        vectors that ignore the position give about 0:

        >>> rng = np.random.default_rng(0)
        >>> codes = rng.normal(size=(5, 3))
        >>> mixed = np.broadcast_to(codes @ rng.normal(size=(3, 3)), (40, 5, 3))
        >>> round(position_recoverability(mixed, codes), 6)
        1.0
        >>> blind = rng.normal(size=(40, 5, 3))
        >>> position_recoverability(blind, codes) < 0.2
        True
    """
    hidden = np.asarray(hidden, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.float64)
    if hidden.ndim != 3 or codes.ndim != 2 or hidden.shape[1] != codes.shape[0]:
        raise ValueError(
            f"hidden must be (sequences, steps, depth) and codes (steps, code_depth) with the "
            f"same steps, got shapes {hidden.shape} and {codes.shape}"
        )
    if not 0 < train_share < 1:
        raise ValueError(f"train_share must be between 0 and 1, got {train_share!r}")
    sequences, steps, depth = hidden.shape
    cut = int(round(sequences * train_share))
    if not 0 < cut < sequences:
        raise ValueError(f"hidden must hold enough sequences to split, got {sequences}")
    targets = np.broadcast_to(codes, (sequences, *codes.shape))

    def design(part):
        rows = part.reshape(-1, depth)
        return np.hstack([rows, np.ones((len(rows), 1))])

    # Least squares through the normal equations: a (depth + 1)-square system,
    # far cheaper than factorising the tall design matrix itself.
    inputs, wanted = design(hidden[:cut]), targets[:cut].reshape(-1, codes.shape[1])
    weights, *_ = np.linalg.lstsq(inputs.T @ inputs, inputs.T @ wanted, rcond=None)
    held_out = targets[cut:].reshape(-1, codes.shape[1])
    residual = np.sum((design(hidden[cut:]) @ weights - held_out) ** 2)
    total = np.sum((held_out - held_out.mean(axis=0)) ** 2)
    return float(1.0 - residual / total)
