"""Train short, test long: which ways of giving positions survive longer inputs.

- :mod:`pe_lib.course.extrapolation.experiment`: the models, their training and the accuracy at each test length.
- :mod:`pe_lib.course.extrapolation.seeds`: Train short, test long's experiment once per seed, written to CSV
  (``python3 tasks.py experiment extrapolation-seeds``).
"""
