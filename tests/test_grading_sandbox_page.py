"""The back-matter page grading_sandbox.md states the grader's limits as plain text:
each one is checked here against the constants the grader runs with, so that a
changed limit fails until the page says the new one."""

import re
from pathlib import Path

import pytest

from classroom import answers as wire
from classroom import execute, masters, report, sandbox, submissions
from classroom.grade import DEFAULT_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "grading_sandbox.md"
MIB = 1 << 20


def specs() -> dict:
    """Each assignment's grading spec, by its number in the catalogue."""
    infos = [masters.describe(path) for path in masters.master_paths()]
    return {info.number: masters.load_spec(info.name) for info in infos}


def page_text() -> str:
    """The page, every run of spaces and line breaks made one space."""
    return re.sub(r"\s+", " ", PAGE.read_text(encoding="utf-8"))


def table_rows() -> dict:
    """``what -> (limit, how)`` for each row of the page's table of limits."""
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] not in ("what", "---"):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def gib(value: float) -> str:
    return f"{value:g} GiB"


def test_the_table_of_limits_is_the_graders():
    by_number = specs()
    assert sorted(by_number) == [1, 2, 3, 4]
    small, keras = [by_number[n] for n in (1, 2, 4)], by_number[3]
    # The table gives one memory and one address space for Assignments 1, 2 and 4.
    assert len({spec.memory_gib for spec in small}) == 1
    assert len({spec.address_gib for spec in small}) == 1
    folders = ", ".join(f"`{folder}` {size // MIB} MiB" for folder, size in sandbox.FOLDERS.items())
    seconds = [spec.seconds for spec in by_number.values()]
    expected = {
        "memory: processes and files together":
            (f"{gib(small[0].memory_gib)} (Assignments 1, 2, 4), {gib(keras.memory_gib)} (Assignment 3)",
             "measured"),
        "address space of one process":
            (f"{gib(small[0].address_gib)}, {gib(keras.address_gib)} (Assignment 3)", "hard"),
        "writable folders, in memory": (folders, "hard"),
        "the rest of the file system": ("read-only", "hard"),
        "one file": (f"{sandbox.FILE_BYTES // MIB} MiB", "hard"),
        "files and folders created": (f"{sandbox.FILE_COUNT:,}", "measured"),
        "processes and threads": (f"{sandbox.TASKS}", "hard (measured when grading as root)"),
        "open files of one process": (f"{sandbox.OPEN_FILES}", "hard"),
        "time": (f"{DEFAULT_TIMEOUT:g} s in all, {min(seconds):g} s to {max(seconds):g} s per cell", "hard"),
        "answers sent back": (f"{wire.TOTAL_LIMIT // MIB} MiB", "hard"),
        "memfd, System V shared memory, namespaces": ("refused", "hard"),
    }
    assert table_rows() == expected
    assert sandbox.TASKS < sandbox.FILE_COUNT  # the two rows bound different things


@pytest.mark.parametrize("phrase", [
    f"checked {round(1 / execute.WATCH_SECONDS)} times a second",
    f"a regular file of at most {submissions.NOTEBOOK_LIMIT // MIB} MiB",
    f"within {submissions.READ_SECONDS:g} s",
    f"at most {submissions.NOTEBOOK_ITEMS:,} lists and items",
    f"no cell holds more than {submissions.CELL_LIMIT >> 10} KiB",
    f"no more than {submissions.CODE_LIMIT >> 10} KiB",
    f"at most {submissions.READ_MEMORY // MIB} MiB more",
    f"longer than {wire.LINE_LIMIT // MIB} MiB",
    f"more than {wire.ITEM_LIMIT:,} items",
    f"at most {report.NAME_BYTES} bytes",
])
def test_each_limit_in_the_prose_is_the_graders(phrase):
    assert phrase in page_text()


def test_the_library_is_hidden_from_the_assignments_the_page_names():
    hidden = sorted(number for number, spec in specs().items() if not spec.library)
    assert hidden == [1, 4]
    assert "(Assignments 1 and 4 do not)" in page_text()


def test_the_page_is_in_the_back_matter_and_the_chapter_links_to_it():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    back_matter = toc.split('caption: "Back matter"', 1)[1]
    assert "- file: grading_sandbox\n" in back_matter
    assert PAGE.read_text(encoding="utf-8").startswith("(grading-sandbox)=\n# ")
    chapter = (ROOT / "chapters" / "classroom.ipynb").read_text(encoding="utf-8")
    assert "{ref}`grading-sandbox`" in chapter or "<grading-sandbox>`" in chapter


def test_the_page_names_the_bubblewrap_the_grader_needs():
    needed = ".".join(map(str, sandbox.BWRAP_NEEDED))
    assert f"bubblewrap](https://github.com/containers/bubblewrap) {needed} or later" in page_text()
    assert "apparmor_restrict_unprivileged_userns=0" in page_text()


def test_the_chapter_links_to_the_machine_and_crash_notes():
    chapter = (ROOT / "chapters" / "classroom.ipynb").read_text(encoding="utf-8")
    page = PAGE.read_text(encoding="utf-8")
    for label in ("grading-sandbox-machine", "grading-sandbox-crash"):
        assert f"({label})=\n## " in page
        assert f"<{label}>`" in chapter
