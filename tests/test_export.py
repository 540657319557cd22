from __future__ import annotations

import tokenizers

from tokviz.export import history_csv, merges_txt, model_merges, vocab_txt
from tokviz.models import BPE, WordPiece


def test_vocab_and_merges_files_load_in_hf(tmp_path) -> None:
    vocab = {"h": 0, "u": 1, "g": 2, "hu": 3, "hug": 4}
    model = BPE(vocab, [("h", "u"), ("hu", "g")])
    (tmp_path / "vocab.txt").write_text(vocab_txt(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text(merges_txt(model_merges(model)), encoding="utf-8")
    assert (tmp_path / "merges.txt").read_text() == "#version: 0.2\nh u\nhu g\n"
    loaded = tokenizers.models.WordPiece.read_file(str(tmp_path / "vocab.txt"))
    assert loaded == vocab
    hf_bpe = tokenizers.models.BPE(vocab, [tuple(line.split()) for line in merges_txt(model_merges(model)).splitlines()[1:]])
    assert [token.value for token in hf_bpe.tokenize("hug")] == ["hug"]


def test_model_merges_only_for_bpe() -> None:
    assert model_merges(WordPiece({"[UNK]": 0, "a": 1})) is None


def test_history_csv_has_one_row_per_merge() -> None:
    from tokviz.trainers import BpeTrainer

    history = BpeTrainer(vocab_size=12, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "hugs": 5})
    lines = history_csv(history).splitlines()
    assert lines[0].startswith("rank,left,right,token,count,score")
    assert len(lines) == 1 + len(history.merges)
