"""A figure glued in a chapter, shown on another page: ``{pasted-figure}``.

myst-nb's ``{glue:figure}`` takes a figure from its own notebook only, and
``{glue:any}`` with ``:doc:`` pastes another page's image bare: no caption, and
the image's file name as its alt text. This directive pastes it the same way
(myst-nb resolves the reference once every page is read) inside a figure with
a caption and alt text of its own::

    :::{pasted-figure} eqn-fig-table
    :doc: chapters/sinusoidal_encoding.ipynb
    :alt: A heat map of the encoding table.

    The encoding table.
    :::
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from myst_nb.ext.glue.utils import create_pending_glue_ref
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

#: The figure's attribute that carries its alt text to the pasted image.
ALT = "pasted_alt"


class PastedFigure(SphinxDirective):
    """A figure whose image is glued under a key in another page."""

    required_arguments = 1
    has_content = True
    option_spec = {"doc": directives.unchanged_required, "alt": directives.unchanged_required,
                   "name": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        for option in ("doc", "alt"):
            if not self.options.get(option):
                raise self.error(f"pasted-figure {self.arguments[0]!r} needs a :{option}: option")
        source, line = self.get_source_info()
        reference = create_pending_glue_ref(self.state.document, source, line, self.options["doc"],
                                            self.arguments[0])
        figure = nodes.figure("", reference)
        figure[ALT] = self.options["alt"]
        self.set_source_info(figure)
        self.add_name(figure)
        if self.content:
            parsed = nodes.Element()
            self.state.nested_parse(self.content, self.content_offset, parsed)
            first = parsed[0]
            if not isinstance(first, nodes.paragraph):
                raise self.error("a pasted figure's caption must be a paragraph")
            figure += nodes.caption(first.rawsource, "", *first.children)
        return [figure]


class GiveAltText(SphinxPostTransform):
    """Give each pasted image its figure's alt text, once myst-nb has pasted it."""

    default_priority = 6  # after myst-nb's ReplacePendingGlueReferences (5)

    def run(self, **kwargs) -> None:
        for figure in list(self.document.findall(nodes.figure)):
            if ALT not in figure.attributes:
                continue
            images = list(figure.findall(nodes.image))
            if len(images) != 1:
                raise ValueError(f"a pasted figure holds {len(images)} images, not 1: {figure.source}")
            images[0]["alt"] = figure.attributes.pop(ALT)


def setup(app):
    app.add_directive("pasted-figure", PastedFigure)
    app.add_post_transform(GiveAltText)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
