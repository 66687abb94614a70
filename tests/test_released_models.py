"""The released models the chapter reads: each read from its committed configuration, cited, and as the peers have it."""

import re
from pathlib import Path

import numpy as np

from peer_reference import PEER
from pe_lib.course.lessons.released_models import CATALOGUE, load_models, rope_layers

ROOT = Path(__file__).resolve().parents[1]
BIB = (ROOT / "references.bib").read_text()


def models():
    """The catalogue's models, read afresh in each test (so that each test reads the configurations itself)."""
    return load_models(ROOT / "tests" / "data" / "model_configs")


def test_at_least_twelve_models_each_cited():
    released = models()
    assert len(released) == len(CATALOGUE) >= 12
    keys = set(re.findall(r"^@\w+\{([^,]+),", BIB, re.MULTILINE))
    assert all(model.source in keys for model in released.values())


def test_every_layer_builds_through_the_registry():
    released = models()
    for model in released.values():
        for _, layer in model.layers:
            built = model.built(layer)
            if layer.uses_rope:
                assert built.shape == (built.size,) and np.all(built > 0)
    assert {layer.method for _, _, layer, _ in rope_layers(released)} >= {"rope", "rope_llama3", "rope_longrope",
                                                                       "rope_yarn", "rope_pi"}


def test_kinds_of_layer_are_counted_over_the_whole_model():
    released = models()
    assert [which for which, _ in released["Gemma 3 27B"].layers] == ["52 of 62: local", "10 of 62: global"]
    assert [which for which, _ in released["Llama 4 Scout"].layers] == ["36 of 48: RoPE", "12 of 48: NoPE"]
    assert [which for which, _ in released["Llama 3.1 8B"].layers] == ["all"]


def test_gpt_oss_is_hugging_faces_default_configuration():
    rope = PEER["gpt_oss"]["rope_parameters"]  # GptOssConfig's defaults, which are gpt-oss's
    released = models()
    for _, layer in released["gpt-oss 20B"].layers:
        assert layer.options == {"base": rope["rope_theta"], "scale": rope["factor"],
                                 "original_length": rope["original_max_position_embeddings"],
                                 "beta_fast": rope["beta_fast"], "beta_slow": rope["beta_slow"],
                                 "truncate": rope["truncate"]}
        assert layer.sink_logit
    assert released["gpt-oss 20B"].layers[0][1].window == PEER["gpt_oss"]["sliding_window"]


def test_phi35_factors_are_the_configurations():
    options = models()["Phi-3.5 mini"].layers[0][1].options
    assert options["short_factor"] == PEER["longrope"]["short_factor"]
    assert options["long_factor"] == PEER["longrope"]["long_factor"]
    assert (options["original_length"], options["max_length"]) == (PEER["longrope"]["original_length"],
                                                                    PEER["longrope"]["max_length"])
