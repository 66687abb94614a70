"""Shared by the grading tests: each assignment built once per session, on demand."""

from __future__ import annotations

import threading

import pytest

from classroom.build import build_assignment
from classroom.masters import ASSIGNMENTS


class Builds:
    """Build an assignment the first time a test asks for it, into one folder."""

    def __init__(self, folder):
        self.folder = folder
        self.done = {}
        self.lock = threading.Lock()

    def __call__(self, name: str):
        with self.lock:
            if name not in self.done:
                master = ASSIGNMENTS / name / f"{name}.ipynb"
                self.done[name] = build_assignment(master, self.folder, run_tests=False)
            return self.done[name]


@pytest.fixture(scope="session")
def builds(tmp_path_factory):
    """``builds(name)``: the :class:`classroom.build.Built` of assignment ``name``."""
    return Builds(tmp_path_factory.mktemp("assignment-builds"))
