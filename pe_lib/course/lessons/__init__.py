"""The chapters' small helpers: the worked cases, checks and tables each chapter teaches with.

- :mod:`pe_lib.course.lessons.word_order`: self-attention ignores word order until positions are added.
- :mod:`pe_lib.course.lessons.periodicity`: one wave cannot label positions; bits and many waves can.
- :mod:`pe_lib.course.lessons.variants`: a mis-copied formula, and the properties it loses.
- :mod:`pe_lib.course.lessons.rotation`: moving by k positions is a block rotation M_k.
- :mod:`pe_lib.course.lessons.precision`: why angles must not be formed in float32.
- :mod:`pe_lib.course.lessons.attention_terms`: the four terms of an attention score when positions are added.
- :mod:`pe_lib.course.lessons.rope_forms`: three ways to write the RoPE rotation.
- :mod:`pe_lib.course.lessons.context_extension`: the RoPE chapter's recipes for longer contexts.
- :mod:`pe_lib.course.lessons.mistakes`: common mistakes, made executable.
"""
