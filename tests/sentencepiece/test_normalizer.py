"""tokviz.sentencepiece.normalizer: SentencePiece's normalizer (charsmap, then whitespace) against
sentencepiece's own ``SentencePieceNormalizer``, rule by rule and switch by switch."""

from __future__ import annotations

import pytest

from tokviz.sentencepiece.normalizer import SentencePieceNormalizer, charsmap_for_rule, parse_charsmap

spm = pytest.importorskip("sentencepiece")

TEXTS = ["  Ｈｅｌｌｏ   world ", "ﬁne Straße ①②", "cafe\u0301 CAFÉ", "tab\there\nnewline", "ｶﾀｶﾅ 한국어", "", "   "]
RULES = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("switches", [{}, {"add_dummy_prefix": False}, {"remove_extra_whitespaces": False}, {"escape_whitespaces": False}])
def test_normalizes_as_sentencepiece(rule: str, switches: dict) -> None:
    ours = SentencePieceNormalizer.from_rule(rule, **switches)
    theirs = spm.SentencePieceNormalizer(rule_name=rule, **switches)
    for text in TEXTS:
        assert ours.normalize(text) == theirs.normalize(text), (rule, switches, text)


def test_worked_examples() -> None:
    assert SentencePieceNormalizer.from_rule("nmt_nfkc").normalize("  Ｈｅｌｌｏ   world ") == "▁Hello▁world"
    assert SentencePieceNormalizer.from_rule("identity", add_dummy_prefix=False).normalize("a  b") == "a▁b"
    assert SentencePieceNormalizer.from_rule("nfkc", treat_whitespace_as_suffix=True).normalize("a b") == "a▁b▁"
    assert parse_charsmap(charsmap_for_rule("nfkc"))["①"] == "1"
    assert charsmap_for_rule("identity") == b""


def test_user_defined_symbols_are_kept_whole_and_unnormalized() -> None:
    ours = SentencePieceNormalizer.from_rule("nmt_nfkc", user_defined_symbols=["Ｈｉ", "<x>"])
    assert ours.normalize("Ｈｉ Ｈｅｙ<x>") == "▁Ｈｉ▁Hey<x>"
