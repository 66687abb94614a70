"""Every figure in the chapters is drawn in the course style, with colour-blind-safe
colour maps, and shown with a caption and alt text."""

import re
from pathlib import Path

import pytest

from chapter_text import cell_sources

CHAPTERS = sorted((Path(__file__).resolve().parents[1] / "chapters").glob("*.ipynb"))
# Perceptually uniform maps that stay readable with colour-vision deficiencies and in greyscale.
SAFE_MAPS = {"cividis", "viridis", "magma", "inferno", "plasma", "gray", "Greys", "binary"}
EXPLICIT_MAP = re.compile(r"cmap\s*=\s*[\"']([A-Za-z_]+)[\"']")
FIGURE_BLOCK = re.compile(r"```\{glue:figure\}[^\n]*\n(.*?)```", re.S)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_figures_use_the_course_style_and_safe_colour_maps(chapter):
    for source in cell_sources(chapter, "code"):
        if re.search(r"plt\.(subplots|figure)\(", source):
            assert "with course_style():" in source, f"a figure drawn outside course_style():\n{source[:300]}"
        for name in EXPLICIT_MAP.findall(source):
            assert name in SAFE_MAPS, f"colour map {name!r} is not in {sorted(SAFE_MAPS)}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_figure_has_alt_text_a_label_and_a_caption(chapter):
    for source in cell_sources(chapter, "markdown"):
        for block in FIGURE_BLOCK.findall(source):
            options = dict(re.findall(r"^:(\w+):[ \t]*(.*)$", block, re.M))
            caption = "\n".join(line for line in block.splitlines() if line and not line.startswith(":"))
            assert len(options.get("alt", "")) > 20, f"no real alt text in:\n{block[:200]}"
            assert options.get("name"), f"no :name: label in:\n{block[:200]}"
            assert caption.strip(), f"no caption in:\n{block[:200]}"


def test_the_figure_checks_see_the_figures():
    # Guards the two tests above against a pattern that silently matches nothing.
    found = sum(len(FIGURE_BLOCK.findall(source)) for chapter in CHAPTERS for source in cell_sources(chapter, "markdown"))
    assert found >= 20
