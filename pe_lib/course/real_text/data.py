r"""Real English text that ships with Python, as character ids for a language model.

Every CPython installation carries the prose of the Python reference manual
in ``pydoc_data.topics`` (``help("assert")`` prints one of its topics):
about 465,000 characters of English, code examples and grammar, under 79
topic names. Nothing is downloaded.

The text is split by topic, so that no passage of the held-out text appears in
training. Many topics repeat parts of others (``while`` is also a section of
``compound``), so topics that share a passage of :data:`PASSAGE` characters
or more are first gathered into groups (:func:`topic_groups`). In the
alphabetical order of their first topic, every tenth group from the seventh
on is the development text (:func:`development_topics`), on which the
course's configurations were chosen, and every tenth group from the first on
is the test text (:func:`test_topics`), which the tables score; each is
about a tenth of the characters, and the rest is the training text. The
topics of each part are joined in alphabetical order, one newline apart.

Characters become ids in a small vocabulary (:data:`VOCABULARY`): the newline
and the 95 printable ASCII characters, plus one id, :data:`OTHER`, for
everything else (curly quotes, dashes, an ellipsis: a few hundred characters
in all, counted by :func:`other_count`).

>>> text = training_text()
>>> encode("Hi!\u2019").tolist()
[41, 74, 2, 96]
>>> decode(encode("assert x"))
'assert x'
"""

from __future__ import annotations

import functools

import numpy as np

from pe_lib._checks import require_int

#: The characters that get their own id, in id order (the newline, then ASCII 32 to 126).
VOCABULARY = "\n" + "".join(chr(code) for code in range(32, 127))

#: The id of every character outside :data:`VOCABULARY`.
OTHER = len(VOCABULARY)

#: How many ids there are, the vocabulary and the "other" id.
VOCABULARY_SIZE = OTHER + 1

#: Topics sharing a passage at least this long (in characters) are kept in one part of the split.
PASSAGE = 200

#: The development groups are those whose index ``i`` in :func:`topic_groups`
#: has ``i % HELDOUT_EVERY == DEVELOPMENT_OFFSET``, the test groups those with
#: ``i % HELDOUT_EVERY == TEST_OFFSET``.
HELDOUT_EVERY = 10
DEVELOPMENT_OFFSET = 6
TEST_OFFSET = 0

#: The three parts of the split, in the order of :func:`split_topics`.
SPLITS = ("training", "development", "test")

_LOOKUP = np.full(128, OTHER, dtype=np.int32)
for _index, _character in enumerate(VOCABULARY):
    _LOOKUP[ord(_character)] = _index


def topics() -> dict[str, str]:
    """The topics of the Python reference that ship with CPython, by name.

    >>> "assert" in topics()
    True
    """
    from pydoc_data.topics import topics as shipped

    return dict(shipped)


@functools.lru_cache(maxsize=1)
def topic_groups() -> tuple[tuple[str, ...], ...]:
    """The topics, in groups that share no passage of :data:`PASSAGE` characters with each other.

    Two topics that share such a passage are in one group, and so are
    their groups (the groups are the connected parts of the "shares a
    passage" relation). Each group lists its topics alphabetically; the
    groups are ordered by their first topic.

    >>> [group for group in topic_groups() if "while" in group][0][:4]
    ('async', 'class', 'compound', 'else')
    """
    shipped = topics()
    leader = {name: name for name in shipped}

    def root(name):
        while leader[name] != name:
            name = leader[name]
        return name

    first_seen = {}
    for name in sorted(shipped):
        text = shipped[name]
        # 64-bit hashes of the passages: a collision, which would only merge two groups, has
        # a chance below 1e-8.
        for passage in {hash(text[start:start + PASSAGE]) for start in range(len(text) - PASSAGE + 1)}:
            other = first_seen.setdefault(passage, name)
            if other != name:
                a, b = root(name), root(other)
                leader[max(a, b)] = min(a, b)
    groups = {}
    for name in sorted(shipped):
        groups.setdefault(root(name), []).append(name)
    return tuple(sorted(tuple(group) for group in groups.values()))


def _groups_from(offset: int) -> tuple[str, ...]:
    groups = topic_groups()[offset::HELDOUT_EVERY]
    return tuple(sorted(name for group in groups for name in group))


def development_topics() -> tuple[str, ...]:
    """The development topics: every tenth group of :func:`topic_groups`, from the seventh.

    The course's configurations were chosen by their scores on this text.

    >>> groups = topic_groups()[DEVELOPMENT_OFFSET::HELDOUT_EVERY]
    >>> development_topics() == tuple(sorted(name for group in groups for name in group))
    True
    """
    return _groups_from(DEVELOPMENT_OFFSET)


def test_topics() -> tuple[str, ...]:
    """The test topics: every tenth group of :func:`topic_groups`, from the first.

    >>> "assert" in test_topics(), "assert" in development_topics()
    (True, False)
    """
    return _groups_from(TEST_OFFSET)


def training_topics() -> tuple[str, ...]:
    """The training topics: all the others, in alphabetical order.

    >>> set(training_topics()) & (set(development_topics()) | set(test_topics()))
    set()
    """
    held = set(development_topics()) | set(test_topics())
    return tuple(name for name in sorted(topics()) if name not in held)


def split_topics(split: str) -> tuple[str, ...]:
    """The topics of one part of the split: ``"training"``, ``"development"`` or ``"test"``.

    >>> split_topics("test") == test_topics()
    True
    """
    parts = {"training": training_topics, "development": development_topics, "test": test_topics}
    if split not in parts:
        raise ValueError(f"split must be one of {', '.join(map(repr, SPLITS))}; got {split!r}")
    return parts[split]()


def split_text(split: str) -> str:
    """The topics of ``split`` (:func:`split_topics`), joined in alphabetical order one newline apart."""
    shipped = topics()
    return "\n".join(shipped[name] for name in split_topics(split))


def training_text() -> str:
    """The training topics, joined in alphabetical order one newline apart."""
    return split_text("training")


def development_text() -> str:
    """The development topics, joined in alphabetical order one newline apart."""
    return split_text("development")


def test_text() -> str:
    """The test topics, joined in alphabetical order one newline apart."""
    return split_text("test")


def encode(text: str) -> np.ndarray:
    """The ids of the characters of ``text``; any character outside :data:`VOCABULARY` is :data:`OTHER`.

    >>> encode("\\n a~").tolist(), encode("\u00e9").tolist()
    ([0, 1, 66, 95], [96])
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ids = np.full(codes.shape, OTHER, dtype=np.int32)
    ascii_ = codes < 128
    ids[ascii_] = _LOOKUP[codes[ascii_]]
    return ids


def decode(ids) -> str:
    """The text of ``ids``, with the "other" id written as ``"\\ufffd"``.

    >>> decode([41, 74, 96])
    'Hi\\ufffd'
    """
    ids = np.asarray(ids)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer) or np.any((ids < 0) | (ids > OTHER)):
        raise ValueError(f"ids must be a 1-D array of integers in [0, {OTHER}], got {ids!r}")
    return "".join(VOCABULARY[i] if i < OTHER else "\ufffd" for i in ids.tolist())


def other_count(text: str) -> int:
    """How many characters of ``text`` fall outside :data:`VOCABULARY`.

    >>> other_count("\u201cquoted\u201d \u2014 fine")
    3
    """
    return int(np.sum(encode(text) == OTHER))


def training_windows(ids, length: int, count: int, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` windows of ``length`` characters from random places in ``ids``, and their next characters.

    Window ``w`` starts at a place drawn uniformly (a NumPy generator seeded
    with ``seed``); its targets are the same characters one place later, so
    target ``t`` is the character after input ``t``.

    Args:
        ids: a 1-D array of character ids, longer than ``length``.
        length: characters per window, the training length :math:`L`.
        count: how many windows.
        seed: the seed of the places.

    Returns:
        ``(inputs, targets)``, two int32 arrays of shape ``(count, length)``.

    Example:
        >>> inputs, targets = training_windows(np.arange(10), 4, 2, seed=0)
        >>> inputs.tolist(), targets.tolist()
        ([[5, 6, 7, 8], [3, 4, 5, 6]], [[6, 7, 8, 9], [4, 5, 6, 7]])
    """
    ids = _ids(ids)
    length = require_int("length", length, minimum=1)
    count = require_int("count", count, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    if ids.size <= length:
        raise ValueError(f"ids must hold more than length={length} characters, got {ids.size}")
    starts = np.random.default_rng(seed).integers(0, ids.size - length, size=count)
    where = starts[:, None] + np.arange(length)
    return ids[where], ids[where + 1]


def evaluation_windows(ids, length: int, characters: int, *, every: int = 1,
                       block: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first ``characters`` predictions of ``ids``, cut into windows of ``length`` side by side.

    The windows do not overlap, and every one starts with an empty context, as
    in the ALiBi paper's non-overlapping evaluation. ``characters`` must be a
    multiple of ``length``, so that every length is scored on the same
    characters. With ``every`` above 1, only the windows inside the first of
    every ``every`` blocks of ``block`` characters are kept: a sample spread
    evenly over the whole text, the same characters at every length that
    divides ``block``.

    Args:
        ids: a 1-D array of character ids, at least ``characters + 1`` long.
        length: characters per window.
        characters: how many characters to predict in all.
        every: keep one block in every ``every`` (1: keep all).
        block: characters per block, a multiple of ``length`` dividing
            ``characters``; needed when ``every`` is above 1.

    Returns:
        ``(inputs, targets)`` of shape ``(windows, length)``.

    Example:
        >>> inputs, targets = evaluation_windows(np.arange(9), 4, 8)
        >>> inputs.tolist(), targets.tolist()
        ([[0, 1, 2, 3], [4, 5, 6, 7]], [[1, 2, 3, 4], [5, 6, 7, 8]])
        >>> evaluation_windows(np.arange(13), 2, 12, every=2, block=4)[1].tolist()
        [[1, 2], [3, 4], [9, 10], [11, 12]]
    """
    ids = _ids(ids)
    length = require_int("length", length, minimum=1)
    characters = require_int("characters", characters, minimum=1)
    every = require_int("every", every, minimum=1)
    if characters % length:
        raise ValueError(f"characters must be a multiple of length={length}, got {characters}")
    if ids.size < characters + 1:
        raise ValueError(f"ids must hold at least characters + 1 = {characters + 1} ids, got {ids.size}")
    inputs = ids[:characters].reshape(-1, length)
    targets = ids[1:characters + 1].reshape(-1, length)
    if every == 1:
        return inputs, targets
    if block is None:
        raise ValueError(f"block must be given when every is above 1, got every={every} and block=None")
    block = require_int("block", block, minimum=1)
    if block % length or characters % block:
        raise ValueError(f"block must be a multiple of length={length} dividing characters={characters}, "
                         f"got {block}")
    keep = (np.arange(len(inputs)) // (block // length)) % every == 0
    return inputs[keep], targets[keep]


def scored_characters(ids, longest: int) -> int:
    """How many predictions of ``ids`` are scored: all of them, cut to a multiple of ``longest``.

    ``ids`` of :math:`n` characters make :math:`n - 1` predictions (the first
    character has nothing before it); the windows of every length cover the
    same first ones, and fewer than ``longest`` at the end are left out.

    >>> scored_characters(np.arange(100), 16)
    96
    """
    ids = _ids(ids)
    longest = require_int("longest", longest, minimum=1)
    scored = (ids.size - 1) // longest * longest
    if scored == 0:
        raise ValueError(f"ids must hold more than longest={longest} characters, got {ids.size}")
    return scored


def _ids(ids) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be a 1-D integer array, got shape {ids.shape} and dtype {ids.dtype}")
    return ids.astype(np.int32, copy=False)
