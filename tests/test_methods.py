"""The registry of position methods: one entry per name, each with what it promises."""

import inspect

import pytest

from pe_lib import layers
from pe_lib.methods import METHODS, WHERE, get_method, method_names

NAMES = ("sinusoidal", "learned", "rope", "rope_pi", "rope_ntk", "rope_yarn", "alibi", "t5", "shaw", "none")


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
    assert method_names("queries and keys") == ("rope", "rope_pi", "rope_ntk", "rope_yarn")
    assert method_names("scores") == ("alibi", "t5", "shaw")
    assert [name for name in NAMES if not get_method(name).extrapolates] == ["learned"]


@pytest.mark.parametrize("bad", ["cosine", "ROPE", None, 3])
def test_unknown_methods_are_refused_with_the_list(bad):
    with pytest.raises(ValueError) as raised:
        get_method(bad)
    assert "method" in str(raised.value) and "'sinusoidal'" in str(raised.value) and repr(bad) in str(raised.value)
