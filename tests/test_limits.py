"""Memory bounds on uploads (issue 18 item 4): every tokenizer file is refused before it can hold more
than the limits of ``tokviz.limits`` allow — vocabulary entries, merges, added tokens, token length,
Unigram prefix characters, JSON values — each at its limit accepted, one above refused with a sentence
naming the limit and the value. The limits are lowered here (monkeypatch) so the files stay tiny.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

import tokviz
import tokviz.limits
import tokviz.loaders
import tokviz.tokenizer_json
from tokviz.errors import LimitExceededError
from tokviz.loaders import load_bytes


def tokenizer_json(model: dict, added: list[dict] | None = None) -> bytes:
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added or [], "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None, "model": model,
    }).encode()


def wordlevel(n: int) -> bytes:
    return tokenizer_json({"type": "WordLevel", "vocab": {f"w{i}": i for i in range(n)}, "unk_token": "w0"})


def bpe(n_merges: int) -> bytes:
    vocab = {"a": 0, "b": 1}
    merges = []
    for i in range(n_merges):  # a + b, a + ab, a + aab, ...
        left, right = "a", "a" * i + "b"
        vocab[left + right] = len(vocab)
        merges.append(f"{left} {right}")
    return tokenizer_json({"type": "BPE", "vocab": vocab, "merges": merges, "unk_token": None})


def unigram(pieces: list[str]) -> bytes:
    return tokenizer_json({"type": "Unigram", "vocab": [["<unk>", 0.0]] + [[p, -1.0 - i] for i, p in enumerate(pieces)],
                           "unk_id": 0})


def added(n: int) -> bytes:
    return tokenizer_json(
        {"type": "WordLevel", "vocab": {"w": 0}, "unk_token": "w"},
        [{"id": i + 1, "content": f"<x{i}>", "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": True} for i in range(n)],
    )


def rank_file(extra: list[bytes]) -> bytes:
    tokens = [bytes([b]) for b in range(256)] + extra
    return b"".join(base64.b64encode(t) + b" %d\n" % rank for rank, t in enumerate(tokens))


def limit(monkeypatch, name: str, value: int) -> None:
    monkeypatch.setattr(tokviz.limits, name, value)


def refused(match: str, name: str, data: bytes, **options):
    with pytest.raises(LimitExceededError, match=match):
        load_bytes(name, data, **options)


# ---------------------------------------------------------------------- vocabulary entries
def test_tokenizer_json_vocab_entries(monkeypatch):
    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 3)
    assert load_bytes("tokenizer.json", wordlevel(3)).encode("w1 w2").ids == [1, 2]
    refused(r"tokenizer.json has 4 vocabulary entries, above this server's limit of 3 per tokenizer "
            r"\(TOKVIZ_MAX_TOKENIZER_VOCAB\)", "tokenizer.json", wordlevel(4))


def test_vocab_txt_entries(monkeypatch):
    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 3)
    assert load_bytes("vocab.txt", b"[UNK]\nhi\n##s\n").encode("his").tokens == ["hi", "##s"]
    refused("This vocab.txt has 4 vocabulary entries, above this server's limit of 3", "vocab.txt", b"[UNK]\nhi\n##s\nyo")


def test_vocab_json_entries_and_merges_txt(monkeypatch):
    vocab = json.dumps({"a": 0, "b": 1, "ab": 2}).encode()
    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 3)
    limit(monkeypatch, "MAX_TOKENIZER_MERGES", 1)
    tok = load_bytes("vocab.json", vocab, companion=("merges.txt", b"#version: 0.2\na b\n"))
    assert tok.encode("ab").tokens == ["ab"]
    refused("This merges.txt has 2 merges, above this server's limit of 1 per tokenizer", "vocab.json", vocab,
            companion=("merges.txt", b"#version: 0.2\na b\nab b\n"))
    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 2)
    refused("This vocab.json has 3 vocabulary entries, above this server's limit of 2", "vocab.json", vocab,
            companion=("merges.txt", b"#version: 0.2\na b\n"))


def test_tiktoken_ranks_counted_before_parsing(monkeypatch):
    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 257)
    assert load_bytes("mine.tiktoken", rank_file([b"hi"]), tiktoken_encoding="gpt2").encode("hi").tokens == ["hi"]
    monkeypatch.setattr(tokviz.loaders.base64, "b64decode", lambda *a, **k: pytest.fail("decoded before counting"))
    refused("This tiktoken file has 258 vocabulary entries, above this server's limit of 257", "mine.tiktoken",
            rank_file([b"hi", b"yo"]), tiktoken_encoding="gpt2")


def test_sentencepiece_pieces_counted_before_reading(monkeypatch):
    spm = pytest.importorskip("sentencepiece")
    import io

    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there", "a world of words"] * 20),
                                   model_writer=proto, vocab_size=16, model_type="unigram", minloglevel=2)
    data = proto.getvalue()
    assert tokviz.loaders.sentencepiece_piece_lengths(data)[:3] == [5, 3, 4]  # <unk>, <s>, </s>
    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 16)
    assert load_bytes("spiece.model", data).get_vocab_size() == 16
    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 15)
    monkeypatch.setattr(tokviz.loaders.importlib, "import_module", lambda *a: pytest.fail("read before counting"))
    refused("This SentencePiece model has 16 vocabulary entries, above this server's limit of 15", "spiece.model", data)


# ---------------------------------------------------------------------- merges, added tokens
def test_tokenizer_json_merges(monkeypatch):
    limit(monkeypatch, "MAX_TOKENIZER_MERGES", 3)
    assert load_bytes("tokenizer.json", bpe(3)).encode("aaab").tokens == ["aaab"]
    refused("tokenizer.json has 4 merges, above this server's limit of 3 per tokenizer "
            r"\(TOKVIZ_MAX_TOKENIZER_MERGES\)", "tokenizer.json", bpe(4))


def test_tiktoken_derived_merges(monkeypatch):
    ranks = rank_file([b"hi", b"his", b"hiss"])  # merges: h+i, hi+s, his+s
    limit(monkeypatch, "MAX_TOKENIZER_MERGES", 3)
    assert load_bytes("x.tiktoken", ranks, tiktoken_encoding="gpt2").encode("hiss").tokens == ["hiss"]
    limit(monkeypatch, "MAX_TOKENIZER_MERGES", 2)
    refused(r"This tiktoken file \(counting every split of its tokens\) has 3 merges, above this server's limit of 2",
            "x.tiktoken", ranks, tiktoken_encoding="gpt2")


def test_added_tokens(monkeypatch):
    limit(monkeypatch, "MAX_ADDED_TOKENS", 2)
    assert load_bytes("tokenizer.json", added(2)).encode("<x1>").ids == [2]
    refused(r"tokenizer.json has 3 added tokens, above this server's limit of 2 per tokenizer \(TOKVIZ_MAX_ADDED_TOKENS\)",
            "tokenizer.json", added(3))


# ---------------------------------------------------------------------- token length, Unigram prefixes
def test_token_length(monkeypatch):
    limit(monkeypatch, "MAX_TOKEN_CHARS", 5)
    assert load_bytes("vocab.txt", b"[UNK]\nhello\n").encode("hello").tokens == ["hello"]
    refused("This vocab.txt has a token of 6 characters, above this server's limit of 5 characters per token",
            "vocab.txt", b"[UNK]\nhellos\n")
    refused("tokenizer.json has a token of 6 characters", "tokenizer.json", unigram(["hellos"]))
    refused("tokenizer.json has a token of 6 characters", "tokenizer.json", added(0).replace(b'"w"', b'"wwwwww"'))
    refused("This tiktoken file has a token of 6 bytes, above this server's limit of 5 bytes per token",
            "x.tiktoken", rank_file([b"hellos"]), tiktoken_encoding="gpt2")


def test_unigram_prefix_characters(monkeypatch):
    # "<unk>" 10 + "abcd" 6 + "xyz" 3 = 19 prefix characters
    limit(monkeypatch, "MAX_UNIGRAM_PREFIX_CHARS", 19)
    assert load_bytes("tokenizer.json", unigram(["abcd", "xyz"])).encode("abcd").tokens == ["abcd"]
    limit(monkeypatch, "MAX_UNIGRAM_PREFIX_CHARS", 18)
    refused(r"tokenizer.json has 19 characters in the prefixes of its pieces, above this server's limit of 18 per "
            r"tokenizer \(TOKVIZ_MAX_UNIGRAM_PREFIX_CHARS\)", "tokenizer.json", unigram(["abcd", "xyz"]))


# ---------------------------------------------------------------------- the parse itself, and order
def test_json_values_are_counted_before_parsing(monkeypatch):
    data = wordlevel(3)
    count = tokviz.limits.json_value_count(data)
    limit(monkeypatch, "MAX_JSON_VALUES", count)
    assert load_bytes("tokenizer.json", data).get_vocab_size() == 3
    limit(monkeypatch, "MAX_JSON_VALUES", count - 1)
    monkeypatch.setattr(tokviz.loaders.json, "loads", lambda *a, **k: pytest.fail("parsed before counting"))
    refused(f"tokenizer.json has {count:,} JSON values \\(counted before reading it\\), above this server's limit of "
            f"{count - 1:,} per file \\(TOKVIZ_MAX_JSON_VALUES\\)", "tokenizer.json", data)
    refused("This vocab.json has", "vocab.json", json.dumps({f"w{i}": i for i in range(count)}).encode(),
            companion=("merges.txt", b"a b\n"))


def test_json_value_count_bounds_the_parse():
    for text in ['{"a": [1, 2.5, "x,y"], "b": {"c": null}}', "[[], [[]], {}]", '["a:b", [{"k": [1]}]]']:
        values = 0
        stack = [json.loads(text)]
        while stack:
            value = stack.pop()
            values += 1
            if isinstance(value, dict):
                values += len(value)  # the keys
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
        assert values <= tokviz.limits.json_value_count(text), text


def test_sections_are_checked_before_the_model_is_built(monkeypatch):
    import tokviz.serialization

    limit(monkeypatch, "MAX_TOKENIZER_VOCAB", 3)
    monkeypatch.setattr(tokviz.serialization, "tokenizer_from_dict", lambda data: pytest.fail("built before checking"))
    refused("4 vocabulary entries", "tokenizer.json", wordlevel(4))


def test_default_limits_accept_real_sizes():
    """Real tokenizers fit the defaults: Gemma / XLM-R ~256k entries, o200k ~200k, added tokens in the thousands."""
    assert tokviz.limits.MAX_TOKENIZER_VOCAB >= 262_144
    assert tokviz.limits.MAX_TOKENIZER_MERGES >= 2 * 262_144
    assert tokviz.limits.MAX_ADDED_TOKENS >= 1_000
    # a 256k-piece SentencePiece model of 2-16 character pieces (lengths as in XLM-R: mostly 3-8)
    lengths = [2] * 20_000 + [4] * 100_000 + [6] * 100_000 + [8] * 30_000 + [16] * 6_000
    assert sum(n * (n - 1) // 2 for n in lengths) <= tokviz.limits.MAX_UNIGRAM_PREFIX_CHARS


def test_training_options_from_a_link_or_the_form_are_bounded() -> None:
    from tokviz.errors import LimitExceededError
    from tokviz.limits import check_training_options
    from tokviz.pipeline_config import PipelineConfig

    unigram = PipelineConfig(model="Unigram", special_tokens=("<unk>",), unk_token="<unk>")
    check_training_options(unigram, 800)  # the defaults pass
    for change, message in [
        ({"n_sub_iterations": 1_000_000_000}, "n_sub_iterations is 1,000,000,000, above this server's limit of 10"),
        ({"max_piece_length": 65}, "max_piece_length is 65, above this server's limit of 64"),
        ({"shrinking_factor": 0.9999}, "shrinking_factor is 0.9999, above this server's limit of 0.95"),
        ({"special_tokens": ("<unk>", "x" * 1_025)}, "The longest of the special tokens is 1,025, above this server's limit of 1,024"),
    ]:
        with pytest.raises(LimitExceededError, match=re.escape(message)):
            check_training_options(_replace(unigram, **change), 800)
    with pytest.raises(LimitExceededError, match="The vocab size is 10,000,000, above this server's limit of 50,000"):
        check_training_options(unigram, 10_000_000)
    bpe = PipelineConfig(model="BPE", continuing_subword_prefix="#" * 17)
    with pytest.raises(LimitExceededError, match="The length of continuing_subword_prefix is 17, above this server's limit of 16"):
        check_training_options(bpe, 800)


def _replace(config, **change):
    import dataclasses

    return dataclasses.replace(config, **change)


# ---------------------------------------------------------------------- the guarded JSON entry (issue 38)
def test_parse_json_refuses_long_numbers_but_not_long_digit_strings():
    assert tokviz.limits.parse_json('{"' + "7" * 500 + '": 1}') == {"7" * 500: 1}  # digits inside a string are text
    with pytest.raises(LimitExceededError, match=r"^x\.json has a number of 101 digits \(100000000000…\), above this server's limit of 100 digits"):
        tokviz.limits.parse_json('{"a": 1' + "0" * 100 + "}", "x.json")
    with pytest.raises(LimitExceededError, match="a number of 5,000 digits"):  # before Python's own 4,300-digit ValueError
        tokviz.limits.parse_json("[" + "9" * 5000 + "]", "x.json")


def test_parse_json_refuses_lone_surrogates_and_keeps_pairs_and_escaped_backslashes():
    assert tokviz.limits.parse_json(r'["\ud83d\ude00", "\\ud800"]') == ["\U0001f600", "\\ud800"]  # a pair; a backslash then text
    for text, shown in ((r'["a\ud800b"]', r"\ud800"), (r'["\udc00"]', r"\udc00"), (r'["\ude00\ud83d"]', r"\ude00"),
                        ('["ok",\n "\\\\\\ud800"]', r"\ud800")):
        with pytest.raises(LimitExceededError, match=r"^x\.json holds a lone surrogate \(" + re.escape(shown) + r", line \d\)"):
            tokviz.limits.parse_json(text, "x.json")


def test_parse_json_nesting_gives_one_sentence_whoever_finds_it():
    from tokviz.errors import NestingError, SerializationError

    for text in ('{"normalizer": ' + "[" * 50 + "]" * 50 + "}", "[" * 100_000 + "]" * 100_000):  # the walk's find, and the parser's
        with pytest.raises(NestingError, match=r"^t\.json is nested too deeply: more than 40 levels") as caught:
            tokviz.tokenizer_json.check_tokenizer_json_sections(tokviz.limits.parse_json(text, "t.json"), "t.json")
        assert isinstance(caught.value, SerializationError)


def test_token_ids_padding_and_pipeline_strings_are_bounded():
    model = {"type": "WordLevel", "vocab": {"a": 0, "b": 1}, "unk_token": "a"}
    check = tokviz.tokenizer_json.check_tokenizer_json_sections
    check({"model": model, "padding": {"strategy": {"Fixed": 512}}, "truncation": {"max_length": 131_072}}, "ok.json")
    with pytest.raises(LimitExceededError, match=r"uses the id 305,000 \(for 'b'\), outside this server's range of ids, 0 to 304,999"):
        check({"model": {**model, "vocab": {"a": 0, "b": 305_000}}}, "ids.json")
    with pytest.raises(LimitExceededError, match=r"uses the id 400,000, outside"):
        check({"model": model, "post_processor": {"type": "BertProcessing", "sep": ["a", 400_000], "cls": ["a", 0]}}, "pp.json")
    with pytest.raises(LimitExceededError, match=r"asks for a padding length of 131,073 tokens, outside this server's range of 0 to 131,072"):
        check({"model": model, "padding": {"strategy": {"Fixed": 131_073}}}, "pad.json")
    with pytest.raises(LimitExceededError, match=r"has a string of 1,025 characters in its pre-tokenizer \('Regex'\)"):
        check({"model": model, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a" * 1025}}}, "re.json")
    check({"model": model, "normalizer": {"type": "Precompiled", "precompiled_charsmap": "A" * 300_000}}, "spm.json")


def test_from_str_from_file_and_load_are_one_reader_with_one_sentence(tmp_path):
    from tokviz import Tokenizer

    text = tokenizer_json({"type": "WordLevel", "vocab": {"a": 0, "b\ud800": 1}, "unk_token": "a"}).decode()
    path = tmp_path / "tokenizer.json"
    path.write_text(text)
    sentence = "holds a lone surrogate (\\ud800, line 1): half of a UTF-16 pair is not a character, so it is not valid Unicode text."
    with pytest.raises(LimitExceededError) as from_str:
        Tokenizer.from_str(text)
    with pytest.raises(LimitExceededError) as from_file:
        Tokenizer.from_file(str(path))
    with pytest.raises(LimitExceededError) as load:
        tokviz.load(path)
    assert str(from_str.value) == "This tokenizer.json " + sentence
    assert str(from_file.value) == str(load.value) == "tokenizer.json " + sentence


# ---------------------------------------------------------------------- training histories: limits of their own
@pytest.fixture(scope="module")
def bpe_history() -> bytes:
    from tokviz import history_io
    from tokviz.presets import PRESETS
    from tokviz.training import run_training

    config = PRESETS["gpt2"].build()
    history = run_training(config, 257 + 60, ["Hugging Face tokenizers split words", "hugging faces and hugging words"] * 5)
    return history_io.dumps(history, config).encode()


def test_a_history_has_its_own_value_bound_not_the_tokenizer_json_one(monkeypatch, bpe_history):
    from tokviz.inspect import open_training

    values = tokviz.limits.json_value_count(bpe_history)
    limit(monkeypatch, "MAX_JSON_VALUES", 100)  # a tokenizer.json's bound: not a history's
    assert open_training(bpe_history, "h.json").history.algorithm == "BPE"
    limit(monkeypatch, "MAX_HISTORY_JSON_VALUES", values - 1)
    with pytest.raises(LimitExceededError, match=rf"^h\.json: This training history has {values:,} JSON values \(counted before reading it\), "
                                                 rf"above this server's limit of {values - 1:,} per file \(TOKVIZ_MAX_HISTORY_JSON_VALUES\)\.$"):
        open_training(bpe_history, "h.json")


def test_a_history_with_more_merges_than_its_bound_is_refused_before_its_records_are_built(monkeypatch, bpe_history):
    from tokviz import history_io
    from tokviz.inspect import open_training

    merges = len(history_io.loads(bpe_history).merges)
    limit(monkeypatch, "MAX_HISTORY_MERGES", merges)
    assert len(open_training(bpe_history, "h.json").history.merges) == merges
    limit(monkeypatch, "MAX_HISTORY_MERGES", merges - 1)
    monkeypatch.setattr(history_io, "_history_in", lambda *a: pytest.fail("records built before counting"))
    with pytest.raises(LimitExceededError, match=rf"^h\.json: This training history has {merges:,} merges, above this server's limit of "
                                                 rf"{merges - 1:,} per training history \(TOKVIZ_MAX_HISTORY_MERGES\)\.$"):
        open_training(bpe_history, "h.json")


# ---------------------------------------------------------------------- normalizer growth: cheap, and compounding counted
def test_replaces_below_the_factor_cannot_compound_past_the_bound():
    """Three Replace('a', 7 a's): each under 8x on its own, 343x together (the aligned path counted only contents of 8+)."""
    from tokviz import normalizers
    from tokviz.normalized import NormalizedString

    bomb = normalizers.Sequence([normalizers.Replace("a", "a" * 7)] * 3)
    assert normalizers.growth_bound(bomb) == (343, 0)
    sentence = r"^The normalizer Replace would make this text of 1,000 characters 49 times longer \(49,000 characters\)"
    with pytest.raises(LimitExceededError, match=sentence):
        bomb.normalize(NormalizedString("a" * 1_000))
    with pytest.raises(LimitExceededError, match=sentence):
        bomb.normalize_str("a" * 1_000)
    data = json.loads(wordlevel(2))
    data["normalizer"] = normalizers.Sequence([normalizers.Replace(" ", " " * 7)] * 3).to_dict()  # (the sample has spaces)
    refused(r"^bomb\.json: The normalizer Replace would make this text of [\d,]+ characters", "bomb.json", json.dumps(data).encode())


def test_a_pipeline_whose_growth_is_provably_bounded_is_not_tried_on_the_sample(monkeypatch):
    from tokviz import normalizers

    albert = normalizers.Sequence([normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.NFKD(),
                                   normalizers.StripAccents(), normalizers.Lowercase(),
                                   normalizers.Replace(normalizers.Regex(" {2,}"), " ")])
    assert normalizers.growth_bound(albert) == (2, 1)
    monkeypatch.setattr(normalizers.Sequence, "normalize", lambda *a: pytest.fail("tried on the sample"))
    normalizers.check_growth_on_sample(albert, "albert.json")
