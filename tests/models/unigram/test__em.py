"""tokviz.models.unigram._em: the EM helpers' worked examples."""

from __future__ import annotations

import numpy as np

from tokviz.models.unigram._em import digamma, index_dtype


def test_index_dtype_is_the_smallest_that_holds_n() -> None:
    assert (index_dtype(1_000), index_dtype(2**31 + 1)) == (np.int32, np.int64)


def test_digamma_matches_known_values() -> None:
    values = digamma(np.array([1.0, 2.0, 10.0]))
    assert np.allclose(values, [-0.5772156649, 0.4227843351, 2.2517525891], atol=1e-6)
