"""The encoding engine: the plans that turn a tokenizer's components into a fast encode.

Components declare what the engine needs (a normalizer's ``steps()`` and
``aligned_if_unchanged``, a pre-tokenizer's ``cut_spans``, a model's ``tokenize``); the
engine composes the answers, so a new component gets the fast path by answering.

- :mod:`tokviz.engine.cut`: the general lane (cut, look up, assemble).
"""
