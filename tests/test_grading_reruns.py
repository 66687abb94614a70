"""Reruns that are right, and outputs a teacher can open and keep private.

A rerun keeps a row only when nothing it depends on changed (the bytes that
were graded, the library the sandbox is given, the time limits), and never a
row that may have been the machine's doing (a time-out, a run killed from
outside); grading a late folder into the class's CSV keeps the class; files
keep the teacher's umask; no CSV field is too long for a reader; numbered
names never meet real ones; a full temporary folder is named as such, and no
message suggests dropping the sandbox.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import stat

import nbformat
import pytest

import classroom.grade as grading
from classroom import execute, progress, report, sandbox
from classroom.build import build_to_grade
from classroom.grade import grade_folder
from classroom.masters import ClassroomError
from classroom.submissions import find_submissions


@pytest.fixture(scope="module")
def materials(tmp_path_factory):
    """The build of Assignment 1, its solutions and its blank notebook."""
    built = build_to_grade("encoding_matrix", tmp_path_factory.mktemp("reruns-build"))
    return built.references.parents[1], nbformat.read(built.solutions, as_version=4), built.student.read_bytes()


def _class(folder, solutions, names=("ada", "bo", "cy")):
    folder.mkdir(exist_ok=True)
    for name in names:
        nbformat.write(solutions, folder / f"{name}.ipynb")
    return folder


def _run(folder, out, build, **options):
    lines = []
    options.setdefault("unsafe_no_sandbox", True)
    rows = grade_folder(folder, out=out, build=build, log=lines.append, **options)
    return {row["student"]: row for row in rows}, lines


def _graded(lines):
    return sorted(line.split("] ")[1].split(":")[0] for line in lines if line.startswith("["))


def test_a_changed_library_or_time_limit_grades_everyone_again(materials, tmp_path, monkeypatch):
    build, solutions, _ = materials
    folder, out = _class(tmp_path / "class", solutions), tmp_path / "scores.csv"
    library = tmp_path / "pe_lib"
    shutil.copytree(sandbox.LIBRARY, library, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(sandbox, "LIBRARY", library)
    _run(folder, out, build)
    assert _graded(_run(folder, out, build)[1]) == []
    (library / "__init__.py").write_text((library / "__init__.py").read_text() + "\n# a new release\n")
    assert _graded(_run(folder, out, build)[1]) == ["ada", "bo", "cy"]
    assert _graded(_run(folder, out, build, cell_timeout=19)[1]) == ["ada", "bo", "cy"]
    assert _graded(_run(folder, out, build, cell_timeout=19)[1]) == []


def test_the_record_is_keyed_on_the_bytes_graded_not_those_first_seen(materials, tmp_path, monkeypatch):
    """A notebook swapped between the first look and grading: the next run grades what is there now."""
    build, solutions, blank = materials
    folder, out = _class(tmp_path / "class", solutions, ("ada",)), tmp_path / "scores.csv"
    honest = (folder / "ada.ipynb").read_bytes()
    real = grading.read_notebook

    def swapped(path):
        path.write_bytes(blank)
        return real(path)
    monkeypatch.setattr(grading, "read_notebook", swapped)
    rows, _ = _run(folder, out, build)
    assert rows["ada"]["total"] == "0"
    monkeypatch.setattr(grading, "read_notebook", real)
    (folder / "ada.ipynb").write_bytes(honest)
    rows, lines = _run(folder, out, build)
    assert _graded(lines) == ["ada"] and rows["ada"]["total"] == "11"


@pytest.mark.parametrize("confined", [True, False])
def test_a_run_killed_from_outside_or_timed_out_is_graded_again_and_says_whose_fault(materials, tmp_path, confined):
    if confined and sandbox.check():
        pytest.skip(sandbox.check())
    build, solutions, _ = materials
    folder, out = _class(tmp_path / "class", solutions, ("ada",)), tmp_path / "scores.csv"
    killed = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os, signal\n"
                                                                       "os.kill(os.getpid(), signal.SIGKILL)")])
    nbformat.write(killed, folder / "killed.ipynb")
    slow = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(60)")])
    nbformat.write(slow, folder / "slow.ipynb")
    rows, _ = _run(folder, out, build, assignment="encoding_matrix", timeout=8, unsafe_no_sandbox=not confined)
    assert "it was killed (SIGKILL)" in rows["killed"]["reason"] and execute.KILLED in rows["killed"]["reason"]
    assert execute.TIMED_OUT in rows["slow"]["reason"]
    rows, lines = _run(folder, out, build, assignment="encoding_matrix", timeout=8, unsafe_no_sandbox=not confined)
    assert _graded(lines) == ["killed", "slow"] and "2 graded again: their earlier result may have been the " \
        "machine's doing" in lines


def test_a_late_folder_graded_into_the_class_csv_keeps_the_class(materials, tmp_path):
    build, solutions, _ = materials
    folder, late = _class(tmp_path / "class", solutions), _class(tmp_path / "late", solutions, ("zed",))
    out, notes = tmp_path / "scores.csv", tmp_path / "notes"
    _run(folder, out, build, feedback=notes)
    rows, lines = _run(late, out, build, feedback=notes)
    assert f"{out} also holds 3 student(s) not in this folder; their rows are kept: ada, bo, cy" in lines
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(row["student"], row["total"]) for row in table] == [("ada", "11"), ("bo", "11"), ("cy", "11"),
                                                                  ("zed", "11")]
    assert sorted(path.name for path in notes.iterdir()) == ["ada.txt", "bo.txt", "cy.txt", "zed.txt"]
    assert _graded(_run(folder, out, build, feedback=notes)[1]) == []  # the class's record was kept
    assert len(list(csv.DictReader(io.StringIO(out.read_text())))) == 4


def test_a_csv_of_another_assignments_students_is_refused_before_grading(materials, tmp_path):
    build, solutions, _ = materials
    folder, out = _class(tmp_path / "class", solutions, ("ada",)), tmp_path / "scores.csv"
    out.write_text("student,assignment,q1,total,possible,flags,reason\nvi,attention_biases,2,2,12,,\n")
    with pytest.raises(ClassroomError, match="holds the scores of 1 students who are not in .* of "
                                             "attention_biases, not encoding_matrix: grade into another --out"):
        _run(folder, out, build)
    assert out.read_text().startswith("student,assignment,q1,total")


def test_outputs_keep_the_teachers_umask(materials, tmp_path):
    build, solutions, _ = materials
    folder = _class(tmp_path / "class", solutions, ("ada",))
    before = os.umask(0o077)
    try:
        _run(folder, tmp_path / "out" / "scores.csv", build, feedback=tmp_path / "notes")
    finally:
        os.umask(before)
    for path in (tmp_path / "out" / "scores.csv", tmp_path / "out" / ".scores.csv.progress",
                 tmp_path / "notes" / "ada.txt"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_no_csv_field_is_too_long_to_open(materials, tmp_path):
    """25,000 cells that import the library: the flags are counted, and every field stays short."""
    build, solutions, _ = materials
    folder = _class(tmp_path / "class", solutions, ("ada",))
    cell = '{"cell_type": "code", "source": "import pe_lib"}'  # as a tool that strips outputs writes it
    (folder / "many.ipynb").write_text('{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": ['
                                       + ", ".join([cell] * 25_000) + "]}")
    out = tmp_path / "scores.csv"
    rows, _ = _run(folder, out, build, assignment="encoding_matrix", timeout=60)
    assert rows["many"]["flags"].endswith("; and 24995 more like these")
    long_row = {"student": "x" * 300_000, "reason": "=" + "y" * 300_000, "flags": ""}
    text = report.csv_text([long_row], []) + out.read_text().split("\n", 1)[1]
    for row in csv.reader(io.StringIO(text)):
        assert all(len(field) <= report.FIELD_LIMIT for field in row)
    assert report.neutral(long_row["reason"]).startswith("'=yyy") and "more characters cut]" in text


def test_numbered_names_never_meet_a_real_entry(tmp_path):
    for name in ("a\tb.ipynb", "a b.ipynb", "\u0430nna.ipynb", "anna.ipynb", "\u0430nna (2).ipynb"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "a b.ipynb (2)").mkdir()  # a folder whose name is what numbering would make
    (tmp_path / "a b.ipynb (2)" / "work.ipynb").write_text("{}")
    students = [submission.student for submission in find_submissions(tmp_path)]
    assert len(set(students)) == len(students) == 6
    assert "a b.ipynb (3)" in students and "\u0430nna (3)" in students


def test_hidden_entries_are_named_and_hidden_notebooks_graded(materials, tmp_path):
    build, solutions, _ = materials
    folder = _class(tmp_path / "class", solutions, ("ada", ".bo"))
    (folder / ".notes.txt").write_text("my notes")
    (folder / ".DS_Store").write_text("")
    rows, lines = _run(folder, None, build)
    assert rows[".bo"]["total"] == "11" and "its name starts with a dot" in rows[".bo"]["flags"]
    assert f"1 hidden entry of {folder} (not notebooks) left out: .notes.txt" in lines


@pytest.mark.skipif(sandbox.bwrap_path() is None, reason="no bubblewrap")
def test_a_full_temporary_folder_is_named_and_the_sandbox_is_never_offered_away(materials, tmp_path, monkeypatch):
    build, solutions, _ = materials
    folder = _class(tmp_path / "class", solutions, ("ada",))

    def full(source, target, **options):
        raise shutil.Error([(str(source / "x.py"), str(target / "x.py"), "[Errno 28] No space left on device")])
    monkeypatch.setattr(sandbox.shutil, "copytree", full)
    monkeypatch.setattr(sandbox, "_STAGE", [])
    sandbox.check.cache_clear()
    try:
        why = sandbox.check()
        with pytest.raises(ClassroomError) as refused:
            grade_folder(folder, out=None, build=build, log=lambda line: None)
    finally:
        sandbox.check.cache_clear()
    assert why.startswith("the sandbox's copy of the course library could not be made in the temporary folder")
    assert "No space left on device" in why and "free space there, or set TMPDIR" in why
    assert str(refused.value) == f"cannot grade safely: {why}" and "unsafe" not in str(refused.value)
