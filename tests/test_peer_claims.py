"""What pe_lib says about its peers, checked against what the peers compute.

Each test would fail if the sentence it guards went back to an earlier, wrong
claim: keras-hub's YaRN, DistilBERT's sinusoidal layout, BERT's
``relative_key``, Hugging Face's dynamic NTK module, DeepSeek-V3's YaRN
temperature, and the empty buckets of ``t5.bucket_starts``.
"""

import inspect
import re

import numpy as np
import pytest

import pe_lib.methods
from layer_harness import to_numpy
from peer_reference import FLOAT32_STEP, PEER, array, float32_angle_tolerance
from pe_lib import rope_scaling, t5
from pe_lib.layers import RotaryEmbedding
from pe_lib.rope import apply_rope
from pe_lib.sinusoidal import sinusoidal_encoding


def squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text)


# --- keras-hub's YaRN ---------------------------------------------------------------------


def test_keras_hub_truncate_defaults_to_true():
    assert PEER["keras_hub_yarn"]["default_truncate"] is True
    assert inspect.signature(rope_scaling.yarn_rates).parameters["truncate"].default is True


@pytest.mark.parametrize("case", PEER["keras_hub_yarn"]["cases"],
                         ids=lambda c: f"d{c['depth']}-N{c['base']:g}-truncate{c['truncate']}")
def test_keras_hub_yarn_is_rope_yarn_with_the_same_truncate(case):
    depth, scale = case["depth"], case["scale"]
    rates = rope_scaling.scaled_rates("rope_yarn", depth, scale=scale, original_length=case["original_length"],
                                      base=case["base"], truncate=case["truncate"])
    factor = rope_scaling.attention_factor("rope_yarn", scale)
    x = array(case["x"])
    for start, rotated in case["rotated"].items():
        positions = np.arange(len(x)) + int(start)  # positions are not capped, whatever truncate says
        ours = apply_rope(x, positions, rates=rates) * factor
        bound = 2 * np.tile(float32_angle_tolerance(positions, rates), 2) * np.abs(x).max() * factor
        assert np.all(np.abs(ours - array(rotated)) <= bound), (start, np.abs(ours - array(rotated)).max())


def test_keras_hub_clips_the_ramp_at_d_minus_1_not_at_the_last_pair():
    # d = 8, N = 500, L = 2048: the ramp ends at pair 4, past the last pair (3); clipped at 7 it stays 4
    assert rope_scaling.yarn_correction_range(8, 2048, base=500.0) == (1.0, 4.0)
    # d = 8, N = 20: ceil gives 8, clipped to d - 1 = 7
    assert rope_scaling.yarn_correction_range(8, 2048, base=20.0)[1] == 7.0


def test_no_docstring_repeats_the_old_keras_hub_claims():
    for text in (rope_scaling.__doc__, pe_lib.methods.__doc__):
        text = squeezed(text)
        assert "keras-hub" in text
        assert "does not round" not in text and "caps the positions" not in text.replace("neither caps", "")
        assert "pair ``d/2 - 1`` at the latest" not in text
    assert "defaults to True" in squeezed(rope_scaling.__doc__)


# --- DistilBERT and BERT ------------------------------------------------------------------


def test_distilbert_sinusoidal_is_interleaved():
    peer = PEER["distilbert_sinusoidal"]
    table = array(peer["table"])
    interleaved = sinusoidal_encoding(peer["n_pos"], peer["dim"], layout="interleaved", dtype="float64")
    half_split = sinusoidal_encoding(peer["n_pos"], peer["dim"], layout="half-split", dtype="float64")
    np.testing.assert_allclose(table, interleaved, rtol=0, atol=2 * FLOAT32_STEP)
    assert np.abs(table - half_split).max() > 0.5
    text = squeezed(pe_lib.methods.__doc__)
    assert "create_sinusoidal_embeddings`` (DistilBERT; the interleaved layout" in text


def test_bert_relative_key_is_gone_from_transformers_5():
    assert PEER["bert"]["relative_key_in_bert"] is False
    assert PEER["versions"]["transformers"].startswith("5.")
    assert "removed in transformers 5" in squeezed(pe_lib.methods.__doc__)


# --- Hugging Face's dynamic NTK module keeps the rates of the longest call ----------------


def test_dynamic_ntk_module_keeps_the_longest_lengths_rates():
    peer = PEER["dynamic_ntk"]
    positions = np.array(peer["positions"])
    x = array(peer["x"])[None, :, None, :].astype("float32")  # (batch, steps, heads, depth)
    layer = RotaryEmbedding("rope_dynamic", scale=peer["scale"], original_length=peer["original_length"])
    fresh = to_numpy(layer(x, positions=positions))[0, :, 0]
    stale = to_numpy(layer(x, positions=positions, length=peer["first_length"]))[0, :, 0]
    tolerance = 2e-3  # float32 angles at positions up to 8190 on both sides
    np.testing.assert_allclose(fresh, array(peer["rotated_fresh"]), rtol=0, atol=tolerance)
    np.testing.assert_allclose(stale, array(peer["rotated_after_longer"]), rtol=0, atol=tolerance)
    assert np.abs(fresh - stale).max() > 1.0  # not "the same"
    doc = squeezed(RotaryEmbedding.__doc__)
    assert "behaves the same" not in doc and "keeps the rates of the longest length" in doc


# --- DeepSeek-V3's temperature, and T5's empty buckets ------------------------------------


def test_deepseek_docstring_says_where_the_temperature_goes():
    doc = squeezed(rope_scaling.yarn_attention_factor.__doc__)
    assert "softmax scale" in doc and "1.874" in doc
    assert PEER["deepseek_v3"]["softmax_scale_times_sqrt_head_dim"] == pytest.approx(1.874, abs=5e-4)


def test_bucket_starts_says_and_does_what_an_empty_bucket_gets():
    first_paragraph = squeezed(t5.bucket_starts.__doc__.split("\n\n")[1])
    assert "empty bucket" in first_paragraph
    starts = t5.bucket_starts(num_buckets=32, max_distance=9)
    buckets = t5.relative_position_bucket(-np.arange(40), bidirectional=True, num_buckets=32, max_distance=9)
    for bucket, start in enumerate(starts):
        if bucket not in buckets:  # empty: the smallest distance past it
            later = [distance for distance in range(40) if buckets[distance] > bucket]
            assert start == min(later, default=start)
