"""Literature metrics and tokviz.compare.evaluate.

- each metric of an uploaded HF tokenizer equals the same metric computed here, independently, from
  HF ``tokenizers``' own encoding of the same texts;
- Rényi efficiency equals the ``tokenization-scorer`` package's value on the same token stream (1e-6);
- parity on the shipped parallel sample, with literal worked examples.
"""

from __future__ import annotations

import math
import re
from importlib import resources

import pytest

from tokviz import Tokenizer, models, pre_tokenizers
from tokviz.compare import MAX_COMPARED, best_tokenizers, evaluate, parity_table, tokens_per_language
from tokviz.errors import TokvizError
from tokviz.literature_metrics import (
    LANGUAGES,
    METRICS,
    mean_parity,
    parallel_sample,
    parity_by_language,
    metric_values,
    renyi_efficiency,
)
from tokviz.metrics import measure
from tokviz.loaders import load_bytes

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def training_lines(read_shared_corpus) -> list[str]:
    return read_shared_corpus("wikitext2_valid.txt")[:120_000].splitlines()


@pytest.fixture(scope="module")
def eval_texts(read_shared_corpus, hard_strings) -> list[str]:
    lines = [line for line in read_shared_corpus("grimm_tales.txt")[:40_000].splitlines() if line.strip()]
    return lines[:150] + [s for s in hard_strings if s] + ["Ünïcödé wörds 가나다 🤗🤗"]


@pytest.fixture(scope="module")
def hf_bert(training_lines):
    """An HF BERT-like WordPiece (special tokens from a post-processor, [UNK] for unseen characters)."""
    from tokenizers.implementations import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator(training_lines, vocab_size=900, limit_alphabet=60, show_progress=False)
    return tokenizers.Tokenizer.from_str(tok.to_str())


@pytest.fixture(scope="module")
def hf_bytes(training_lines):
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.post_processor = tokenizers.processors.ByteLevel(trim_offsets=True)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=700, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(training_lines, trainer)
    return tok


def independent_metrics(hf, texts: list[str], unk_token: str | None) -> dict[str, float]:
    """The metrics straight from HF's encodings, written out here without tokviz's helpers."""
    from collections import Counter

    unk_id = hf.token_to_id(unk_token) if unk_token else None
    ids: list[int] = []
    words = continued = 0
    for text in texts:
        encoding = hf.encode(text)
        kept = [i for i, special in enumerate(encoding.special_tokens_mask) if not special]
        ids.extend(encoding.ids[i] for i in kept)
        word_spans = [match.span() for match in re.finditer(r"\S+", text)]
        words += len(word_spans)
        per_word = Counter()
        for i in kept:
            token = encoding.tokens[i]
            if token in ("Ġ", "▁") or not token:
                continue
            start, end = encoding.offsets[i]
            piece = text[start:end]
            start += len(piece) - len(piece.lstrip())
            end -= len(piece) - len(piece.rstrip())
            for index, (word_start, word_end) in enumerate(word_spans):
                if start < end and start < word_end and word_start < end:
                    per_word[index] += 1
        continued += sum(1 for count in per_word.values() if count >= 2)
    characters = sum(len(text) for text in texts)
    utf8 = sum(len(text.encode("utf-8")) for text in texts)
    counts = Counter(ids)
    vocab_size = hf.get_vocab_size()
    total = len(ids)
    entropy = math.log2(sum((c / total) ** 2.5 for c in counts.values())) / (1 - 2.5)
    return {
        "fertility": total / words,
        "continued_words": continued / words,
        "characters_per_token": characters / total,
        "bytes_per_token": utf8 / total,
        "unknown_rate": (sum(1 for i in ids if i == unk_id) / total) if unk_id is not None else 0.0,
        "vocabulary_used": len(counts) / vocab_size,
        "renyi_efficiency": entropy / math.log2(vocab_size),
        "renyi_efficiency_observed": entropy / math.log2(len(counts)),
        "tokens": total,
    }


@pytest.mark.parametrize("which, unk_token", [("hf_bert", "[UNK]"), ("hf_bytes", None)])
def test_metrics_of_an_uploaded_hf_tokenizer_equal_hfs_own(request, which, unk_token, eval_texts):
    hf = request.getfixturevalue(which)
    uploaded = load_bytes("tokenizer.json", hf.to_str().encode("utf-8"))
    frame = evaluate({"uploaded": uploaded}, eval_texts, parallel=False)
    expected = independent_metrics(hf, eval_texts, unk_token)
    row = frame.loc["uploaded"]
    assert row["tokens"] == expected.pop("tokens")
    for key, value in expected.items():
        assert row[key] == pytest.approx(value, abs=1e-12), key
    if unk_token:
        assert row["unknown_rate"] > 0  # the emoji and Hangul of the texts are unknown to this vocab


@pytest.mark.parametrize("which", ["hf_bert", "hf_bytes"])
def test_renyi_efficiency_equals_tokenization_scorer(request, which, eval_texts):
    scorer = pytest.importorskip("tokenization_scorer")
    hf = request.getfixturevalue(which)
    tok = load_bytes("tokenizer.json", hf.to_str().encode("utf-8"))
    values = metric_values(measure(tok, eval_texts))
    # The same token stream for the scorer: one line per text, ids as whitespace-separated words.
    stream = [" ".join(f"t{i}" for i, s in zip(e.ids, e.special_tokens_mask) if not s) for e in map(hf.encode, eval_texts)]
    with_vocab = scorer.score(stream, metric="renyi", power=2.5, vocab=hf.get_vocab_size())
    observed = scorer.score(stream, metric="renyi", power=2.5)
    assert abs(values["renyi_efficiency"] - with_vocab) < 1e-6
    assert abs(values["renyi_efficiency_observed"] - observed) < 1e-6
    assert 0.0 < with_vocab < observed < 1.0


def test_renyi_efficiency_worked_examples():
    assert renyi_efficiency([2, 2, 2, 2], alpha=2.5, vocab_size=4) == 1.0
    assert renyi_efficiency([2, 2, 2, 2], alpha=2.5, vocab_size=16) == 0.5
    # p = (3/4, 1/4): H_2.5 = log2(0.75**2.5 + 0.25**2.5) / -1.5
    expected = math.log2(0.75**2.5 + 0.25**2.5) / -1.5 / math.log2(2)
    assert renyi_efficiency([3, 1]) == pytest.approx(expected, abs=1e-15)


def test_parity_worked_example_and_mean():
    parities = parity_by_language({"en": [4, 5, 10], "de": [6, 5, 10], "ko": [8, 10, 30]})
    assert parities == {"en": 1.0, "de": pytest.approx((1.5 + 1 + 1) / 3), "ko": pytest.approx((2 + 2 + 3) / 3)}
    assert mean_parity(parities) == pytest.approx((7 / 6 + 7 / 3) / 2)


def test_parallel_sample_is_shipped_with_its_provenance():
    sample = parallel_sample()
    assert set(sample) == set(LANGUAGES) and len(sample) >= 8
    assert all(len(sentences) == 24 for sentences in sample.values())
    assert all(sentence.strip() and "\t" not in sentence for sentences in sample.values() for sentence in sentences)
    assert len(set(sample["en"])) == 24  # 24 different sentences
    readme = resources.files("tokviz").joinpath("data", "README.md").read_text(encoding="utf-8")
    assert "parallel_sample.tsv" in readme and "translated" in readme


def test_parity_of_a_byte_level_tokenizer_on_the_sample(hf_bytes):
    tok = load_bytes("tokenizer.json", hf_bytes.to_str().encode("utf-8"))
    table = parity_table({"bytes": tok})
    per_language = tokens_per_language({"bytes": tok})
    assert table.loc["bytes", "en"] == 1.0
    # Trained on English: Hindi (3 bytes a letter) pays far more than German.
    assert table.loc["bytes", "hi"] > table.loc["bytes", "de"] > 1.0
    hf_total = sum(len(hf_bytes.encode(s).ids) for s in parallel_sample()["ko"])
    assert per_language.loc["bytes", "ko"] == hf_total
    frame = evaluate({"bytes": tok}, ["Hello world"])
    assert frame.loc["bytes", "parity"] == pytest.approx(table.loc["bytes"].drop("en").mean())


def test_evaluate_leaves_a_truncating_tokenizer_unchanged(hf_bert, eval_texts):
    tok = load_bytes("tokenizer.json", hf_bert.to_str().encode("utf-8"))
    plain = evaluate({"a": tok}, eval_texts[:40], parallel=False)
    tok.enable_truncation(max_length=8)
    truncated = evaluate({"a": tok}, eval_texts[:40], parallel=False)
    assert truncated.equals(plain)
    assert tok.truncation["max_length"] == 8


def test_evaluate_limits_and_best():
    words = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    with pytest.raises(TokvizError, match="at most 8 tokenizers"):
        evaluate({str(i): words for i in range(MAX_COMPARED + 1)}, ["a b"])
    with pytest.raises(TokvizError, match="at least one"):
        evaluate({}, ["a"])
    frame = evaluate({"words": words, "same": words}, ["a b c"], parallel=False)
    assert list(frame.columns) == ["vocab_size", "tokens", "words", *[key for key in METRICS if key != "parity"]]
    assert frame.loc["words", "unknown_rate"] == pytest.approx(1 / 3)
    assert best_tokenizers(frame)["fertility"] == ["words", "same"]
    assert type(frame[["fertility"]]).__name__ == "DataFrame"


def test_every_metric_has_a_definition_and_source():
    for info in METRICS.values():
        assert info.definition.endswith(".") and info.definition.count(". ") == 0, info.key
        assert re.search(r"(19|20)\d\d", info.source), info.key
        assert info.better in ("higher", "lower", "closer to 1")


def test_evaluate_takes_hf_tokenizers_too_and_agrees(hf_bert, eval_texts):
    """The same function over HF's Tokenizer object: every column equal to the uploaded copy's."""
    uploaded = load_bytes("tokenizer.json", hf_bert.to_str().encode("utf-8"))
    ours = evaluate({"x": uploaded}, eval_texts[:60])
    theirs = evaluate({"x": hf_bert}, eval_texts[:60])
    assert list(ours.columns) == list(theirs.columns)
    for column in ours.columns:
        assert ours.loc["x", column] == pytest.approx(theirs.loc["x", column], abs=1e-12), column
