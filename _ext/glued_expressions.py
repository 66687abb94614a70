"""``{eval}`name``` in the book: the text glued under ``name``, read from the saved notebook.

The chapters quote numbers with ``{eval}`name```, the inline role that both of the
places a chapter is read understand. In JupyterLab, ``jupyterlab-myst`` evaluates
``name`` in the chapter's kernel, where ``glue_number`` binds it. The book is built
from the saved outputs with no kernel (``execute_notebooks: "off"``), where
myst-nb's own ``eval`` role has nothing to evaluate; this role pastes the text
that ``glue_number`` glued under the same name instead, as ``{glue:text}`` does,
so nbval's check of the glued value is the check of the page.
"""

from __future__ import annotations

from myst_nb.ext.glue.roles import PasteTextRole
from myst_nb.ext.glue.utils import glue_warning


class GluedTextRole(PasteTextRole):
    """``{eval}`name```: the text glued under ``name`` in this notebook."""

    def run(self):
        if not self.text.isidentifier():
            message = (f"{{eval}}`{self.text}`: the book pastes glued text, so the role takes "
                       f"one glued name (a Python identifier), not an expression")
            return [], [glue_warning(message, self.document, self.line)]
        return super().run()


def setup(app):
    app.setup_extension("myst_nb")
    app.add_role("eval", GluedTextRole(), override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
