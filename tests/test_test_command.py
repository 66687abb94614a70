"""What ``python3 tasks.py test`` runs, read from the commands it would start.

The commands are recorded, not run: each option of the README's test command is
checked for the pytest runs it makes, the second of which is the layer tests on JAX.
"""

from __future__ import annotations

import pytest

import tasks


@pytest.fixture
def commands(monkeypatch):
    """``commands(*arguments)``: the (arguments, environment) of each run ``tasks.test`` makes."""
    made = []
    monkeypatch.setattr(tasks, "run", lambda *arguments, env=None: made.append(([str(a) for a in arguments], env)))
    for name in ("ensure_browser", "ensure_axe", "ensure_bubblewrap"):
        monkeypatch.setattr(tasks, name, lambda: None)

    def runs(*arguments):
        made.clear()
        tasks.test(*arguments)
        return list(made)

    return runs


def jax_runs(runs):
    return [arguments for arguments, env in runs if env == {"KERAS_BACKEND": "jax"}]


def test_the_full_run_ends_with_the_layer_tests_on_jax_and_nothing_else(commands):
    runs = commands()
    assert len(runs) == 2 and runs[0][1] is None
    assert not any(a.startswith("--ignore") or a in ("tests", "classroom") for a in runs[0][0])
    (jax,) = jax_runs(runs)
    assert [a for a in jax if a in tasks.JAX_TESTS] == list(tasks.JAX_TESTS)
    assert not any(a.startswith("--ignore") or a in ("tests", "pe_lib", "classroom") for a in jax)


def test_the_quick_loop_runs_its_selection_on_tensorflow_alone(commands):
    """The quick selection holds TensorFlow's tests: on JAX most would fail (and take minutes)."""
    (run,) = commands("--quick")
    assert run[1] is None
    assert run[0][-len(tasks.quick_selection()):] == tasks.quick_selection()


def test_a_shuffled_order_reaches_both_backends(commands):
    runs = commands("--order", "shuffle:3")
    assert all("--random-order-seed=3" in arguments for arguments, _ in runs)
    (jax,) = jax_runs(runs)
    assert not any(a.startswith("--ignore") for a in jax)


def test_a_quick_shuffled_run_keeps_both_the_order_and_the_selection(commands):
    (run,) = commands("--quick", "--order", "shuffle:3")
    assert "--random-order-seed=3" in run[0] and "--ignore=tests/test_book.py" in run[0]
