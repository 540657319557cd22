"""tokviz.implementations.bert_wordpiece: BertWordPieceTokenizer encodes as HF's does on HF's vocab,
and trains the vocab the worked example gives."""

from __future__ import annotations

import pytest

from tokviz.implementations import BertWordPieceTokenizer

hf = pytest.importorskip("tokenizers")

CORPUS = ["Hugging Face hugs huggable pugs.", "Café naïve résumé, don't!", "puns buns hugs 你好"] * 5
TEXTS = ["Hugs for the CAFÉ!", "unseen wordz 你好", "a\tpair\u200b of  spaces"]


@pytest.mark.parametrize("options", [{}, {"lowercase": False, "strip_accents": False}, {"clean_text": False, "handle_chinese_chars": False}])
def test_encodes_as_hf_on_hf_vocab(tmp_path, options) -> None:
    # HF numbers a training's ## forms in its hash map's order (ties then change from run to run),
    # so the pipeline is compared on one vocab HF trained
    theirs = hf.BertWordPieceTokenizer(**options)
    theirs.train_from_iterator(CORPUS, vocab_size=80, min_frequency=1, show_progress=False)
    (vocab,) = theirs.save_model(str(tmp_path))
    ours, theirs = BertWordPieceTokenizer.from_file(vocab, **options), hf.BertWordPieceTokenizer.from_file(vocab, **options)
    assert ours.get_vocab() == theirs.get_vocab()
    for text in TEXTS:
        mine, reference = ours.encode(text), theirs.encode(text)
        assert (mine.ids, mine.tokens, mine.offsets, mine.type_ids) == (reference.ids, reference.tokens, reference.offsets, reference.type_ids)
        assert ours.decode(mine.ids) == theirs.decode(reference.ids)
    mine, reference = ours.encode("hugs", "puns"), theirs.encode("hugs", "puns")
    assert (mine.ids, mine.type_ids) == (reference.ids, reference.type_ids)


def test_worked_example_and_vocab_file(tmp_path) -> None:
    tokenizer = BertWordPieceTokenizer()
    tokenizer.train_from_iterator(["hug hugs hugging"] * 3, vocab_size=40, min_frequency=1, show_progress=False)
    # as in HF, a tokenizer trained from nothing has no [CLS] ... [SEP] template; one read from a vocab has
    assert tokenizer.encode("hugs").tokens == ["hugs"]
    assert tokenizer.encode("Hug!").tokens == ["hug", "[UNK]"]
    (vocab,) = tokenizer.save_model(str(tmp_path))
    again = BertWordPieceTokenizer.from_file(vocab)
    assert again.encode("hugging hug").tokens == ["[CLS]", "hugging", "hug", "[SEP]"]
