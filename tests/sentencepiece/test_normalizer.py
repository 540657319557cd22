"""tokviz.sentencepiece.normalizer: SentencePiece's normalizer (charsmap, then whitespace) against
sentencepiece's own ``SentencePieceNormalizer``, rule by rule and switch by switch."""

from __future__ import annotations

import pytest

from tokviz.sentencepiece.normalizer import SentencePieceNormalizer, _Trie, charsmap_for_rule, parse_charsmap

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


@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc_cf"])
def test_trie_children_read_per_node_are_every_unit_labelled_for_it(rule: str) -> None:
    # the children of the node at base b are the units b ^ c labelled c (bit 31 clear): grouped here by a
    # pass over every unit, found by the reader in b's block when the node is first visited
    trie = _Trie(charsmap_for_rule(rule))
    grouped: dict[int, list[tuple[int, int]]] = {}
    for pos, unit in enumerate(trie.units):
        label = unit & ((1 << 31) | 0xFF)
        if 0 < label < 256:
            grouped.setdefault(pos ^ label, []).append((label, pos))
    assert len(grouped) > 4_000
    assert all(sorted(trie._children(base)) == sorted(children) for base, children in grouped.items())
    assert trie._children(len(trie.units) + 300) == [] and trie._children(0) == grouped.get(0, [])


@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc_cf"])
def test_an_ascii_text_meets_only_the_ascii_rules(rule: str) -> None:
    charsmap = charsmap_for_rule(rule)
    ascii_rules = _Trie(charsmap).ascii_rules()
    assert ascii_rules == {key: value for key, value in parse_charsmap(charsmap).items() if key.isascii()}
    assert ascii_rules.get("\t") == (" " if rule.startswith("nmt") else None)
    assert ascii_rules.get("A") == ("a" if rule.endswith("_cf") else None)


def test_random_texts_with_and_without_longer_keys_normalize_as_sentencepiece() -> None:
    # a text where no longer key can start is mapped by one str.translate; one holding the second character
    # of some key (halfwidth kana and a sound mark, a letter and a combining accent) walks the rules
    import random

    rng = random.Random(11)
    longer_keys = [key for key in parse_charsmap(charsmap_for_rule("nmt_nfkc")) if len(key) > 1]
    pool = [*"abcXYZ 　\tｶﾞﾊﾟｷｬ゛゜かが\u3099\u309aﬁﬂ①Ｈｅ한국\u1100\u1161é\u0301e\u0308Åñ", *map(chr, range(0x370, 0x3FF))]
    texts = ["".join(rng.choice(pool) if rng.random() < 0.8 else rng.choice(longer_keys) for _ in range(rng.randrange(1, 25)))
             for _ in range(300)]
    for rule in RULES:
        ours, theirs = SentencePieceNormalizer.from_rule(rule), spm.SentencePieceNormalizer(rule_name=rule)
        assert [ours.normalize(text) for text in texts] == [theirs.normalize(text) for text in texts], rule


@pytest.mark.parametrize("rule", RULES)
def test_ascii_words_are_the_normalized_text_cut_at_each_space_symbol(rule: str) -> None:
    import random

    rng = random.Random(3)
    pool = [*map(chr, range(128)), *" " * 20, *"abc" * 10]
    normalizer = SentencePieceNormalizer.from_rule(rule)
    texts = ["", " ", "\t\r\n", " Hello\tworld  again ", *("".join(rng.choice(pool) for _ in range(rng.randrange(20))) for _ in range(3000))]
    if rule.startswith("nmt"):  # (tabs and line ends become spaces, the other controls go)
        assert normalizer.ascii_words(" Hello\tworld  again ") == ["hello" if rule.endswith("_cf") else "Hello", "world", "again"]
        assert [normalizer.ascii_words(text) for text in texts] == [normalizer.normalize(text).split("▁")[1:] for text in texts]
    else:  # (a tab or a control character stays: one split would cut where sentencepiece does not)
        assert all(normalizer.ascii_words(text) is None for text in texts)
    assert normalizer.ascii_words("héllo") is None
    assert SentencePieceNormalizer.from_rule(rule, add_dummy_prefix=False).ascii_words("a b") is None


@pytest.mark.parametrize("rule", RULES)
def test_ascii_word_counts_are_the_normalized_texts_words_counted(rule: str) -> None:
    import random
    from collections import Counter

    from tokviz.sentencepiece.pieces import count_words

    rng = random.Random(5)
    pool = [*map(chr, range(128)), *" " * 20, *"abc" * 10]
    texts = ["", " ", "\x01", " \x7f\x02 ", "\t\r\n", " Hello\tworld  again ",
             *("".join(rng.choice(pool) for _ in range(rng.randrange(20))) for _ in range(2000))]
    normalizer = SentencePieceNormalizer.from_rule(rule)
    found = normalizer.ascii_word_counts(texts)
    if rule.startswith("nmt"):
        normalized = normalizer.normalize_all(texts)
        assert found == (count_words(normalized), len(normalized) - normalized.count(""))
        expected = {"▁hello": 2, "▁world": 1} if rule.endswith("_cf") else {"▁Hello": 1, "▁hello": 1, "▁world": 1}
        assert normalizer.ascii_word_counts(["  Hello world ", "\x01 \x02", "hello"]) == (Counter(expected), 2)
    else:  # (tabs and controls stay: ascii_words says no)
        assert found is None
    assert normalizer.ascii_word_counts(["héllo"]) is None


@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc_cf"])
def test_long_texts_replace_their_sparse_mapped_characters_as_translate_does(rule: str) -> None:
    """A corpus-sized text with few mapped characters is replaced by one regex pass (faster than
    str.translate off ASCII): the same text as translate, dense or sparse, and normalize_all as normalize."""
    import random

    from tokviz.sentencepiece.normalizer import _replace_singles

    normalizer = SentencePieceNormalizer.from_rule(rule)
    rng = random.Random(5)
    mapped = list("\t\u00a0½…″\ufeffＡ①\u3000Éé")
    for density in (0.001, 0.02, 0.3):
        text = "".join(rng.choice(mapped) if rng.random() < density else rng.choice("ab cé藤") for _ in range(80_000))
        present, tails = normalizer._index.hot(set(text))
        assert not tails
        assert _replace_singles(text, present, normalizer._index.single_table) == text.translate(normalizer._index.single_table)
        lines = text.split("c")
        assert normalizer.normalize_all(lines) == [normalizer.normalize(line) for line in lines]
