"""tokviz.viz.pipeline: the stages of a trace as aligned columns, tables and a bytes view,
with literal worked examples and parity against HF `tokenizers` on the same input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import normalizers as hf_normalizers
from tokenizers import pre_tokenizers as hf_pre_tokenizers

from tokviz import normalizers, pre_tokenizers
from tokviz.models import WordLevel
from tokviz.serialization import tokenizer_from_str
from tokviz.tokenizer import Tokenizer
from tokviz.viz.pipeline import (
    alignment_columns,
    byte_level_text,
    bytes_frame,
    bytes_summary,
    encoding_frame,
    model_token_spans,
    normalization_counts,
    normalization_html,
    pre_token_spans,
    pre_tokens_frame,
)
from tokviz.viz.spans import render_token_spans


def trace_with(normalizer, text: str, pre_tokenizer=None):
    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1, "world": 2, ",": 3, "!": 4}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    return tokenizer.trace(text).sequences[0]


def columns(sequence) -> list[tuple[str, str, str]]:
    return [(column.original, column.normalized, column.status) for column in alignment_columns(sequence)]


# ---------------------------------------------------------------------- normalization, aligned


def test_lowercase_and_strip_accents_change_two_columns() -> None:
    sequence = trace_with(normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]), "Café")
    assert columns(sequence) == [("C", "c", "changed"), ("a", "a", "same"), ("f", "f", "same"), ("é", "e", "changed")]
    assert normalization_counts(sequence) == {"same": 2, "changed": 2, "removed": 0, "inserted": 0}


def test_nfkc_ligature_is_one_column_over_two_characters() -> None:
    assert columns(trace_with(normalizers.NFKC(), "ﬁne")) == [("ﬁ", "fi", "changed"), ("n", "n", "same"), ("e", "e", "same")]


def test_bert_normalizer_removes_controls_and_inserts_spaces_around_cjk() -> None:
    sequence = trace_with(normalizers.BertNormalizer(), "a\x00b東c")
    assert sequence.normalized == "ab 東 c"
    assert columns(sequence) == [
        ("a", "a", "same"),
        ("\x00", "", "removed"),
        ("b", "b", "same"),
        ("", " ", "inserted"),
        ("東", "東", "same"),
        ("", " ", "inserted"),
        ("c", "c", "same"),
    ]


def test_prepend_and_strip() -> None:
    assert columns(trace_with(normalizers.Prepend("▁"), "ab")) == [("", "▁", "inserted"), ("a", "a", "same"), ("b", "b", "same")]
    assert columns(trace_with(normalizers.Strip(), " hi ")) == [
        (" ", "", "removed"), ("h", "h", "same"), ("i", "i", "same"), (" ", "", "removed"),
    ]


def test_no_normalizer_keeps_every_column() -> None:
    assert normalization_counts(trace_with(None, "hello world")) == {"same": 11, "changed": 0, "removed": 0, "inserted": 0}


HF_NORMALIZERS = [
    (normalizers.BertNormalizer(lowercase=True), hf_normalizers.BertNormalizer(lowercase=True)),
    (normalizers.NFKC(), hf_normalizers.NFKC()),
    (normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()]),
     hf_normalizers.Sequence([hf_normalizers.NFD(), hf_normalizers.StripAccents(), hf_normalizers.Lowercase()])),
]


@pytest.mark.parametrize(("ours", "theirs"), HF_NORMALIZERS)
def test_columns_rebuild_both_texts_on_hard_strings(ours, theirs, hard_strings) -> None:
    for text in hard_strings:
        sequence = trace_with(ours, text)
        assert sequence.normalized == theirs.normalize_str(text)  # the bottom row is HF's normalized text
        aligned = alignment_columns(sequence)
        assert "".join(column.original for column in aligned) == text
        assert "".join(column.normalized for column in aligned) == sequence.normalized


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_columns_rebuild_both_texts(text: str) -> None:
    sequence = trace_with(normalizers.BertNormalizer(lowercase=True), text)
    aligned = alignment_columns(sequence)
    assert "".join(column.original for column in aligned) == text
    assert "".join(column.normalized for column in aligned) == sequence.normalized
    assert all(0 <= column.start <= column.end <= len(text) for column in aligned)


def test_normalization_html_escapes_user_text() -> None:
    snippet = normalization_html(trace_with(normalizers.Lowercase(), '<B>&"x"'))
    assert "<B>" not in snippet and "<b>" not in snippet
    assert "&lt;B&gt;" not in snippet  # one column per character, so look for the pieces
    assert '<span class="o">&lt;</span>' in snippet and '<span class="o">&amp;</span>' in snippet
    assert snippet.count('class="col changed"') == 1  # 'B' -> 'b'


# ---------------------------------------------------------------------- pre-tokens and model tokens


def test_pre_tokens_frame_matches_hf_offsets() -> None:
    text = "Hello,  world!"
    sequence = trace_with(None, text, pre_tokenizers.BertPreTokenizer())
    frame = pre_tokens_frame(sequence)
    assert frame[["pre-token", "start", "end"]].values.tolist() == [["Hello", 0, 5], [",", 5, 6], ["world", 8, 13], ["!", 13, 14]]
    hf = hf_pre_tokenizers.BertPreTokenizer().pre_tokenize_str(text)
    assert [(row["pre-token"], (row["start"], row["end"])) for row in frame.to_dict("records")] == hf


def test_pre_token_offsets_point_into_the_original_text() -> None:
    # The normalizer lowercases and strips accents, but the offsets are the ORIGINAL text's.
    sequence = trace_with(normalizers.BertNormalizer(lowercase=True), "Héllo Wörld", pre_tokenizers.Whitespace())
    frame = pre_tokens_frame(sequence)
    assert frame.to_dict("list")["pre-token"] == ["hello", "world"]
    assert frame.to_dict("list")["original text"] == ["Héllo", "Wörld"]
    spans = pre_token_spans(sequence)
    assert [(span.value, span.start, span.end) for span in spans] == [("hello", 0, 5), ("world", 6, 11)]
    model_spans = model_token_spans(sequence, unk_id=0)
    assert [(span.value, span.id, span.start, span.end) for span in model_spans] == [("hello", 1, 0, 5), ("world", 2, 6, 11)]
    assert not any(span.unknown for span in model_spans)
    assert render_token_spans(sequence.original, spans).html.count('class="tok"') == 2


def test_unknown_model_tokens_are_marked() -> None:
    sequence = trace_with(None, "hello there", pre_tokenizers.Whitespace())
    assert [(span.value, span.unknown) for span in model_token_spans(sequence, unk_id=0)] == [("hello", False), ("[UNK]", True)]


# ---------------------------------------------------------------------- the post-processed encoding

BERT_JSON = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [
        {"id": i, "content": token, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    ],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
        "pair": [
            {"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
        ],
        "special_tokens": {name: {"id": name, "ids": [i], "tokens": [name]} for i, name in [(2, "[CLS]"), (3, "[SEP]")]},
    },
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "model": {
        "type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
        "vocab": {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hug", "##s", "are", "cafe", "!", "good"])},
    },
}


def test_encoding_frame_of_a_pair_matches_hf() -> None:
    text = json.dumps(BERT_JSON)
    trace = tokenizer_from_str(text).trace("Hugs are Café!", "good hugs")
    frame = encoding_frame(trace.encoding)
    hf = HfTokenizer.from_str(text).encode("Hugs are Café!", "good hugs")
    assert frame["token"].tolist() == hf.tokens == ["[CLS]", "hug", "##s", "are", "cafe", "!", "[SEP]", "good", "hug", "##s", "[SEP]"]
    assert frame["id"].tolist() == hf.ids
    assert frame["type id"].tolist() == hf.type_ids
    assert frame["attention mask"].tolist() == hf.attention_mask
    assert frame["special tokens mask"].tolist() == hf.special_tokens_mask
    assert [None if value is pd.NA else value for value in frame["word id"].tolist()] == hf.word_ids
    assert [None if value is pd.NA else value for value in frame["sequence id"].tolist()] == hf.sequence_ids
    assert frame["offsets"].tolist() == [f"({start}, {end})" for start, end in hf.offsets]
    assert trace.decoded == HfTokenizer.from_str(text).decode(hf.ids) == "hugs are cafe! good hugs"


def test_byte_level_tokens_are_shown_readably() -> None:
    from tokviz.pipeline_config import build_tokenizer, build_trainer
    from tokviz.presets import gpt2_like

    tokenizer = build_tokenizer(gpt2_like())
    tokenizer.train_from_iterator(["café café crème"], build_trainer(gpt2_like(), 300))
    encoding = tokenizer.encode("café")
    assert "Ã©" in "".join(encoding.tokens)  # the model's own symbols
    assert "é" in "".join(encoding_frame(encoding, byte_level=True)["token"])
    assert "Ã©" in "".join(encoding_frame(encoding)["token"])


# ---------------------------------------------------------------------- bytes


def test_a_korean_string_has_4_characters_and_8_bytes() -> None:
    assert bytes_summary("a가 짧") == {"characters": 4, "UTF-8 bytes": 8}
    frame = bytes_frame("a가 짧")
    assert frame[["character", "code point", "UTF-8 bytes", "bytes"]].values.tolist() == [
        ["a", "U+0061", "61", 1],
        ["가", "U+AC00", "EA B0 80", 3],
        ["·", "U+0020", "20", 1],
        ["짧", "U+C9E7", "EC A7 A7", 3],
    ]
    assert frame["name"].tolist() == ["LATIN SMALL LETTER A", "HANGUL SYLLABLE GA", "SPACE", "HANGUL SYLLABLE JJALB"]
    assert frame["bytes"].sum() == 8


def test_byte_level_mapping_space_and_newline() -> None:
    assert byte_level_text(" \n") == "ĠĊ"
    assert bytes_frame("a \n\t").to_dict("list")["byte-level"] == ["a", "Ġ", "Ċ", "ĉ"]
    assert bytes_frame("\x00")["name"].tolist() == ["<Cc U+0000>"]  # controls have no Unicode name


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_byte_level_text_is_hf_byte_level(text: str) -> None:
    hf = hf_pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False).pre_tokenize_str(text)
    assert byte_level_text(text) == "".join(piece for piece, _ in hf)
    assert len(byte_level_text(text)) == bytes_summary(text)["UTF-8 bytes"] == bytes_frame(text)["bytes"].sum()
