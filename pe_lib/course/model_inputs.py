"""Where a method's positions enter the course's models: the token vectors they start from.

Every experiment model of the course begins the same way, whatever it is
trained for: token ids become vectors with unit-variance entries (the scale
of the sinusoidal table), and a method that acts on the input adds its
table to them. :func:`token_vectors` builds that beginning;
:func:`attention_method` says what the attention layers then apply. Both take
the registry's entry, which the experiment's public function looked up once.
"""

from __future__ import annotations

import inspect

import keras

from pe_lib.methods import METHODS, PositionMethod


def token_vectors(entry: PositionMethod, *, train_length: int,
                  max_length: int, vocabulary_size: int, depth: int,
                  seed: int) -> tuple:
    """The input of ids ``(batch, steps)`` and the vectors a model of ``entry`` starts from.

    Seeds Keras with ``seed`` first, so that the initial weights of the whole
    model built on them are reproducible. A table that extrapolates
    (``"sinusoidal"``) has ``max_length`` rows; one that does not
    (``"learned"``) has ``train_length`` and refuses longer inputs. Arguments
    are checked by the model functions that call this one.

    >>> tokens, vectors = token_vectors(METHODS["learned"], train_length=8, max_length=64,
    ...                                 vocabulary_size=5, depth=4, seed=0)
    >>> keras.Model(tokens, vectors).count_params()  # 5 token vectors and 8 positions
    52
    """
    keras.utils.set_random_seed(seed)
    tokens = keras.Input(shape=(None,), dtype="int32", name="tokens")
    unit = keras.initializers.RandomNormal(stddev=1.0)
    vectors = keras.layers.Embedding(
        vocabulary_size, depth, embeddings_initializer=unit,
        name="embedding")(tokens)
    if entry.acts_on == "input":
        # entry: the method's record in METHODS, the registry; a
        # table that extrapolates has a row for every position
        rows = max_length if entry.extrapolates else train_length
        parameters = inspect.signature(entry.layer).parameters
        trained = "initializer" in parameters
        # unit: the token vectors' initializer, normal, deviation 1
        start = {"initializer": unit} if trained else {}
        vectors = entry.layer(rows, name="positions", **start)(vectors)
    return tokens, vectors


def attention_method(entry: PositionMethod) -> PositionMethod:
    """What the attention layers of a model of ``entry`` apply: the method itself
    where it acts on queries and keys or on scores, ``"none"`` where it acts on the input.

    >>> attention_method(METHODS["alibi"]).name, attention_method(METHODS["sinusoidal"]).name
    ('alibi', 'none')
    """
    inside = ("queries and keys", "scores")
    return entry if entry.acts_on in inside else METHODS["none"]
