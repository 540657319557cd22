"""tokviz.engine.stages: the normalizer's stages on plain strings, and the alignment they keep."""

from __future__ import annotations

from tokviz import normalizers
from tokviz.engine.stages import _staged
from tokviz.engine.plan import build_plan
from tokviz.models import WordLevel
from tokviz.patterns import Regex
from tokviz.pre_tokenizers import Whitespace


def test_stages_that_keep_the_piece_aligned_run_on_plain_strings() -> None:
    model = WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    llama = build_plan(normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]), Whitespace(), model)
    assert _staged(llama, "a b") == ("▁a▁b", 1, None)  # (text, chars prepended, origin)
    assert _staged(llama, "a b", head=False) == ("a▁b", 0, None)  # (not at a piece's start: no Prepend)
    runs = build_plan(normalizers.Sequence([normalizers.Lowercase(), normalizers.Replace(Regex(r"\s+"), " ")]), Whitespace(), model)
    assert _staged(runs, "A\n\nB c") == ("a b c", 0, [0, 2, 3, 4, 5])  # (a run stands for its last char)
    assert _staged(build_plan(normalizers.NFKC(), Whitespace(), model), "e\u0301") == (None, 0, None)  # (composes: not aligned)


def test_a_chars_expansion_is_taken_only_where_each_new_char_is_aligned_to_it():
    """The whole-piece path maps a char's several chars back to it; a stage that aligns them
    otherwise (here one of them to nothing) leaves such pieces to the chunks."""
    from tokviz.engine.stages import _aligned_to_their_chars
    from tokviz.normalized import NormalizedString
    from tokviz.normalizers import BertNormalizer, NFKD

    class Odd:  # "x" -> "ab", the "b" aligned to an empty range
        def normalize_str(self, text: str) -> str:
            return text.replace("x", "ab")

        def normalize(self, normalized: NormalizedString) -> None:
            text = normalized.normalized.replace("x", "ab")
            normalized.alignments = [(0, 1), (0, 0)] if text == "ab" else [(0, 1)] * len(text)
            normalized.normalized = text

    assert _aligned_to_their_chars([BertNormalizer()], "我ﬁ", [" 我 ", "ﬁ"]) is True
    assert _aligned_to_their_chars([NFKD()], "ﬁ①", ["fi", "1"]) is True
    assert _aligned_to_their_chars([NFKD()], "ﬁ", ["f"]) is False  # not what the stages make
    assert _aligned_to_their_chars([Odd()], "x", ["ab"]) is False
