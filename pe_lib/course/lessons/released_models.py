"""The position schemes of released models, as their configurations publish them.

Each :class:`ReleasedModel` holds the values of one model's configuration
file (``config.json`` on the Hugging Face Hub, cited by its key in
``references.bib``), written as :class:`pe_lib.layer_schemes.LayerPositions`
so that the registry builds what the model uses: RoPE rates, ALiBi slopes or
T5 buckets. Nothing is downloaded; the numbers below are facts copied from
the cited files, and the tests compare a few of them with the defaults of
Hugging Face's configuration classes.

>>> MODELS["Gemma 3 27B"].layers[1][0]
'1 of 6: global'
>>> len(MODELS) >= 12
True
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pe_lib.alibi import alibi_slopes
from pe_lib.layer_schemes import LayerPositions, gemma3_scheme, llama4_scheme
from pe_lib.methods import get_method

# Phi-3.5-mini-instruct's rope_scaling, as its config.json stores them (float32 values near two-decimal
# numbers: 1.0800000429153442 for 1.08).
PHI35_SHORT_FACTOR = (
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842, 1.0499999523162842,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0699999332427979, 1.0999999046325684,
    1.1099998950958252, 1.1599998474121094, 1.1599998474121094, 1.1699998378753662, 1.2899998426437378,
    1.339999794960022, 1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788,
    1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745, 2.0199997425079346,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756,
    2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533, 2.729999542236328,
    2.749999523162842, 2.8399994373321533,
)
PHI35_LONG_FACTOR = (
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601, 1.5899999141693115,
    1.600000023841858, 1.6200000047683716, 2.620000123977661, 3.2300000190734863, 3.2300000190734863,
    4.789999961853027, 7.400000095367432, 7.700000286102295, 9.09000015258789, 12.199999809265137,
    17.670000076293945, 24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992, 50.340003967285156,
    50.45000457763672, 57.55000305175781, 57.93000411987305, 58.21000289916992, 60.1400032043457,
    62.61000442504883, 62.62000274658203, 62.71000289916992, 63.1400032043457, 63.1400032043457,
    63.77000427246094, 63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688,
    64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938, 64.4800033569336,
    64.51000213623047, 64.52999877929688, 64.83999633789062,
)


@dataclasses.dataclass(frozen=True)
class ReleasedModel:
    """One released model's positions.

    Attributes:
        name: the model, e.g. ``"Llama 3.1 8B"``.
        source: its key in ``references.bib``.
        head_dim: features per head (for RoPE, the rotated slice's width).
        heads: attention heads (for ALiBi's slopes and T5's biases).
        layers: ``(which layers, LayerPositions)`` pairs, one per kind of layer.
        trained_length: the context of pre-training (``original_max_position_embeddings``).
        context: the context the configuration announces.
        other: what else the attention does with positions, in words.
        buys: what the choice buys, in words.
    """

    name: str
    source: str
    head_dim: int
    heads: int
    layers: tuple
    trained_length: int | None
    context: int | None
    other: str = ""
    buys: str = ""

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


def _one(text: str, layer: LayerPositions) -> tuple:
    return ((text, layer),)


_GEMMA = gemma3_scheme(6)
_LLAMA4 = llama4_scheme(4)

#: Fifteen released models, by name.
MODELS: dict[str, ReleasedModel] = {model.name: model for model in (
    ReleasedModel("Llama 3.1 8B", "meta2024llama31config", 128, 32, _one("all", LayerPositions(
        "rope_llama3", {"base": 500000.0, "scale": 8.0, "original_length": 8192, "low_freq_factor": 1.0,
                        "high_freq_factor": 4.0})), 8192, 131072,
        buys="the base raised in pre-training, then three bands at 16x the context"),
    ReleasedModel("Llama 4 Scout", "meta2025llama4config", 128, 40,
                  (("3 of 4: RoPE", _LLAMA4[0]), ("1 of 4: NoPE", _LLAMA4[3])), 8192, 10485760,
                  other="RoPE layers attend in chunks of 8192; interleaved pairs",
                  buys="NoPE layers see every key at any distance; the others stay local"),
    ReleasedModel("Gemma 3 27B", "google2025gemma3config", 128, 32,
                  (("5 of 6: local", _GEMMA[0]), ("1 of 6: global", _GEMMA[5])), 32768, 131072,
                  buys="a small cache in five layers of six; long reach in the sixth"),
    ReleasedModel("Qwen2.5 7B", "qwen2024qwen25config", 128, 28, _one("all", LayerPositions(
        "rope", {"base": 1_000_000.0})), 32768, 32768,
        other="YaRN with factor 4 over 32768 added for longer inputs",
        buys="a large base set in pre-training: slow pairs for a long context"),
    ReleasedModel("Qwen2-VL 7B", "qwen2024qwen2vlconfig", 128, 28, _one("all", LayerPositions(
        "rope", {"base": 1_000_000.0})), None, 32768,
        other="M-RoPE: pairs 16 + 24 + 24 by time, row, column",
        buys="text and image patches in one sequence, each with its own axes"),
    ReleasedModel("Mistral 7B v0.1", "mistral2023config", 128, 32, _one("all", LayerPositions(
        "rope", {"base": 10000.0}, window=4096)), None, 32768,
        buys="a cache that stops growing; reach through stacked layers"),
    ReleasedModel("Phi-3.5 mini", "microsoft2024phi35config", 96, 32, _one("all", LayerPositions(
        "rope_longrope", {"base": 10000.0, "original_length": 4096, "max_length": 131072,
                          "short_factor": PHI35_SHORT_FACTOR, "long_factor": PHI35_LONG_FACTOR})), 4096, 131072,
        other="short factors up to 4096, long beyond",
        buys="a searched factor per pair, fitted to each length range"),
    ReleasedModel("DeepSeek-V3", "deepseek2024v3config", 64, 128, _one("all", LayerPositions(
        "rope_yarn", {"base": 10000.0, "scale": 40.0, "original_length": 4096, "mscale": 1.0,
                      "mscale_all_dim": 1.0, "layout": "interleaved"})), 4096, 163840,
        other="a separate 64-wide rotary slice, its key shared by the heads",
        buys="positions kept out of the compressed keys; 40x the context"),
    ReleasedModel("gpt-oss 20B", "openai2025gptossconfig", 64, 64, (
        ("1 of 2: banded", LayerPositions("rope_yarn", {"base": 150000.0, "scale": 32.0, "original_length": 4096,
                                                        "truncate": False}, window=128, sink_logit=True)),
        ("1 of 2: full", LayerPositions("rope_yarn", {"base": 150000.0, "scale": 32.0, "original_length": 4096,
                                                      "truncate": False}, sink_logit=True))), 4096, 131072,
        buys="half the layers local, and somewhere to put unneeded weight"),
    ReleasedModel("Phi-2", "microsoft2023phi2config", 80, 32, _one("all", LayerPositions(
        "rope", {"base": 10000.0, "rotary_fraction": 0.4})), None, 2048,
        buys="most of each head free of positions"),
    ReleasedModel("GPT-NeoX 20B", "eleuther2022neoxconfig", 96, 64, _one("all", LayerPositions(
        "rope", {"base": 10000.0, "rotary_fraction": 0.25})), None, 2048,
        buys="a quarter of each head carries positions"),
    ReleasedModel("Falcon 7B", "tii2023falconconfig", 64, 71, _one("all", LayerPositions(
        "rope", {"base": 10000.0})), None, 2048,
        other="one key and value head shared by 71 query heads",
        buys="plain RoPE, the default of its day"),
    ReleasedModel("Code Llama 7B", "meta2023codellamaconfig", 128, 32, _one("all", LayerPositions(
        "rope", {"base": 1_000_000.0})), None, 16384,
        other="Llama 2's base of 10000 raised to 1000000 in continued training",
        buys="slower pairs for 16384 tokens and beyond"),
    ReleasedModel("BLOOM 176B", "bigscience2022bloomconfig", 128, 112, _one("all", LayerPositions("alibi")),
                  None, 2048, other="no positions on the inputs",
                  buys="a penalty per head that grows with distance"),
    ReleasedModel("MPT 7B", "mosaicml2023mptconfig", 128, 32, _one("all", LayerPositions("alibi")), None, 2048,
                  buys="ALiBi: run past the training length"),
    ReleasedModel("T5 base", "google2019t5config", 64, 12, _one("all", LayerPositions(
        "t5", {"num_buckets": 32, "max_distance": 128})), None, 512,
        other="biases learned in the first layer, shared by all",
        buys="a learned bias per bucket, exact near, coarse far"),
)}


def rope_layers() -> list[tuple[str, str, LayerPositions, int]]:
    """``(model, which layers, positions, head_dim)`` for every RoPE layer kind of :data:`MODELS`."""
    return [(model.name, which, layer, model.head_dim) for model in MODELS.values()
            for which, layer in model.layers if layer.uses_rope]
