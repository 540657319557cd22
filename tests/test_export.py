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


def _sample_history(config, vocab_size: int):
    from tokviz.pipeline_config import build_tokenizer, build_trainer
    from tokviz.samples import load_sample

    trained_tokenizer = build_tokenizer(config)
    trained_tokenizer.train_from_iterator(load_sample().splitlines(True), build_trainer(config, vocab_size))
    return trained_tokenizer.training_history


def test_history_csv_stops_at_the_sliders_size_for_bpe() -> None:
    """Issue 12: history.csv held all 743 merges while the caption said it was at the slider's size."""
    from tokviz.presets import gpt2_like

    history = _sample_history(gpt2_like(), 1000)
    assert len(history_csv(history).splitlines()) == 1 + len(history.merges)
    lines = history_csv(history, 480).splitlines()
    merges_at_480 = history.model_at(480).to_dict()["merges"]
    assert len(lines) == 1 + len(merges_at_480) == 1 + 480 - 257  # 256 bytes + <|endoftext|>, one new token per merge here
    last = lines[-1].split(",")
    assert (last[0], last[6]) == (str(len(merges_at_480) - 1), "480")  # rank, vocab_size after the last merge kept
    assert history_csv(history, 10) == "rank,left,right,token,count,score,vocab_size,candidates\n"


def test_history_csv_stops_at_the_sliders_size_for_wordpiece_and_wordlevel() -> None:
    from tokviz.pipeline_config import PipelineConfig
    from tokviz.presets import bert_like

    history = _sample_history(bert_like(), 800)
    import io

    import pandas as pd

    rows = pd.read_csv(io.StringIO(history_csv(history, 700)))
    assert len(history.merges) == 399 and len(rows) == 700 - history.min_vocab_size == 299
    assert rows["vocab_size"].iloc[-1] == 700
    wordlevel = _sample_history(PipelineConfig(model="WordLevel", special_tokens=("[UNK]",), unk_token="[UNK]"), 300)
    assert len(history_csv(wordlevel, 50).splitlines()) == 1 + 49  # [UNK] and 49 words


def test_history_csv_of_unigram_keeps_the_em_steps_up_to_the_sliders_size() -> None:
    from tokviz.presets import t5_like

    history = _sample_history(t5_like(), 400)
    # EM rounds 0-2; model_at cuts sizes 532-701 from the vocabulary after round 0's EM (701 tokens with
    # the specials), 464-531 from the one after round 1's (531), smaller sizes from the last one (463).
    rounds = lambda size: sorted({int(line.split(",")[0]) for line in history_csv(history, size).splitlines()[1:]})  # noqa: E731
    assert rounds(None) == rounds(400) == [0, 1, 2]
    assert rounds(600) == [0]
    assert rounds(532) == [0] and rounds(531) == rounds(480) == [0, 1] and rounds(463) == [0, 1, 2]
