"""Lattice: Viterbi, forward-backward, n-best and sampling against the brute-force oracle."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.models.unigram.lattice import Lattice, log_add

# "hugs" with pieces h u g s hu ug gs hug ugs (scores are log-probabilities)
HUGS_SPEC = [
    (0, 1, 1, -3.0), (0, 2, 5, -2.5), (0, 3, 8, -2.0),
    (1, 2, 2, -3.2), (1, 3, 6, -2.2), (1, 4, 9, -4.0),
    (2, 3, 3, -3.1), (2, 4, 7, -3.3),
    (3, 4, 4, -2.9),
]


def hugs() -> Lattice:
    return Lattice("hugs", HUGS_SPEC)


def texts(path) -> list[str]:
    return [node.text for node in path]


def test_worked_example_viterbi_and_all_paths():
    lattice = hugs()
    paths = lattice.all_paths()
    # h|u|g|s, h|u|gs, h|ug|s, h|ugs, hu|g|s, hu|gs, hug|s
    assert sorted("|".join(texts(p)) for p, _ in paths) == sorted([
        "h|u|g|s", "h|u|gs", "h|ug|s", "h|ugs", "hu|g|s", "hu|gs", "hug|s",
    ])
    assert texts(lattice.viterbi()) == ["hug", "s"]  # -2.0 + -2.9 = -4.9
    best_path, best_log_prob = max(paths, key=lambda item: item[1])
    assert texts(best_path) == ["hug", "s"]
    assert math.isclose(best_log_prob, -4.9 - lattice.log_partition(), abs_tol=1e-12)
    assert math.isclose(math.fsum(math.exp(lp) for _, lp in paths), 1.0, abs_tol=1e-12)


def test_marginals_match_the_oracle_and_sum_to_one_per_character():
    lattice = hugs()
    marginals = lattice.marginals()
    oracle = [0.0] * len(lattice.nodes)
    for path, log_prob in lattice.all_paths():
        for node in path:
            oracle[node.node_id] += math.exp(log_prob)
    assert marginals == pytest.approx(oracle, abs=1e-12)
    for position in range(len(lattice)):
        covering = [marginals[n.node_id] for n in lattice.nodes if n.start <= position < n.end]
        assert math.fsum(covering) == pytest.approx(1.0, abs=1e-12)


def test_nbest_lists_the_oracle_paths_in_order():
    lattice = hugs()
    ranked = sorted(lattice.all_paths(), key=lambda item: -item[1])
    log_z = lattice.log_partition()
    nbest = lattice.nbest(7)
    assert [texts(p) for p, _ in nbest] == [texts(p) for p, _ in ranked]
    assert [s - log_z for _, s in nbest] == pytest.approx([lp for _, lp in ranked], abs=1e-12)
    assert texts(lattice.nbest(1)[0][0]) == texts(lattice.viterbi())
    assert len(lattice.nbest(100)) == 7


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.0])
def test_sampling_frequencies_match_path_probabilities(alpha):
    lattice = hugs()
    rng = random.Random(1234)
    draws = 20_000
    seen = Counter("|".join(texts(lattice.sample(alpha, rng))) for _ in range(draws))
    weights = {"|".join(texts(p)): math.exp(alpha * (lp + lattice.log_partition())) for p, lp in lattice.all_paths()}
    total = math.fsum(weights.values())
    for key, weight in weights.items():
        assert seen[key] / draws == pytest.approx(weight / total, abs=0.015), key
    assert set(seen) <= set(weights)


def test_ties_go_to_the_node_inserted_first():
    # "ab" = "a"+"b" = -2.0 exactly as "ab" = -2.0: the earlier start (the longer node) wins, as HF.
    lattice = Lattice("ab", [(0, 1, 1, -1.0), (0, 2, 3, -2.0), (1, 2, 2, -1.0)])
    assert texts(lattice.viterbi()) == ["ab"]


def test_uncovered_sentence_and_empty_sentence():
    lattice = Lattice("abc", [(0, 1, 1, -1.0), (2, 3, 3, -1.0)])  # nothing covers "b"
    assert lattice.viterbi() == []
    assert lattice.nbest(3) == []
    assert lattice.log_partition() == -math.inf
    assert lattice.marginals() == [0.0, 0.0]
    assert lattice.all_paths() == []
    empty = Lattice("", [])
    assert empty.viterbi() == [] and empty.all_paths() == [] and empty.sample(1.0) == []


def test_nodes_outside_the_sentence_are_refused():
    with pytest.raises(ValueError, match="outside"):
        Lattice("ab", [(0, 3, 1, -1.0)])


def test_log_add():
    assert log_add(0.0, 0.0) == pytest.approx(math.log(2))
    assert log_add(-math.inf, -1.5) == -1.5
    assert log_add(-1000.0, 0.0) == 0.0


@st.composite
def random_lattices(draw):
    sentence = draw(st.text(alphabet="ab", min_size=1, max_size=9))
    pieces = draw(st.sets(st.text(alphabet="ab", min_size=2, max_size=4), max_size=6))
    vocab = {"a": -draw(st.floats(0.1, 8)), "b": -draw(st.floats(0.1, 8))}
    for piece in sorted(pieces):
        vocab[piece] = -draw(st.floats(0.1, 8))
    spec = []
    for start in range(len(sentence)):
        for end in range(start + 1, len(sentence) + 1):
            piece = sentence[start:end]
            if piece in vocab:
                spec.append((start, end, sorted(vocab).index(piece), vocab[piece]))
    return Lattice(sentence, spec)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(random_lattices())
def test_fast_code_agrees_with_the_oracle(lattice):
    paths = lattice.all_paths()
    log_z = lattice.log_partition()
    best = lattice.viterbi()
    assert lattice.path_score(best) == pytest.approx(max(lp for _, lp in paths) + log_z, abs=1e-9)
    assert math.fsum(math.exp(lp) for _, lp in paths) == pytest.approx(1.0, abs=1e-9)
    marginals = lattice.marginals()
    oracle = [0.0] * len(lattice.nodes)
    for path, log_prob in paths:
        for node in path:
            oracle[node.node_id] += math.exp(log_prob)
    assert marginals == pytest.approx(oracle, abs=1e-9)
    top = lattice.nbest(3)
    expected = sorted((lp for _, lp in paths), reverse=True)[:3]
    assert [s - log_z for _, s in top] == pytest.approx(expected, abs=1e-9)
