"""Character-level language models on real text, one per position method, tested longer than trained.

- :mod:`pe_lib.course.real_text.data`: Python's own reference text as character ids, split into training, development and test text.
- :mod:`pe_lib.course.real_text.model`: the causal language model, one definition for every method.
- :mod:`pe_lib.course.real_text.training`: training and evaluating one model per method and seed.
- :mod:`pe_lib.course.real_text.results`: means over seeds, the chapter's tables and figures.
- :mod:`pe_lib.course.real_text.experiment`: ``python3 tasks.py experiment real-text``, the larger run.
"""
