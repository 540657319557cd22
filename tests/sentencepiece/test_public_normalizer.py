"""SentencePieceNormalizer (and the charsmaps it compiles) against sentencepiece's."""

from __future__ import annotations

import io

import pytest

spm = pytest.importorskip("sentencepiece")

import tokviz.sentencepiece as tsp  # noqa: E402
from tokviz.sentencepiece.charsmap import compile_charsmap  # noqa: E402
from tokviz.sentencepiece.normalizer import parse_charsmap  # noqa: E402

TEXTS = ["  foo  apple ", "ＡＢＣ ㍻", "a\tb", "", "   ", "banana foo"]
RAW = dict(add_dummy_prefix=False, escape_whitespaces=False, remove_extra_whitespaces=False)


@pytest.mark.parametrize("source", [dict(rule_name="nmt_nfkc"), dict(rule_name="identity"), dict(rule_name="nfkc_cf"),
                                    dict(norm_map=[("foo", "bar"), ("apple", "orange"), ("ａ", "A")])])
@pytest.mark.parametrize("flags", [{}, RAW, dict(add_dummy_prefix=False), dict(remove_extra_whitespaces=False)])
def test_normalize_and_offsets_match_sentencepiece(source: dict, flags: dict) -> None:
    ours = tsp.SentencePieceNormalizer(**source, **flags)
    theirs = spm.SentencePieceNormalizer(**source, **flags)
    for text in TEXTS:
        assert ours.normalize(text) == theirs.normalize(text), text
        assert ours.normalize(text, with_offsets=True) == theirs.normalize(text, with_offsets=True), text
        assert ours.normalize(text.encode(), with_offsets=True) == theirs.normalize(text.encode(), with_offsets=True), text
    if "norm_map" in source:
        assert ours.Decompile() == sorted(theirs.Decompile())


def test_our_spec_loads_in_sentencepiece_and_back() -> None:
    ours = tsp.SentencePieceNormalizer(norm_map=[("foo", "bar"), ("apple", "orange")], add_dummy_prefix=False)
    theirs = spm.SentencePieceNormalizer(normalizer_spec=ours.serialized_normalizer_spec())
    assert theirs.normalize("a foo  apple") == ours.normalize("a foo  apple") == "a▁bar▁orange"
    again = tsp.SentencePieceNormalizer(normalizer_spec=ours.serialized_normalizer_spec())
    assert again.serialized_normalizer_spec() == ours.serialized_normalizer_spec()


@pytest.mark.parametrize("bad", [[(b"\xff", b"bar")], [("", "bar")], [("foo", "foo")], [("foo", "bar"), ("foo", "baz")]])
def test_bad_maps_are_refused(bad: list) -> None:
    with pytest.raises(ValueError):
        tsp.SentencePieceNormalizer(norm_map=bad)


def test_compiled_charsmap_round_trips_every_rule() -> None:
    rules = {"a": "1", "ab": "2", "abc": "", "é": "e", "㍻": "平成", "🤗": ":)", "b": "βeta"}
    assert parse_charsmap(compile_charsmap(rules)) == rules
    assert compile_charsmap({}) == b""


def test_trainer_takes_a_normalizer_and_a_rule_tsv(tmp_path) -> None:
    lines = ["foo apple banana", "the foo and the apple", "Ａ foo"] * 30
    normalizer = tsp.SentencePieceNormalizer(norm_map=[("foo", "bar")])
    out = io.BytesIO()
    assert tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=30, normalizer=normalizer,
                                          hard_vocab_limit=False) is True
    ref = spm.SentencePieceProcessor(model_proto=out.getvalue())
    assert ref.normalize("foo apple") == "▁bar▁apple"
    with pytest.raises(ValueError):
        tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=io.BytesIO(), vocab_size=30,
                                       normalizer=normalizer, add_dummy_prefix=True)
    tsv = tmp_path / "rules.tsv"
    tsv.write_text("41\t42\n66 6F 6F\t62 61 72\n", encoding="utf-8")
    out = io.BytesIO()
    tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=30, hard_vocab_limit=False,
                                   normalization_rule_tsv=str(tsv))
    theirs = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=theirs, vocab_size=30, hard_vocab_limit=False,
                                   normalization_rule_tsv=str(tsv), minloglevel=2)
    for text in ("A foo", "ABBA foofoo"):
        assert spm.SentencePieceProcessor(model_proto=out.getvalue()).normalize(text) == \
            spm.SentencePieceProcessor(model_proto=theirs.getvalue()).normalize(text)
