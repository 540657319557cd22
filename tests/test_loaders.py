"""tokviz.load / loaders.load_bytes: each file kind against the library that defines it.

- .tiktoken: the converted BPE encodes as ``tiktoken`` itself does with the same ranks, for the
  split pattern of every known encoding.
- vocab.txt, vocab.json + merges.txt: the same ids as ``transformers``' fast tokenizers built from
  the same files (HF's converters), and tokenizer.json as HF ``tokenizers``.
- bad files: a TokvizError with a sentence, sizes refused before parsing.
"""

from __future__ import annotations

import base64
import io
import json

import pytest

import tokviz
from tokviz.byte_level import UNICODE_TO_BYTES
from tokviz.errors import LimitExceededError, TokvizError
from tokviz.loaders import (
    TokenizerFileError,
    file_kind,
    guess_tiktoken_encoding,
    load,
    load_bytes,
)
from tokviz.tiktoken_format import parse_tiktoken_ranks, tiktoken_encodings, tiktoken_vocab_and_merges

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def training_text(read_shared_corpus) -> list[str]:
    text = read_shared_corpus("wikitext2_valid.txt")[:150_000] + read_shared_corpus("grimm_tales.txt")[:50_000]
    return text.splitlines()


@pytest.fixture(scope="module")
def eval_lines(shared_corpus_lines, hard_strings) -> list[str]:
    return list(shared_corpus_lines[::3]) + [s for s in hard_strings if s]


@pytest.fixture(scope="module")
def hf_byte_bpe(training_text):
    """A byte-level BPE trained by HF tokenizers (its vocab doubles as a rank file)."""
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=1200, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(training_text, trainer)
    return tok


def rank_file(hf_tokenizer) -> bytes:
    """The HF model's vocab as a tiktoken rank file (rank = id; tokens as raw bytes)."""
    vocab = hf_tokenizer.get_vocab()
    lines = []
    for token, token_id in sorted(vocab.items(), key=lambda item: item[1]):
        raw = bytes(UNICODE_TO_BYTES[char] for char in token)
        lines.append(base64.b64encode(raw) + b" " + str(token_id).encode())
    return b"\n".join(lines) + b"\n"


# ---------------------------------------------------------------------- tiktoken
@pytest.mark.parametrize("encoding_name", ["gpt2", "cl100k_base", "o200k_base"])
def test_tiktoken_file_encodes_as_tiktoken(hf_byte_bpe, eval_lines, encoding_name):
    tiktoken = pytest.importorskip("tiktoken")
    data = rank_file(hf_byte_bpe)
    known = tiktoken_encodings()[encoding_name]
    ranks = parse_tiktoken_ranks(data)
    # Special ids must not collide with the small vocab: keep the encoding's (far above it).
    reference = tiktoken.Encoding(
        name="test", pat_str=known.tiktoken_pattern, mergeable_ranks=ranks, special_tokens=dict(known.special_tokens)
    )
    tok = load_bytes("mine.tiktoken", data, tiktoken_encoding=encoding_name)
    for line in eval_lines:
        assert tok.encode(line).ids == reference.encode_ordinary(line), line
    text = "Hello<|endoftext|>world"
    for tricky in ("3000 12345678 9", "a  \n\n  b \r\n", "x   ", "Don'T it's", "é\u0301 ÉCOLE/école"):
        assert tok.encode(tricky).ids == reference.encode_ordinary(tricky), tricky
    assert tok.encode(text).ids == reference.encode(text, allowed_special="all")
    assert tok.decode(reference.encode_ordinary("Grüße, 世界!")) == "Grüße, 世界!"


def test_tiktoken_tokenizer_json_loads_in_hf(hf_byte_bpe, eval_lines):
    tok = load_bytes("cl100k_base.tiktoken", rank_file(hf_byte_bpe))
    hf = tokenizers.Tokenizer.from_str(tok.to_str())
    for line in eval_lines[:80]:
        ours, theirs = tok.encode(line), hf.encode(line)
        assert (ours.ids, ours.offsets) == (theirs.ids, theirs.offsets), line


def test_tiktoken_conversion_worked_example():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abb": 257, b" a": 258}
    vocab, merges = tiktoken_vocab_and_merges(ranks)
    assert merges == [("a", "b"), ("ab", "b"), ("Ġ", "a")]
    assert vocab["Ġa"] == 258


def test_tiktoken_encoding_is_guessed_from_name_or_size():
    assert guess_tiktoken_encoding("o200k_base.tiktoken") == "o200k_base"
    assert guess_tiktoken_encoding("p50k_edit.tiktoken") == "p50k_edit"
    assert guess_tiktoken_encoding("p50k_base.tiktoken") == "p50k_base"
    assert guess_tiktoken_encoding("r50k_base.tiktoken") == "gpt2"
    assert guess_tiktoken_encoding("ranks.tiktoken", 100256) == "cl100k_base"
    assert guess_tiktoken_encoding("ranks.tiktoken", 50280) == "p50k_base"
    assert guess_tiktoken_encoding("ranks.tiktoken", 1234) is None


def test_tiktoken_unknown_encoding_asks_to_choose(hf_byte_bpe):
    with pytest.raises(TokenizerFileError, match="choose one of gpt2, p50k_base"):
        load_bytes("mine.tiktoken", rank_file(hf_byte_bpe))
    with pytest.raises(TokenizerFileError, match="Unknown tiktoken encoding 'cl99k'"):
        load_bytes("mine.tiktoken", rank_file(hf_byte_bpe), tiktoken_encoding="cl99k")


def test_tiktoken_bad_lines_are_reported():
    with pytest.raises(TokenizerFileError, match="line 2 does not hold a base64 token"):
        parse_tiktoken_ranks(b"IQ== 0\n!!! x\n")
    with pytest.raises(TokenizerFileError, match="lacks 255 of the 256 single bytes"):
        load_bytes("x.tiktoken", b"IQ== 0\n", tiktoken_encoding="gpt2")


# ---------------------------------------------------------------------- BERT vocab.txt
@pytest.mark.parametrize("lowercase", [True, False])
def test_bert_vocab_txt_matches_transformers(tmp_path, training_text, eval_lines, lowercase):
    transformers = pytest.importorskip("transformers")
    from tokenizers.implementations import BertWordPieceTokenizer

    trainer_tok = BertWordPieceTokenizer(lowercase=lowercase)
    trainer_tok.train_from_iterator(training_text, vocab_size=1500, show_progress=False)
    trainer_tok.save_model(str(tmp_path))
    vocab_path = tmp_path / "vocab.txt"
    reference = transformers.BertTokenizer.from_pretrained(str(tmp_path), do_lower_case=lowercase)
    tok = load(vocab_path)
    assert tok.normalizer.lowercase is lowercase
    for line in eval_lines:
        ours = tok.encode(line)
        theirs = reference(line)
        assert ours.ids == theirs["input_ids"], line
    assert tok.encode("a", "b").type_ids == reference("a", "b")["token_type_ids"]


def test_bert_vocab_without_unk_is_refused():
    with pytest.raises(TokenizerFileError, match="no \\[UNK\\] token"):
        load_bytes("vocab.txt", b"hello\nworld\n")


# ---------------------------------------------------------------------- GPT-2 vocab.json + merges.txt
def test_gpt2_files_match_transformers(tmp_path, hf_byte_bpe, eval_lines):
    transformers = pytest.importorskip("transformers")
    hf_byte_bpe.model.save(str(tmp_path))
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    reference = transformers.GPT2Tokenizer.from_pretrained(str(tmp_path))
    from_path = load(vocab_path)
    from_bytes = load_bytes("merges.txt", merges_path.read_bytes(), companion=("vocab.json", vocab_path.read_bytes()))
    for line in eval_lines:
        expected = reference(line)["input_ids"]
        assert from_path.encode(line).ids == expected, line
        assert from_bytes.encode(line).ids == expected, line


def test_half_a_gpt2_pair_asks_for_the_other_half(tmp_path):
    with pytest.raises(TokenizerFileError, match="add its merges.txt"):
        load_bytes("vocab.json", b'{"a": 0, "b": 1}')
    with pytest.raises(TokenizerFileError, match="add its vocab.json"):
        load_bytes("merges.txt", b"#version: 0.2\na b\n")
    with pytest.raises(TokenizerFileError, match="not a vocab.json and a merges.txt"):
        load_bytes("vocab.json", b'{"a": 0}', companion=("other.json", b'{"b": 0}'))


# ---------------------------------------------------------------------- tokenizer.json
def test_tokenizer_json_as_hf(tmp_path, hf_byte_bpe, eval_lines):
    path = tmp_path / "tokenizer.json"
    hf_byte_bpe.save(str(path))
    tok = load(path)
    folder_tok = load(tmp_path)  # a folder: its tokenizer.json
    assert isinstance(tok, tokviz.Tokenizer)
    for line in eval_lines[:60]:
        assert tok.encode(line).ids == hf_byte_bpe.encode(line).ids == folder_tok.encode(line).ids


def test_malformed_tokenizer_json_is_a_sentence():
    with pytest.raises(TokvizError, match="not a valid tokenizer.json"):
        load_bytes("tokenizer.json", b'{"model": ')


# ---------------------------------------------------------------------- kinds, sizes, SentencePiece
def test_file_kinds():
    assert file_kind("tokenizer.json", b'{"version":"1.0","truncation":null,"model":{}}') == "tokenizer.json"
    assert file_kind("vocab.json", b'{"a": 0}') == "vocab.json"
    assert file_kind("gpt2-vocab.json", b'{"model": 0, "normalizer": 1, "added_tokens": 2}') == "vocab.json"
    assert file_kind("renamed.json", b'{"version": "1.0", "truncation": null, "padding": null, "added_tokens": []}') == "tokenizer.json"
    assert file_kind("merges.txt", b"#version: 0.2\na b\n") == "merges.txt"
    assert file_kind("bert-base-uncased-vocab.txt", b"[PAD]\n[unused0]\n") == "vocab.txt"
    assert file_kind("cl100k_base.tiktoken", b"IQ== 0\n") == "tiktoken"
    assert file_kind("ranks", b"IQ== 0\nIg== 1\n") == "tiktoken"
    assert file_kind("spiece.model", b"\n\x0b\n\x05<unk>") == "sentencepiece"


def test_upload_size_limit_is_checked_before_parsing(monkeypatch):
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_UPLOAD_BYTES", 10)
    with pytest.raises(LimitExceededError, match="vocab.txt is 18 bytes, above this server's limit of up to 10 bytes per uploaded file"):
        load_bytes("vocab.txt", b"[UNK]\nhello\nworld\n")


def test_empty_and_non_utf8_files():
    with pytest.raises(TokenizerFileError, match="is empty"):
        load_bytes("vocab.txt", b"  \n")
    with pytest.raises(TokenizerFileError, match="not UTF-8"):
        load_bytes("vocab.txt", b"[UNK]\n\xff\xfe\n")


def test_load_is_exported_lazily():
    assert tokviz.load is load


def test_sentencepiece_model_encodes_as_sentencepiece(tmp_path, training_text, eval_lines):
    spm = pytest.importorskip("sentencepiece")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_text[:3000]), model_writer=model, vocab_size=800, model_type="unigram"
    )
    reference = spm.SentencePieceProcessor(model_proto=model.getvalue())
    tok = load_bytes("spiece.model", model.getvalue())
    # HF-style conversions match "<unk>", "<s>", "</s>" in the text as special tokens, sentencepiece spells them out.
    lines = [line for line in eval_lines if not any(control in line for control in ("<unk>", "<s>", "</s>"))]
    for line in lines[:80]:
        assert tok.encode(line, add_special_tokens=False).ids == reference.encode(line), json.dumps(line)


def test_load_uploads_pairs_gpt2_files_and_keeps_going(tmp_path, hf_byte_bpe):
    from tokviz.loaders import load_uploads

    hf_byte_bpe.model.save(str(tmp_path), "gpt2")  # gpt2-vocab.json, gpt2-merges.txt
    files = [
        ("gpt2-merges.txt", (tmp_path / "gpt2-merges.txt").read_bytes()),
        ("tokenizer.json", hf_byte_bpe.to_str().encode()),
        ("gpt2-vocab.json", (tmp_path / "gpt2-vocab.json").read_bytes()),
        ("tokenizer.json", b'{"model": '),
        ("mine.tiktoken", rank_file(hf_byte_bpe)),
    ]
    uploads = load_uploads(files, tiktoken_encodings_by_file={"mine.tiktoken": "gpt2"})
    assert [u.name for u in uploads] == ["tokenizer.json", "gpt2-vocab.json + gpt2-merges.txt", "tokenizer.json (2)", "mine.tiktoken"]
    assert [u.error is None for u in uploads] == [True, True, False, True]
    assert "not a valid tokenizer.json" in uploads[2].error
    text = "Hello there, general Kenobi."
    assert len({tuple(u.tokenizer.encode(text).ids) for u in uploads if u.tokenizer}) == 1


def test_model_files_are_handed_to_tokviz_sentencepiece(monkeypatch):
    """The dispatch itself, with a stand-in package: bytes in, its from_model_bytes' Tokenizer out."""
    import sys
    import types

    from tokviz import Tokenizer, models

    received = []
    fake = types.ModuleType("tokviz.sentencepiece")

    def from_model_bytes(data):
        received.append(data)
        return Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>"))

    fake.from_model_bytes = from_model_bytes
    monkeypatch.setitem(sys.modules, "tokviz.sentencepiece", fake)
    tok = load_bytes("spiece.model", b"\n\x0b\n\x05<unk>")
    assert received == [b"\n\x0b\n\x05<unk>"] and tok.get_vocab() == {"<unk>": 0}


def test_model_files_are_read_by_the_one_sentencepiece_conversion():
    """A ``.model`` goes through ``tokviz.sentencepiece.convert.from_model_bytes`` after its pieces are counted."""
    import io

    spm = pytest.importorskip("sentencepiece")
    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there", "a world of words"] * 20),
                                   model_writer=proto, vocab_size=16, model_type="unigram", minloglevel=2)
    data = proto.getvalue()
    processor = spm.SentencePieceProcessor(model_proto=data)
    tok = load_bytes("spiece.model", data)
    assert tok.encode("hello words").ids == processor.encode("hello words")
    with pytest.raises(TokvizError, match=r"^spiece\.model: The \.model file is truncated"):
        load_bytes("spiece.model", data[:40])


def test_vocab_json_problems_are_said_not_dropped() -> None:
    """Non-integer ids were dropped without a word; a vocab.json holding a list was called 'not a tokenizer.json'."""
    from tokviz.loaders import TokenizerFileError, load_bytes

    merges = ("merges.txt", b"#version: 0.2\na b\n")
    with pytest.raises(TokenizerFileError, match=r"^vocab\.json: This vocab\.json holds a JSON list; a vocab\.json is a JSON object of token -> id"):
        load_bytes("vocab.json", b'["a", "b", "ab"]', companion=merges)
    with pytest.raises(TokenizerFileError, match=r"""^vocab\.json: This vocab\.json has 2 tokens whose id is not a whole number \('b': "1", 'ab': 2\.5\); every id must be one\.$"""):
        load_bytes("vocab.json", b'{"a": 0, "b": "1", "ab": 2.5}', companion=merges)
    assert load_bytes("vocab.json", b'{"a": 0, "b": 1, "ab": 2}', companion=merges).encode("ab").tokens == ["ab"]
