"""A submissions folder as a teacher finds it: who is who, what can be read, and the report.

Every entry gets one row, whatever it is (a link, a FIFO, a device, a folder
and a file of one name), with the reason it cannot be graded; a file that
would block or hang the grader is never waited for; names that would clash,
in rows or in feedback files, are kept apart; and the CSV is safe to open in
a spreadsheet.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import time

import pytest

from classroom import files, report
from classroom.submissions import NOTEBOOK_ITEMS, NOTEBOOK_LIMIT, find_submissions, read_submission


def _by_student(folder):
    return {submission.student: submission for submission in find_submissions(folder)}


def test_a_fifo_a_link_and_a_device_each_get_a_row_with_a_reason(tmp_path):
    (tmp_path / "x").mkdir()
    os.mkfifo(tmp_path / "x" / "x.ipynb")
    os.mkfifo(tmp_path / "pipe.ipynb")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "work.ipynb").write_text("{}")
    os.symlink(tmp_path / "elsewhere" / "work.ipynb", tmp_path / "linked.ipynb")
    os.symlink(tmp_path / "elsewhere", tmp_path / "linked_folder")
    found = _by_student(tmp_path)
    assert found["x"].path is None and found["x"].problem == "not graded: x/x.ipynb is a FIFO, not a regular file"
    assert found["pipe"].problem == "not graded: pipe.ipynb is a FIFO, not a regular file"
    assert found["linked"].problem == "not graded: linked.ipynb is a symbolic link; hand in the notebook itself"
    assert found["linked_folder"].problem.startswith("not graded: linked_folder is a symbolic link")
    assert found["elsewhere"].path == tmp_path / "elsewhere" / "work.ipynb"
    if os.geteuid() == 0:  # only root can make a device node
        os.mknod(tmp_path / "null.ipynb", stat.S_IFCHR | 0o600, os.makedev(1, 3))
        assert _by_student(tmp_path)["null"].problem == "not graded: null.ipynb is a device, not a regular file"


def test_reading_a_fifo_neither_blocks_nor_follows_links(tmp_path):
    os.mkfifo(tmp_path / "pipe.ipynb")
    (tmp_path / "real.ipynb").write_text("{}")
    os.symlink(tmp_path / "real.ipynb", tmp_path / "link.ipynb")
    began = time.perf_counter()
    assert read_submission(tmp_path / "pipe.ipynb") == (None, "not graded: pipe.ipynb is a FIFO, not a regular file")
    assert read_submission(tmp_path / "link.ipynb")[1] == \
        "not graded: link.ipynb is a symbolic link, not a regular file"
    assert time.perf_counter() - began < 5


def test_a_read_that_hangs_is_given_up_after_its_time(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_read", lambda path, limit, result: time.sleep(3))
    began = time.perf_counter()
    with pytest.raises(files.NotReadable, match="could not be read within 0.5 s"):
        files.read(tmp_path / "slow", limit=10, seconds=0.5)
    assert time.perf_counter() - began < 2


def test_a_notebook_too_large_is_refused_unread(tmp_path):
    with open(tmp_path / "huge.ipynb", "wb") as handle:
        handle.truncate(NOTEBOOK_LIMIT + 1)  # sparse: no time or disk spent
    assert read_submission(tmp_path / "huge.ipynb") == (None, "not graded: huge.ipynb is larger than 32 MiB")
    (tmp_path / "deep.ipynb").write_text("[" + "[]," * (NOTEBOOK_ITEMS + 1) + "[]]")
    assert f"holds more than {NOTEBOOK_ITEMS} items" in read_submission(tmp_path / "deep.ipynb")[1]


def test_a_folder_and_a_notebook_of_one_name_are_two_students(tmp_path):
    (tmp_path / "dup").mkdir()
    (tmp_path / "dup" / "work.ipynb").write_text("{}")
    (tmp_path / "dup.ipynb").write_text("{}")
    (tmp_path / "ann lee.ipynb").write_text("{}")
    found = find_submissions(tmp_path)
    assert [s.student for s in found] == ["ann lee", "dup/", "dup.ipynb"]
    assert found[1].path == tmp_path / "dup" / "work.ipynb" and found[2].path == tmp_path / "dup.ipynb"
    assert found[1].note == found[2].note == "2 entries are named 'dup' (dup/, dup.ipynb): each has its own row"


def test_names_that_clean_to_one_string_are_numbered(tmp_path):
    (tmp_path / "a\nb.ipynb").write_text("{}")
    (tmp_path / "a b.ipynb").write_text("{}")
    students = [s.student for s in find_submissions(tmp_path)]
    assert sorted(students) == ["a b.ipynb", "a b.ipynb (2)"]


def test_feedback_files_get_distinct_names_even_where_case_is_ignored():
    names = report.feedback_names(["ann lee", "ann_lee", "Ann_Lee", "bo", "bo/"])
    assert names == {"ann lee": "ann_lee-3.txt", "ann_lee": "ann_lee-2.txt", "Ann_Lee": "Ann_Lee.txt",
                     "bo": "bo.txt", "bo/": "bo_.txt"}


@pytest.mark.parametrize("name", ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "\rx"])
def test_a_cell_a_spreadsheet_would_run_as_a_formula_starts_with_an_apostrophe(name):
    row = {"student": name, "assignment": "encoding_matrix", "q1": "0", "total": "0", "possible": "11",
           "flags": "", "reason": "-1 point"}
    (parsed,) = list(csv.DictReader(io.StringIO(report.csv_text([row], ["q1"]))))
    assert parsed["student"] == "'" + name.replace("\r", " ") and parsed["reason"] == "'-1 point"
    assert parsed["total"] == "0" and parsed["assignment"] == "encoding_matrix"
