"""The transformers hand-off: save_pretrained / transformers_zip, loaded by AutoTokenizer.

For the four presets and a SentencePiece model (trained by ``sentencepiece``, converted by
``transformers`` as it converts T5's ``spiece.model``, loaded into tokviz from its tokenizer.json),
the reference notes' calls — ``tokenizer(batch, truncation=…, max_length=12,
return_overflowing_tokens=True, stride=0 or 2)``, ``tokens()``, ``word_ids()``, ``sequence_ids()``,
``char_to_token`` — give the same ids and fields as tokviz's own encoding with the same truncation.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from tokviz.export import NO_MAX_LENGTH, save_pretrained, special_token_roles, transformers_files, transformers_zip
from tokviz.loaders import load, load_bytes
from tokviz.pipeline_config import build_tokenizer, build_trainer, configured_model, tokenizer_with_model
from tokviz.presets import PRESETS

transformers = pytest.importorskip("transformers")

FIRSTS = [
    "Hello, how are you doing today? It's a fine day for tokenizers, isn't it?",
    "Short one.",
    "Tokenizers cut text into pieces; models read the pieces' ids, never the text itself.",
]
SECONDS = [
    "Fine, thanks.",
    "The second sequence of this pair is the longer one by far, so only_second can cut it down.",
    "Yes.",
]


@pytest.fixture(scope="module")
def corpus(read_shared_corpus) -> list[str]:
    return read_shared_corpus("grimm_tales.txt")[:60_000].splitlines()


def trained(name: str, corpus: list[str]):
    config = PRESETS[name].build()
    trained_tokenizer = build_tokenizer(config)
    trained_tokenizer.train_from_iterator(corpus, build_trainer(config, 400))
    history = trained_tokenizer.training_history
    return tokenizer_with_model(config, configured_model(config, history.model))


@pytest.fixture(scope="module")
def sentencepiece_tokenizer(corpus, tmp_path_factory):
    """A SentencePiece unigram model as transformers converts it (Precompiled normalizer, Metaspace)."""
    spm = pytest.importorskip("sentencepiece")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([line for line in corpus if line.strip()]), model_writer=model,
        vocab_size=500, model_type="unigram", minloglevel=2,
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1,  # T5's layout, which transformers' T5 converter assumes
    )
    folder = tmp_path_factory.mktemp("spiece")
    (folder / "spiece.model").write_bytes(model.getvalue())
    converted = transformers.T5Tokenizer.from_pretrained(str(folder))
    return load_bytes("tokenizer.json", converted.backend_tokenizer.to_str().encode("utf-8")), converted


@pytest.fixture(scope="module")
def candidates(corpus, sentencepiece_tokenizer):
    tokenizers = {name: trained(name, corpus) for name in PRESETS}
    tokenizers["sentencepiece"] = sentencepiece_tokenizer[0]
    return tokenizers


def tokviz_rows(tokenizer, firsts, seconds, strategy, stride):
    """tokviz's own encodings with the same truncation: each input, then its overflowing pieces."""
    tokenizer.enable_truncation(12, stride=stride, strategy=strategy)
    try:
        rows = []
        for index, first in enumerate(firsts):
            encoding = tokenizer.encode(first, seconds[index] if seconds else None)
            rows.extend([encoding, *encoding.overflowing])
        return rows
    finally:
        tokenizer.no_truncation()


def assert_same(hf_out, rows, texts, sequence_ids=True):
    assert hf_out["input_ids"] == [row.ids for row in rows]
    assert hf_out["attention_mask"] == [row.attention_mask for row in rows]
    if "token_type_ids" in hf_out:
        assert hf_out["token_type_ids"] == [row.type_ids for row in rows]
    for index, row in enumerate(rows):
        assert hf_out.tokens(index) == row.tokens
        assert hf_out.word_ids(index) == row.word_ids
        if not sequence_ids:
            continue  # char_to_token looks tokens up by sequence too
        assert hf_out.sequence_ids(index) == row.sequence_ids
        text = texts[hf_out["overflow_to_sample_mapping"][index]]
        for char in range(0, len(text), 3):
            assert hf_out.char_to_token(index, char) == row.char_to_token(char), (index, char)


@pytest.mark.parametrize("name", [*PRESETS, "sentencepiece"])
def test_transformers_round_trip(tmp_path, candidates, name):
    original = candidates[name]
    save_pretrained(original, tmp_path / name)
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path / name))
    reloaded = load(tmp_path / name)  # what tokviz reads back from the folder
    for stride in (0, 2):
        for strategy in ("longest_first", "only_first"):
            out = hf(FIRSTS[:1] + FIRSTS[2:], truncation=strategy, max_length=12, return_overflowing_tokens=True, stride=stride)
            for tokenizer in (original, reloaded):
                assert_same(out, tokviz_rows(tokenizer, FIRSTS[:1] + FIRSTS[2:], None, strategy, stride), FIRSTS[:1] + FIRSTS[2:])
        for strategy, firsts, seconds in (
            ("longest_first", FIRSTS, SECONDS),
            ("only_second", FIRSTS[1:2], SECONDS[1:2]),
            ("only_first", FIRSTS[2:], SECONDS[2:]),
        ):
            out = hf(firsts, seconds, truncation=strategy, max_length=12, return_overflowing_tokens=True, stride=stride)
            assert_same(out, tokviz_rows(reloaded, firsts, seconds, strategy, stride), firsts)
            # The tokenizer before export gives the same ids, type ids and tokens (without a post-processor,
            # HF leaves a pair's overflowing pieces without sequence ids: the exported template adds them).
            assert_same(out, tokviz_rows(original, firsts, seconds, strategy, stride), firsts,
                        sequence_ids=original.post_processor is not None)
    tokenizer = original
    plain = hf(FIRSTS)
    assert plain["input_ids"] == [tokenizer.encode(text).ids for text in FIRSTS]
    ids = tokenizer.encode(FIRSTS[0]).ids
    assert hf.decode(ids, skip_special_tokens=True) == tokenizer.decode(ids)


def test_sentencepiece_model_matches_transformers_conversion(sentencepiece_tokenizer):
    tokenizer, converted = sentencepiece_tokenizer
    for text in FIRSTS + SECONDS:
        assert tokenizer.encode(text).ids == converted(text)["input_ids"]


def test_special_tokens_by_role(tmp_path, candidates):
    expected = {
        "bert": {"unk": "[UNK]", "sep": "[SEP]", "pad": "[PAD]", "cls": "[CLS]", "mask": "[MASK]"},
        "gpt2": {"bos": "<|endoftext|>", "eos": "<|endoftext|>"},
        "t5": {"eos": "</s>", "unk": "<unk>", "pad": "<pad>"},
        "sentencepiece": {"eos": "</s>", "unk": "<unk>", "pad": "<pad>"},
    }
    for name, roles in expected.items():
        assert special_token_roles(candidates[name]) == roles, name
    save_pretrained(candidates["bert"], tmp_path, model_max_length=128)
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert (hf.unk_token, hf.sep_token, hf.pad_token, hf.cls_token, hf.mask_token) == ("[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]")
    assert hf.model_max_length == 128
    stored = json.loads((tmp_path / "special_tokens_map.json").read_text(encoding="utf-8"))
    assert stored == {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}
    padded = hf(["a", "a b c d"], padding=True)
    assert padded["input_ids"][0][-1] == candidates["bert"].token_to_id("[PAD]")


def test_roles_can_be_given_and_are_checked(candidates):
    files = transformers_files(candidates["gpt2"], special_tokens={"pad_token": "<|endoftext|>"})
    assert json.loads(files["special_tokens_map.json"])["pad_token"] == "<|endoftext|>"
    assert json.loads(files["tokenizer_config.json"])["model_max_length"] == NO_MAX_LENGTH
    with pytest.raises(ValueError, match="not in the tokenizer's vocabulary"):
        transformers_files(candidates["gpt2"], special_tokens={"pad": "<pad>"})
    with pytest.raises(ValueError, match="Unknown special-token role 'foo'"):
        transformers_files(candidates["gpt2"], special_tokens={"foo": "<|endoftext|>"})


def test_zip_loads_in_transformers(tmp_path, candidates):
    data = transformers_zip(candidates["t5"], model_max_length=64)
    assert data == transformers_zip(candidates["t5"], model_max_length=64)  # same bytes each time
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == ["special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
        archive.extractall(tmp_path)
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert hf.model_max_length == 64 and hf.eos_token == "</s>"
    assert hf(FIRSTS[0])["input_ids"] == candidates["t5"].encode(FIRSTS[0]).ids


def test_model_file_through_tokviz_sentencepiece_round_trips(tmp_path, corpus):
    """A .model loaded by tokviz.load hands off to tokviz.sentencepiece the same way."""
    spm = pytest.importorskip("sentencepiece")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([line for line in corpus if line.strip()]), model_writer=model,
        vocab_size=500, model_type="bpe", minloglevel=2,
    )
    (tmp_path / "m.model").write_bytes(model.getvalue())
    tokenizer = load(tmp_path / "m.model")
    save_pretrained(tokenizer, tmp_path / "hf")
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    # tokviz shows sentencepiece's encode; the folder puts <s> in front, as LlamaTokenizerFast on the .model
    assert hf("hello")["input_ids"][0] == tokenizer.token_to_id("<s>")
    tokenizer.post_processor = tokenizer.transformers_post_processor
    for stride in (0, 2):
        out = hf(FIRSTS, truncation="longest_first", max_length=12, return_overflowing_tokens=True, stride=stride)
        assert_same(out, tokviz_rows(tokenizer, FIRSTS, None, "longest_first", stride), FIRSTS)
