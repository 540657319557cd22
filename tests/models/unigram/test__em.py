"""tokviz.models.unigram._em: the EM helpers' worked examples."""

from __future__ import annotations

import numpy as np

from tokviz.models.unigram._em import digamma, index_dtype


def test_index_dtype_is_the_smallest_that_holds_n() -> None:
    assert (index_dtype(1_000), index_dtype(2**31 + 1)) == (np.int32, np.int64)


def test_digamma_matches_known_values() -> None:
    values = digamma(np.array([1.0, 2.0, 10.0]))
    assert np.allclose(values, [-0.5772156649, 0.4227843351, 2.2517525891], atol=1e-6)


def test_log_add32_rounds_as_sentencepiece_does() -> None:
    from tokviz.models.unigram._em import log_add32

    # log(e^0 + e^0) = log 2 stored as a float; a term 50+ below the other is dropped
    assert log_add32(np.float32([0.0, -1.0]), np.float32([0.0, -51.5])).tolist() == [np.float32(np.log(2.0)), -1.0]


def test_float32_forward_backward_on_a_worked_lattice() -> None:
    """One word "ab" with pieces a (-1), b (-2), ab (-2.5): Z = log(e^-3 + e^-2.5) from both ends."""
    from tokviz.models.unigram._em import LatticeSet

    start, end = np.array([0, 1, 0]), np.array([1, 2, 2])
    lattices = LatticeSet(start, end, np.array([0, 1, 2]), end - start == 1, np.array([0]), np.array([2]), 3)
    scores = np.float32([-1.0, -2.0, -2.5])[lattices.seed]
    z = np.float32(np.logaddexp(-3.0, -2.5))
    alpha, beta = lattices.forward(scores), lattices.backward(scores)
    assert alpha.dtype == beta.dtype == np.float32
    assert alpha[2] == z and beta[0] == z
    assert abs(float(lattices.forward(scores.astype(np.float64))[2]) - float(z)) < 1e-6
