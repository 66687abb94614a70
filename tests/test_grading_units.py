"""The grader's bookkeeping on its own, quickly: the record, untrusted files, names, identification, the CSV.

These tests need no sandbox and no build. Each catches a plausible bug of
:mod:`classroom.progress`, :mod:`classroom.files`, :mod:`classroom.submissions`,
:mod:`classroom.identify` or :mod:`classroom.report` (they were written
against a mutation tester's survivors): a record keyed without a part of
what a row depends on, a file rewritten in place rather than whole, a size
cap dropped, a boundary moved by one.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import stat
from pathlib import Path

import nbformat
import pytest

from classroom import files, identify, progress, report, submissions
from classroom.identify import Look


# ---------------------------------------------------------------- the record


def test_the_key_changes_with_every_part_and_its_order():
    parts = ["ada", "digest", 120.0, None, ["flag"]]
    keys = {progress.key(parts)}
    for index, other in enumerate(["bo", "digest2", 121.0, 3.0, ["flag", "x"]]):
        changed = list(parts)
        changed[index] = other
        keys.add(progress.key(changed))
    keys.add(progress.key(list(reversed(parts))))
    assert len(keys) == 7 and progress.key(parts) == hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    assert progress.key([Path("/a/b.ipynb"), {"b": 1, "a": 2}]) == progress.key(["/a/b.ipynb", {"a": 2, "b": 1}])


def test_digests_are_of_the_bytes_and_of_every_file_of_a_tree(tmp_path):
    (tmp_path / "a.py").write_bytes(b"x = 1\n")
    assert progress.file_digest(tmp_path / "a.py") == hashlib.sha256(b"x = 1\n").hexdigest()
    assert progress.file_digest(tmp_path / "missing.py") == ""
    tree = tmp_path / "lib"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "m.py").write_text("y = 2\n")
    (tree / "n.py").write_text("z = 3\n")
    first = progress.tree_digest(tree)
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "n.cpython-311.pyc").write_bytes(b"compiled")
    (tree / "sub" / "old.pyc").write_bytes(b"compiled")
    (tree / "__pycache__" / "notes.txt").write_text("left by a tool")
    assert progress.tree_digest(tree) == first  # compiled files are not what the sandbox gets
    (tree / "sub" / "m.py").write_text("y = 3\n")
    second = progress.tree_digest(tree)
    (tree / "sub" / "m.py").rename(tree / "sub" / "k.py")
    assert len({first, second, progress.tree_digest(tree)}) == 3


def test_the_library_digest_follows_the_library(tmp_path, monkeypatch):
    from classroom import sandbox

    (tmp_path / "pe_lib").mkdir()
    (tmp_path / "pe_lib" / "__init__.py").write_text("")
    monkeypatch.setattr(sandbox, "LIBRARY", tmp_path / "pe_lib")
    before = progress.library_digest()
    (tmp_path / "pe_lib" / "__init__.py").write_text("VERSION = 2\n")
    assert progress.library_digest() != before


def test_the_record_is_read_line_by_line_and_skips_what_it_cannot_use(tmp_path):
    path = progress.record_path(tmp_path / "scores.csv")
    assert path == tmp_path / ".scores.csv.progress"
    lines = [json.dumps({"key": "a", "row": {"student": "ada"}}), "not json", json.dumps([1, 2]),
             json.dumps({"key": 3, "row": {}}), json.dumps({"key": "b", "row": "x"}),
             json.dumps({"key": "c", "row": {"student": "cy"}, "pad": "x" * progress.LINE_LIMIT}),
             json.dumps({"key": "a", "row": {"student": "ada", "total": "2"}})]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b'{"key": "d", "row": {"student": "\xff"}}\n')
    assert progress.load(path) == {"a": {"key": "a", "row": {"student": "ada", "total": "2"}}}
    assert progress.load(tmp_path / "none") == {}


def test_a_line_of_exactly_the_limit_is_read(tmp_path):
    entry = {"key": "a", "row": {}, "pad": ""}
    entry["pad"] = "x" * (progress.LINE_LIMIT - len(json.dumps(entry)) - 1)  # the newline makes the limit
    path = tmp_path / "record"
    path.write_text(json.dumps(entry) + "\n")
    assert list(progress.load(path)) == ["a"]


def test_the_record_is_rewritten_whole_then_appended_to(tmp_path):
    path = tmp_path / ".scores.csv.progress"
    path.write_text("old line\n")
    inode = path.stat().st_ino
    record = progress.Record(path, [{"key": "a", "row": {"student": "ada"}}])
    assert path.stat().st_ino != inode  # a new file renamed into place, never the old one rewritten
    assert path.read_text() == json.dumps({"key": "a", "row": {"student": "ada"}}) + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    record.add({"key": "b", "row": {"student": "bo"}})
    assert list(progress.load(path)) == ["a", "b"] and record.problem == ""
    assert progress.Record(None, []).problem == "" and progress.Record(None, []).add({}) is None


def test_a_record_that_cannot_be_written_says_so_and_raises_nothing(tmp_path):
    record = progress.Record(tmp_path / "missing" / ".r.progress", [{"key": "a", "row": {}}])
    assert record.problem == "No such file or directory"
    record.add({"key": "b", "row": {}})
    assert not (tmp_path / "missing").exists()


def test_an_entry_marked_retry_is_never_reused():
    assert progress.reusable({"row": {}}) and progress.reusable({"row": {}, "retry": False})
    assert not progress.reusable({"row": {}, "retry": True}) and not progress.reusable("x")


# ---------------------------------------------------------------- untrusted files


def test_a_file_is_read_up_to_its_limit_and_not_a_byte_more(tmp_path):
    (tmp_path / "exact").write_bytes(b"x" * 2048)
    assert files.read(tmp_path / "exact", limit=2048, seconds=5) == b"x" * 2048
    with pytest.raises(files.NotReadable, match="^is larger than 0 MiB$"):
        files.read(tmp_path / "exact", limit=2047, seconds=5)
    with pytest.raises(files.NotReadable, match=r"^cannot be opened \(No such file or directory\)$"):
        files.read(tmp_path / "missing", limit=10, seconds=5)
    with pytest.raises(files.NotReadable, match="^is a folder, not a regular file$"):
        files.read(tmp_path, limit=10, seconds=5)
    os.symlink(tmp_path / "exact", tmp_path / "link")
    with pytest.raises(files.NotReadable, match="^is a symbolic link, not a regular file$"):
        files.read(tmp_path / "link", limit=10 << 20, seconds=5)


def test_a_file_that_grows_while_it_is_read_is_refused(tmp_path, monkeypatch):
    (tmp_path / "small").write_bytes(b"x" * 10)
    real = os.fstat

    def small(descriptor):  # the size the file had when it was opened
        info = real(descriptor)
        return os.stat_result((info.st_mode, *info[1:6], 0, *info[7:]))
    (tmp_path / "small").write_bytes(b"y" * (3 << 20))
    monkeypatch.setattr(files.os, "fstat", small)
    with pytest.raises(files.NotReadable, match="^is larger than 2 MiB$"):
        files.read(tmp_path / "small", limit=2 << 20, seconds=5)


@pytest.mark.parametrize("mode, kind", [(stat.S_IFDIR, "a folder"), (stat.S_IFSOCK, "a socket"),
                                        (stat.S_IFCHR, "a device"), (stat.S_IFBLK, "a device"), (0, "not a regular file")])
def test_each_kind_of_file_is_named(mode, kind):
    assert files.kind(mode) == kind


# ---------------------------------------------------------------- submissions


def test_a_notebook_is_read_from_its_cells_and_its_digest_is_of_its_bytes(tmp_path):
    data = {"nbformat": 4, "nbformat_minor": 2, "metadata": {"otter": {"assignment_name": "a"}, "colab": {}},
            "cells": [{"cell_type": "code", "source": ["x = ", "1"]}, {"cell_type": "markdown", "source": "hi"},
                      {"cell_type": "raw", "source": "r"}, {"cell_type": "heading", "source": "h"},
                      {"cell_type": "code", "source": 5}, "not a cell", {"cell_type": "code", "source": ["x", 1]}]}
    raw = json.dumps(data).encode()
    (tmp_path / "a.ipynb").write_bytes(raw)
    notebook, problem, digest = submissions.read_notebook(tmp_path / "a.ipynb")
    assert problem == "" and digest == hashlib.sha256(raw).hexdigest()
    assert [(cell.cell_type, cell.source) for cell in notebook.cells] == [("code", "x = 1"), ("markdown", "hi"),
                                                                        ("raw", "r")]
    assert notebook.metadata == {"otter": {"assignment_name": "a"}} and submissions.assignment_name(notebook) == "a"
    (tmp_path / "b.ipynb").write_text(json.dumps(dict(data, nbformat=5)))
    assert submissions.read_notebook(tmp_path / "b.ipynb")[1].startswith("not a notebook: ")
    (tmp_path / "c.txt").write_text("{}")
    assert submissions.read_notebook(tmp_path / "c.txt") == (None, "not a notebook: c.txt is not an .ipynb file",
                                                              hashlib.sha256(b"{}").hexdigest())


def test_a_notebook_at_the_item_cap_is_read_and_one_over_is_not(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "NOTEBOOK_ITEMS", 7)
    text = '{"nbformat": 4, "metadata": {}, "cells": [{"cell_type": "code", "source": "x"}]}'
    assert text.count("{") + text.count("[") + text.count(",") == 7
    (tmp_path / "a.ipynb").write_text(text)
    assert submissions.read_notebook(tmp_path / "a.ipynb")[1] == ""
    (tmp_path / "b.ipynb").write_text(text.replace('"x"', '"x", "id": "1"'))
    assert "holds more than 7 items" in submissions.read_notebook(tmp_path / "b.ipynb")[1]


def test_code_cells_skip_otters_lines_and_turn_magics_into_calls():
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import otter\ngrader = otter.Notebook()"),
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("grader.check('q1')\n# a comment"),
        nbformat.v4.new_code_cell("%%time\nx = 1"),
        nbformat.v4.new_code_cell("y = 2  # grader.check('q1')")])
    assert submissions.code_cells(notebook) == [
        (4, "get_ipython().run_cell_magic('time', '', 'x = 1\\n')\n"), (5, "y = 2  # grader.check('q1')\n")]


def test_code_at_exactly_the_caps_is_taken(monkeypatch):
    monkeypatch.setattr(submissions, "CELL_LIMIT", 10)
    monkeypatch.setattr(submissions, "CODE_LIMIT", 20)
    cells = [nbformat.v4.new_code_cell("x = 12345\n"), nbformat.v4.new_code_cell("y = 12345\n")]
    assert len(submissions.code_cells(nbformat.v4.new_notebook(cells=cells))) == 2
    cells.append(nbformat.v4.new_code_cell("z"))
    with pytest.raises(submissions.TooMuchCode, match="its code cells hold more than"):
        submissions.code_cells(nbformat.v4.new_notebook(cells=cells))
    with pytest.raises(submissions.TooMuchCode, match="cell 1 holds more than"):
        submissions.code_cells(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 123456\n")]))


def test_hidden_notebooks_and_hidden_entries(tmp_path):
    for name in (".ada.ipynb", "._bo.ipynb", ".DS_Store", ".notes", "cy.ipynb", ".ipynb"):
        (tmp_path / name).write_text("{}")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    found = submissions.find_submissions(tmp_path)
    assert [(s.student, s.flags) for s in found] == [
        (".ada", ("its name starts with a dot (hidden in most file browsers): graded as any other",)), ("cy", ())]
    assert submissions.hidden_entries(tmp_path) == [".ipynb", ".notes"]
    assert submissions.hidden_entries(tmp_path / "missing") == []


def test_a_students_folder_takes_a_hidden_notebook_only_when_it_has_no_other(tmp_path):
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / ".work.ipynb").write_text("{}")
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / ".backup.ipynb").write_text("{}")
    (tmp_path / "bo" / "work.ipynb").write_text("{}")
    (tmp_path / "bo" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "bo" / ".ipynb_checkpoints" / "work-checkpoint.ipynb").write_text("{}")
    found = {s.student: s.path for s in submissions.find_submissions(tmp_path)}
    assert found == {"ada": tmp_path / "ada" / ".work.ipynb", "bo": tmp_path / "bo" / "work.ipynb"}


def test_numbering_skips_every_name_taken():
    taken = {"a", "a (2)", "a (3)"}
    assert submissions.numbered("a", taken) == "a (4)" and "a (4)" in taken
    assert submissions.numbered("b", taken) == "b (2)"


# ---------------------------------------------------------------- identification


def test_a_look_is_bounded_and_digests_the_bytes(tmp_path, monkeypatch):
    raw = json.dumps({"metadata": {"otter": {"assignment_name": "x"}},
                      "cells": [{"cell_type": "code", "source": "def f():\n    pass\ng = 1"}]}).encode()
    (tmp_path / "a.ipynb").write_bytes(raw)
    seen = identify.look(tmp_path / "a.ipynb")
    assert seen == Look("x", frozenset({"f", "g"}), hashlib.sha256(raw).hexdigest(), True)
    monkeypatch.setattr(identify, "NOTEBOOK_LIMIT", len(raw) - 1)
    assert identify.look(tmp_path / "a.ipynb") == Look(None, frozenset(), "", False)
    monkeypatch.setattr(identify, "NOTEBOOK_LIMIT", len(raw))
    monkeypatch.setattr(identify, "NOTEBOOK_ITEMS", 2)
    assert identify.look(tmp_path / "a.ipynb") == Look(None, frozenset(), hashlib.sha256(raw).hexdigest(), False)
    (tmp_path / "b.ipynb").write_text("not json")
    assert not identify.look(tmp_path / "b.ipynb").readable and identify.look(None).digest == ""


def test_sources_are_read_from_nbformat_3_and_4_and_capped(monkeypatch):
    monkeypatch.setattr(identify, "CELL_LIMIT", 12)
    v4 = {"cells": [{"cell_type": "code", "source": ["a = ", "1"]}, {"cell_type": "markdown", "source": "b = 2"},
                    {"cell_type": "code", "source": "c = 1234567890123"}]}
    v3 = {"worksheets": [{"cells": [{"cell_type": "code", "input": "d = 4"}]}]}
    assert identify._sources(v4) == ["a = 1"] and identify._sources(v3) == ["d = 4"]
    assert identify._sources([]) == [] and identify._sources({"worksheets": []}) == []


def test_an_assignment_is_told_by_code_from_half_its_names():
    catalog = {"a": frozenset({"f", "g"}), "b": frozenset({"h", "k", "m"})}
    assert identify.by_code(frozenset({"f"}), catalog) == "a"  # exactly half
    assert identify.by_code(frozenset({"h"}), catalog) is None  # a third
    assert identify.by_code(frozenset(), {}) is None
    assert identify.graded_names({"p": "f(1) + len(x)"}, ["def f(y):\n    pass", "x = 1", "len = 3"]) == {"f", "x"}


def test_the_teacher_the_folder_and_the_majority_decide_in_that_order():
    catalog = {"a": frozenset({"f"}), "b": frozenset({"g"})}
    looks = {"x": Look("a", frozenset(), "", True), "y": Look("a", frozenset(), "", True),
             "z": Look("b", frozenset(), "", True), "w": Look(None, frozenset(), "", False),
             "v": Look("nonesuch", frozenset(), "", True)}
    assert identify.class_assignment(looks, None, catalog) == "a"
    assert identify.class_assignment(looks, None, catalog, folder="b") == "b"
    assert identify.class_assignment(looks, "b", catalog, folder="a") == "b"
    assert identify.class_assignment(dict(looks, u=looks["z"]), None, catalog) is None
    decided = identify.decide(looks, "a", catalog, teacher=False)
    assert decided["x"] == ("a", "") and "w" not in decided
    assert decided["z"] == ("a", "its metadata names b, not a: graded as a, the assignment of this folder's notebooks")
    assert identify.decide(looks, None, catalog)["x"] == (None, "")


# ---------------------------------------------------------------- the report


def test_every_field_is_capped_and_formulas_neutralised():
    assert report.neutral("x" * report.FIELD_LIMIT) == "x" * report.FIELD_LIMIT
    cut = report.neutral("x" * (report.FIELD_LIMIT + 1))
    assert len(cut) <= report.FIELD_LIMIT and cut.endswith("more characters cut]")
    assert report.neutral("a\nb\rc") == "a b c" and report.neutral("\tx") == "'\tx"
    assert report.number(2.0) == "2" and report.number(1 / 3) == "0.3333"


def test_the_csv_is_written_whole_with_the_umask(tmp_path):
    before = os.umask(0o027)
    try:
        report.write_csv(tmp_path / "new" / "scores.csv", [{"student": "ada", "total": "1"}], ["q1"])
    finally:
        os.umask(before)
    path = tmp_path / "new" / "scores.csv"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and os.listdir(path.parent) == ["scores.csv"]
    assert list(csv.reader(io.StringIO(path.read_text())))[1] == ["ada", "", "", "1", "", "", ""]
    inode = path.stat().st_ino
    report.write_csv(path, [], [])
    assert path.stat().st_ino != inode and path.read_text() == "student,assignment,total,possible,flags,reason\n"
    assert report.umask() == before


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "scores.csv"
    path.write_text("old")
    monkeypatch.setattr(report.os, "replace", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    with pytest.raises(OSError):
        report.write_whole(path, "new")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["scores.csv"]


def test_scores_already_written_are_read_back(tmp_path):
    assert report.read_scores(tmp_path / "none.csv") is None
    (tmp_path / "a.csv").write_text("last week's scores\n")
    assert report.read_scores(tmp_path / "a.csv") == []
    (tmp_path / "b.csv").write_text(report.csv_text([{"student": "=x", "total": "2"}, {"student": ""}], []))
    assert [row["student"] for row in report.read_scores(tmp_path / "b.csv")] == ["'=x"]
    (tmp_path / "c.csv").write_bytes(b"\xff\xfe")
    assert report.read_scores(tmp_path / "c.csv") == []


def test_writable_says_why_not(tmp_path):
    (tmp_path / "file").write_text("x")
    assert report.writable(tmp_path / "file", folder=True) == f"{tmp_path / 'file'} is not a folder"
    assert report.writable(tmp_path, folder=False) == f"{tmp_path} is a folder"
    assert report.writable(tmp_path / "file" / "x.csv", folder=False) == f"{tmp_path / 'file'} is not a folder"
    assert report.writable(tmp_path / "made" / "x.csv", folder=False) == "" and (tmp_path / "made").is_dir()
    assert report.writable(tmp_path / "notes", folder=True) == "" and os.listdir(tmp_path / "notes") == []


def test_feedback_is_written_once_and_stale_notes_are_named(tmp_path):
    text = report.feedback_text("ada", "A1", {"q1": (1.0, 2.0, ["f: off"])},
                                {"total": "1", "possible": "2", "flags": "x"}, ["note"])
    assert text == "A1: feedback for ada\n\nTotal: 1 of 2\n\nq1: 1 of 2\n  - f: off\n\nFlagged: x\n\nNotes:\n  - note\n"
    path = report.write_feedback(tmp_path, "ada.txt", text)
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10**9, stamp - 10**9))
    report.write_feedback(tmp_path, "ada.txt", text)
    assert path.stat().st_mtime_ns == stamp - 10**9  # the same text is not written again
    (tmp_path / "old.txt").write_text("")
    (tmp_path / ".hidden.txt").write_text("")
    (tmp_path / "x.csv").write_text("")
    assert report.stale_notes(tmp_path, {"ada.txt"}) == ["old.txt"] and report.stale_notes(tmp_path / "no", set()) == []


def test_feedback_names_avoid_those_taken_and_each_other():
    names = report.feedback_names(["ann", "Ann", "bo"], taken={"BO.txt"})
    assert names["Ann"] == "Ann.txt" and names["ann"] == "ann-2.txt" and names["bo"].startswith("bo-")
    assert len({name.casefold() for name in names.values()} | {"bo.txt"}) == 4


def test_graded_names_are_those_the_probes_read_and_the_master_defines():
    assert identify.graded_names({"p": "f(1)"}, ["def f(x):\n    pass", "def helper():\n    pass"]) == {"f"}


def test_a_tie_or_a_weak_share_tells_no_assignment():
    catalog = {"a": frozenset({"f", "g"}), "b": frozenset({"f", "h"}), "c": frozenset({"k"})}
    assert identify.by_code(frozenset({"f"}), catalog) is None  # a and b tie at a half
    assert identify.by_code(frozenset({"f", "g"}), catalog) == "a"  # a whole, b a half, c nothing
    assert identify.by_code(frozenset({"k"}), {"c": frozenset({"k"})}) == "c"
    assert identify.by_code(frozenset({"f"}), {"a": catalog["a"], "b": catalog["b"]}) is None


def test_a_look_at_exactly_the_item_cap_is_readable(tmp_path, monkeypatch):
    raw = b'{"cells": []}'
    (tmp_path / "a.ipynb").write_bytes(raw)
    monkeypatch.setattr(identify, "NOTEBOOK_ITEMS", 2)
    assert identify.look(tmp_path / "a.ipynb").readable
    monkeypatch.setattr(identify, "NOTEBOOK_ITEMS", 1)
    assert not identify.look(tmp_path / "a.ipynb").readable


@pytest.mark.parametrize("metadata, name", [({"otter": {"assignment_name": "a" * 70}}, "a" * 57 + "..."),
                                            ({"otter": {"assignment_name": ""}}, None), ({"otter": "a"}, None),
                                            ("metadata", None), ({"otter": {"assignment_name": 3}}, None)])
def test_the_metadatas_assignment_is_read_only_from_otters_entry(metadata, name):
    assert identify.metadata_name({"metadata": metadata}) == name and identify.metadata_name([]) is None


def test_each_notebook_without_metadata_says_how_its_assignment_was_told():
    catalog = {"a": frozenset({"f"}), "b": frozenset({"g"})}
    looks = {"named": Look("a", frozenset(), "", True), "by_code": Look(None, frozenset({"f"}), "", True),
             "other_code": Look(None, frozenset({"g"}), "", True), "silent": Look(None, frozenset(), "", True)}
    by_teacher = identify.decide(looks, "a", catalog)
    assert by_teacher["by_code"] == ("a", "its metadata names no assignment: graded as a, the assignment you named")
    by_folder = identify.decide(looks, "a", catalog, teacher=False)
    assert by_folder["named"] == ("a", "") and by_folder["by_code"] == (
        "a", "its metadata names no assignment: graded as a, whose functions its code defines")
    assert by_folder["silent"] == ("a", "its metadata names no assignment: graded as a, "
                                        "the assignment of every other notebook")
    mixed = identify.decide(dict(looks, other=Look("b", frozenset(), "", True)), "a", catalog, teacher=False)
    assert mixed["silent"] == ("a", "its metadata names no assignment: graded as a, "
                                    "the assignment of this folder's notebooks")


def test_the_cut_marker_counts_what_was_cut_and_the_csv_has_its_feedback_column():
    cut = report.neutral("x" * 3000)
    kept = cut.index(" ...")
    assert cut.endswith(f"[{3000 - kept:,} more characters cut]") and cut[:kept] == "x" * kept
    text = report.csv_text([{"student": "ada", "feedback": "ada.txt"}], ["q1"], feedback=True)
    assert text == "student,assignment,q1,total,possible,flags,reason,feedback\nada,,,,,,,ada.txt\n"


def test_with_no_umask_a_file_is_readable_and_writable_by_all_but_never_executable(tmp_path):
    before = os.umask(0)
    try:
        report.write_whole(tmp_path / "a.txt", "x")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o666


def test_a_students_folder_is_searched_to_its_caps_and_never_through_links(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "STUDENT_FOLDER_LIMIT", 3)
    (tmp_path / "ada").mkdir()
    for name in ("a.txt", "b.txt", "work.ipynb"):
        (tmp_path / "ada" / name).write_text("{}")
    assert submissions.find_submissions(tmp_path)[0].path == tmp_path / "ada" / "work.ipynb"
    (tmp_path / "ada" / "c.txt").write_text("")
    assert submissions.find_submissions(tmp_path)[0].problem == "not graded: the folder holds more than 3 files"
    monkeypatch.setattr(submissions, "STUDENT_FOLDER_LIMIT", 100)
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "d1" / "d2" / "d3" / "d4" / "d5" / "d6").mkdir(parents=True)
    (tmp_path / "deep" / "d1" / "d2" / "d3" / "d4" / "d5" / "d6" / "work.ipynb").write_text("{}")
    (tmp_path / "deeper" / "d1" / "d2" / "d3" / "d4" / "d5" / "d6" / "d7").mkdir(parents=True)
    (tmp_path / "deeper" / "d1" / "d2" / "d3" / "d4" / "d5" / "d6" / "d7" / "work.ipynb").write_text("{}")
    (tmp_path / "linked").mkdir()
    os.symlink(tmp_path / "deep" / "d1", tmp_path / "linked" / "elsewhere")
    os.mkfifo(tmp_path / "ada" / "pipe.ipynb")
    found = {s.student: s for s in submissions.find_submissions(tmp_path)}
    assert found["deep"].path.name == "work.ipynb" and found["deeper"].path is None
    assert found["linked"].problem == "not a notebook: the folder holds 0 notebooks, not one"
    assert found["ada"].problem == ("not a notebook: the folder holds 2 notebooks, not one "
                                    "(ada/pipe.ipynb is a FIFO, not a regular file)")
    os.unlink(tmp_path / "ada" / "work.ipynb")
    assert submissions.find_submissions(tmp_path)[0].problem == \
        "not graded: ada/pipe.ipynb is a FIFO, not a regular file"


def test_a_class_folder_at_its_cap_is_read_and_one_over_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "FOLDER_LIMIT", 2)
    for name in ("a.ipynb", "b.ipynb", ".DS_Store"):
        (tmp_path / name).write_text("{}")
    assert len(submissions.find_submissions(tmp_path)) == 2
    (tmp_path / "c.ipynb").write_text("{}")
    with pytest.raises(submissions.ClassroomError, match="holds more than 2 entries"):
        submissions.find_submissions(tmp_path)
    with pytest.raises(submissions.ClassroomError, match=f"the submissions folder '{tmp_path / 'x'}' does not exist"):
        submissions.find_submissions(tmp_path / "x")


def test_a_notebook_that_does_not_say_its_format_is_read_as_nbformat_4(tmp_path):
    (tmp_path / "a.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "x = 1"}]}')
    notebook, problem, _ = submissions.read_notebook(tmp_path / "a.ipynb")
    assert problem == "" and notebook.cells[0].source == "x = 1"


# ---------------------------------------------------------------- encodings, temporaries, caps and reasons


@pytest.fixture
def ascii_locale():
    """A teacher's shell whose locale is C: Python's default encoding for files is then ASCII."""
    import locale

    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        if locale.getpreferredencoding(False).lower().replace("-", "") == "utf8":
            pytest.skip("Python runs in UTF-8 mode here: the locale cannot change the encoding")
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_the_csv_and_the_notes_are_utf_8_whatever_the_locale(tmp_path, ascii_locale):
    path = tmp_path / "scores.csv"
    report.write_csv(path, [{"student": "Zoë", "total": "1"}], [])
    assert path.read_bytes() == "student,assignment,total,possible,flags,reason\nZoë,,1,,,\n".encode()
    assert [row["student"] for row in report.read_scores(path)] == ["Zoë"]
    note = report.write_feedback(tmp_path / "notes", "zoe.txt", "Zoë: 1 of 2\n")
    assert note.read_bytes() == "Zoë: 1 of 2\n".encode()
    stamp = note.stat().st_mtime_ns - 10**9
    os.utime(note, ns=(stamp, stamp))
    report.write_feedback(tmp_path / "notes", "zoe.txt", "Zoë: 1 of 2\n")
    assert note.stat().st_mtime_ns == stamp  # read back as UTF-8: the same note, not written again


def test_a_changed_note_is_written_again_and_missing_folders_are_made(tmp_path):
    folder = tmp_path / "out" / "feedback"
    report.write_feedback(folder, "ada.txt", "first\n")
    assert report.write_feedback(folder, "ada.txt", "second\n").read_text() == "second\n"
    report.write_csv(tmp_path / "a" / "b" / "scores.csv", [{"student": "ada", "feedback": "ada.txt"}], ["q1"],
                     feedback=True)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "a" / "b" / "scores.csv").read_text())))
    assert rows == [{"student": "ada", "assignment": "", "q1": "", "total": "", "possible": "", "flags": "",
                     "reason": "", "feedback": "ada.txt"}]
    assert report.csv_text([{"student": "ada", "feedback": "ada.txt"}], []).splitlines() == [
        "student,assignment,total,possible,flags,reason", "ada,,,,,"]  # no feedback column unless asked


def test_the_temporary_is_hidden_beside_the_file_and_says_it_is_partial(tmp_path, monkeypatch):
    moved = []
    real = os.replace

    def replace(source, target):
        moved.append((str(source), str(target)))
        real(source, target)
    monkeypatch.setattr(report.os, "replace", replace)
    report.write_whole(tmp_path / "scores.csv", "x")
    (source, target), = moved
    assert target == str(tmp_path / "scores.csv") and os.path.dirname(source) == str(tmp_path)
    name = os.path.basename(source)
    assert name.startswith(".scores.csv.") and name.endswith(".partial") and len(name) > len(".scores.csv..partial")
    moved.clear()
    progress.Record(tmp_path / ".scores.csv.progress", [])
    assert moved == [(str(tmp_path / ".scores.csv.progress.partial"), str(tmp_path / ".scores.csv.progress"))]


def test_the_umask_is_read_without_being_changed(tmp_path, monkeypatch):
    before = os.umask(0o027)
    try:
        def refuse(mask):
            raise AssertionError("the umask was changed, which other threads would see")
        with monkeypatch.context() as patch:
            patch.setattr(report.os, "umask", refuse)
            assert report.umask() == 0o027

        def no_proc(*args, **kwargs):
            raise OSError(2, "No such file or directory")
        with monkeypatch.context() as patch:  # where /proc cannot be read: set and put back
            patch.setattr(report, "open", no_proc, raising=False)
            assert report.umask() == 0o027
        assert os.umask(0o027) == 0o027
    finally:
        os.umask(before)


def test_writable_makes_what_is_missing_and_accepts_what_is_there(tmp_path):
    assert report.writable(tmp_path / "a" / "b" / "x.csv", folder=False) == ""
    assert os.listdir(tmp_path / "a" / "b") == []  # the folder made, and nothing in it
    assert report.writable(tmp_path / "c" / "d", folder=True) == "" and (tmp_path / "c" / "d").is_dir()
    (tmp_path / "old.csv").write_text("x")
    assert report.writable(tmp_path / "old.csv", folder=False) == ""
    assert report.writable(tmp_path / "a", folder=True) == ""
    assert (tmp_path / "old.csv").read_text() == "x" and sorted(os.listdir(tmp_path)) == ["a", "c", "old.csv"]


def test_writable_tries_the_folder_itself(tmp_path, monkeypatch):
    # /proc takes no new files, not even root's: the check must try there, not elsewhere.
    assert report.writable(Path("/proc/scores.csv"), folder=False) == \
        "/proc cannot be written (No such file or directory)"
    (tmp_path / "scores.csv").write_text("x")
    monkeypatch.setattr(report.os, "access", lambda path, mode: mode != os.W_OK)  # a file this user cannot write
    assert report.writable(tmp_path / "scores.csv", folder=False) == \
        f"{tmp_path / 'scores.csv'} cannot be replaced (permission denied)"
    assert report.writable(tmp_path, folder=True) == ""  # a folder is judged by the file made in it


def test_feedback_names_are_cut_whole_characters_and_never_hidden():
    assert report.feedback_names(["\u3042" * 30]) == {"\u3042" * 30: "\u3042" * 26 + ".txt"}  # 3 bytes each: 78
    assert report.feedback_names([".ada", "bo.", "REX", "Xena", "...", "a" * 79 + ".b"]) == {
        ".ada": "ada.txt", "bo.": "bo.txt", "REX": "REX.txt", "Xena": "Xena.txt", "...": "student.txt",
        "a" * 79 + ".b": "a" * 79 + ".txt"}


def test_a_numbered_name_that_is_another_students_plain_one_is_told_apart():
    # "ann" is numbered "ann-2" beside "Ann", and a student is called "ann-2": "ann" gets a digest instead.
    assert report.feedback_names(["ann", "Ann", "ann-2"]) == {
        "ann": "ann-2-49915e.txt", "Ann": "Ann.txt", "ann-2": "ann-2.txt"}


def test_the_grader_digest_covers_each_file_of_the_grader_and_nothing_else(monkeypatch):
    folder = os.path.dirname(os.path.abspath(progress.__file__))
    asked = []
    monkeypatch.setattr(progress, "file_digest", lambda path: asked.append(Path(path).resolve()) or path.name)
    first = progress.grader_digest()
    assert sorted(asked) == sorted(Path(folder, name).resolve() for name in os.listdir(folder)
                                   if name.endswith(".py"))
    assert Path(folder, "report.py").resolve() in asked and len(first) == 64
    monkeypatch.setattr(progress, "file_digest", lambda path: "changed" if path.name == "report.py" else path.name)
    assert progress.grader_digest() != first


def test_a_record_that_fails_says_why_in_words(tmp_path, monkeypatch):
    def full(*args):
        raise OSError(28, "No space left on device")
    with monkeypatch.context() as patch:
        patch.setattr(progress.os, "replace", lambda *args: (_ for _ in ()).throw(OSError("the share went away")))
        assert progress.Record(tmp_path / ".r.progress", []).problem == "the share went away"
    record = progress.Record(tmp_path / ".r.progress", [])
    with monkeypatch.context() as patch:
        patch.setattr(progress.os, "fsync", full)
        record.add({"key": "a", "row": {}})
    assert record.problem == "No space left on device"
    record.add({"key": "b", "row": {}})  # nothing more is tried once writing failed
    assert list(progress.load(tmp_path / ".r.progress")) == ["a"]
    other = progress.Record(tmp_path / ".s.progress", [])
    with monkeypatch.context() as patch:
        patch.setattr(progress.os, "fsync", lambda *args: (_ for _ in ()).throw(OSError("gone")))
        other.add({"key": "a", "row": {}})
    assert other.problem == "gone"


def test_a_fifo_is_refused_at_once_and_a_long_file_is_read_whole(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(files.NotReadable, match="^is a FIFO, not a regular file$"):
        files.read(tmp_path / "pipe", limit=10, seconds=5)  # opened without waiting for a writer
    data = bytes(range(256)) * 4097  # more than one read's worth
    (tmp_path / "long").write_bytes(data)
    assert files.read(tmp_path / "long", limit=len(data), seconds=5) == data


def test_a_read_never_takes_more_than_one_byte_past_its_limit_and_closes_the_file(tmp_path, monkeypatch):
    (tmp_path / "big").write_bytes(b"y" * (3 << 20))
    real_fstat, real_read, taken = os.fstat, os.read, []

    def small(descriptor):  # a file that grows after it was opened
        info = real_fstat(descriptor)
        return os.stat_result((info.st_mode, *info[1:6], 0, *info[7:]))

    def read(descriptor, count):
        chunk = real_read(descriptor, count)
        taken.append(len(chunk))
        return chunk
    opened = len(os.listdir("/proc/self/fd"))
    with monkeypatch.context() as patch:
        patch.setattr(files.os, "fstat", small)
        patch.setattr(files.os, "read", read)
        with pytest.raises(files.NotReadable, match="^is larger than 2 MiB$"):
            files.read(tmp_path / "big", limit=2 << 20, seconds=5)
    assert sum(taken) == (2 << 20) + 1
    for _ in range(3):
        files.read(tmp_path / "big", limit=4 << 20, seconds=5)
    assert len(os.listdir("/proc/self/fd")) == opened


def test_a_failed_read_says_so_in_words(tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(b"x")

    def broken(descriptor, count):
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(files.os, "read", broken)
    with pytest.raises(files.NotReadable, match=r"^cannot be read \(Input/output error\)$"):
        files.read(tmp_path / "a", limit=10, seconds=5)


def test_a_read_that_hangs_is_given_up_and_left_behind(tmp_path, monkeypatch):
    import threading
    import time

    def hung(path, limit, result):  # a network share that answers late
        time.sleep(1.5)
        result["data"] = b"{}"
    monkeypatch.setattr(files, "_read", hung)
    (tmp_path / "a.ipynb").write_text("{}")
    before = set(threading.enumerate())
    with pytest.raises(files.NotReadable, match=r"^could not be read within 0.05 s$"):
        files.read(tmp_path / "a.ipynb", limit=10, seconds=0.05)
    left = [thread for thread in threading.enumerate() if thread not in before]
    assert left and all(thread.daemon for thread in left)  # never keeps the grader from finishing
    monkeypatch.setattr(identify, "READ_SECONDS", 0.05)
    assert identify.look(tmp_path / "a.ipynb") == Look(None, frozenset(), "", False)
    monkeypatch.setattr(submissions, "READ_SECONDS", 0.05)
    assert submissions.read_notebook(tmp_path / "a.ipynb") == (
        None, "not graded: a.ipynb could not be read within 0.05 s", "")


@pytest.mark.parametrize("mode, kind", [(stat.S_IFREG, "a regular file"), (stat.S_IFLNK, "a symbolic link"),
                                        (stat.S_IFIFO, "a FIFO")])
def test_regular_files_links_and_fifos_are_named(mode, kind):
    assert files.kind(mode) == kind


def test_a_look_that_finds_no_json_keeps_the_digest_and_names_nothing(tmp_path):
    (tmp_path / "b.ipynb").write_bytes(b"not json")
    assert identify.look(tmp_path / "b.ipynb") == Look(None, frozenset(), hashlib.sha256(b"not json").hexdigest(),
                                                       False)
    assert identify.look(None) == Look(None, frozenset(), "", False)
    assert identify.look(tmp_path / "missing.ipynb") == Look(None, frozenset(), "", False)


def test_sources_after_other_cells_at_the_cap_and_of_any_shape(monkeypatch):
    monkeypatch.setattr(identify, "CELL_LIMIT", 12)
    cells = [{"cell_type": "markdown", "source": "a = 1"}, {"cell_type": "code", "source": "b = 12345678"},
             {"cell_type": "code"}, {"cell_type": "code", "source": "c = 123456789"}]
    assert identify._sources({"cells": cells}) == ["b = 12345678"]  # exactly the cap
    assert identify._sources({"cells": 5}) == [] and identify._sources({"worksheets": [{}]}) == []


def test_a_strong_majority_is_needed_and_an_unread_notebook_is_passed_over():
    catalog = {"a": frozenset({"f"}), "b": frozenset({"g"}), "c": frozenset({"h"})}
    looks = {name: Look(told, frozenset(), "", True) for name, told in
             [("1", "a"), ("2", "a"), ("3", "a"), ("4", "b"), ("5", "c")]}
    assert identify.class_assignment(looks, None, catalog) == "a"  # 3 of 5
    assert identify.class_assignment(dict(looks, **{"6": Look("b", frozenset(), "", True)}), None, catalog) is None
    assert identify.class_assignment({"w": Look(None, frozenset(), "", False)}, None, catalog) is None
    assert identify.class_assignment({}, None, catalog) is None
    decided = identify.decide({"w": Look(None, frozenset(), "", False), "x": Look("b", frozenset(), "", True)},
                              "a", catalog)
    assert decided == {"x": ("a", "its metadata names b, not a: graded as a, the assignment you named")}


def test_a_name_with_a_character_unicode_does_not_name_is_read(tmp_path):
    tangut = "\U00017000"  # printable, a letter, and nameless in unicodedata
    assert submissions.skeleton(tangut + "\u0430nna") == tangut + "anna"
    assert submissions.mixed_scripts(tangut + "anna") == [] and submissions.mixed_scripts("\u0430nna") == [
        "CYRILLIC", "LATIN"]
    (tmp_path / f"{tangut}.ipynb").write_text("{}")
    assert [(s.student, s.flags) for s in submissions.find_submissions(tmp_path)] == [(tangut, ())]


def test_a_students_folder_skips_what_it_cannot_list_and_never_takes_a_link(tmp_path, monkeypatch):
    (tmp_path / "ada" / "b").mkdir(parents=True)
    (tmp_path / "ada" / "b" / "work.ipynb").write_text("{}")
    (tmp_path / "ada" / "z").mkdir()
    (tmp_path / "ada" / "__pycache__").mkdir()
    (tmp_path / "ada" / "__pycache__" / "x.ipynb").write_text("{}")
    real = os.scandir

    def scandir(path):
        if os.path.basename(path) == "z":
            raise PermissionError(13, "Permission denied")
        return real(path)
    with monkeypatch.context() as patch:
        patch.setattr(submissions.os, "scandir", scandir)
        assert [s.path for s in submissions.find_submissions(tmp_path)] == [tmp_path / "ada" / "b" / "work.ipynb"]
    (tmp_path / "bo").mkdir()
    (tmp_path / "work.txt").write_text("{}")
    os.symlink(tmp_path / "work.txt", tmp_path / "bo" / "link.ipynb")
    found = {s.student: s for s in submissions.find_submissions(tmp_path)}
    assert found["bo"].path is None
    assert found["bo"].problem == "not graded: bo/link.ipynb is a symbolic link, not a regular file"


def test_long_names_are_cut_where_they_are_shown(tmp_path):
    (tmp_path / "ada").mkdir()
    os.mkfifo(tmp_path / "ada" / ("f" * 62 + ".ipynb"))
    (tmp_path / ("." + "h" * 70)).write_text("")
    (tmp_path / ("n" * 130 + ".ipynb")).write_text("{}")
    (tmp_path / ("d" * 130)).mkdir()
    os.symlink(tmp_path / "ada", tmp_path / ("s" * 130))
    found = {s.student: s for s in submissions.find_submissions(tmp_path)}
    assert found["ada"].problem == "not graded: ada/" + "f" * 53 + "... is a FIFO, not a regular file"
    assert submissions.hidden_entries(tmp_path) == ["." + "h" * 56 + "..."]
    assert found["n" * 117 + "..."].path == tmp_path / ("n" * 130 + ".ipynb")
    assert found["d" * 117 + "..."].problem == "not a notebook: the folder holds 0 notebooks, not one"
    assert found["s" * 117 + "..."].problem == ("not graded: " + "s" * 117 + "... is a symbolic link; "
                                                  "hand in the notebook itself")


def test_twins_keep_their_whole_names_and_a_name_that_then_clashes_is_numbered(tmp_path):
    (tmp_path / "dup").mkdir()
    (tmp_path / "dup.ipynb").write_text("{}")
    (tmp_path / "dup.ipynb.ipynb").write_text("{}")
    (tmp_path / "ln").symlink_to(tmp_path / "dup")
    (tmp_path / "ln.ipynb").write_text("{}")
    (tmp_path / ("x" * 130)).mkdir()
    (tmp_path / ("x" * 130 + ".ipynb")).write_text("{}")
    found = [(s.student, s.note) for s in submissions.find_submissions(tmp_path)]
    twins = "2 entries are named 'dup' (dup/, dup.ipynb): each has its own row"
    assert found[:5] == [("dup/", twins), ("dup.ipynb", twins), ("dup.ipynb (2)", found[2][1]),
                         ("ln", "2 entries are named 'ln' (ln, ln.ipynb): each has its own row"),
                         ("ln.ipynb", "2 entries are named 'ln' (ln, ln.ipynb): each has its own row")]
    assert re.fullmatch(r"its name\b.*\banother entry's\b.*\bnumbered", found[2][1])
    assert [s.flags for s in submissions.find_submissions(tmp_path)][:3] == [(), (), ()]  # numbered: no look-alike
    cut = "x" * 117 + "..."
    assert [student for student, _ in found[5:]] == [cut + "/", cut]


def test_numbers_are_counted_one_by_one_and_three_look_alikes_are_each_others():
    assert submissions.numbered("ann", {"ann", "ann (2)"}) == "ann (3)"
    found = submissions._look_alikes([submissions.Submission(name, None) for name in
                                      ("anna", "\u0430nna", "ann\u0430")])
    assert "looks like 2 other entries': it is" in found[0].flags[0]


def test_an_editors_notebook_keeps_every_cell_in_its_place(tmp_path):
    data = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "metadata": {}}, {"cell_type": "heading", "source": "h"},
                      {"cell_type": "code", "source": "x = 1"}]}  # no outputs, no execution counts
    (tmp_path / "a.ipynb").write_text(json.dumps(data))
    notebook, problem, _ = submissions.read_notebook(tmp_path / "a.ipynb")
    assert problem == "" and [(cell.cell_type, cell.source) for cell in notebook.cells] == [("code", ""),
                                                                                         ("code", "x = 1")]
    assert submissions.code_cells(notebook) == [(2, "x = 1\n")]


def test_a_notebook_of_nbformat_3_is_read_without_its_outputs_and_attachments(tmp_path):
    cell = {"cell_type": "code", "input": "x = 1", "language": "python", "metadata": {},
            "outputs": [{"not": "an output"}], "attachments": {}}
    data = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [cell], "metadata": {}}]}
    (tmp_path / "a.ipynb").write_text(json.dumps(data))
    notebook, problem, _ = submissions.read_notebook(tmp_path / "a.ipynb")
    assert problem == "" and notebook.cells[0].source == "x = 1"
    (tmp_path / "b.ipynb").write_text(json.dumps(dict(data, worksheets=[{}])))
    _, problem, _ = submissions.read_notebook(tmp_path / "b.ipynb")
    assert problem.startswith("not a notebook: ") and re.search(r"\bcells\b", problem)


@pytest.mark.parametrize("metadata, name", [({"otter": {"assignment_name": "a" * 70}}, "a" * 57 + "..."),
                                            ({}, None), ({"otter": "a"}, None),
                                            ({"otter": {"assignment_name": 3}}, None)])
def test_the_assignment_is_read_only_from_otters_entry(metadata, name):
    assert submissions.assignment_name(nbformat.v4.new_notebook(metadata=metadata)) == name


def test_imports_are_found_after_a_cell_that_is_not_python():
    cells = [(1, "x = ("), (2, "__import__()"), (3, "import pe_lib")]
    assert submissions.forbidden_uses(cells, ("pe_lib",)) == [
        "cell 2 imports a module by a computed name", "cell 3 imports pe_lib"]


def test_what_is_not_a_notebook_says_why_in_a_capped_line(tmp_path, monkeypatch):
    long = "t" * 70
    (tmp_path / f"{long}.txt").write_text("{}")
    assert submissions.read_notebook(tmp_path / f"{long}.txt")[1] == \
        f"not a notebook: {long[:57]}... is not an .ipynb file"
    os.mkfifo(tmp_path / f"{long}.ipynb")
    assert submissions.read_notebook(tmp_path / f"{long}.ipynb") == (
        None, f"not graded: {long[:57]}... is a FIFO, not a regular file", "")
    (tmp_path / f"{long}2.ipynb").write_text('{"cells": [], "metadata": {}}')
    monkeypatch.setattr(submissions, "NOTEBOOK_ITEMS", 1)
    problem = submissions.read_notebook(tmp_path / f"{long}2.ipynb")[1]
    assert problem.startswith(f"not graded: {long[:57]}... holds more than 1 items; ")
    assert re.search(r"\bclear its outputs and hand it in again$", problem)
    monkeypatch.setattr(submissions, "NOTEBOOK_ITEMS", 100)
    # Bytes that are not UTF-8 are shown replaced; nbformat's reason is cut to 80 characters.
    raw = b"\xff\xfe not json at all, and a long tail of text that goes on and on and on"
    (tmp_path / "a.ipynb").write_bytes(raw)
    notebook, problem, digest = submissions.read_notebook(tmp_path / "a.ipynb")
    assert notebook is None and digest == hashlib.sha256(raw).hexdigest()
    assert problem.startswith("not a notebook: Notebook does not appear to be JSON: '\ufffd\ufffd not json")
    assert len(problem) == len("not a notebook: ") + 80 and problem.endswith("...")


def test_a_failure_without_a_message_is_named_by_its_kind(tmp_path, monkeypatch):
    (tmp_path / "a.ipynb").write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                                                  "worksheets": []}))

    def exhausted(*args, **kwargs):
        raise MemoryError()
    monkeypatch.setattr(submissions.nbformat, "reads", exhausted)
    assert submissions.read_notebook(tmp_path / "a.ipynb")[1] == "not a notebook: MemoryError"


def test_a_file_not_named_ipynb_that_hangs_is_given_up_with_no_digest(tmp_path, monkeypatch):
    import time

    def hung(path, limit, result):
        time.sleep(1.5)
        result["data"] = b"{}"
    monkeypatch.setattr(files, "_read", hung)
    monkeypatch.setattr(submissions, "READ_SECONDS", 0.05)
    (tmp_path / "a.txt").write_text("{}")
    assert submissions.read_notebook(tmp_path / "a.txt") == (None, "not a notebook: a.txt is not an .ipynb file", "")


def test_nbformats_reason_is_given_for_a_file_that_is_no_notebook(tmp_path, monkeypatch):
    cases = {"bom": (b"\xef\xbb\xbf[1, 2", "not a notebook: Notebook does not appear to be JSON: '[1, 2'"),
             "nothing": (b'{"metadata": {}}', "not a notebook: Notebook could not be converted from version 1"),
             "sheet": (json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [5]}).encode(),
                       "not a notebook: The notebook is invalid")}
    for name, (raw, reason) in cases.items():
        (tmp_path / f"{name}.ipynb").write_bytes(raw)
        assert submissions.read_notebook(tmp_path / f"{name}.ipynb")[1].startswith(reason), name

    def refuse(*args, **kwargs):
        raise ValueError("x" * 100 + "\nmore")
    monkeypatch.setattr(submissions.nbformat, "reads", refuse)
    assert submissions.read_notebook(tmp_path / "sheet.ipynb")[1] == "not a notebook: " + "x" * 77 + "..."
