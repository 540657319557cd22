"""tokviz.sentencepiece.charsmap: rules compiled into a precompiled charsmap that sentencepiece itself
normalizes with, and sentencepiece's rule TSVs read."""

from __future__ import annotations

import pytest

from tokviz.sentencepiece.charsmap import compile_charsmap, read_rule_tsv
from tokviz.sentencepiece.model_proto import NormalizerSpec
from tokviz.sentencepiece.normalizer import SentencePieceNormalizer, parse_charsmap

RULES = {"ab": "x", "a": "y", "ß": "ss", "Ａ": "A", "ﬁ": "fi", "é": "é", "abc": ""}
TEXTS = ["abc ab a", "Straße Ａ ﬁne", "café  é", "b"]


def test_compiled_rules_read_back() -> None:
    assert parse_charsmap(compile_charsmap(RULES)) == RULES
    assert parse_charsmap(compile_charsmap({"ab": "x", "a": "y"})) == {"a": "y", "ab": "x"}
    # longest match first, as sentencepiece: "abc" (removed) over "ab" over "a"
    assert SentencePieceNormalizer(compile_charsmap(RULES), add_dummy_prefix=False).normalize("abcabaa") == "xyy"


def test_sentencepiece_normalizes_with_our_charsmap() -> None:
    spm = pytest.importorskip("sentencepiece")
    blob = compile_charsmap(RULES)
    spec = NormalizerSpec(name="user_defined", precompiled_charsmap=blob)
    theirs = spm.SentencePieceNormalizer(normalizer_spec=spec.to_bytes())
    ours = SentencePieceNormalizer(blob)
    for text in TEXTS:
        assert ours.normalize(text) == theirs.normalize(text)


def test_rule_tsv_as_sentencepiece_reads_it(tmp_path) -> None:
    path = tmp_path / "rules.tsv"
    path.write_text("# a comment (ours skips it; sentencepiece's reader takes no comments)\n41 42\t43\n", encoding="utf-8")
    assert read_rule_tsv(path) == {"AB": "C"}
    path.write_text("41 42\t43\nDF\t73 73\n", encoding="utf-8")
    assert read_rule_tsv(path) == {"AB": "C", "ß": "ss"}
    spm = pytest.importorskip("sentencepiece")
    theirs = spm.SentencePieceNormalizer(rule_tsv=str(path), add_dummy_prefix=False)
    ours = SentencePieceNormalizer(compile_charsmap(read_rule_tsv(path)), add_dummy_prefix=False)
    assert ours.normalize("ABß AB") == theirs.normalize("ABß AB") == "Css▁C"
    path.write_text("41\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"rules.tsv:1: a rule is 'source<TAB>target' in hex code points"):
        read_rule_tsv(path)
    path.write_text("zz\t41\n", encoding="utf-8")
    with pytest.raises(ValueError, match="is not hex code points"):
        read_rule_tsv(path)
