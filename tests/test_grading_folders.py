"""A submissions folder as a teacher finds it: who is who, what can be read, and the report.

Every entry gets one row, whatever it is (a link, a FIFO, a device, a folder
and a file of one name), with the reason it cannot be graded; a file that
would block or hang the grader is never waited for; names that would clash,
in rows or in feedback files, are kept apart; and the CSV is safe to open in
a spreadsheet.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import stat
import subprocess
import sys
import time
import unicodedata

import nbformat
import pytest

from classroom import cli, compare, expect, files, progress, report
from classroom.build import build_to_grade
from classroom.grade import grade_folder
from classroom.masters import ROOT
from classroom.submissions import (CELL_LIMIT, CODE_LIMIT, NOTEBOOK_ITEMS, NOTEBOOK_LIMIT, READ_MEMORY, TooMuchCode,
                                   code_cells, find_submissions, forbidden_uses, read_submission)


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
    # The read would take 30 s; giving up after 0.5 s leaves a wide margin on a busy machine.
    monkeypatch.setattr(files, "_read", lambda path, limit, result: time.sleep(30))
    began = time.perf_counter()
    with pytest.raises(files.NotReadable, match="could not be read within 0.5 s"):
        files.read(tmp_path / "slow", limit=10, seconds=0.5)
    assert time.perf_counter() - began < 10


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


# ---------------------------------------------------------------- parts that never fail the class


def test_code_the_parser_cannot_read_is_flagged_not_raised():
    cells = [(2, "x = " + " + ".join(["1"] * 3000)), (3, "-" * 100_000 + "1"), (4, "import pe_lib")]
    assert forbidden_uses(cells, ("pe_lib",)) == ["cell 2 is nested too deeply to be read for imports",
                                                  "cell 3 is nested too deeply to be read for imports",
                                                  "cell 4 imports pe_lib"]


def test_code_over_the_caps_is_refused_before_it_is_transformed(monkeypatch):
    import classroom.submissions as submissions

    transformed = []
    monkeypatch.setattr(submissions, "_python", lambda source: transformed.append(source) or source)
    long_cell = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1\n" * 1_000_000)])
    with pytest.raises(TooMuchCode, match=f"cell 1 holds more than {CELL_LIMIT >> 10} KiB of code"):
        code_cells(long_cell)
    many = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("y = 2\n" * (CELL_LIMIT // 6))
                                           for _ in range(CODE_LIMIT // CELL_LIMIT + 2)])
    with pytest.raises(TooMuchCode, match=f"its code cells hold more than {CODE_LIMIT >> 10} KiB of code"):
        code_cells(many)
    assert transformed == []


def test_a_forged_number_of_400_digits_fails_its_check_only():
    big = 10**400
    assert expect.difference(big, 7) == "is not the expected value"
    assert expect.difference([big, 1, 2], (3, 1, 2)) == "item 0 is not the expected value"
    assert expect.difference(big, 0.5) == "is not numbers, not numbers"

    def broken(answers, references):
        raise OverflowError("int too large")
    result = compare.score_question(2.0, [expect.Check("a", 1.0, broken), expect.close("b", "b")],
                                    {"b": 1.0}, {"b": 1.0})
    assert result.score == 1.0 and result.failures == ["a: cannot be checked (OverflowError)"]


def test_a_byte_order_mark_and_nbformat_3_are_read(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    (tmp_path / "bom.ipynb").write_bytes(b"\xef\xbb\xbf" + nbformat.writes(notebook).encode())
    read, problem = read_submission(tmp_path / "bom.ipynb")
    assert problem == "" and read.cells[0].source == "x = 1"
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""},
           "worksheets": [{"cells": [{"cell_type": "code", "input": "y = 2", "language": "python",
                                      "outputs": [{"output_type": "pyout", "text": "2"}], "metadata": {}}],
                           "metadata": {}}]}
    (tmp_path / "old.ipynb").write_bytes(json.dumps(old, indent=1).replace("\n", "\r\n").encode())
    read, problem = read_submission(tmp_path / "old.ipynb")
    assert problem == "" and code_cells(read) == [(1, "y = 2\n")] and read.cells[0].outputs == []


_MEASURE = """
import json, re, sys
from pathlib import Path
from classroom import identify
from classroom.submissions import TooMuchCode, code_cells, forbidden_uses, read_submission

def peak():  # this process's own peak (ru_maxrss would count the parent's, from before exec)
    return int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) >> 10

before = peak()
identify.look(Path(sys.argv[1]))
notebook, problem = read_submission(Path(sys.argv[1]))
try:
    found = forbidden_uses(code_cells(notebook), ("pe_lib",)) if notebook is not None else None
except TooMuchCode as error:
    found = str(error)
print(json.dumps([before, peak(), problem, found]))
"""


def _at_the_caps(folder):
    """Notebooks at the grader's caps: the size, the items, the code, and one cell over them."""
    plain = {"metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = "y" * (NOTEBOOK_LIMIT - 1000)
    notebooks = {
        "output": [{"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {}, "source": "print()",
                    "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}],
        "items": [{"cell_type": "markdown", "id": f"c{i}", "metadata": {}, "source": ""}
                  for i in range(NOTEBOOK_ITEMS // 6 - 10)],
        "code": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                  "source": "x = 1\n" * (CELL_LIMIT // 6 - 10)}
                 for i in range(CODE_LIMIT // CELL_LIMIT)],
        "one_long_cell": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {},
                           "outputs": [], "source": "x = '" + "a" * (NOTEBOOK_LIMIT - 1000) + "'"}],
    }
    for name, cells in notebooks.items():
        (folder / f"{name}.ipynb").write_text(json.dumps(dict(plain, cells=cells)))
    return sorted(notebooks)


def test_the_graders_memory_is_bounded_at_the_notebook_caps(tmp_path):
    """Each notebook at the caps, read in a fresh process: its peak memory grows by a stated bound."""
    for name in _at_the_caps(tmp_path):
        path = tmp_path / f"{name}.ipynb"
        assert path.stat().st_size <= NOTEBOOK_LIMIT
        done = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True,
                              timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert done.returncode == 0, done.stderr[-2000:]
        before, peak, problem, found = json.loads(done.stdout.strip().splitlines()[-1])
        assert problem == "", (name, problem)
        assert peak - before < READ_MEMORY >> 20, (name, peak - before)
        if name == "one_long_cell":
            assert found == f"cell 1 holds more than {CELL_LIMIT >> 10} KiB of code"


# ---------------------------------------------------------------- names a teacher can tell apart


def test_note_names_are_legal_on_every_system_and_distinct_as_they_compare():
    nfc, nfd = "Jos\u00e9", "Jose\u0301"
    names = report.feedback_names(["CON", "nul", "com1", "Lpt9.x", "ok", "\U0001D49C" * 63, nfc, nfd, " .x. "])
    assert [names[n] for n in ("CON", "nul", "com1", "Lpt9.x", "ok")] == \
        ["CON_.txt", "nul_.txt", "com1_.txt", "Lpt9.x_.txt", "ok.txt"]
    assert names["\U0001D49C" * 63] == "\U0001D49C" * 20 + ".txt"  # 80 bytes of the 252
    assert names[" .x. "] == "_.x._.txt"
    assert {names[nfc], names[nfd]} == {"Jos\u00e9.txt", "Jos\u00e9-2.txt"}
    for name in names.values():
        assert len(name.encode()) <= report.NAME_BYTES + 10 and name == unicodedata.normalize("NFC", name)


def test_look_alike_names_are_numbered_and_flagged(tmp_path):
    for name in ("Jos\u00e9", "Jose\u0301", "anna", "\u0430nna", "\u0410\u043d\u043d\u0430", "bo"):
        (tmp_path / f"{name}.ipynb").write_text("{}")
    found = {s.student: s.flags for s in find_submissions(tmp_path)}
    assert found["bo"] == () and found["\u0410\u043d\u043d\u0430"] == ()  # all Cyrillic, and unlike anna
    assert found["anna"] == ("its name looks like 1 other entry's: it is 'anna'",)
    assert found["\u0430nna (2)"][0] == "its name mixes Cyrillic and Latin letters: '\\u0430nna'"
    assert {name for name in found if name.startswith("Jos")} == {"Jose\u0301", "Jos\u00e9 (2)"}


# ---------------------------------------------------------------- outputs that never lose a score


@contextlib.contextmanager
def _tmpfs(path, size, readonly=False):
    """A file system of ``size`` bytes at ``path``; skips where mounting is not permitted."""
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}" + (",ro" if readonly else ""),
                           "tmpfs", str(path)], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a small file system here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """Three honest students of Assignment 1 and what grading them needs (trusted code: no sandbox)."""
    built = build_to_grade("encoding_matrix", tmp_path_factory.mktemp("outputs-build"))
    folder = tmp_path_factory.mktemp("outputs-class")
    solutions = nbformat.read(built.solutions, as_version=4)
    for name in ("ada", "bo", "cy"):
        nbformat.write(solutions, folder / f"{name}.ipynb")
    return folder, built.references.parents[1]


def _grade(small_class, capsys, *extra):
    folder, build = small_class
    status = cli.main(["grade", str(folder), "--build", str(build), "--unsafe-no-sandbox", *map(str, extra)])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err.strip().splitlines()


def test_outputs_that_cannot_be_written_are_refused_before_grading(small_class, capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    status, out, err = _grade(small_class, capsys, "--out", tmp_path / "file" / "scores.csv")
    assert status == 2 and out == [] and len(err) == 1
    assert err[0] == f"error: cannot write the scores: {tmp_path / 'file'} is not a folder"
    if os.geteuid() == 0:
        context = _tmpfs(tmp_path / "locked", "64k", readonly=True)
    else:
        (tmp_path / "locked").mkdir(mode=0o555)
        context = contextlib.nullcontext(tmp_path / "locked")
    with context as locked:
        status, out, err = _grade(small_class, capsys, "--out", locked / "scores.csv")
        assert status == 2 and out == [] and len(err) == 1 and "cannot be written" in err[0]
        status, out, err = _grade(small_class, capsys, "--out", tmp_path / "s.csv", "--feedback", locked / "notes")
        assert status == 2 and out == [] and err[0].startswith("error: cannot write the feedback notes: ")


def test_a_full_disk_keeps_what_was_written_and_says_what_was_not(small_class, capsys, tmp_path):
    status, _, _ = _grade(small_class, capsys, "--out", tmp_path / "whole.csv", "--feedback", tmp_path / "notes")
    assert status == 0
    with _tmpfs(tmp_path / "full", "8k") as full:
        (full / "scores.csv").write_text("last week's scores\n")
        status, out, err = _grade(small_class, capsys, "--out", full / "scores.csv", "--feedback", full / "notes")
        assert status == 3 and len(err) == 1 and "No space left on device" in err[0]
        assert len([line for line in out if line.startswith("[")]) == 3  # every score was printed
        csv_now = (full / "scores.csv").read_text()
        assert csv_now in ("last week's scores\n", (tmp_path / "whole.csv").read_text())
        if csv_now.startswith("last"):
            assert f"the scores were not written to {full / 'scores.csv'}" in err[0]
        written = sorted(path.name for path in (full / "notes").iterdir())
        assert len(written) < 3 and f"{3 - len(written)} of 3 feedback notes were not written" in err[0]
        for name in written:  # a note is whole or absent
            assert (full / "notes" / name).read_text() == (tmp_path / "notes" / name).read_text()
        assert not [path for path in full.rglob("*") if path.name.endswith(".partial")]


def test_an_interrupted_run_goes_on_where_it_stopped(small_class, tmp_path):
    folder, build = small_class
    out, notes = tmp_path / "scores.csv", tmp_path / "notes"
    out.write_text("last week's scores\n")
    (notes).mkdir()
    (notes / "left.txt").write_text("last week's note\n")

    def stop_at_the_second(line):
        if line.startswith("[2/3]"):
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        grade_folder(folder, out=out, build=build, feedback=notes, unsafe_no_sandbox=True, log=stop_at_the_second)
    assert out.read_text() == "last week's scores\n"
    lines = []
    grade_folder(folder, out=out, build=build, feedback=notes, unsafe_no_sandbox=True, log=lines.append)
    assert lines[:2] == ["2 of 3 kept from an earlier run", "(unchanged; --regrade grades them again)"]
    assert len([line for line in lines if line.startswith("[3/3] ")]) == 1
    assert lines[-1] == f"1 note(s) in {notes} name no student of this run, left from an earlier one (left as they are): left.txt"
    first = out.read_text()
    fresh = tmp_path / "fresh.csv"
    grade_folder(folder, out=fresh, build=build, feedback=tmp_path / "fresh-notes", unsafe_no_sandbox=True,
                 log=lambda line: None)
    assert first == fresh.read_text().replace("fresh-notes", "notes")
    nbformat.write(nbformat.v4.new_notebook(), folder / "bo.ipynb")  # bo hands in again
    lines.clear()
    grade_folder(folder, out=out, build=build, feedback=notes, unsafe_no_sandbox=True, log=lines.append)
    assert lines[0] == "2 of 3 kept from an earlier run" and [line for line in lines if line.startswith("[3/3] bo: 0/11")]
    lines.clear()
    grade_folder(folder, out=out, build=build, feedback=notes, unsafe_no_sandbox=True, regrade=True, log=lines.append)
    assert not lines[0].startswith("2 of 3") and len([line for line in lines if line.startswith("[")]) == 3


def test_a_record_cut_short_is_read_up_to_the_cut(tmp_path):
    path = tmp_path / ".scores.csv.progress"
    path.write_text(json.dumps({"key": "a", "row": {"student": "ada"}}) + "\n" + '{"key": "b", "row": {"stu')
    assert list(progress.load(path)) == ["a"]


def test_one_students_grading_failure_is_that_rows_reason(small_class, monkeypatch, tmp_path):
    import classroom.grade as grading

    real = grading.forbidden_uses

    def fails_for_bo(cells, forbidden):
        if any("bo" in source for _, source in cells):
            raise MemoryError()
        return real(cells, forbidden)
    folder, build = small_class
    for name in ("ada", "cy"):
        (tmp_path / f"{name}.ipynb").write_bytes((folder / f"{name}.ipynb").read_bytes())
    notebook = nbformat.read(folder / "ada.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("bo = 1"))
    nbformat.write(notebook, tmp_path / "bo.ipynb")
    monkeypatch.setattr(grading, "forbidden_uses", fails_for_bo)
    rows = {row["student"]: row for row in grade_folder(tmp_path, out=None, build=build, unsafe_no_sandbox=True,
                                                        log=lambda line: None)}
    assert rows["ada"]["total"] == rows["cy"]["total"] == "11"
    assert rows["bo"]["total"] == "0" and rows["bo"]["reason"] == \
        "not graded: the grader failed on this notebook (MemoryError); grade it by hand"


def test_an_interruption_stops_the_runs_in_progress_at_once(small_class, tmp_path):
    """Ctrl-C while a slow student runs: grading stops within seconds, not at that student's time-out."""
    folder, build = small_class
    (tmp_path / "ada.ipynb").write_bytes((folder / "ada.ipynb").read_bytes())
    slow = nbformat.read(folder / "ada.ipynb", as_version=4)
    slow.cells.insert(1, nbformat.v4.new_code_cell("import time\ntime.sleep(100)"))
    nbformat.write(slow, tmp_path / "slow.ipynb")

    def stop_at_the_first(line):
        if line.startswith("[1/2]"):
            raise KeyboardInterrupt
    began = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        grade_folder(tmp_path, out=tmp_path.parent / f"{tmp_path.name}.csv", build=build, jobs=2, timeout=110,
                     unsafe_no_sandbox=True, log=stop_at_the_first)
    assert time.perf_counter() - began < 60
    assert not (tmp_path.parent / f"{tmp_path.name}.csv").exists()
