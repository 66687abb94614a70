"""What the course uses to teach: experiments, figures and the numbers in its prose.

A user of :mod:`pe_lib` imports the encodings, layers and registry from the
top of the package; the sub-packages here exist for the chapters and the
assignments, and the package root never imports them.

- :mod:`pe_lib.course.lessons`: each chapter's small helpers (worked cases,
  checks, tables of values, mistakes made executable).
- :mod:`pe_lib.course.display`: the figure style, explorable figures, tables
  and the formatting of numbers in the prose.
- :mod:`pe_lib.course.reference_data`: the recorded reference data the
  chapters check against.
- :mod:`pe_lib.course.model_inputs`: where a method's positions enter the
  experiments' models.
- The experiments, one sub-package each: :mod:`pe_lib.course.order` (which
  marker comes first), :mod:`pe_lib.course.extrapolation` (train short, test
  long), :mod:`pe_lib.course.encoder_decoder` (reversing sequences) and
  :mod:`pe_lib.course.real_text` (character-level language models).
"""
