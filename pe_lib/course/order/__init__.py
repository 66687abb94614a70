"""The order experiments: which marker comes first, and what a model needs to tell.

- :mod:`pe_lib.course.order.tasks`: the marker task, which only a model that knows positions can solve.
- :mod:`pe_lib.course.order.classifier`: a small Transformer trained on it, per position method.
- :mod:`pe_lib.course.order.mixing`: adding the position code to the token vectors, or concatenating it.
- :mod:`pe_lib.course.order.table_similarity`: how alike a position table's rows are, near and far apart.
- :mod:`pe_lib.course.order.trained_terms`: the four terms of a trained head's attention scores.
- :mod:`pe_lib.course.order.seeds`: both experiments once per seed, into the CSV files the chapters check.
"""
