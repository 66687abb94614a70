"""Drop repeated <script> entries from every page.

Sphinx 7 adds every inline script registered after the builder started twice
(once with filename None, once with ""), so sphinx-thebe's ``const THEBE_JS_URL``
is declared twice on each page and the browser reports a SyntaxError.
Keeping the first of any identical scripts removes the error without touching
what the scripts do.

Jupyter Book also adds every ``_static/*.js`` file itself, so a script that an
extension registers with ``defer`` arrives a second time without it. Only the
registered copy stays: a file runs once a page.
"""

from __future__ import annotations


def _key(script) -> tuple:
    """What a script tag says: its source and attributes (body included), not its priority."""
    attributes = getattr(script, "attributes", {})
    # An inline script's filename is None or "" depending on how it was registered.
    return (getattr(script, "filename", None) or "", tuple(sorted((k, str(v)) for k, v in attributes.items())))


def _drop_repeats(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if scripts:
        deferred = {getattr(s, "filename", None) for s in scripts
                    if getattr(s, "filename", None) and getattr(s, "attributes", {}).get("defer")}
        seen, unique = set(), []
        for script in scripts:
            filename = getattr(script, "filename", None)
            if filename in deferred and not getattr(script, "attributes", {}).get("defer"):
                continue  # Jupyter Book's own copy of a file an extension registered
            if _key(script) not in seen:
                seen.add(_key(script))
                unique.append(script)
        scripts[:] = unique  # in place: the theme keeps a reference to this list


def setup(app):
    # Late priority: after the extensions that add scripts have run.
    app.connect("html-page-context", _drop_repeats, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
