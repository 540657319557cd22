"""``unigram_word_encoder`` (tokviz/engine/unigram.py) against ``Unigram.tokenize`` and HF.

The encoder walks the piece dict directly with scores starting at -inf and reads the best
path back from the starts alone; vocabularies with NaN or infinite scores and words holding
the unk piece's text take its general walk. On random vocabularies (tied scores, unk id 0,
elsewhere or None, byte fallback on or off, duplicated pieces, odd scores) and random words
(known and unknown chars, the unk piece's text, long words) it must give exactly what the
model gives, and the ids and pieces of HF ``tokenizers``' Unigram.
"""

from __future__ import annotations

import math

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz import models
from tokviz.errors import VocabularyError
from tokviz.engine.entries import _model_word_entry
from tokviz.engine.unigram import _UNIGRAM_MAX_WORD, unigram_word_encoder

KNOWN = ["a", "b", "c", "▁", "é", "中"]
UNKNOWN = ["x", "😀", "e\u0301", "<", "k"]
WORD = st.lists(st.sampled_from(KNOWN * 3 + UNKNOWN + ["<unk>", "ab", "▁a"]), max_size=14).map("".join)
LONG_WORD = st.lists(st.sampled_from(KNOWN * 4 + UNKNOWN), min_size=60, max_size=120).map("".join)
PLAIN_SCORES = [-1.0, -2.0, -2.5, -3.0, -4.0, -7.0, -0.5]


@st.composite
def vocabularies(draw, odd_scores: bool = True):
    pieces = draw(st.lists(st.lists(st.sampled_from(KNOWN), min_size=1, max_size=5).map("".join), min_size=1, max_size=30))
    odd = draw(st.sampled_from(["none", "non-finite", "positive"])) if odd_scores else "none"
    score_choices = PLAIN_SCORES + {"none": [], "non-finite": [math.nan, -math.inf, math.inf, -1e300], "positive": [0.0, 1.5, 3.0]}[odd]
    scores = draw(st.lists(st.sampled_from(score_choices), min_size=len(pieces), max_size=len(pieces)))
    vocab = [*zip(pieces, scores)]
    unk_at = draw(st.sampled_from([0, len(vocab) // 2, None]))
    if unk_at is not None:
        vocab.insert(unk_at, ("<unk>", draw(st.sampled_from([0.0, -3.0]))))
    byte_fallback = draw(st.booleans())
    if byte_fallback:
        vocab += [(f"<0x{byte:02X}>", -9.0) for byte in draw(st.lists(st.sampled_from(list("x<k😀".encode())), max_size=6))]
    return vocab, unk_at, byte_fallback


def unigram(vocab, unk_id=None, byte_fallback=False):
    """A model whose budget of direct look-ups for long words is never spent (small
    vocabularies have small budgets): the encoder walks every word itself."""
    model = models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    model._direct_budget = 10**9
    return model


def check_word(model, encode, word) -> None:
    fast = encode(word)
    if fast is None:  # left to the model: it raises for an unknown char without unk
        with pytest.raises(VocabularyError):
            model.tokenize(word)
    else:
        assert fast == _model_word_entry(model, word), word


def words_of(vocab):
    """Words glued from the vocabulary's pieces (many overlapping matches, so many ties) and other chars."""
    parts = [piece for piece, _ in vocab] + UNKNOWN
    return st.lists(st.sampled_from(parts), max_size=7).map("".join)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(vocabularies(), st.lists(WORD, min_size=1, max_size=4), st.data())
def test_the_encoder_equals_the_model(spec, words, data) -> None:
    vocab, unk_id, byte_fallback = spec
    model = unigram(vocab, unk_id, byte_fallback)
    encode = unigram_word_encoder(model)
    for word in words + data.draw(st.lists(words_of(vocab), min_size=1, max_size=4)):
        check_word(model, encode, word)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(vocabularies(), LONG_WORD)
def test_long_words_equal_the_model(spec, word) -> None:
    vocab, unk_id, byte_fallback = spec
    model = unigram(vocab, unk_id, byte_fallback)
    check_word(model, unigram_word_encoder(model), word)


@settings(max_examples=250, deadline=None, derandomize=True)
@given(vocabularies(odd_scores=False), st.lists(WORD, min_size=1, max_size=3), st.data())
def test_ids_and_pieces_equal_hf(spec, words, data) -> None:
    vocab, unk_id, byte_fallback = spec
    model = unigram(vocab, unk_id, byte_fallback)
    hf = tokenizers.models.Unigram(vocab, unk_id, byte_fallback)
    encode = unigram_word_encoder(model)
    for word in words + data.draw(st.lists(words_of(vocab), min_size=1, max_size=3)):
        fast = encode(word)
        try:
            expected = hf.tokenize(word)
        except Exception:
            assert fast is None, word
            continue
        assert fast is not None, word
        assert (list(fast[0]), list(fast[1])) == ([t.id for t in expected], [t.value for t in expected]), word


def test_worked_examples() -> None:
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("▁", -1.5), ("▁ab", -3.5), ("c", -4.0)]
    encode = unigram_word_encoder(models.Unigram(vocab, unk_id=0))
    # 'ab' (-2.0) ties 'a' + 'b' (-2.0): the piece ending at 2 that starts first wins.
    assert encode("ab") == ((3,), ("ab",), (0,), (2,))
    # '▁ab' (-3.5) ties '▁' + 'ab' (-3.5): '▁ab' starts first.
    assert encode("▁abc") == ((5, 6), ("▁ab", "c"), (0, 3), (3, 4))
    # Unknown chars next to each other are one <unk> carrying their text.
    assert encode("axyb") == ((1, 0, 2), ("a", "xy", "b"), (0, 1, 3), (1, 3, 4))
    # The unk piece's own text is an unknown piece too (the model fuses it like unknown chars).
    assert encode("<unk><unk>") == ((0,), ("<unk><unk>",), (0,), (10,))
    assert encode("") == ((), (), (), ())


def test_byte_fallback_and_missing_unk() -> None:
    vocab = [("<unk>", 0.0), ("a", -1.0), ("<0x78>", -5.0), ("<0x79>", -5.0)]
    encode = unigram_word_encoder(models.Unigram(vocab, unk_id=0, byte_fallback=True))
    assert encode("axy") == ((1, 2, 3), ("a", "<0x78>", "<0x79>"), (0, 1, 1), (1, 3, 3))
    assert encode("az") == ((1, 0), ("a", "z"), (0, 1), (1, 2))  # no <0x7A> piece: <unk>
    no_unk = unigram_word_encoder(models.Unigram([("a", -1.0), ("ab", -1.0)]))
    assert no_unk("ab") == ((1,), ("ab",), (0,), (2,))
    assert no_unk("ax") is None  # the model raises HF's error


def test_odd_scores_walk_like_the_model() -> None:
    vocab = [("<unk>", 0.0), ("a", math.nan), ("b", -1.0), ("ab", -math.inf), ("c", math.inf)]
    model = models.Unigram(vocab, unk_id=0)
    encode = unigram_word_encoder(model)
    for word in ["ab", "abc", "ba", "cab", "xab", "aaa"]:
        assert encode(word) == _model_word_entry(model, word), word


def test_long_words_stay_off_the_models_prefix_dict_until_its_budget_is_spent() -> None:
    vocab = [("<unk>", 0.0), ("a", -1.0), ("ab", -1.5), ("b", -1.0)] + [(f"c{i}", -5.0) for i in range(500)]
    model = models.Unigram(vocab, unk_id=0)
    encode = unigram_word_encoder(model)
    word = "ab" * 200 + "x" + "ba" * 100  # 601 chars, 600 of which start a piece
    assert len(word) <= _UNIGRAM_MAX_WORD
    expected = _model_word_entry(models.Unigram(vocab, unk_id=0), word)
    assert encode(word) == expected
    assert model._trie is None  # no prefix dict built
    # The budget (8 look-ups a piece) pays for the starts a piece begins with, x 5 (the longest piece, "<unk>").
    assert model._longest_piece() == 5 and model._direct_budget == 8 * 504 - 600 * 5
    # No piece begins with "x": a run of it (a line of Chinese for an English vocabulary) is
    # walked without look-ups, and spends nothing.
    unknown = "x" * 900
    assert encode(unknown) == _model_word_entry(models.Unigram(vocab, unk_id=0), unknown) == ((0,), (unknown,), (0,), (900,))
    assert model._direct_budget == 8 * 504 - 600 * 5
    longer = word + "ab"
    assert encode(longer) == _model_word_entry(models.Unigram(vocab, unk_id=0), longer)  # what is left of the budget
    assert model._direct_budget == 8 * 504 - 1202 * 5 and model._trie is None
    assert encode(word) is None  # the budget is spent: the model's prefix walk
    assert _model_word_entry(model, word) == expected and model._trie is not None
    assert encode("ab" * 16) == ((2,) * 16, ("ab",) * 16, tuple(range(0, 32, 2)), tuple(range(2, 33, 2)))  # short words: always here


def test_long_words_rows_are_cut_from_whole_rows_and_encode_as_the_model() -> None:
    """Words past 32 chars take their rows from whole rows kept by start (see ``_rows``): every
    length from 33 to 120 encodes as the model, in any order of lengths."""
    vocab = [("<unk>", 0.0)] + [(piece, -float(len(piece))) for piece in ("a", "b", "ab", "ba", "aba", "bab", "abab", "ababa")]
    model = models.Unigram(vocab, unk_id=0)
    model._direct_budget = 10**9  # (all of them here, not in the model's prefix walk)
    encode = unigram_word_encoder(model)
    reference = models.Unigram(vocab, unk_id=0)
    for size in [120, 33, 77, 34, 119, 50]:
        word = ("abbab" * 30)[:size]
        assert encode(word) == _model_word_entry(reference, word), size


@settings(max_examples=150, deadline=None, derandomize=True)
@given(vocabularies(), st.data())
def test_the_models_direct_look_ups_equal_its_prefix_walk(spec, data) -> None:
    """Without its prefix dict the model looks pieces up directly: same tokens, lattice and n-best."""
    vocab, unk_id, byte_fallback = spec
    direct = unigram(vocab, unk_id, byte_fallback)
    walk = models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    walk._prefixes()
    for word in data.draw(st.lists(words_of(vocab) | WORD, min_size=1, max_size=4)):
        try:
            expected = walk.tokenize(word)
        except VocabularyError:
            with pytest.raises(VocabularyError):
                direct.tokenize(word)
            continue
        assert direct.tokenize(word) == expected, word
        nodes = [(n.start, n.end, n.piece_id) for n in walk.lattice(word).nodes]
        assert [(n.start, n.end, n.piece_id) for n in direct.lattice(word).nodes] == nodes, word
        if word and not any(math.isnan(score) for _, score in vocab):
            assert [[t.id for t in toks] for toks, _ in direct.nbest(word, 3)] == [[t.id for t in toks] for toks, _ in walk.nbest(word, 3)]
    assert direct._trie is None


def test_the_model_builds_its_prefix_dict_once_long_sequences_spent_its_budget() -> None:
    model = models.Unigram([("<unk>", 0.0), ("a", -1.0), ("ab", -1.5), ("b", -1.0)] + [(f"c{i}", -5.0) for i in range(100)], unk_id=0)
    assert [t.value for t in model.tokenize("abba")] == ["ab", "b", "a"] and model._trie is None
    assert [t.value for t in model.tokenize("ab" * 50)] == ["ab"] * 50 and model._trie is None  # 100 x 4 of 8 x 104
    tokens = model.tokenize("ab" * 60 + "x")
    assert model._trie is not None
    assert [t.value for t in tokens] == ["ab"] * 60 + ["x"]


@st.composite
def dense_vocabularies(draw):
    """Few chars, pieces and their concatenations (whole words are pieces, many paths tie or
    come close): where skipping starts matters most."""
    base = draw(st.lists(st.text("ab▁", min_size=1, max_size=3), min_size=2, max_size=8, unique=True))
    glued = draw(st.lists(st.lists(st.sampled_from(base), min_size=2, max_size=3).map("".join), max_size=10))
    pieces = list(dict.fromkeys(["a", "b", "▁", *base, *glued]))
    scores = draw(st.lists(st.sampled_from([-1.0, -1.5, -2.0, -2.5, -3.0, -4.5, -6.0, -0.25]), min_size=len(pieces), max_size=len(pieces)))
    return [("<unk>", 0.0), *zip(pieces, scores)]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(dense_vocabularies(), st.data())
def test_skipped_starts_never_change_the_result(vocab, data) -> None:
    model = unigram(vocab, 0)
    encode = unigram_word_encoder(model)
    parts = [piece for piece, _ in vocab[1:]] + ["x"]
    for word in data.draw(st.lists(st.lists(st.sampled_from(parts), min_size=1, max_size=5).map("".join), min_size=1, max_size=6)):
        assert encode(word) == _model_word_entry(model, word), word


@st.composite
def ordered_vocabularies(draw):
    """A dense vocabulary in score order without duplicates, as trained ones come: the char
    table is made on first use from the pieces' first chars (see ``_char_table``)."""
    vocab = draw(dense_vocabularies())
    pieces = sorted(dict(vocab[1:]).items(), key=lambda item: -item[1])  # stable: ties keep their order
    unk_at = draw(st.integers(0, len(pieces)))
    pieces.insert(unk_at, ("<unk>", pieces[unk_at - 1][1] if unk_at else 0.0))  # keeps the order
    return pieces, unk_at


@settings(max_examples=300, deadline=None, derandomize=True)
@given(ordered_vocabularies(), st.data())
def test_ordered_vocabularies_equal_the_model(spec, data) -> None:
    """Entries made on first use, a first floor from the longest piece a word starts with and
    the rest (the seed), unknown chars met before and after their entries: same as the model."""
    from tokviz.engine.unigram import _char_table

    vocab, unk_at = spec
    model = unigram(vocab, unk_at)
    assert _char_table(model.word_tables(), True, True)[1] is not None
    encode = unigram_word_encoder(model)
    parts = [piece for piece, _ in vocab if piece != "<unk>"] + ["x", "y"]
    for word in data.draw(st.lists(st.lists(st.sampled_from(parts), min_size=1, max_size=6).map("".join), min_size=1, max_size=8)):
        assert encode(word) == _model_word_entry(model, word), word


@st.composite
def vocabularies_in_runs(draw):
    """A dense vocabulary in score order but for a few special pieces placed anywhere (XLM-R's
    ``<mask>`` after its last piece, specials at 0.0 first): runs in score order, whose char
    table is made without sorting the scores (see ``_score_runs``)."""
    ordered, unk_at = draw(ordered_vocabularies())
    pieces = list(ordered)
    for special in draw(st.lists(st.sampled_from(["<mask>", "<s>", "ab", "▁a"]), min_size=1, max_size=3)):
        pieces.insert(draw(st.integers(0, len(pieces))), (special, draw(st.sampled_from([0.0, -0.1, -2.0]))))
    unk_at = next(index for index, (piece, _) in enumerate(pieces) if piece == "<unk>")
    return pieces, unk_at


@settings(max_examples=300, deadline=None, derandomize=True)
@given(vocabularies_in_runs(), st.integers(1, 6), st.data())
def test_vocabularies_in_runs_equal_the_model(spec, exact, data) -> None:
    """Bounds from runs in score order, and past a run's first ``exact`` pieces the highest
    score left in it (a larger bound than a char's own: it skips less): same as the model."""
    import tokviz.engine.unigram as unigram_fast

    vocab, unk_at = spec
    model = unigram(vocab, unk_at)
    scores = [score for _, score in vocab]
    runs = unigram_fast._score_runs(scores)
    assert runs is not None and runs[0] == 0
    assert all(scores[i] >= scores[i + 1] for start, end in zip(runs, [*runs[1:], len(scores)]) for i in range(start, end - 1))
    saved = unigram_fast._EXACT_PIECES
    unigram_fast._EXACT_PIECES = exact
    try:
        encode = unigram_word_encoder(model)
    finally:
        unigram_fast._EXACT_PIECES = saved
    parts = [piece for piece, _ in vocab if piece != "<unk>"] + ["x", "y"]
    for word in data.draw(st.lists(st.lists(st.sampled_from(parts), min_size=1, max_size=6).map("".join), min_size=1, max_size=8)):
        assert encode(word) == _model_word_entry(model, word), word


def test_a_large_vocabulary_in_runs_gets_a_tail_bound() -> None:
    """Past ``_EXACT_PIECES`` pieces of a run the table is not made piece by piece: a char met
    only there gets the highest score left in the run (here -3.0, the piece after the first
    two), and a char in the table at least that."""
    import tokviz.engine.unigram as unigram_fast

    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -3.0), ("c", -4.0), ("cb", -5.0), ("<mask>", 0.0)]
    model = unigram(vocab, 0)
    runs = unigram_fast._score_runs([score for _, score in vocab])
    assert runs == [0, 5]
    saved = unigram_fast._EXACT_PIECES
    unigram_fast._EXACT_PIECES = 2
    try:
        table, firsts, tail = unigram_fast._char_table(model.word_tables(), True, False, runs)
        encode = unigram_word_encoder(model)
    finally:
        unigram_fast._EXACT_PIECES = saved
    assert (firsts, tail) == (None, -3.0)
    assert table == {"<": (None, 0.0), "a": (-1.0, -1.0)}
    for word in ["cbab", "abc", "ccb", "xcb"]:
        assert encode(word) == _model_word_entry(model, word), word
