"""The released models' configurations that the chapter reads: cited, complete, and as the peers default them."""

import re
from pathlib import Path

import numpy as np

from peer_reference import PEER
from pe_lib.course.lessons.released_models import MODELS, PHI35_LONG_FACTOR, PHI35_SHORT_FACTOR, rope_layers

BIB = (Path(__file__).resolve().parents[1] / "references.bib").read_text()


def test_at_least_twelve_models_each_cited():
    assert len(MODELS) >= 12
    keys = set(re.findall(r"^@\w+\{([^,]+),", BIB, re.MULTILINE))
    assert all(model.source in keys for model in MODELS.values())


def test_every_layer_builds_through_the_registry():
    for model in MODELS.values():
        for _, layer in model.layers:
            built = model.built(layer)
            if layer.uses_rope:
                assert built.shape == (built.size,) and np.all(built > 0)
    assert {layer.method for _, _, layer, _ in rope_layers()} >= {"rope", "rope_llama3", "rope_longrope",
                                                                 "rope_yarn", "rope_pi"}


def test_gpt_oss_is_hugging_faces_default_configuration():
    rope = PEER["gpt_oss"]["rope_parameters"]  # GptOssConfig's defaults, which are gpt-oss's
    for _, layer in MODELS["gpt-oss 20B"].layers:
        assert layer.options == {"base": rope["rope_theta"], "scale": rope["factor"],
                                 "original_length": rope["original_max_position_embeddings"],
                                 "truncate": rope["truncate"]}
    assert MODELS["gpt-oss 20B"].layers[0][1].window == PEER["gpt_oss"]["sliding_window"]


def test_phi35_factors_are_the_configurations():
    assert list(PHI35_SHORT_FACTOR) == PEER["longrope"]["short_factor"]
    assert list(PHI35_LONG_FACTOR) == PEER["longrope"]["long_factor"]
