"""A small encoder-decoder Transformer that reverses token sequences, per position method.

- :mod:`pe_lib.course.encoder_decoder.model`: the model, its data and its training.
"""
