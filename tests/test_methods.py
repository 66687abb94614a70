"""The registry of position methods: one entry per name, each with what it promises."""

import inspect

import pytest

from pe_lib import layers
from pe_lib.methods import METHODS, WHERE, get_method, method_names

ROPES = ("rope", "rope_pi", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_yarn_paper", "rope_llama3", "rope_longrope")
NAMES = ("sinusoidal", "learned", *ROPES, "alibi", "t5", "shaw", "none")


def test_the_registry_holds_exactly_the_course_methods():
    assert tuple(METHODS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_entry_has_a_summary_a_place_a_reference_and_a_layer(name):
    entry = get_method(name)
    assert entry.name == name and entry.summary and entry.acts_on in WHERE
    if name in ("learned", "none"):
        assert entry.reference is None
    else:
        assert callable(entry.reference) and entry.reference.__module__.startswith("pe_lib.")
    if name == "none":
        assert entry.layer is None and entry.acts_on == "none"
    else:
        assert entry.layer is getattr(layers, entry.layer.__name__)
        assert inspect.getsource(entry.layer).count("register_keras_serializable") == 1


def test_where_each_method_acts():
    assert method_names("input") == ("sinusoidal", "learned")
    assert method_names("queries and keys") == ROPES
    assert method_names("scores") == ("alibi", "t5", "shaw")
    assert [name for name in NAMES if not get_method(name).extrapolates] == ["learned"]


@pytest.mark.parametrize("bad", ["cosine", "ROPE", None, 3])
def test_unknown_methods_are_refused_with_the_list(bad):
    with pytest.raises(ValueError) as raised:
        get_method(bad)
    assert "method" in str(raised.value) and "'sinusoidal'" in str(raised.value) and repr(bad) in str(raised.value)


@pytest.mark.parametrize("bad", ["inputs", "keys", "", 1])
def test_an_unknown_place_is_refused_not_answered_with_nothing(bad):
    with pytest.raises(ValueError) as raised:
        method_names(bad)
    assert "acts_on" in str(raised.value) and repr(bad) in str(raised.value) and "'scores'" in str(raised.value)


def test_the_module_names_the_peers_of_every_rope_variant():
    import pe_lib.methods

    text = pe_lib.methods.__doc__
    for peer in ('rope_type="dynamic"', 'rope_type="yarn"', 'rope_type="llama3"', "partial_rotary_factor",
                 "beta_fast", "mscale_all_dim", "low_freq_factor"):
        assert peer in text, peer
