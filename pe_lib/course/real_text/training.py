r"""Train a character-level language model per position method on real text, and test it longer.

One configuration (:class:`RealTextConfig`) fixes the model, the training
budget and the evaluation; :data:`CONFIGS` holds those the course uses,
``"small"``, which the chapter runs live, ``"large"``, which
``python3 tasks.py experiment real-text`` runs
(:mod:`pe_lib.course.real_text.experiment`), and ``"per_layer"``, a
per-layer scheme beside RoPE and no positions in a model of four blocks. Both go through
:func:`run_real_text`, which for every method and seed

1. trains :func:`~pe_lib.course.real_text.model.language_model` on random
   windows of :math:`L` characters of the training text
   (:mod:`pe_lib.course.real_text.data`), the same windows in the same order
   for every method;
2. scores all of the test text (or, when asked, the development text),
   cut to a multiple of the longest window, in windows of :math:`L`,
   :math:`2L`, :math:`4L` and :math:`8L` characters, in bits per character, and
   records the loss at each position of the longest windows;
3. for ``"rope"``, tests the same weights at :math:`sL` with each
   context-extension variant of :data:`ROPE_VARIANTS` (``"rope_pi"``,
   ``"rope_ntk"``, ``"rope_yarn"``), or those asked for, at scale :math:`s > 1`,
   without retraining (at :math:`s = 1` every variant is plain RoPE).

A ``"learned"`` model has no position past :math:`L`; it is scored at
:math:`L` only.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Callable

import keras
import numpy as np

from pe_lib._checks import require_int
from pe_lib.course.real_text import data as real_text_data
from pe_lib.course.real_text.model import language_model, position_losses
from pe_lib.layer_schemes import LayerScheme, resolve_positions
from pe_lib.layers import RotaryEmbedding
from pe_lib.methods import PositionMethod, get_method, method_names

#: The methods trained, in the order of the tables (the comparison of the ALiBi paper, and none).
TRAINED_METHODS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")

#: RoPE's context-extension variants, applied at test time to the trained ``"rope"`` model:
#: position interpolation, NTK-aware scaling and YaRN as released models ship it.
#: YaRN as its paper's equation reads, dynamic NTK and Llama 3's rule are compared
#: in the RoPE chapter.
ROPE_VARIANTS = ("rope_pi", "rope_ntk", "rope_yarn")

#: Test-time recipes that are a registry variant with options of its own, by the name
#: the results give them: YaRN with its attention factor set to 1, its slower pairs
#: alone, which separates YaRN's two changes to RoPE.
VARIANT_RECIPES = {"rope_yarn_no_factor": ("rope_yarn", {"attention_factor": 1.0})}


@dataclasses.dataclass(frozen=True)
class RealTextConfig:
    """Everything that fixes a run: model, training budget, evaluation, seeds.

    Attributes:
        name: what the configuration is called.
        train_length: the training length :math:`L`, in characters.
        steps: optimiser steps per model.
        batch_size: windows per step.
        depth, heads, layers, feed_forward: the model
            (:func:`~pe_lib.course.real_text.model.language_model`).
        learning_rate: Adam's peak learning rate.
        score_every: score the first of every ``score_every`` blocks of
            :math:`8L` characters of the text (1: all of it), a sample spread
            over the whole text when the whole costs too much time.
        scales: the test lengths, as multiples of :math:`L`.
        methods: the methods trained: registry names, or names of per-layer
            schemes (:data:`pe_lib.layer_schemes.SCHEMES`).
        seeds: one run per seed (weights and training windows).
    """

    name: str
    train_length: int
    steps: int
    batch_size: int
    depth: int
    heads: int
    layers: int
    feed_forward: int
    learning_rate: float
    score_every: int = 1
    scales: tuple[int, ...] = (1, 2, 4, 8)
    methods: tuple[str, ...] = TRAINED_METHODS
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self):
        for name in ("train_length", "steps", "batch_size", "depth", "heads", "layers", "feed_forward",
                     "score_every"):
            require_int(name, getattr(self, name), minimum=1)
        if not self.scales or self.scales[0] != 1 or any(
                require_int("scales", s, minimum=1) <= previous for previous, s in zip(self.scales, self.scales[1:])):
            raise ValueError(f"scales must be increasing and start at 1, got {self.scales!r}")
        for method in self.methods:
            resolve_positions(method)
        for seed in self.seeds:
            require_int("seeds", seed, minimum=0)

    @property
    def lengths(self) -> tuple[int, ...]:
        """The test lengths in characters."""
        return tuple(scale * self.train_length for scale in self.scales)

    @property
    def longest(self) -> int:
        """The longest test length."""
        return self.scales[-1] * self.train_length

    def model_options(self) -> dict:
        """The arguments of :func:`~pe_lib.course.real_text.model.language_model` other than the method."""
        return {"train_length": self.train_length, "vocabulary_size": real_text_data.VOCABULARY_SIZE,
                "max_length": self.longest, "depth": self.depth, "heads": self.heads, "layers": self.layers,
                "feed_forward": self.feed_forward}


#: The chapter's live run, the larger run of ``tasks.py experiment real-text``, and
#: ``"per_layer"``: four blocks, so that Llama 4's pattern (``"rope_nope"``) has its NoPE
#: block, trained beside plain RoPE and no positions.
CONFIGS = {
    "small": RealTextConfig("small", train_length=32, steps=300, batch_size=32, depth=32, heads=4, layers=2,
                            feed_forward=2, learning_rate=1e-2, score_every=4),
    "large": RealTextConfig("large", train_length=128, steps=1000, batch_size=8, depth=32, heads=4, layers=2,
                            feed_forward=2, learning_rate=1e-2, seeds=(0, 1, 2)),
    "per_layer": RealTextConfig("per_layer", train_length=32, steps=300, batch_size=32, depth=32, heads=4,
                                layers=4, feed_forward=2, learning_rate=1e-2, score_every=4,
                                methods=("none", "rope", "rope_nope"), seeds=(0, 1, 2)),
}


def make_deterministic() -> None:
    """Make TensorFlow's kernels deterministic (a global switch); nothing to do on JAX."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()


def learning_rate_schedule(learning_rate: float, steps: int, *, warmup: float = 0.05):
    """A linear warm-up over the first ``warmup`` part of the ``steps``, then a cosine to a tenth.

    >>> schedule = learning_rate_schedule(1e-2, 100)
    >>> [round(float(schedule(step)), 4) for step in (0, 5, 100)]
    [0.0, 0.01, 0.001]
    """
    steps = require_int("steps", steps, minimum=1)
    if not 0.0 <= warmup < 1.0:
        raise ValueError(f"warmup must be in [0, 1), got {warmup!r}")
    warmup_steps = int(round(warmup * steps))
    return keras.optimizers.schedules.CosineDecay(
        0.0 if warmup_steps else learning_rate, decay_steps=max(1, steps - warmup_steps), alpha=0.1,
        warmup_target=learning_rate if warmup_steps else None, warmup_steps=warmup_steps,
    )


def optimizer(learning_rate: float, steps: int, *, warmup: float = 0.05) -> keras.optimizers.Optimizer:
    """Adam on :func:`learning_rate_schedule`, with the gradient norm clipped to 1.

    >>> optimizer(1e-2, 100).global_clipnorm
    1.0
    """
    return keras.optimizers.Adam(learning_rate_schedule(learning_rate, steps, warmup=warmup),
                                 global_clipnorm=1.0)


def _mean_cross_entropy(targets, logits):
    return keras.ops.mean(keras.losses.sparse_categorical_crossentropy(targets, logits, from_logits=True))


def _tensorflow_trainer(model, adam):
    import tensorflow as tf

    variables = model.trainable_variables
    adam.build(variables)

    # One graph, traced once, without AutoGraph: a third of the time model.fit takes to trace.
    @tf.function(autograph=False, reduce_retracing=True)
    def step(inputs, targets):
        with tf.GradientTape() as tape:
            loss = _mean_cross_entropy(targets, model(inputs, training=True))
        adam.apply(tape.gradient(loss, variables), variables)
        return loss

    return step, lambda: None


def _jax_trainer(model, adam):
    import jax

    adam.build(model.trainable_variables)
    state = [[v.value for v in model.trainable_variables], [v.value for v in model.non_trainable_variables],
             [v.value for v in adam.variables]]

    def loss_and_updates(trainable, non_trainable, inputs, targets):
        logits, non_trainable = model.stateless_call(trainable, non_trainable, inputs, training=True)
        return _mean_cross_entropy(targets, logits), non_trainable

    @jax.jit
    def update(trainable, non_trainable, optimizer_variables, inputs, targets):
        (loss, non_trainable), grads = jax.value_and_grad(loss_and_updates, has_aux=True)(
            trainable, non_trainable, inputs, targets)
        trainable, optimizer_variables = adam.stateless_apply(optimizer_variables, grads, trainable)
        return loss, trainable, non_trainable, optimizer_variables

    def step(inputs, targets):
        loss, *state[:] = update(*state, inputs, targets)
        return loss

    def finish():
        for variables, values in zip((model.trainable_variables, model.non_trainable_variables, adam.variables),
                                     state):
            for variable, value in zip(variables, values):
                variable.assign(value)

    return step, finish


def train_language_model(method: str | PositionMethod | LayerScheme, config: RealTextConfig, seed: int,
                         training_ids, *,
                         on_step: Callable[[int, Callable[[], float]], None] | None = None) -> keras.Model:
    """Train one model of ``method`` for ``config.steps`` steps of ``config.batch_size`` windows.

    The weights start from ``seed`` and the windows are drawn with ``seed``
    (:func:`~pe_lib.course.real_text.data.training_windows`), so every method
    of one seed sees the same windows in the same order.

    Args:
        method: a name from :data:`pe_lib.methods.METHODS` or
            :data:`pe_lib.layer_schemes.SCHEMES`, or its entry.
        config: the :class:`RealTextConfig`.
        seed: the seed of the weights and the windows.
        training_ids: the training text as character ids.
        on_step: called after each step with the number of steps done and a
            function that returns the step's loss in nats (calling it waits
            for the step to finish).

    Returns:
        The trained ``keras.Model``.

    Example:
        >>> tiny = dataclasses.replace(CONFIGS["small"], steps=2, depth=8, heads=2, layers=1,
        ...                            train_length=4)
        >>> ids = real_text_data.encode("an example text, long enough for a few windows")
        >>> model = train_language_model("rope", tiny, 0, ids)
        >>> tuple(model(ids[None, :4]).shape)
        (1, 4, 97)
    """
    entry = resolve_positions(method)
    seed = require_int("seed", seed, minimum=0)
    inputs, targets = real_text_data.training_windows(training_ids, config.train_length,
                                                      config.steps * config.batch_size, seed=seed)
    model = language_model(entry, seed=seed, **config.model_options())
    adam = optimizer(config.learning_rate, config.steps)
    backend = keras.backend.backend()
    if backend == "tensorflow":
        step, finish = _tensorflow_trainer(model, adam)
    elif backend == "jax":
        step, finish = _jax_trainer(model, adam)
    else:
        raise ValueError(f"training runs on Keras's 'tensorflow' or 'jax' backend, got {backend!r}")
    for done in range(config.steps):
        window = slice(done * config.batch_size, (done + 1) * config.batch_size)
        loss = step(inputs[window], targets[window])
        if on_step is not None:
            on_step(done + 1, lambda loss=loss: float(keras.ops.convert_to_numpy(loss)))
    finish()
    return model


def window_losses(model: keras.Model, ids, length: int, characters: int, *, every: int = 1,
                  block: int | None = None, tokens_per_batch: int = 16384):
    """The loss in bits of every prediction of the first ``characters`` of ``ids``, in windows of ``length``.

    With ``every`` above 1, of the windows inside the first of every
    ``every`` blocks of ``block`` characters only.

    Returns:
        A float64 array ``(windows, length)``: row ``w``, column ``t`` is the
        loss of the character after position ``t`` of window ``w``
        (:func:`~pe_lib.course.real_text.data.evaluation_windows`).
    """
    inputs, targets = real_text_data.evaluation_windows(ids, length, characters, every=every, block=block)
    rows = max(1, tokens_per_batch // length)
    losses = [position_losses(keras.ops.convert_to_numpy(model(inputs[start:start + rows], training=False)),
                              targets[start:start + rows])
              for start in range(0, len(inputs), rows)]
    return np.concatenate(losses)


def stretching_recipe(variant: str, name: str = "variant") -> tuple[PositionMethod, dict]:
    """The registry method and extra options of a stretching recipe: a RoPE
    variant of the registry, or a name of :data:`VARIANT_RECIPES`.

    ``name`` is the argument an error names.

    >>> entry, options = stretching_recipe("rope_yarn_no_factor")
    >>> entry.name, options
    ('rope_yarn', {'attention_factor': 1.0})
    """
    method, recipe = VARIANT_RECIPES.get(variant, (variant, {}))
    entry = get_method(method) if method in method_names() else None
    if entry is None or entry.acts_on != "queries and keys" or entry.name == "rope":
        raise ValueError(f"{name} must be a RoPE stretching method such as "
                         f"{', '.join(map(repr, ROPE_VARIANTS + tuple(VARIANT_RECIPES)))}; got {variant!r}")
    return entry, recipe


def with_rope_variant(model: keras.Model, variant: str, scale: float, config: RealTextConfig) -> keras.Model:
    """The trained ``"rope"`` ``model``'s weights in a model of ``variant`` stretched by ``scale``.

    ``variant`` is a stretching method of the registry or a name of
    :data:`VARIANT_RECIPES`. Only the rotation's rates (and YaRN's attention
    factor) change; the trained length :math:`L` is the variant's original length.
    """
    entry, recipe = stretching_recipe(variant)
    accepted = inspect.signature(RotaryEmbedding).parameters
    options = {"scale": float(scale), **recipe}
    if "original_length" in accepted:
        options["original_length"] = config.train_length
    stretched = language_model(entry, method_options=options, **config.model_options())
    stretched.set_weights(model.get_weights())
    return stretched


@dataclasses.dataclass
class RealTextRun:
    """What :func:`run_real_text` measured.

    Attributes:
        config: the configuration run.
        split: the text scored, ``"test"`` or ``"development"``.
        scored: characters scored at every length: the split's
            predictions, cut to a multiple of the longest length, in the
            first of every ``config.score_every`` blocks of the longest
            length.
        left_out: the split's predictions scored at no length.
        rows: one dict per (method, seed, length): ``method`` (as tested),
            ``trained`` (the method trained), ``seed``, ``length``, ``scale``,
            ``bits_per_character`` (``None`` where the model has no positions
            that far), ``parameters``, ``steps``, ``final_loss`` (bits per
            character on the last training batch).
        position_curves: ``{(method, seed): array}``, the mean loss in bits
            at each position of the longest windows the method can read.
        models: ``{(method, seed): model}``, the trained models (kept only
            when asked).
        seconds: wall-clock seconds per trained (method, seed).
    """

    config: RealTextConfig
    split: str
    scored: int
    left_out: int
    rows: list[dict]
    position_curves: dict
    models: dict
    seconds: dict

    def bits(self, method: str, length: int, seed: int | None = None) -> np.ndarray:
        """Bits per character of ``method`` at ``length``, one per seed (or for one seed)."""
        found = [row["bits_per_character"] for row in self.rows if row["method"] == method
                 and row["length"] == length and (seed is None or row["seed"] == seed)]
        if not found:
            raise ValueError(f"no result for method={method!r} at length={length}")
        return np.array([np.nan if value is None else value for value in found], dtype=np.float64)


def run_real_text(config: RealTextConfig, *, methods=None, seeds=None, split: str = "test",
                  keep_models: bool = False, variants: tuple[str, ...] = ROPE_VARIANTS,
                  on_step: Callable[[str, int, int, Callable[[], float]], None] | None = None) -> RealTextRun:
    """Train every method of ``config`` for every seed and score it at every length.

    Every length scores the same characters: all of the ``split``'s text,
    cut to a multiple of the longest length
    (:func:`~pe_lib.course.real_text.data.scored_characters`), or, when
    ``config.score_every`` is above 1, the first of every ``score_every``
    blocks of the longest length.

    Args:
        config: a :class:`RealTextConfig`, e.g. ``CONFIGS["small"]``.
        methods: the methods to train (``config.methods`` if left out).
        seeds: the seeds (``config.seeds`` if left out).
        split: the text scored: ``"test"``, or ``"development"`` to compare
            configurations without looking at the test text.
        keep_models: keep the trained models in :attr:`RealTextRun.models`.
        variants: the stretching recipes the trained ``"rope"`` model is
            tested with past :math:`L` (:func:`with_rope_variant`).
        on_step: called after every training step with the method, the seed,
            the steps done and a function returning the step's loss in nats.

    Returns:
        A :class:`RealTextRun`.
    """
    methods = tuple(config.methods if methods is None else methods)
    seeds = tuple(config.seeds if seeds is None else seeds)
    resolved = [resolve_positions(method) for method in methods]
    methods = tuple(entry.name for entry in resolved)
    entries = dict(zip(methods, resolved))
    if split not in ("test", "development"):
        raise ValueError(f"split must be 'test' or 'development', got {split!r}")
    variants = tuple(variants)
    for variant in variants:  # before any training: a bad name fails at once
        stretching_recipe(variant, name="variants")
    make_deterministic()
    training_ids = real_text_data.encode(real_text_data.training_text())
    scored_ids = real_text_data.encode(real_text_data.split_text(split))
    cut = real_text_data.scored_characters(scored_ids, config.longest)
    scored = real_text_data.evaluation_windows(scored_ids, config.longest, cut, every=config.score_every,
                                               block=config.longest)[0].size
    rows, curves, models, seconds = [], {}, {}, {}
    for seed in seeds:
        for method in methods:
            began = time.perf_counter()
            last = {}

            def report(done, loss, method=method, seed=seed):
                if done == config.steps:
                    last["loss"] = loss
                if on_step is not None:
                    on_step(method, seed, done, loss)

            model = train_language_model(entries[method], config, seed, training_ids, on_step=report)
            final = last["loss"]() / np.log(2.0)
            extrapolates = entries[method].extrapolates
            tested = [(method, scale, model) for scale in config.scales]
            if method == "rope":
                tested += [(variant, scale, with_rope_variant(model, variant, scale, config))
                           for variant in variants for scale in config.scales if scale > 1]
            for name, scale, tested_model in tested:
                length = scale * config.train_length
                bits = None
                if extrapolates or scale == 1:
                    losses = window_losses(tested_model, scored_ids, length, cut, every=config.score_every,
                                           block=config.longest)
                    bits = float(losses.mean())
                    if scale == (config.scales[-1] if extrapolates else 1):
                        curves[(name, seed)] = losses.mean(axis=0)
                rows.append({"method": name, "trained": method, "seed": seed, "length": length, "scale": scale,
                             "bits_per_character": bits, "parameters": int(model.count_params()),
                             "steps": config.steps, "final_loss": final})
            if keep_models:
                models[(method, seed)] = model
            seconds[(method, seed)] = time.perf_counter() - began
    return RealTextRun(config=config, split=split, scored=scored, left_out=scored_ids.size - 1 - scored, rows=rows,
                       position_curves=curves, models=models, seconds=seconds)
