"""How the course shows its numbers: the figure style, figures a reader moves, tables, number formatting and reading times.

- :mod:`pe_lib.course.display.style`: the course's figure style, and glue_figure.
- :mod:`pe_lib.course.display.explorable`: figures with sliders, drawn in the reader's browser.
- :mod:`pe_lib.course.display.explorable_figures`: more of them, on the same engine.
- :mod:`pe_lib.course.display.tables`: small tables to check by hand, and Markdown tables.
- :mod:`pe_lib.course.display.formatting`: one precision rule per kind of number in the prose.
- :mod:`pe_lib.course.display.reading_time`: each page's words, code lines, figures and reading time.
"""
