"""The course's figure style: colour-blind-safe colours and quiet axes.

>>> from pe_lib.course.plotting import course_style
>>> with course_style():
...     pass
"""

from __future__ import annotations

import contextlib

import matplotlib.pyplot as plt

#: The sequential colour map for tables of values in [-1, 1], perceptually
#: uniform and readable in greyscale and with colour-vision deficiencies.
TABLE_CMAP = "cividis"

_STYLE = {
    "figure.figsize": (7.0, 3.2),
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 10,
    "legend.frameon": False,
    "image.cmap": TABLE_CMAP,
}


@contextlib.contextmanager
def course_style():
    """Draw inside ``with course_style():`` to get the course's look."""
    with plt.style.context(["tableau-colorblind10", _STYLE]):
        yield
