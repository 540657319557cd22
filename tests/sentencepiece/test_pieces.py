"""tokviz.sentencepiece.pieces: which strings may become pieces (sentencepiece's IsValidSentencePiece),
scripts, and words cut from sentences -- worked examples, and every piece sentencepiece trains passes."""

from __future__ import annotations

import io
import itertools

import pytest

from tokviz.sentencepiece.pieces import BOUNDARY, PieceRules, count_words, script_of, split_into_words


def test_worked_examples() -> None:
    rules = PieceRules()
    pieces = ("▁the", "the▁", "n't", "12.", "a1", "ひらカタ漢", "aб", "▁▁", "\x1f", "\t", "a" * 17, "▅", "é")
    assert [rules.is_valid(piece) for piece in pieces] == [True, False, False, True, False, True, False, False, False, True, False, False, True]
    assert PieceRules(split_digits=True).is_valid("12") is False
    assert PieceRules(split_by_number=False).is_valid("a1") is True
    assert PieceRules(treat_whitespace_as_suffix=True).is_valid("the▁") is True
    assert PieceRules(allow_whitespace_only_pieces=True).is_valid("▁▁") is True


def _grown_parts(word: str) -> list[tuple[str, int]]:
    """The parts of ``word`` grown one character at a time while they stay valid pieces (length aside), a
    boundary in none: by definition no piece crosses two of them."""
    loose = PieceRules(max_sentencepiece_length=10**9)
    parts: list[tuple[str, int]] = []
    for index, char in enumerate(word):
        if char == BOUNDARY:
            parts.append(("", index + 1))
        elif parts and parts[-1][0] and loose.is_valid(parts[-1][0] + char):
            parts[-1] = (parts[-1][0] + char, parts[-1][1])
        elif parts and not parts[-1][0]:
            parts[-1] = (char, parts[-1][1])
        else:
            parts.append((char, index))
    return [part for part in parts if part[0]]


def test_ascii_parts_are_where_no_piece_crosses() -> None:
    parts = PieceRules().ascii_parts()
    assert [(m.group(), m.start()) for m in parts.finditer("▁don't,12x\x1fab\0")] == [
        ("▁don", 0), ("'", 4), ("t", 5), (",12", 6), ("x", 9), ("ab", 11), ("\0", 13)]
    assert parts.findall("▁▁a▁,") == ["▁", "▁a", "▁,"]
    # every word of up to 4 of these characters: the same parts as growing valid pieces
    chars = ["a", "Z", "1", ",", "'", "_", "~", "@", "[", "{", "\0", " ", BOUNDARY, "\x01", "\n", "\x7f", "▁"]
    short = PieceRules(max_sentencepiece_length=4)
    for size in range(1, 5):
        for word in map("".join, itertools.product(chars, repeat=size)):
            assert [(m.group(), m.start()) for m in parts.finditer(word)] == _grown_parts(word), repr(word)
            # (is_valid decides an ASCII piece by these parts: the same as character by character)
            assert short.is_valid(word) == short.check_each_char(word), repr(word)
            assert short.is_valid("▁" + word) == short.check_each_char("▁" + word), repr(word)
    # other rules cut elsewhere: no regex for them
    for options in ({"split_digits": True}, {"split_by_number": False}, {"split_by_unicode_script": False},
                    {"split_by_whitespace": False}, {"treat_whitespace_as_suffix": True}, {"allow_whitespace_only_pieces": True}):
        assert PieceRules(**options).ascii_parts() is None
    assert PieceRules(max_sentencepiece_length=4).ascii_parts() is parts


def test_scripts_hiragana_and_katakana_count_as_han() -> None:
    assert [script_of(char) for char in "aбひカ漢1\u0301!"] == ["LATIN", "CYRILLIC", "HAN", "HAN", "HAN", "COMMON", "INHERITED", "COMMON"]


def test_words_from_sentences() -> None:
    assert split_into_words("▁a▁▁b") == ["▁a", "▁", "▁b"]
    assert split_into_words("a▁b▁", treat_whitespace_as_suffix=True) == ["a▁", "b▁"]
    assert count_words(["▁a▁b", "▁a"]) == {"▁a": 2, "▁b": 1}
    assert count_words(["x▁a", "▁a"]) == {"x": 1, "▁a": 2}


@pytest.mark.parametrize("options", [{}, {"split_digits": True}, {"split_by_number": False}, {"treat_whitespace_as_suffix": True}])
def test_every_piece_sentencepiece_trains_is_valid(options: dict) -> None:
    spm = pytest.importorskip("sentencepiece")
    lines = ["The 3 little pigs built 12 houses in 1999.", "Привет мир, hello world!", "ひらがな カタカナ 漢字 mixed123text"] * 30
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=150, model_type="bpe",
                                   minloglevel=2, **options)
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    rules = PieceRules(**options)
    normal = [processor.id_to_piece(i) for i in range(processor.get_piece_size())
              if not (processor.is_control(i) or processor.is_unknown(i) or processor.is_byte(i))]
    assert [piece for piece in normal if not rules.is_valid(piece)] == []
