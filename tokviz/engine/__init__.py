"""The encoding engine: the plans that turn a tokenizer's components into a fast encode.

Components declare what the engine needs (a normalizer's ``steps()`` and
``aligned_if_unchanged``, a pre-tokenizer's ``plain_split()`` or ``cut_spans``, a model's
``word_tables()``, a post-processor's ``trims_offsets()`` and ``single_parts()``); the
engine composes the answers, so a new component gets the fast path by answering.

- :mod:`tokviz.engine.cut`: the one lane (normalize, split, look words up; byte-level words too), read
  bottom-up in :mod:`~tokviz.engine.stages`, ``words``, ``plan``, ``entries``, ``fields``, then ``cut``.
- :mod:`tokviz.engine.bpe`, ``unigram``, ``wordpiece``: one word encoder per model kind.
- :mod:`tokviz.engine.plans`: a tokenizer's plans, made lazily, dropped in one place.
"""
