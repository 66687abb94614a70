"""Notebook regression settings shared by every ``pytest --nbval`` run.

nbval compares each re-executed cell's outputs with the committed ones. What a
library prints on stderr (TensorFlow's start-up messages, for instance) differs
between machines and says nothing about the chapter, so stderr streams are left
out of the comparison. Errors still fail the cell: they are not streams.
"""

from nbval.plugin import IPyNbFile


def pytest_collection_modifyitems(items):
    for notebook in {item.parent for item in items if isinstance(item.parent, IPyNbFile)}:
        notebook.skip_compare = (*notebook.skip_compare, "stderr")
