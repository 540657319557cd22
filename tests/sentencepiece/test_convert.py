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


# -- user-defined symbols: found in the normalized text, as sentencepiece does -----------------------------

SYMBOLS = ["<sep>", "[MASK]", "xyz"]
SYMBOL_TEXTS = ["<sep>", "<sep>hello", "hello<sep>", "hello<sep>world", "hello <sep> world", "hello  <sep>  world",
                "<sep> hello", " <sep>", "hello <sep>", "<sep><sep>", "<sep> <sep>", "a<sep>b<sep>c", "[MASK] is [MASK].",
                "The [MASK]ed word", "axyzb", "xyz xyz", "xyzxyz", " xyz ", "  leading <sep>", "trailing [MASK]  ",
                "[MASK]<sep>xyz", "<sep>\n<sep>", "tab\t<sep>\tx", "é<sep>ü", "<se p>", "<sepx>", "[MASK", "xy z",
                "He said, 'xyz' <sep> then [MASK]", "", " ", "hello world", "日本<sep>語 xyz 123"]


def _pieces(ref: "spm.SentencePieceProcessor", text: str, model_type: str) -> list[str]:
    """sentencepiece's pieces as tokviz shows them: an unknown piece of a BPE model as '<unk>' (as HF's
    BPE does; sentencepiece shows the unknown text itself, as tokviz's Unigram does)."""
    pieces = ref.encode(text, out_type=str)
    if model_type == "bpe":
        pieces = [piece if i != ref.unk_id() else ref.id_to_piece(i) for piece, i in zip(pieces, ref.encode(text))]
    return pieces


def _symbol_model(lines: tuple, model_type: str, **options) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines[0][:2000]), model_writer=out, vocab_size=800, model_type=model_type,
                                   user_defined_symbols=SYMBOLS, minloglevel=2, **options)
    return out.getvalue()


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_user_defined_symbols_encode_as_sentencepiece_literally(model_type: str, lines: tuple) -> None:
    """sentencepiece's pieces (0.2.3), read off the real package: the dummy prefix only at the start of
    the line, the spaces around a symbol kept as '▁', nothing glued to a symbol gets a '▁'. HF's
    converters cut symbols out before normalizing and give ['<sep>'], ['▁a', '<sep>', '▁b'] and
    ['▁x', '<x>', '▁y'] (transformers 5.x T5TokenizerFast; its LlamaTokenizerFast ['<sep>'] too)."""
    tok = from_model_bytes(_symbol_model(lines, model_type))
    space, x = {"unigram": (7, 799), "bpe": (737, 773)}[model_type]
    expected = {  # text -> sentencepiece's pieces and ids (<sep> 3, [MASK] 4, xyz 5)
        "<sep>": (["▁", "<sep>"], [space, 3]),
        "<sep><sep>": (["▁", "<sep>", "<sep>"], [space, 3, 3]),
        "a<sep>b": (["▁a", "<sep>", "b"], None),
        "[MASK]xyz": (["▁", "[MASK]", "xyz"], [space, 4, 5]),
        "xyz xyz": (["▁", "xyz", "▁", "xyz"], [space, 5, space, 5]),
        "x <sep>": (["▁", "x", "▁", "<sep>"], [space, x, space, 3]),
        "a <sep> b[MASK]": (["▁a", "▁", "<sep>", "▁b", "[MASK]"], None),
        "x  <sep>  y": ({"unigram": ["▁", "x", "▁", "<sep>", "▁", "y"], "bpe": ["▁", "x", "▁", "<sep>", "▁y"]}[model_type], None),
    }
    for text, (pieces, ids) in expected.items():
        assert tok.encode(text).tokens == pieces, text
        assert ids is None or tok.encode(text).ids == ids, text
    assert tok.decode(tok.encode("a <sep> b[MASK]").ids) == "a <sep> b[MASK]"


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("dummy, rew, byte_fallback", [(True, True, False), (True, False, True), (False, True, True), (False, False, False)])
def test_user_defined_symbols_match_sentencepiece(model_type: str, dummy: bool, rew: bool, byte_fallback: bool, lines: tuple) -> None:
    """Every placement of a symbol (start, middle, end, glued, next to spaces, repeated, almost a symbol),
    each normalizer option: sentencepiece's ids, pieces and decode; HF loads our tokenizer.json and agrees."""
    data = _symbol_model(lines, model_type, add_dummy_prefix=dummy, remove_extra_whitespaces=rew, byte_fallback=byte_fallback)
    ref = spm.SentencePieceProcessor(model_proto=data)
    tok = from_model_bytes(data)
    hf = tokenizers.Tokenizer.from_str(tok.to_str())
    for text in SYMBOL_TEXTS + lines[1][:30]:
        ids = ref.encode(text)
        assert tok.encode(text).ids == ids, text
        assert tok.encode(text).tokens == _pieces(ref, text, model_type), text
        assert hf.encode(text).ids == ids, text
        assert tok.decode(ids) == ref.decode(ids) == hf.decode(ids), text  # unknown pieces as ' ⁇ '
    # the .model written back keeps the symbols user-defined
    back = ModelProto.from_bytes(to_model_bytes(tok))
    assert [(p.piece, p.type) for p in back.pieces] == [(p.piece, p.type) for p in ModelProto.from_bytes(data).pieces]


# symbols the normalization rule changes: sentencepiece keeps them as typed (the raw text's 'Ｘ' is the piece
# 'Ｘ', an 'X' typed as 'X' is not); nfkc_cf would also fold 'Ab'
CHANGED_SYMBOLS = ["<sep>", "Ｘ", "ﬁx", "①", "ＡＢ", "Ab", "xyz"]
CHANGED_SYMBOL_TEXTS = ["Ｘ", "X", "a Ｘ b", "aＸb", "ＡＸ", "ＸＸ", "ﬁx it", "fix it", "ﬁ", "①②", "1", "ＡＢＣ", "ABC", "ＡＢ",
                        "AB", "Ab ab AB", "Ｘ<sep>ＸＡＢ", "  Ｘ  ", "Ｘ\u3000Ｘ", "x Ｘ X ｘ", "ﬁxxyz", "Ｘ①ＡＢﬁx", "café Ｘ 藤"]


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("rule, options", [("nmt_nfkc", {}), ("nfkc_cf", {"add_dummy_prefix": False}),
                                           ("nmt_nfkc", {"remove_extra_whitespaces": False, "byte_fallback": True})])
def test_symbols_the_rule_changes_are_kept_as_typed(model_type: str, rule: str, options: dict, lines: tuple) -> None:
    """sentencepiece meets user-defined symbols in the raw text and copies them unnormalized; the converted
    tokenizer keeps them through its charsmap the same way (sentencepiece 0.2.3's ids and decode; before
    this, 198 of these 636 cases differed: 'Ｘ' became 'X' and was not found)."""
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines[0][:2000]), model_writer=out, vocab_size=800, model_type=model_type,
                                   user_defined_symbols=CHANGED_SYMBOLS, normalization_rule_name=rule, minloglevel=2, **options)
    ref = spm.SentencePieceProcessor(model_proto=out.getvalue())
    tok = from_model_bytes(out.getvalue())
    hf = tokenizers.Tokenizer.from_str(tok.to_str())
    assert ref.encode("a Ｘ b", out_type=str)[2] == "Ｘ" and tok.encode("a Ｘ b").tokens[2] == "Ｘ"
    for text in CHANGED_SYMBOL_TEXTS + lines[1][:20]:
        ids = ref.encode(text)
        assert tok.encode(text).ids == ids, text
        assert hf.encode(text).ids == ids, text
        assert tok.decode(ids) == ref.decode(ids), text
    encoding = tok.encode("x Ｘ y")
    assert encoding.offsets[encoding.tokens.index("Ｘ")] == (2, 3)  # (its own character in the text)
    back = ModelProto.from_bytes(to_model_bytes(tok))
    assert [(p.piece, p.type) for p in back.pieces] == [(p.piece, p.type) for p in ModelProto.from_bytes(out.getvalue()).pieces]


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_control_pieces_typed_in_the_text_are_matched_as_hf_matches_them(model_type: str, lines: tuple) -> None:
    """The documented choice (tokenizer_from_proto): a typed '<s>' or '</s>' is the special piece, as in HF
    (our tokenizer.json loaded there agrees); sentencepiece reads it as text. encode_special_tokens=True,
    HF's switch, gives sentencepiece's ids for a BPE model; a Unigram model keeps picking the piece."""
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines[0][:2000]), model_writer=out, vocab_size=800, model_type=model_type,
                                   control_symbols=["<ctl>"], minloglevel=2)
    ref = spm.SentencePieceProcessor(model_proto=out.getvalue())
    tok = from_model_bytes(out.getvalue())
    hf = tokenizers.Tokenizer.from_str(tok.to_str())
    assert ref.encode("a <s> b", out_type=str) == ["▁a", "▁", "<", "s", ">", "▁b"]  # sentencepiece: text
    assert tok.encode("a <s> b").tokens == ["▁a", "<s>", "▁b"]  # ours and HF: the control piece
    texts = ["a <s> b", "x</s>", "<s>", "one <ctl> two", "</s></s> end"]
    for text in texts:
        ids = tok.encode(text).ids
        assert hf.encode(text).ids == ids, text
        assert [i for i in ids if i in (ref.bos_id(), ref.eos_id(), ref.piece_to_id("<ctl>"))], text
        assert tok.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True), text
    tok.encode_special_tokens = True
    same = [tok.encode(text).ids == ref.encode(text) for text in texts]
    assert same == [model_type == "bpe"] * 5


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_the_apps_sentencepiece_training_with_symbols_encodes_as_its_model_file(model_type: str) -> None:
    """Train's SentencePiece pipeline builds through assemble_tokenizer too: with user-defined symbols
    its tokenizer and sentencepiece loading the .model it writes give the same ids and pieces."""
    from tokviz.corpus import held_out_split
    from tokviz.pipeline_config import sentencepiece_config, tokenizer_with_model
    from tokviz.samples import load_sample
    from tokviz.training import run_training

    split = held_out_split(load_sample())
    config = sentencepiece_config(sp_model_type=model_type, user_defined_symbols=("<sep>", "[MASK]", "xyz"))
    history = run_training(config, 500, split.train_lines)
    reference = spm.SentencePieceProcessor(model_proto=history.to_model_bytes())
    tokenizer = tokenizer_with_model(config, history.model)
    for text in SYMBOL_TEXTS[:-1] + list(split.test_lines[:20]):
        assert tokenizer.encode(text).ids == reference.encode(text), text
        assert tokenizer.encode(text).tokens == _pieces(reference, text, model_type), text
