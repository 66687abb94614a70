"""The position schemes of released models, read from their configurations.

Each :class:`ReleasedModel` is one checkpoint's ``config.json`` (cited by its
key in ``references.bib``) read by :func:`pe_lib.model_config.read_config`,
with the layers grouped into kinds, so that the registry builds what the
model uses: RoPE rates, ALiBi slopes or T5 buckets. Nothing is downloaded:
:func:`load_models` reads the configurations committed with the course's
tests (``tests/data/model_configs``, whose README says what each rests on).

>>> from pe_lib.course.reference_data import reference_data
>>> models = load_models(reference_data("model_configs"))
>>> [which for which, _ in models["Gemma 3 27B"].layers]
['52 of 62: local', '10 of 62: global']
>>> len(models) >= 12
True
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from pe_lib.alibi import alibi_slopes
from pe_lib.layer_schemes import LayerPositions
from pe_lib.methods import get_method
from pe_lib.model_config import ModelPositions, read_config


@dataclasses.dataclass(frozen=True)
class ReleasedModel:
    """One released model's positions.

    Attributes:
        name: the model, e.g. ``"Llama 3.1 8B"``.
        source: its key in ``references.bib``.
        positions: what :func:`pe_lib.model_config.read_config` read.
        trained_length: the context of pre-training, where the configuration
            or the model's report gives it.
        other: a note on how else the model treats positions, in words.
        buys: what the choice buys, in words.
    """

    name: str
    source: str
    positions: ModelPositions
    trained_length: int | None = None
    other: str = ""
    buys: str = ""

    @property
    def head_dim(self) -> int:
        """The width RoPE's rates are computed for, a head's or (in DeepSeek-V3) a 64-wide slice of it."""
        return self.positions.rope_head_dim or self.positions.head_dim

    @property
    def heads(self) -> int:
        """Query heads."""
        return self.positions.heads

    @property
    def context(self) -> int | None:
        """The context the configuration announces (``max_position_embeddings``)."""
        return self.positions.max_length

    @property
    def layers(self) -> tuple[tuple[str, LayerPositions], ...]:
        """``(which layers, LayerPositions)`` for each kind of layer, in order of first use."""
        kinds: list[LayerPositions] = []
        for layer in self.positions.layers:
            if layer not in kinds:
                kinds.append(layer)
        total = len(self.positions.layers)
        if len(kinds) == 1:
            return (("all", kinds[0]),)
        return tuple((f"{self.positions.layers.count(layer)} of {total}: {_kind_name(layer, kinds)}", layer)
                     for layer in kinds)

    def built(self, layer: LayerPositions) -> np.ndarray:
        """What the registry builds for ``layer``: RoPE rates, ALiBi slopes or T5 buckets of offsets 0 to -200."""
        entry = get_method(layer.method)
        if entry.acts_on == "queries and keys":
            return layer.rates(self.head_dim)
        if layer.method == "alibi":
            return alibi_slopes(self.heads)
        if layer.method == "t5":
            return entry.reference(-np.arange(201), bidirectional=True, **layer.options)
        return np.zeros(0)


def _kind_name(layer: LayerPositions, kinds) -> str:
    if not layer.uses_rope:
        return "NoPE"
    if any(not other.uses_rope for other in kinds):
        return "RoPE"
    return "local" if layer.window else "global"


#: ``(name, configuration file, references.bib key, trained length, other, buys)`` for each model.
CATALOGUE = (
    ("Llama 2 7B", "llama2_7b", "meta2023llama2config", None, "",
     "plain RoPE, the default of its day"),
    ("Code Llama 7B", "code_llama_7b", "meta2023codellamaconfig", None,
     "Llama 2's base of 10000 raised to 1000000 in continued training",
     "slower pairs for 16384 tokens and beyond"),
    ("Llama 3.1 8B", "llama3_1_8b", "meta2024llama31config", 8192, "",
     "the base raised in pre-training, then three bands at 16x the context"),
    ("Llama 4 Scout", "llama4_scout", "meta2025llama4config", 8192, "",
     "NoPE layers see every key at any distance; the others stay local"),
    ("Gemma 2 9B", "gemma2_9b", "google2024gemma2config", None, "",
     "half the layers local, half global"),
    ("Gemma 3 27B", "gemma3_27b", "google2025gemma3config", 32768, "",
     "a small cache in most layers; long reach in the others"),
    ("Gemma 3 1B", "gemma3_1b", "google2025gemma3oneconfig", None, "",
     "the global layers keep their large base, with no interpolation"),
    ("Qwen2.5 7B", "qwen2_5_7b", "qwen2024qwen25config", 32768, "",
     "a large base set in pre-training: slow pairs for a long context"),
    ("Qwen2.5 7B + YaRN", "qwen2_5_7b_yarn", "qwen2024qwen25config", 32768,
     "the block its model card recommends adding; static once added",
     "4x the context, at every length"),
    ("Qwen2-VL 7B", "qwen2_vl_7b", "qwen2024qwen2vlconfig", None,
     "M-RoPE: pairs 16 + 24 + 24 by time, row, column",
     "text and image patches in one sequence, each with its own axes"),
    ("Mistral 7B v0.1", "mistral_7b_v0_1", "mistral2023config", None, "",
     "a cache that stops growing; reach through stacked layers"),
    ("Phi-3 mini 4k", "phi3_mini_4k", "microsoft2024phi3config", 4096,
     "the window as published: 2,047 keys, the query's own included, "
     "about half the trained length",
     "plain RoPE in a window of 2047 keys"),
    ("Phi-3.5 mini", "phi3_5_mini", "microsoft2024phi35config", 4096,
     "short factors up to 4096, long beyond; the window as published is twice the context, "
     "so it masks nothing",
     "a searched factor per pair, fitted to each length range"),
    ("DeepSeek-V3", "deepseek_v3", "deepseek2024v3config", 4096,
     "a separate 64-wide rotary slice, its key shared by the heads",
     "positions kept out of the compressed keys; 40x the context"),
    ("gpt-oss 20B", "gpt_oss_20b", "openai2025gptossconfig", 4096, "",
     "half the layers local, and somewhere to put unneeded weight"),
    ("Phi-2", "phi2", "microsoft2023phi2config", None, "",
     "most of each head free of positions"),
    ("GPT-NeoX 20B", "gpt_neox_20b", "eleuther2022neoxconfig", None, "",
     "a quarter of each head carries positions"),
    ("Falcon 7B", "falcon_7b", "tii2023falconconfig", None,
     "one key and value head shared by 71 query heads",
     "plain RoPE, the default of its day"),
    ("BLOOM 176B", "bloom_176b", "bigscience2022bloomconfig", None, "no positions on the inputs",
     "a penalty per head that grows with distance"),
    ("MPT 7B", "mpt_7b", "mosaicml2023mptconfig", None, "",
     "ALiBi: run past the training length"),
    ("T5 base", "t5_base", "google2019t5config", None,
     "biases learned in the first layer, shared by all",
     "a learned bias per bucket, exact near, coarse far"),
    ("GPT-2", "gpt2", "openai2019gpt2config", None, "a learned vector per position, added to the tokens",
     "a table of 1024 positions, none beyond"),
)


def load_models(directory: Path | str) -> dict[str, ReleasedModel]:
    """The models of :data:`CATALOGUE`, each read from ``directory / <file>.json``, by name."""
    directory = Path(directory)
    models = {}
    for name, file, source, trained_length, other, buys in CATALOGUE:
        positions = read_config(directory / f"{file}.json")
        trained = trained_length
        for layer in positions.layers:
            trained = layer.options.get("original_length", trained)
        models[name] = ReleasedModel(name, source, positions, trained, other, buys)
    return models


def rope_layers(models: dict[str, ReleasedModel]) -> list[tuple[str, str, LayerPositions, int]]:
    """``(model, which layers, positions, head_dim)`` for every RoPE layer kind of ``models``."""
    return [(model.name, which, layer, model.head_dim) for model in models.values()
            for which, layer in model.layers if layer.uses_rope]
