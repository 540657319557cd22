"""Issue 13, cold BPE encoding: ``bpe_word_encoder`` (tokviz.engine.bpe) and the engine's
byte-level word entries (``engine.entries._byte_entry``) against the model, the general path and HF.

``bpe_word_encoder`` merges inline (a two-symbol word with one lookup), carries no lengths when
token texts give them (also with ``end_of_word_suffix``), and hands words with chars outside the
vocabulary (unk, fused unk, byte fallback, dropped chars, a missing unk token) to the model's own
rules. On random vocabularies and merges (decorations, ignore_merges, aliases sharing an id, long
words for the heap merge) it must give exactly ``BPE.tokenize``'s ids, values and offsets, and HF's.
The engine builds its byte-level entries from those tuples; on random byte-level BPE tokenizers and
random text (spaces, controls, accents, CJK, emoji) it must give what the general path and HF give.
"""

from __future__ import annotations

import gc
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz import Tokenizer, models, pre_tokenizers, processors
from tokviz.byte_level import BYTES_TO_UNICODE
from tokviz.errors import VocabularyError
from tokviz.engine.bpe import bpe_word_encoder
from tokviz.engine.entries import _model_word_entry

WORD_CHARS = ["a", "b", "c", "▁", "é", "中", "😀", "a", "b", "\n"]
BPE_WORD = st.lists(st.sampled_from(WORD_CHARS), max_size=10).map("".join)


@st.composite
def bpe_models(draw, hf_compatible: bool = False):
    prefix = draw(st.sampled_from([None, "##"]))
    suffix = draw(st.sampled_from([None, "</w>"]))
    byte_fallback = draw(st.booleans())
    if hf_compatible and byte_fallback:
        prefix = None  # the one documented offset deviation (HF counts the prefix's bytes)
    alphabet = draw(st.lists(st.sampled_from(["a", "b", "c", "▁", "中", "😀"]), min_size=1, max_size=6, unique=True))
    symbols = list(alphabet)
    if prefix:
        symbols += [prefix + char for char in alphabet]
    if suffix:
        symbols += [char + suffix for char in symbols]
    unk = draw(st.sampled_from(["<unk>", None, "<missing>"] if not hf_compatible else ["<unk>", None]))
    if byte_fallback and draw(st.booleans()):
        symbols.append("<0x0A>")  # a newline's byte token, which merges may join to other symbols
    vocab = {"<unk>": 0}
    for symbol in symbols:
        vocab.setdefault(symbol, len(vocab))
    merges = []
    for left, right in draw(st.lists(st.tuples(st.sampled_from(symbols), st.sampled_from(symbols)), max_size=30)):
        if prefix:
            if not right.startswith(prefix):
                continue
            merged = left + right[len(prefix):]
        else:
            merged = left + right
        if (left, right) not in merges and (merged not in vocab or draw(st.booleans())):
            merges.append((left, right))
            vocab.setdefault(merged, len(vocab))
            symbols.append(merged)
    if byte_fallback:
        for byte in draw(st.lists(st.sampled_from(list("é中".encode())), max_size=5)):
            vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    if not hf_compatible and draw(st.booleans()):
        vocab["zz"] = draw(st.sampled_from(sorted(vocab.values())))  # an alias: two strings, one id
    return models.BPE(
        vocab, merges, unk_token=unk, continuing_subword_prefix=prefix, end_of_word_suffix=suffix,
        byte_fallback=byte_fallback, ignore_merges=draw(st.booleans()), fuse_unk=draw(st.booleans()),
    )


def first_and_later_passes(model):
    """The word encoder as a first pass runs it and as the passes after a cleared word cache run
    it (``use_proofs``: a file with more merges than tokens proves its tokens from then on)."""
    later = bpe_word_encoder(model)
    later.use_proofs()
    return bpe_word_encoder(model), later


@settings(max_examples=400, deadline=None, derandomize=True)
@given(bpe_models(), st.lists(BPE_WORD, min_size=1, max_size=6))
def test_bpe_word_encoder_equals_the_model_on_every_path(model, words) -> None:
    for encode in first_and_later_passes(model):
        for word in words:
            try:
                expected = _model_word_entry(model, word)
            except VocabularyError:  # an unknown char and an unk token missing from the vocabulary
                with pytest.raises(VocabularyError):
                    encode(word)
                continue
            assert encode(word) == expected, (word, model.to_dict())


@settings(max_examples=250, deadline=None, derandomize=True)
@given(bpe_models(hf_compatible=True), st.lists(BPE_WORD, min_size=1, max_size=6))
def test_bpe_word_encoder_equals_hf(model, words) -> None:
    hf = pytest.importorskip("tokenizers")
    section = model.to_dict()
    options = ("unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges")
    hf_model = hf.models.BPE(
        section["vocab"], [tuple(merge) for merge in section["merges"]],
        **{name: section[name] for name in options if section[name] is not None},
    )
    encode = bpe_word_encoder(model)
    for word in words:
        tokens = hf_model.tokenize(word)
        ids, values, starts, ends = encode(word)
        assert list(ids) == [t.id for t in tokens], (word, section)
        assert list(values) == [t.value for t in tokens]
        # HF's model counts bytes (of the pieces it keeps); its Tokenizer maps them to the chars
        # holding those bytes, as tokviz does.
        char_of_byte = [index for index, char in enumerate(word) for _ in char.encode()]
        expected = [
            (char_of_byte[s] if s < len(char_of_byte) else len(word), char_of_byte[e - 1] + 1 if e else 0)
            for s, e in (t.offsets for t in tokens)
        ]
        assert list(zip(starts, ends)) == expected, (word, section)


def test_bpe_word_encoder_worked_examples() -> None:
    vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "<0xC3>": 4, "<0xA9>": 5, "b</w>": 6, "ab</w>": 7}
    # Byte fallback: 'é' (not a symbol) becomes its two byte tokens; '中' (bytes missing) is unk.
    fallback = bpe_word_encoder(models.BPE(vocab, [("a", "b")], unk_token="<unk>", byte_fallback=True))
    assert fallback("abéa") == ((3, 4, 5, 1), ("ab", "<0xC3>", "<0xA9>", "a"), (0, 2, 2, 3), (2, 3, 3, 4))
    assert fallback("a中中b") == ((1, 0, 0, 2), ("a", "<unk>", "<unk>", "b"), (0, 1, 2, 3), (1, 2, 3, 4))
    # A newline (Llama's words hold them) becomes its byte token, which merges like any symbol.
    newline = bpe_word_encoder(models.BPE({**vocab, "<0x0A>": 8, "<0x0A>a": 9}, [("<0x0A>", "a"), ("a", "b")], byte_fallback=True))
    assert newline("ab\nab") == ((3, 9, 2), ("ab", "<0x0A>a", "b"), (0, 2, 4), (2, 4, 5))
    # fuse_unk: a run of unknown chars is one unk; without an unk token they are dropped (as in HF).
    fused = bpe_word_encoder(models.BPE(vocab, [("a", "b")], unk_token="<unk>", fuse_unk=True))
    assert fused("a中中b") == ((1, 0, 2), ("a", "<unk>", "b"), (0, 1, 3), (1, 3, 4))
    assert bpe_word_encoder(models.BPE(vocab, [("a", "b")]))("x") == ((), (), (), ())
    with pytest.raises(VocabularyError):
        bpe_word_encoder(models.BPE(vocab, [("a", "b")], unk_token="<nope>"))("ax")
    # end_of_word_suffix: the last symbol carries it, and so does the last token's text.
    suffixed = bpe_word_encoder(models.BPE(vocab, [("a", "b</w>"), ("a", "b")], end_of_word_suffix="</w>"))
    assert suffixed("ab") == ((7,), ("ab</w>",), (0,), (2,))
    assert suffixed("abab") == ((3, 7), ("ab", "ab</w>"), (0, 2), (2, 4))
    # Two symbols: one lookup; ignore_merges: a word in the vocabulary is one token.
    plain = bpe_word_encoder(models.BPE(vocab, [("a", "b")]))
    assert plain("ab") == ((3,), ("ab",), (0,), (2,))
    assert plain("ba") == ((2, 1), ("b", "a"), (0, 1), (1, 2))
    ignoring = bpe_word_encoder(models.BPE({"a": 0, "b": 1, "ab": 2, "abb": 3}, [("a", "b")], ignore_merges=True))
    assert ignoring("abb") == ((3,), ("abb",), (0,), (3,))
    assert bpe_word_encoder(models.BPE(vocab, [], dropout=0.5)) is None


@st.composite
def merge_tables(draw):
    """Plain vocabularies over a small alphabet (so pairs overlap and repeat) whose merges come
    in any order: ranks need not rise up a token's merge tree, two merges may make one token,
    and many tokens are not what the merges make of their own chars."""
    alphabet = draw(st.lists(st.sampled_from(["a", "b", "c", "é", "中"]), min_size=2, max_size=4, unique=True))
    vocab = {char: index for index, char in enumerate(alphabet)}
    symbols = list(alphabet)
    merges = []
    for left, right in draw(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=40)):
        pair = (symbols[left % len(symbols)], symbols[right % len(symbols)])
        if pair not in merges:
            merges.append(pair)
            vocab.setdefault(pair[0] + pair[1], len(vocab))
            symbols.append(pair[0] + pair[1])
    if draw(st.booleans()):
        merges = draw(st.permutations(merges))
    return models.BPE(vocab, merges)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(merge_tables(), st.lists(st.lists(st.sampled_from(["a", "b", "c", "é", "中"]), max_size=8).map("".join), max_size=4))
def test_a_word_in_the_vocabulary_is_one_token_only_when_its_merges_make_it(model, words) -> None:
    # Every token of the vocabulary as a word (the encoder proves or disproves that the merges
    # rebuild it, memoized per token, in a random order), and random words.
    vocab = sorted(model.get_vocab(), key=len)
    order = words + vocab[::-1] + vocab + words
    encode = bpe_word_encoder(model)
    for word in order:
        assert encode(word) == _model_word_entry(model, word), (word, model.to_dict()["merges"])


def test_a_token_the_merges_do_not_rebuild_is_merged_as_any_word() -> None:
    vocab = {"x": 0, "y": 1, "z": 2, "yz": 3, "xy": 4, "xyz": 5, "zx": 6, "yzx": 7}
    # x y z: y+z (rank 0) comes before x+y (rank 1), so 'xyz' (made by xy + z) is x, yz.
    model = models.BPE(vocab, [("y", "z"), ("x", "y"), ("xy", "z"), ("z", "x"), ("yz", "x")])
    encode = bpe_word_encoder(model)
    assert encode("xyz") == ((0, 3), ("x", "yz"), (0, 1), (1, 3))
    assert encode("xy") == ((4,), ("xy",), (0,), (2,))
    # y z x: y+z (rank 0), then yz+x (rank 4); z+x (rank 3) never meets z alone.
    assert encode("yzx") == ((7,), ("yzx",), (0,), (3,))
    # ranks that do not rise up the tree: 'ab' is made after 'abc' needs it, still right.
    backwards = models.BPE({"a": 0, "b": 1, "c": 2, "bc": 3, "abc": 4, "ab": 5}, [("b", "c"), ("a", "bc"), ("a", "b")])
    assert bpe_word_encoder(backwards)("abc") == ((4,), ("abc",), (0,), (3,))
    assert bpe_word_encoder(backwards)("ab") == ((5,), ("ab",), (0,), (2,))
    # 'puv' is made by p + uv at rank 0, before 'uv' exists (rank 2): it does rebuild, but only
    # once u + v merged, so in 'xpuv' the x + p merge (rank 1) comes first: xp, uv.
    late = {"x": 0, "p": 1, "u": 2, "v": 3, "uv": 4, "puv": 5, "xp": 6, "xpuv": 7}
    late_model = models.BPE(late, [("p", "uv"), ("x", "p"), ("u", "v"), ("x", "puv")])
    assert bpe_word_encoder(late_model)("puv") == ((5,), ("puv",), (0,), (3,))
    assert bpe_word_encoder(late_model)("xpuv") == ((6, 4), ("xp", "uv"), (0, 2), (2, 4))
    assert _model_word_entry(late_model, "xpuv") == ((6, 4), ("xp", "uv"), (0, 2), (2, 4))


def _proof_memo(encode):
    return dict(zip(encode.__code__.co_freevars, encode.__closure__))["made_get"].cell_contents.__self__


def test_an_empty_token_in_no_merge_does_not_stop_the_proofs() -> None:
    # Whisper's tokenizer.json holds an empty token (id 50256) that no merge uses: its words are
    # proven as in any vocabulary (cleared caches once cost 2.1x HF's time there, every word
    # merged again). An empty token in a merge ('a' + '' makes 'a') would send a proof of 'a'
    # round in a circle: no proofs then, and the same tokens.
    vocab = {"a": 0, "b": 1, "ab": 2, "": 3, "ba": 4, "aba": 5}
    merges = [("a", "b"), ("b", "a"), ("ab", "a")]
    for table, proves in ((merges, True), ([("a", ""), *merges], False)):
        model = models.BPE(vocab, table)
        encode = bpe_word_encoder(model)
        for word in ("aba", "ab", "ba", "abab", "a", "baba"):
            assert encode(word) == _model_word_entry(model, word), (word, table)
        assert bool(_proof_memo(encode)) is proves, table
    assert bpe_word_encoder(models.BPE(vocab, merges))("aba") == ((5,), ("aba",), (0,), (3,))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(merge_tables(), st.lists(st.lists(st.integers(0, 60), min_size=2, max_size=4), max_size=5))
def test_words_glued_from_tokens_equal_the_model(model, picks) -> None:
    # Words glued from 2-4 tokens (certified or not, in a random order): every token the
    # encoder certifies on the way must give the model's result, and every other word too.
    tokens = sorted(model.get_vocab())
    words = ["".join(tokens[pick % len(tokens)] for pick in word) for word in picks]
    for encode in first_and_later_passes(model):
        for word in words + words[::-1]:
            assert encode(word) == _model_word_entry(model, word), (word, model.to_dict()["merges"])


@st.composite
def suffixed_merge_tables(draw):
    """merge_tables with an end_of_word_suffix: a word's symbols are its chars, the last one with
    the suffix. Merges mostly join a token of chars to one of chars or to a last token, but also
    put the suffix inside a token, and the suffix's own chars ('<', '/', 'w', '>') build tokens
    ending in '</w>' (also a last char's symbol) out of chars."""
    suffix = "</w>"
    alphabet = draw(st.lists(st.sampled_from(["a", "b", "é", "<", "/", "w", ">"]), min_size=2, max_size=5, unique=True))
    plain = list(alphabet)
    final = [char + suffix for char in alphabet]
    vocab = {symbol: index for index, symbol in enumerate(plain + final)}
    merges = []
    for kind, left, right in draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 60), st.integers(0, 60)), max_size=40)):
        lefts, rights = (plain, plain) if kind < 2 else (plain, final) if kind < 4 else (final, plain + final)
        pair = (lefts[left % len(lefts)], rights[right % len(rights)])
        if pair not in merges:
            merges.append(pair)
            vocab.setdefault(pair[0] + pair[1], len(vocab))
            (plain if kind < 2 else final).append(pair[0] + pair[1])
    for token in draw(st.lists(st.sampled_from(["ab</w>", "</w>", "a</w></w>", "é</w>"]), max_size=2)):
        vocab.setdefault(token, len(vocab))  # tokens no merge makes
    if draw(st.booleans()):
        merges = draw(st.permutations(merges))
    return models.BPE(vocab, merges, end_of_word_suffix=suffix)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(suffixed_merge_tables(), st.lists(st.lists(st.sampled_from(["a", "b", "é", "<", "w"]), max_size=8).map("".join), max_size=4))
def test_a_word_whose_text_and_suffix_is_a_token_is_it_only_when_its_merges_make_it(model, words) -> None:
    # Every token ending in the suffix as a word without it (the encoder proves or disproves
    # that the merges of its symbols make that token, memoized per token, in a random order),
    # every other token as a word too, and random words.
    vocab = sorted(model.get_vocab(), key=len)
    stems = [token[: -len("</w>")] for token in vocab if token.endswith("</w>") and len(token) > len("</w>")]
    order = words + stems[::-1] + vocab + stems + words
    encode = bpe_word_encoder(model)
    for word in order:
        assert encode(word) == _model_word_entry(model, word), (word, model.to_dict()["merges"])


def test_a_token_with_the_suffix_not_made_from_the_words_symbols_is_merged_as_any_word() -> None:
    vocab = {
        "a": 0, "b": 1, "<": 2, "/": 3, "w": 4, ">": 5, "a</w>": 6, "b</w>": 7,
        "</": 8, "</w": 9, "</w>": 10, "ab": 11, "ab</w>": 12, "a</w>b</w>": 13, "bb</w>": 14, "ba</w>": 15,
    }
    merges = [("<", "/"), ("</", "w"), ("</w", ">"), ("a", "b"), ("ab", "</w>"), ("a</w>", "b</w>"), ("b", "b</w>")]
    encode = bpe_word_encoder(models.BPE(vocab, merges, end_of_word_suffix="</w>"))
    # 'ab</w>' is ab + '</w>' (the suffix's chars), but the word 'ab' starts as a, 'b</w>'.
    assert encode("ab") == ((0, 7), ("a", "b</w>"), (0, 1), (1, 2))
    # 'a</w>b</w>' holds the suffix inside: the word 'a</w>b' is chars and 'b</w>'.
    assert encode("a</w>b") == ((0, 10, 7), ("a", "</w>", "b</w>"), (0, 1, 5), (1, 5, 6))
    # 'ba</w>' is in the vocabulary, but no merge makes it
    assert encode("ba") == ((1, 6), ("b", "a</w>"), (0, 1), (1, 2))
    # made from the word's symbols (b + 'b</w>'), with the suffix in the value, not the offsets
    assert encode("bb") == ((14,), ("bb</w>",), (0,), (2,))
    assert encode("b") == ((7,), ("b</w>",), (0,), (1,))


def test_a_word_is_not_its_longest_tokens_from_the_left() -> None:
    model = models.BPE({"a": 0, "b": 1, "c": 2, "bc": 3, "ab": 4, "d": 5}, [("b", "c"), ("a", "b")])
    for encode in first_and_later_passes(model):
        # 'abc': the longest token from the left is 'ab', but b + c (rank 0) merges first: a, bc.
        assert encode("abc") == ((0, 3), ("a", "bc"), (0, 1), (1, 3))
        assert encode("abcd") == ((0, 3, 5), ("a", "bc", "d"), (0, 1, 3), (1, 3, 4))
        assert encode("abd") == ((4, 5), ("ab", "d"), (0, 2), (2, 3))
        assert encode("dab") == ((5, 4), ("d", "ab"), (0, 1), (1, 3))
        assert encode("cab") == ((2, 4), ("c", "ab"), (0, 1), (1, 3))
        # one char that is not a token, and a word with an unknown char (no unk token: dropped)
        assert encode("x") == ((), (), (), ())
        assert encode("abx") == _model_word_entry(model, "abx")


def test_a_word_longer_than_the_list_merge_limit_merges_through_the_heap() -> None:
    model = models.BPE({"a": 0, "b": 1, "ab": 2, "abab": 3}, [("a", "b"), ("ab", "ab")])
    word = "ab" * 300 + "a"
    assert bpe_word_encoder(model)(word) == _model_word_entry(model, word)
    assert bpe_word_encoder(model)(word)[0] == (3,) * 150 + (0,)


# ---------------------------------------------------------------- byte-level words
SYMBOLS = list(BYTES_TO_UNICODE.values())
TEXT_CHARS = ["a", "b", "c", " ", "  ", "\t", "\n", "é", "中", "😀", "!", "'s", "1", "\x00", "\u3000", "ab", " ab", "Ġ"]
TEXT = st.lists(st.sampled_from(TEXT_CHARS), max_size=14).map("".join)


@st.composite
def byte_level_tokenizers(draw):
    vocab = {symbol: index for index, symbol in enumerate(SYMBOLS)}
    # Mostly pieces of the text below ('é' is 'Ã©', '中' is 'ä¸Ń', a tab 'ĉ'), so most words merge.
    pieces = ["a", "b", "Ġ", "Ã", "©", "ä", "¸", "Ń", "ĉ", "'", "s", "a", "b", "Ġ"]
    useful = [("a", "b"), ("Ġ", "ab"), ("Ġ", "a"), ("Ġa", "b"), ("Ã", "©"), ("'", "s"), ("Ġ", "Ġ"), ("ä", "¸"), ("ä¸", "Ń")]
    drawn = draw(st.lists(st.sampled_from(useful), unique=True)) + draw(
        st.lists(st.tuples(st.sampled_from(pieces), st.sampled_from(pieces)), max_size=30)
    )
    merges = []
    for left, right in drawn:
        if (left, right) not in merges and left in vocab and right in vocab:
            merges.append((left, right))
            vocab.setdefault(left + right, len(vocab))
            pieces.append(left + right)
    tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=draw(st.booleans())))
    add_prefix_space = draw(st.booleans())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    # Mostly ByteLevel with trimmed offsets: the lane then uses the entries' trimmed offsets.
    trimming = processors.ByteLevel(trim_offsets=True, add_prefix_space=add_prefix_space)
    tok.post_processor = draw(st.sampled_from([
        trimming, trimming, trimming, None, processors.ByteLevel(trim_offsets=False),
        processors.RobertaProcessing(("</s>", 0), ("<s>", 1)),
    ]))
    return tok


@settings(max_examples=300, deadline=None, derandomize=True)
@given(byte_level_tokenizers(), st.lists(TEXT, min_size=1, max_size=4))
def test_byte_level_lane_equals_the_general_path_and_hf(tok, texts) -> None:
    hf = pytest.importorskip("tokenizers")
    general = Tokenizer.from_str(tok.to_str())
    general.use_fast_path = False
    peer = hf.Tokenizer.from_str(tok.to_str())
    for text in texts + texts:  # cold, then warm from the word cache
        fast = tok.encode(text)
        slow = general.encode(text)
        fields = (fast.ids, fast.tokens, fast.offsets, fast.word_ids)
        assert fields == (slow.ids, slow.tokens, slow.offsets, slow.word_ids), text
        theirs = peer.encode(text)
        assert (list(fast.ids), list(fast.tokens), [tuple(o) for o in fast.offsets]) == (
            theirs.ids, theirs.tokens, theirs.offsets
        ), (text, json.loads(tok.to_str())["model"]["merges"])


def test_a_loaded_byte_level_tokenizer_encodes_with_the_word_encoder_its_load_made() -> None:
    # The load makes the encoding plan, its word encoder and the tables its proofs start from;
    # byte-level words are encoded with that encoder (one set of proofs).
    vocab = {symbol: index for index, symbol in enumerate(SYMBOLS)}
    vocab.update({"ab": 256, "Ġab": 257, "Ġa": 258})
    model = models.BPE(vocab, [("a", "b"), ("Ġ", "ab"), ("Ġ", "a")])
    built = Tokenizer(model)
    built.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    loaded = Tokenizer.from_str(built.to_str())
    encoder = loaded._engine().cut().bpe
    producer = dict(zip(encoder.__code__.co_freevars, encoder.__closure__))["producer"].cell_contents
    assert producer == {256: (vocab["a"], vocab["b"]), 257: (vocab["Ġ"], 256), 258: (vocab["Ġ"], vocab["a"])}
    assert loaded.encode("ab ab a").ids == [256, 257, 258]
    assert _proof_memo(encoder)[257] == 1  # 'Ġab' proven by the merge of rank 1, in that encoder
    # StarCoder's pre-tokenizer (Digits, then ByteLevel): the same, its encoder made at load too.
    built.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)])
    loaded = Tokenizer.from_str(built.to_str())
    encoder = loaded._engine().cut().bpe
    assert len(dict(zip(encoder.__code__.co_freevars, encoder.__closure__))["producer"].cell_contents) == 3
    assert loaded.encode("ab1 ab").ids == [256, vocab["1"], 257]


@pytest.fixture(scope="module")
def converted_sentencepiece(tmp_path_factory, read_shared_corpus):
    """A SentencePiece BPE model trained on real text, as a tokenizer.json lists it: its vocab,
    its merges (every split of a token into two tokens) and the words of other real text."""
    spm = pytest.importorskip("sentencepiece")
    from pathlib import Path

    from tokviz.sentencepiece.convert import bpe_merges

    tmp_path = tmp_path_factory.mktemp("spm")
    text = read_shared_corpus("big.txt")[:300_000]
    (tmp_path / "train.txt").write_text(text, encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(tmp_path / "train.txt"), model_prefix=str(tmp_path / "m"), model_type="bpe", vocab_size=3000,
        byte_fallback=True, normalization_rule_name="identity", minloglevel=2, num_threads=1,
    )
    processor = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    pieces = [(processor.id_to_piece(i), processor.get_score(i)) for i in range(processor.get_piece_size())]
    vocab = {piece: index for index, (piece, _) in enumerate(pieces)}
    merges = bpe_merges(pieces)
    other = read_shared_corpus("tinyshakespeare.txt")[:60_000]
    words = sorted({"▁" + word for word in other.split()} | {"▁" + word for word in text[:20_000].split()})
    return vocab, merges, words


def test_word_encoder_on_a_converted_sentencepiece_model_equals_hf(converted_sentencepiece) -> None:
    # A tokenizer.json made from a SentencePiece BPE model lists every split of a token into two
    # tokens as a merge (HF's SentencePieceExtractor, tokviz.sentencepiece.convert.bpe_merges), so
    # most tokens are made by several merges; the word encoder proves a word that is one token by
    # whichever of them the merges take. Its tokens must be HF's on every word of real text.
    hf = pytest.importorskip("tokenizers")
    vocab, merges, words = converted_sentencepiece
    assert len(merges) > len(vocab)  # (several merges per token: the case this test is about)
    hf_model = hf.models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    encode = bpe_word_encoder(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    for word in words:
        ids, values, starts, ends = encode(word)
        tokens = hf_model.tokenize(word)
        assert list(ids) == [t.id for t in tokens], word
        assert list(values) == [t.value for t in tokens], word


def test_proving_words_leaves_only_their_entries_for_the_collector(converted_sentencepiece) -> None:
    # A cold encode proves thousands of tokens; what it keeps per token (the rank of its merge
    # and that merge's pair, the merge table's own key) must be nothing the cycle collector
    # tracks, or the collections it sets off cost more than the proofs (a tuple per token made
    # a full collection land in the bench's Llama-style cold pass). A word that is one token
    # leaves three tracked objects: its entry, the ids and the values (the offsets are shared).
    # (Proofs are for files with one merge per token: the first of each token's merges here.
    # Where a file lists several, as this converted one does, every word is merged.)
    vocab, merges, words = converted_sentencepiece
    made = set()
    first_merges = [pair for pair in merges if pair[0] + pair[1] not in made and not made.add(pair[0] + pair[1])]
    assert len(first_merges) <= len(vocab) < len(merges)

    def model():
        return models.BPE(vocab, first_merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)

    one_token = bpe_word_encoder(model())
    singles = [word for word in words if word in vocab and len(word) > 3 and len(one_token(word)[0]) == 1]
    assert len(singles) > 300
    encode = bpe_word_encoder(model())
    encode(singles[0])  # (builds the tables of merges once)
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        entries = [encode(word) for word in singles[1:]]
        tracked = gc.get_count()[0] - before
    finally:
        gc.enable()
    assert all(len(entry[0]) == 1 for entry in entries)
    # (+10: the list and the interpreter's own; a tuple per proven token would be ~1,400 more)
    assert tracked <= 3 * len(entries) + 10


def test_a_converted_sentencepiece_model_proves_tokens_once_its_word_caches_are_cleared(converted_sentencepiece) -> None:
    # Such a file merges its words on a first pass (a proof costs more than merging a word once)
    # and proves tokens, memoized, once its caches are cleared and the same words come again.
    # The tokens are HF's either way.
    hf = pytest.importorskip("tokenizers")

    vocab, merges, words = converted_sentencepiece
    options = {"unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True}
    hf_model = hf.models.BPE(vocab, merges, **options)
    tokenizer = Tokenizer(models.BPE(vocab, merges, **options))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    plan = tokenizer._engine().cut()
    encode = plan.bpe
    proven = dict(zip(encode.__code__.co_freevars, encode.__closure__))["made_get"].cell_contents.__self__  # (the memo)
    expected = [[token.id for token in hf_model.tokenize(word)] for word in words]
    assert [list(encode(word)[0]) for word in words] == expected
    assert not proven
    tokenizer.model._clear_cache()
    assert tokenizer._engine().cut() is plan  # (the plans follow the model's caches: emptied, kept)
    assert [list(encode(word)[0]) for word in words] == expected
    assert len(proven) > 1000


def _llama_like(vocab, merges, hf=None):
    # Llama 2's pipeline: Prepend and Replace normalizers, no pre-tokenizer, byte fallback.
    lib = hf if hf is not None else __import__("tokviz")
    tokenizer = lib.Tokenizer(lib.models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tokenizer.normalizer = lib.normalizers.Sequence([lib.normalizers.Prepend("▁"), lib.normalizers.Replace(" ", "▁")])
    return tokenizer


def test_words_of_a_sentencepiece_vocabulary_are_cut_between_letters_and_other_chars(converted_sentencepiece, read_shared_corpus) -> None:
    # SentencePiece never makes a piece of letters and punctuation, so the merges of "▁you," are
    # those of "▁you" and ","; the fast path cuts there and caches "▁you" once for all of them.
    # Where a merge joins a letter to a comma (an added "u," token), words stay whole. HF's
    # tokens and offsets either way, on real text (the first call of each line cold).
    hf = pytest.importorskip("tokenizers")
    from pathlib import Path


    vocab, merges, _ = converted_sentencepiece
    joined_vocab = {**vocab, "u,": len(vocab)}
    lines = [line for line in read_shared_corpus("tinyshakespeare.txt")[60_000:90_000].splitlines() if line][:400]
    lines += ["you, (you) you.\n²you_ ½x «a»", "x\u00a0y\x00z ,,a..b", "km². a²,"]
    for table, merge_list, cut in ((vocab, merges, True), (joined_vocab, [*merges, ("u", ",")], False)):
        ours, theirs = _llama_like(table, merge_list), _llama_like(table, merge_list, hf)
        assert ours._engine().cut().run_findall("▁you,▁(you)") == (["▁you", ",", "▁(", "you", ")"] if cut else ["▁you,", "▁(you)"])
        for line in lines:
            mine, expected = ours.encode(line), theirs.encode(line)
            assert (mine.ids, mine.offsets) == (expected.ids, expected.offsets), (line, cut)
        words = ours._engine().cut().words
        assert ("▁you" in words and "▁you," not in words) is cut


def test_letter_runs_cut_a_model_whose_made_tokens_are_all_letters() -> None:
    # No merged token holds a non-letter char (none is "mixed"): letters and other chars are
    # never merged together, so the cuts stand (they were refused: an empty list of mixed
    # tokens failed the check for a NUL inside one), and the pieces merge as the whole words.
    from tokviz.engine.bpe import bpe_word_encoder, letter_runs, word_pieces

    vocab = {c: i for i, c in enumerate(["<unk>", "a", "b", ",", "!", "▁", "ab", "▁a", "▁ab"])}
    model = models.BPE(vocab, [("a", "b"), ("▁", "a"), ("▁a", "b")], unk_token="<unk>")
    assert letter_runs(model, "▁", "") == "▁*(?:[^\\W_]+|(?:[^\\w▁]|_)+)|▁+"
    pieces = word_pieces(model)
    assert pieces("▁ab,!▁ab▁a!b") == ["▁ab", ",!", "▁ab", "▁a", "!", "b"]
    encode = bpe_word_encoder(model)
    for word in ["▁ab,!▁ab▁a!b", "▁a,b!", "ab!!▁,"]:
        whole = [token.id for token in model.tokenize(word)]
        assert [token_id for piece in pieces(word) for token_id in encode(piece)[0]] == whole, word


def test_letter_runs_refuse_a_made_token_holding_the_unk_or_an_ascii_letter_beside_another_char() -> None:
    # The refusals found early (the unk's holders in the joined vocabulary, the first ASCII
    # crossing) give what the full pass over the made tokens gives.
    from tokviz.engine.bpe import joined_tokens, letter_runs

    base = {c: i for i, c in enumerate(["<unk>", "a", "b", ",", "▁", "ab", "▁a", ",,", "▁<unk>"])}
    cases = (
        ([("a", "b"), ("▁", "a"), (",", ",")], "▁*(?:[^\\W_]+|(?:[^\\w▁]|_)+)|▁+"),  # "▁<unk>" a token no merge makes
        ([("a", "b"), ("▁", "a"), (",", ","), ("▁", "<unk>")], None),  # ... and one a merge makes
        ([("a", "b"), ("▁", "a"), (",", ","), ("b", ",")], None),  # "b," joins an ASCII letter to a comma
    )
    for merges, expected in cases:
        vocab = {**base, "b,": len(base)}
        model = models.BPE(vocab, merges, unk_token="<unk>")
        assert letter_runs(model, "▁", "") == letter_runs(model, "▁", "", joined_tokens(vocab)) == expected, merges
