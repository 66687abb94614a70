"""The course's figure style: colours that stand out in both themes, quiet axes, sharp pictures.

>>> from pe_lib.course.display.style import course_style, book_figure
>>> with course_style():
...     pass
"""

from __future__ import annotations

import contextlib

import matplotlib.pyplot as plt

#: The sequential colour map for tables of values in [-1, 1], perceptually
#: uniform and readable in greyscale and with colour-vision deficiencies.
TABLE_CMAP = "cividis"

#: The colours of lines and points, in the order they are used. They are Okabe
#: and Ito's colour-blind-safe set, with orange, sky blue and yellow darkened and
#: a grey, a purple and a teal added, so that each stands at least 3 to 1 (WCAG
#: 1.4.11) against the white page and against the dark theme's background, #121212.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#767676", "#8A6F00", "#7E6BC4", "#208F8F")
#: One colour for each context-extension recipe of :mod:`pe_lib.rope_scaling`,
#: and for plain RoPE, so that a recipe looks the same in every figure of the book.
RECIPE_COLOURS = {
    "rope": PALETTE[4], "rope_pi": PALETTE[0], "rope_ntk": PALETTE[1], "rope_dynamic": PALETTE[5],
    "rope_yarn": PALETTE[2], "rope_yarn_paper": PALETTE[3], "rope_llama3": PALETTE[6],
}
#: The resolution figures are drawn at, in dots per inch; their PNGs hold twice
#: as many pixels and are shown at half their size, sharp on high-density screens.
DPI = 110

_STYLE = {
    "figure.figsize": (7.0, 3.2),
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
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
    from cycler import cycler

    with plt.style.context([_STYLE, {"axes.prop_cycle": cycler(color=PALETTE)}]):
        yield


# The book's one figure size rule. A phone shows a figure about 360 px wide,
# so figures are drawn FIGURE_WIDTH inches wide with FONT_SIZE-point text, and
# several panels are stacked, never side by side.
#: Width of every figure, in inches.
FIGURE_WIDTH = 5.0
#: Size of the text in every figure, in points.
FONT_SIZE = 12
#: Height of one panel, in inches.
PANEL_HEIGHT = 2.8


def book_figure(panels: int = 1, *, panel_height: float = PANEL_HEIGHT, sharex: bool = False):
    """A figure in the book's style: ``panels`` axes stacked, 5 in wide, 12 pt text.

    Call it inside ``with course_style():``. Returns ``(fig, ax)`` for one
    panel and ``(fig, axes)`` (a 1-D array, top to bottom) for several.

    >>> with course_style():
    ...     fig, axes = book_figure(2, sharex=True)
    >>> fig.get_size_inches().tolist(), len(axes)
    ([5.0, 5.6], 2)
    >>> plt.close(fig)
    """
    if isinstance(panels, bool) or not isinstance(panels, int) or panels < 1:
        raise ValueError(f"panels must be a whole number >= 1, got {panels!r}")
    if not panel_height > 0:
        raise ValueError(f"panel_height must be positive, got {panel_height!r}")
    plt.rcParams["font.size"] = FONT_SIZE
    return plt.subplots(
        panels, 1, figsize=(FIGURE_WIDTH, panel_height * panels), sharex=sharex, layout="constrained"
    )


#: The output type under which :func:`glue_figure` records what a figure draws.
FIGURE_DATA_MIME = "application/vnd.pe-course.figure-data+json"


def figure_data(fig) -> dict:
    """The numbers and words a Matplotlib figure draws, as JSON-ready lists.

    For each axes: its limits and scales, every line's points, every
    collection's points, every image's values, every bar's corners, and every
    piece of text. Two figures with the same data, up to round-off, draw the
    same picture; tests compare this instead of PNG bytes when the data is not
    reproducible to the last bit on every processor.

    >>> with course_style():
    ...     fig, ax = book_figure()
    ...     _ = ax.plot([0, 1], [2.0, 3.0], label="a line")
    >>> figure_data(fig)["axes"][0]["lines"]
    [[[0.0, 2.0], [1.0, 3.0]]]
    >>> plt.close(fig)
    """
    import numpy as np
    from matplotlib.collections import Collection
    from matplotlib.image import AxesImage
    from matplotlib.patches import Rectangle

    def numbers(array) -> list:
        array = np.ma.filled(np.ma.asarray(array, dtype=float), np.nan)
        return np.where(np.isfinite(array), array, None).tolist()

    axes = []
    for ax in fig.axes:
        entry = {
            "xlim": numbers(ax.get_xlim()),
            "ylim": numbers(ax.get_ylim()),
            "scales": [ax.get_xscale(), ax.get_yscale()],
            "lines": [numbers(line.get_xydata()) for line in ax.get_lines()],
            "collections": [],
            "images": [numbers(image.get_array()) for image in ax.get_images() if isinstance(image, AxesImage)],
            "bars": [
                numbers([patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()])
                for patch in ax.patches if isinstance(patch, Rectangle)
            ],
            "texts": [text.get_text() for text in ax.texts]
            + [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
            + [label.get_text() for label in ax.get_xticklabels() + ax.get_yticklabels()],
        }
        for collection in ax.collections:
            if isinstance(collection, Collection):
                points = [numbers(path.vertices) for path in collection.get_paths()]
                entry["collections"].append({"offsets": numbers(collection.get_offsets()), "paths": points})
        axes.append(entry)
    return {"size": numbers(fig.get_size_inches()), "axes": axes}


def smallest_font_size(fig) -> float | None:
    """The size in points of the smallest piece of text a figure shows (None if none).

    >>> with course_style():
    ...     fig, ax = book_figure()
    ...     _ = ax.set_title("a title", fontsize=14)
    ...     _ = ax.text(0.5, 0.5, "a note", fontsize=9)
    >>> smallest_font_size(fig)
    9.0
    >>> plt.close(fig)
    """
    from matplotlib.text import Text

    sizes = [
        float(text.get_fontsize())
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]
    return min(sizes, default=None)


def sharp_png(fig):
    """``fig`` as an image for the page: a PNG of twice the pixels, shown at half its size.

    >>> with course_style():
    ...     fig, ax = book_figure()
    >>> image = sharp_png(fig)            # shown 5 in wide at 110 dpi: 550 px and a margin
    >>> image.width > 500, image.width * 2 <= len(image.data) ** 0.5 * 100
    (True, True)
    >>> plt.close(fig)
    """
    import io

    from IPython.display import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=2 * fig.dpi, bbox_inches="tight",
                facecolor="white", metadata={"Software": None})
    return Image(data=buffer.getvalue(), format="png", retina=True)


def glue_figure(name: str, fig, *, rtol: float | None = None, display: bool = True) -> None:
    """Glue ``fig`` for ``{glue:figure}``, record the data it draws, show it, then close it.

    The figure is shown under the cell, for a reader who runs the chapter in
    JupyterLab; the book removes that cell (``remove-cell``) and shows the figure
    once, where ``{glue:figure}`` places it. ``display=False`` glues without
    showing: for the static drawing of an explorable figure, which the live
    figure stands for when the chapter runs.

    The page gets a PNG of twice the figure's pixels shown at half their size
    (:func:`sharp_png`), sharp on a high-density screen.

    The test suite compares each figure by its data (:func:`figure_data`),
    with a relative tolerance of ``rtol`` of each axis's span. Leave ``rtol``
    out for a figure whose data is the same to the last bit on every
    processor (integers, exactly rounded arithmetic): its PNG bytes are then
    compared as well. Give ``rtol`` (for example ``1e-6``) for a figure drawn
    from sines, exponentials or matrix products, which differ in their last
    bits between processors: only its data is compared, within ``rtol``.
    Never draw round-off itself (errors near 10⁻¹⁶ of float64 or 10⁻⁸ of
    float32): its size changes from one processor to another, so draw a
    bound or an exactly computed quantity instead.
    """
    import json

    from IPython import display as ipython_display
    from myst_nb import glue
    from myst_nb.ext.glue import GLUE_PREFIX

    if rtol is not None and not 0 < rtol < 1:
        raise ValueError(f"rtol must be in (0, 1), got {rtol!r}")
    glue(name, sharp_png(fig), display=False)
    record = {
        # One line of JSON: the notebook stays small and its diffs readable.
        "name": name, "exact": rtol is None, "rtol": rtol,
        "data": json.dumps(figure_data(fig), separators=(",", ":")),
        # What the browser test needs to tell how large the text reads on a phone.
        "smallest_font_pt": smallest_font_size(fig),
    }
    # Recorded as a glue variable of its own, which the page never shows.
    ipython_display.display(
        {GLUE_PREFIX + FIGURE_DATA_MIME: record},
        raw=True,
        metadata={"scrapbook": {"name": f"{name}--data", "mime_prefix": GLUE_PREFIX}},
    )
    if display:
        ipython_display.display(fig)
    plt.close(fig)
