from __future__ import annotations

import tokenizers

from tokviz.export import history_csv, merges_txt, model_merges, vocab_txt
from tokviz.models import BPE, WordPiece


def test_vocab_and_merges_files_load_in_hf(tmp_path) -> None:
    vocab = {"h": 0, "u": 1, "g": 2, "hu": 3, "hug": 4}
    model = BPE(vocab, [("h", "u"), ("hu", "g")])
    (tmp_path / "vocab.txt").write_text(vocab_txt(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text(merges_txt(model_merges(model)), encoding="utf-8")
    assert (tmp_path / "merges.txt").read_text() == "#version: 0.2\nh u\nhu g\n"
    loaded = tokenizers.models.WordPiece.read_file(str(tmp_path / "vocab.txt"))
    assert loaded == vocab
    hf_bpe = tokenizers.models.BPE(vocab, [tuple(line.split()) for line in merges_txt(model_merges(model)).splitlines()[1:]])
    assert [token.value for token in hf_bpe.tokenize("hug")] == ["hug"]


def test_model_merges_only_for_bpe() -> None:
    assert model_merges(WordPiece({"[UNK]": 0, "a": 1})) is None


def test_history_csv_has_one_row_per_merge() -> None:
    from tokviz.trainers import BpeTrainer

    history = BpeTrainer(vocab_size=12, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "hugs": 5})
    lines = history_csv(history).splitlines()
    assert lines[0].startswith("rank,left,right,token,count,score")
    assert len(lines) == 1 + len(history.merges)


def _sample_history(config, vocab_size: int):
    from tokviz.pipeline_config import build_tokenizer, build_trainer
    from tokviz.samples import load_sample

    trained_tokenizer = build_tokenizer(config)
    trained_tokenizer.train_from_iterator(load_sample().splitlines(True), build_trainer(config, vocab_size))
    return trained_tokenizer.training_history


def test_history_csv_stops_at_the_sliders_size_for_bpe() -> None:
    """Issue 12: history.csv held all 743 merges while the caption said it was at the slider's size."""
    from tokviz.presets import gpt2_like

    history = _sample_history(gpt2_like(), 1000)
    assert len(history_csv(history).splitlines()) == 1 + len(history.merges)
    lines = history_csv(history, 480).splitlines()
    merges_at_480 = history.model_at(480).to_dict()["merges"]
    assert len(lines) == 1 + len(merges_at_480) == 1 + 480 - 257  # 256 bytes + <|endoftext|>, one new token per merge here
    last = lines[-1].split(",")
    assert (last[0], last[6]) == (str(len(merges_at_480) - 1), "480")  # rank, vocab_size after the last merge kept
    assert history_csv(history, 10) == "rank,left,right,token,count,score,vocab_size,candidates\n"


def test_history_csv_stops_at_the_sliders_size_for_wordpiece_and_wordlevel() -> None:
    from tokviz.pipeline_config import PipelineConfig
    from tokviz.presets import bert_like

    history = _sample_history(bert_like(), 800)
    import io

    import pandas as pd

    rows = pd.read_csv(io.StringIO(history_csv(history, 700)))
    assert len(history.merges) == 399 and len(rows) == 700 - history.min_vocab_size == 299
    assert rows["vocab_size"].iloc[-1] == 700
    wordlevel = _sample_history(PipelineConfig(model="WordLevel", special_tokens=("[UNK]",), unk_token="[UNK]"), 300)
    assert len(history_csv(wordlevel, 50).splitlines()) == 1 + 49  # [UNK] and 49 words


def test_history_csv_of_unigram_keeps_the_em_steps_up_to_the_sliders_size() -> None:
    from tokviz.presets import t5_like

    history = _sample_history(t5_like(), 400)
    # EM rounds 0-2; model_at cuts sizes 532-701 from the vocabulary after round 0's EM (701 tokens with
    # the specials), 464-531 from the one after round 1's (531), smaller sizes from the last one (463).
    rounds = lambda size: sorted({int(line.split(",")[0]) for line in history_csv(history, size).splitlines()[1:]})  # noqa: E731
    assert rounds(None) == rounds(400) == [0, 1, 2]
    assert rounds(600) == [0]
    assert rounds(532) == [0] and rounds(531) == rounds(480) == [0, 1] and rounds(463) == [0, 1, 2]


# ---------------------------------------------------------------------- every file kind written, round trips
import io  # noqa: E402
import json  # noqa: E402
import zipfile  # noqa: E402
from functools import cache  # noqa: E402

import pytest  # noqa: E402

from tokviz.export import EXPORT_FORMATS, ConversionError, ExportedFiles, export  # noqa: E402

ROUND_TRIP_EXTRA = (
    "Héllò wörld, how are you?  Fine.",
    "Съешь же ещё этих мягких французских булок.",
    "中文分词测试，包括标点符号。",
    "Numbers 1234567 and 3.14159; I'M SHOUTING, they'll've",
    "def f(x):\n    return x**2  # square",
)


@cache
def _trained(name: str):
    from pathlib import Path

    from tests.conftest import SHARED_CORPORA
    from tokviz.pipeline_config import build_tokenizer, build_trainer, configured_model, tokenizer_with_model
    from tokviz.presets import PRESETS

    path = Path(SHARED_CORPORA) / "grimm_tales.txt"
    if not path.is_file():
        pytest.skip("the shared corpora are absent")
    lines = path.read_text(encoding="utf-8-sig")[:60_000].splitlines()
    config = PRESETS[name].build()
    tokenizer = build_tokenizer(config)
    tokenizer.train_from_iterator(lines, build_trainer(config, 400))
    return tokenizer_with_model(config, configured_model(config, tokenizer.training_history.model))


@cache
def _catalog(name: str):
    from tokviz import catalog

    pytest.importorskip(catalog.ENTRIES[name].module)
    return catalog.load(name)


@pytest.fixture(scope="module")
def texts(shared_corpus_lines) -> list[str]:
    return list(shared_corpus_lines) + list(ROUND_TRIP_EXTRA)


def _same_ids(original, encode, texts) -> None:
    differing = [(text[:50], original.encode(text).ids[:10], list(encode(text))[:10]) for text in texts
                 if original.encode(text).ids != list(encode(text))]
    assert differing == []


@pytest.mark.parametrize("name", ["gpt2", "bert", "t5", "char_bpe"])
def test_tokenizer_json_round_trips_through_hf(name, texts) -> None:
    written = export(_trained(name), "tokenizer.json")
    assert written.lost == () and written.download_name == "tokenizer.json"
    hf = tokenizers.Tokenizer.from_str(written.files["tokenizer.json"].decode())
    _same_ids(_trained(name), lambda text: hf.encode(text).ids, texts)


def test_vocab_json_and_merges_round_trip_through_transformers(texts, tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    written = export(_trained("gpt2"), "vocab.json+merges.txt")
    assert written.lost == () and sorted(written.files) == ["merges.txt", "vocab.json"]
    written.save(tmp_path)
    hf = transformers.GPT2TokenizerFast(vocab=str(tmp_path / "vocab.json"), merges=str(tmp_path / "merges.txt"))
    _same_ids(_trained("gpt2"), lambda text: hf(text)["input_ids"], texts)


def test_vocab_txt_round_trips_through_transformers(texts, tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    written = export(_trained("bert"), "vocab.txt")
    assert written.lost == ()
    written.save(tmp_path)
    hf = transformers.BertTokenizerFast(vocab=str(tmp_path / "vocab.txt"))
    _same_ids(_trained("bert"), lambda text: hf(text)["input_ids"], texts)


@pytest.mark.parametrize("name", ["Llama 3", "Tekken (Mistral NeMo)"])
def test_tiktoken_round_trips_through_tiktoken(name, texts, tmp_path) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    original = _catalog(name)
    written = export(original, "tiktoken")
    assert written.lost == () and sorted(written.files) == ["tokenizer.tiktoken", "tokenizer.tiktoken.json"]
    written.save(tmp_path)
    spec = json.loads((tmp_path / "tokenizer.tiktoken.json").read_text())
    encoding = tiktoken.Encoding(name=spec["name"], pat_str=spec["pat_str"], special_tokens=spec["special_tokens"],
                                 mergeable_ranks=load_tiktoken_bpe(str(tmp_path / "tokenizer.tiktoken")))
    bos = spec["special_tokens"][spec["bos_token"]]
    _same_ids(original, lambda text: [bos, *encoding.encode_ordinary(text)], texts)
    assert bos == original.encode("").ids[0]


def test_tiktoken_of_a_trained_bpe_names_the_merge_rule_it_cannot_keep(texts) -> None:
    written = export(_trained("gpt2"), "tiktoken")
    assert any("tiktoken merges any two adjacent pieces" in sentence for sentence in written.lost)
    spec = json.loads(written.files["tokenizer.tiktoken.json"])
    assert spec["special_tokens"] == {"<|endoftext|>": _trained("gpt2").token_to_id("<|endoftext|>")}
    assert spec["pat_str"].startswith("'s|'t|'re")


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_sentencepiece_model_round_trips_through_sentencepiece(model_type, texts) -> None:
    """A model trained by sentencepiece, read into tokviz, written back as .model: sentencepiece encodes as before."""
    spm = pytest.importorskip("sentencepiece")
    from tokviz.loaders import load_bytes

    trained = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter([text for text in texts[:250] if text.strip()]), model_writer=trained,
                                   vocab_size=300, model_type=model_type, minloglevel=2)
    original = spm.SentencePieceProcessor(model_proto=trained.getvalue())
    written = export(load_bytes("trained.model", trained.getvalue()), "sentencepiece")
    assert written.lost == ()
    processor = spm.SentencePieceProcessor(model_proto=written.files["tokenizer.model"])
    differing = [text[:50] for text in texts if processor.encode(text) != original.encode(text)]
    assert differing == []


def test_mistral_model_round_trips_through_sentencepiece(texts) -> None:
    spm = pytest.importorskip("sentencepiece")
    from tokviz import catalog

    written = export(_catalog("Mistral v1"), "sentencepiece")
    processor = spm.SentencePieceProcessor(model_proto=written.files["tokenizer.model"])
    reference = catalog.reference_encoder("Mistral v1")  # the authors' encode: sentencepiece's, BOS first
    differing = [text[:50] for text in texts if [processor.bos_id(), *processor.encode(text)] != reference(text)]
    assert differing == []


@pytest.mark.parametrize("name", ["gpt2", "bert", "t5"])
def test_transformers_folder_round_trips(name, texts, tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    written = export(_trained(name), "transformers")
    assert written.lost == () and written.download_name == "tokenizer-transformers.zip"
    zipfile.ZipFile(io.BytesIO(written.data())).extractall(tmp_path)
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    _same_ids(_trained(name), lambda text: hf(text)["input_ids"], texts)


@pytest.mark.parametrize(
    ("name", "format", "message"),
    [
        ("bert", "tiktoken", "model is WordPiece, which has no merges to rank"),
        ("char_bpe", "tiktoken", "tokens are characters"),
        ("t5", "vocab.txt", "Unigram, whose scores a list of tokens cannot hold"),
        ("t5", "vocab.json+merges.txt", "Unigram, which has no merges"),
        ("gpt2", "vocab.txt", "BPE, whose merges a list of tokens cannot hold"),
        ("bert", "sentencepiece", "holds a Unigram or BPE model"),
    ],
)
def test_impossible_conversions_say_why(name, format, message) -> None:
    with pytest.raises(ConversionError, match=message):
        export(_trained(name), format)


def test_what_is_lost_is_named_stage_by_stage() -> None:
    written = export(_trained("char_bpe"), "vocab.json+merges.txt")
    assert any(s.startswith("The pre-tokenizer WhitespaceSplit is not kept: read back it is ByteLevel(") for s in written.lost)
    assert any(s.startswith("The decoder BPEDecoder(suffix='</w>') is not kept") for s in written.lost)
    assert any("end_of_word_suffix='</w>'" in s for s in written.lost)
    # A BertNormalizer cannot live in a .model: the sentence names it.
    from tokviz import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.BPE({"<unk>": 0, "▁": 1, "a": 2, "▁a": 3}, [("▁", "a")], unk_token="<unk>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    lost = export(tok, "sentencepiece").lost
    assert any(s.startswith("The normalizer BertNormalizer(") for s in lost)


def test_every_format_is_listed_and_unknown_ones_refused() -> None:
    assert list(EXPORT_FORMATS) == ["tokenizer.json", "vocab.json+merges.txt", "vocab.txt", "tiktoken", "sentencepiece", "transformers"]
    with pytest.raises(ConversionError, match="Unknown file kind 'onnx'"):
        export(_trained("gpt2"), "onnx")
    files = ExportedFiles("tiktoken", {"a.tiktoken": b"x", "a.tiktoken.json": b"{}"})
    assert files.download_name == "tokenizer-tiktoken.zip"
    assert zipfile.ZipFile(io.BytesIO(files.data())).namelist() == ["a.tiktoken", "a.tiktoken.json"]


def test_tokens_merges_txt_cannot_hold_are_refused_with_the_reason() -> None:
    from tokviz import Tokenizer, models

    tok = Tokenizer(models.BPE({"a": 0, "\r": 1, "a\r": 2, "b": 3}, [("a", "\r")]))
    with pytest.raises(ConversionError, match=r"1 of this model's merges hold a token with a space or a line break \(e\.g\. \('a', '\\r'\)\)"):
        export(tok, "vocab.json+merges.txt")
    wordpiece = Tokenizer(models.WordPiece({"[UNK]": 0, "a\n": 1}, unk_token="[UNK]"))
    with pytest.raises(ConversionError, match="1 tokens hold a line break"):
        export(wordpiece, "vocab.txt")
