"""A SentencePiece model as a tokviz Tokenizer (as HF's converters build it) and back."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

from tokviz.sentencepiece import from_model_bytes, to_model_bytes  # noqa: E402
from tokviz.sentencepiece.model_proto import ModelProto  # noqa: E402



@pytest.fixture(scope="module")
def lines(read_shared_corpus) -> tuple[list[str], list[str]]:
    text = read_shared_corpus("big.txt").split("\n")
    return text[:4000], [line for line in text[-300:] if line.strip()]


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
@pytest.mark.parametrize("byte_fallback", [False, True])
def test_converted_tokenizer_matches_hf_and_round_trips(model_type: str, byte_fallback: bool, lines: tuple) -> None:
    train, test = lines
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=out, vocab_size=1200, model_type=model_type,
                                   byte_fallback=byte_fallback, user_defined_symbols=["<x>"], minloglevel=2)
    ref = spm.SentencePieceProcessor(model_proto=out.getvalue())
    tok = from_model_bytes(out.getvalue())
    hf = tokenizers.Tokenizer.from_str(tok.to_str())  # our tokenizer.json loads in HF and encodes the same
    for line in test + ["x <x> y", "ǅ é 🤗"]:
        ids = tok.encode(line).ids
        assert hf.encode(line).ids == ids, line
        if "<x>" in line:
            # HF splits added tokens off before normalizing, sentencepiece inside the normalized
            # text: ['▁x', '▁', '<x>', '▁y'] there, the pieces around '<x>' cut apart here
            assert "<x>" in tok.encode(line).tokens and "<x>" in ref.encode_as_pieces(line)
            continue
        assert ids == ref.encode(line), line
        if byte_fallback:
            assert tok.decode(ids) == ref.decode(ref.encode(line)), line
    back = to_model_bytes(tok)
    again = spm.SentencePieceProcessor(model_proto=back)
    assert [again.id_to_piece(i) for i in range(again.get_piece_size())] == [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    assert all(again.encode(line) == ref.encode(line) for line in test)
    proto = ModelProto.from_bytes(back)
    assert proto.normalizer_spec.name == "nmt_nfkc" and proto.trainer_spec.byte_fallback is byte_fallback


def test_unigram_conversion_encodes_like_sentencepiece(lines: tuple) -> None:
    train, test = lines
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=out, vocab_size=1200, model_type="unigram",
                                   minloglevel=2)
    ref = spm.SentencePieceProcessor(model_proto=out.getvalue())
    tok = from_model_bytes(out.getvalue())
    assert [line for line in test if tok.encode(line).ids != ref.encode(line)] == []


# -- Llama 2-style models: whitespace kept, whitespace-only pieces, byte fallback --------------------------

WHITESPACE_TEXTS = ["x  y", "x     y", "  lead", "trail  ", "a\tb\n\nc", "def f(x):\n    return x  + 1\n",
                    "\n\n  \t x", "", " ", "    if a:\n        b = 2\t# tab", "héllo wörld 藤 ✓ 123456"]


@pytest.fixture(scope="module")
def llama_style(lines: tuple) -> bytes:
    train, _ = lines
    code = ["def f(x):\n    return x  + 1", "    if a:\n        b = 2\t# tab", "x  y   z    w"] * 50
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train + code), model_writer=out, vocab_size=1500, model_type="bpe",
                                   normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   allow_whitespace_only_pieces=True, byte_fallback=True, split_digits=True, minloglevel=2)
    return out.getvalue()


def test_llama_style_model_keeps_runs_of_spaces_like_sentencepiece(llama_style: bytes, lines: tuple) -> None:
    ref = spm.SentencePieceProcessor(model_proto=llama_style)
    tok = from_model_bytes(llama_style)
    assert ref.encode("x  y", out_type=str) == ["▁x", "▁", "▁y"]  # as Llama 2 encodes it
    for text in WHITESPACE_TEXTS + lines[1][:100]:
        assert tok.encode(text).tokens == ref.encode(text, out_type=str), text
        assert tok.decode(tok.encode(text).ids) == ref.decode(ref.encode(text)), text
    assert tok.encode("x  y").tokens == ["▁x", "▁", "▁y"]  # as sentencepiece: the app shows no <s> ...
    assert tok.transformers_post_processor.process_encodings  # ... its transformers folder adds it (next test)
    assert tok.pre_tokenizer is None  # '▁▁' pieces: no cut before each '▁'


def test_normalizer_follows_every_spec_field(llama_style: bytes) -> None:
    from tokviz.sentencepiece.convert import normalizer_from_spec

    base = ModelProto.from_bytes(llama_style)
    texts = ["  x  y ", "a\t b\n", "ａｂ  c", "", "   "]
    for rule in ("identity", "nmt_nfkc"):
        for flags in [(a, r, e) for a in (False, True) for r in (False, True) for e in (False, True)]:
            from tokviz.sentencepiece.normalizer import charsmap_for_rule

            spec = base.normalizer_spec.replace(name=rule, precompiled_charsmap=charsmap_for_rule(rule), add_dummy_prefix=flags[0],
                                                remove_extra_whitespaces=flags[1], escape_whitespaces=flags[2])
            ref = spm.SentencePieceNormalizer(normalizer_spec=spec.to_bytes())
            ours = normalizer_from_spec(spec)
            for text in texts:
                assert ours.normalize_str(text) == ref.normalize(text), (rule, flags, text)


def test_transformers_folder_matches_llama_tokenizer_fast(llama_style: bytes, tmp_path: Path) -> None:
    """The folder tokviz writes loads in transformers and adds '<s>' as LlamaTokenizerFast does on the same file."""
    import json

    transformers = pytest.importorskip("transformers")
    from tokviz.export import save_pretrained

    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "tokenizer.model").write_bytes(llama_style)
    (reference / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": True, "add_eos_token": False}))
    llama = transformers.LlamaTokenizerFast.from_pretrained(str(reference))
    save_pretrained(from_model_bytes(llama_style), tmp_path / "ours")
    ours = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "ours"))
    for text in ["x  y", "Hello world. It was fine.", "def f(x):\n    return x  + 1\n", "héllo 藤 123456", "a\tb\n\nc"]:
        assert ours(text)["input_ids"] == llama(text)["input_ids"], text
        assert ours(text)["input_ids"][0] == llama.bos_token_id
        assert ours.decode(ours(text)["input_ids"], skip_special_tokens=True) == text
