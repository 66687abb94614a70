"""What the course uses to teach: experiments, figures and the numbers in its prose.

A user of :mod:`pe_lib` imports the encodings and layers from the top of the
package; the modules here exist for the chapters and assignments.

- :mod:`pe_lib.course.order`: self-attention ignores word order until positions are added.
- :mod:`pe_lib.course.periodicity`: why one wave cannot label positions and many can.
- :mod:`pe_lib.course.variants`: a mis-copied formula, and the properties it loses.
- :mod:`pe_lib.course.tables`: small tables of rates and values to check by hand.
- :mod:`pe_lib.course.rotation`: moving by k positions is a block rotation M_k.
- :mod:`pe_lib.course.similarity`: dot products and distances depend on the offset only.
- :mod:`pe_lib.course.precision`: why angles must not be formed in float32.
- :mod:`pe_lib.course.residual_stream`: positions survive a deep stack because blocks add to it.
- :mod:`pe_lib.course.order_tasks`: a task only a model that knows positions can solve.
- :mod:`pe_lib.course.order_classifier`: a small Transformer trained on it.
- :mod:`pe_lib.course.extrapolation`: training short and testing long, for each method.
- :mod:`pe_lib.course.real_text_data`, :mod:`pe_lib.course.real_text_model`,
  :mod:`pe_lib.course.real_text`, :mod:`pe_lib.course.real_text_results`,
  :mod:`pe_lib.course.real_text_experiment`: character-level language models
  on Python's own reference text, per method, tested longer than trained.
- :mod:`pe_lib.course.mistakes`: common mistakes, made executable.
- :mod:`pe_lib.course.plotting`: the course's figure style.
- :mod:`pe_lib.course.explorable`: figures with sliders, drawn in the reader's browser.
- :mod:`pe_lib.course.formatting`: one precision rule per kind of number in the prose.
"""
