"""tokviz.bounded: an upload read in a child process, stopped past its time or memory bound, with a sentence."""

from __future__ import annotations

import multiprocessing
import time

import pytest

import tokviz.limits
from tokviz import bounded
from tokviz.errors import LimitExceededError, TokenizerFileError
from tokviz.loaders import load_bytes

VOCAB_TXT = b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##s\n"


def test_a_tokenizer_comes_back_and_encodes_as_one_read_here():
    tokenizer = bounded.call(load_bytes, "vocab.txt", VOCAB_TXT, name="vocab.txt")
    assert tokenizer.encode("Hellos").tokens == ["[CLS]", "hello", "##s", "[SEP]"]
    assert tokenizer.encode("Hellos").ids == load_bytes("vocab.txt", VOCAB_TXT).encode("Hellos").ids == [2, 4, 5, 3]


def test_a_refusal_comes_back_with_its_class_and_sentence():
    with pytest.raises(TokenizerFileError) as caught:
        bounded.call(load_bytes, "vocab.txt", b"hello\nworld\n", name="vocab.txt")
    assert str(caught.value) == "vocab.txt: This vocab.txt has no [UNK] token, so it is not a BERT WordPiece vocabulary."


def test_the_callers_limits_hold_in_the_child(monkeypatch):
    """An operator's TOKVIZ_* values (or a test's) are the child's too, not the defaults of a fresh import."""
    monkeypatch.setattr(tokviz.limits, "MAX_TOKENIZER_VOCAB", 5)
    with pytest.raises(LimitExceededError, match=r"^vocab\.txt: This vocab\.txt has 6 vocabulary entries, above this server's limit of 5 "):
        bounded.call(load_bytes, "vocab.txt", VOCAB_TXT, name="vocab.txt")


def test_a_read_past_the_time_bound_is_stopped_with_a_sentence():
    with pytest.raises(bounded.LoadTimeoutError) as caught:
        bounded.call(time.sleep, 60, name="slow.json", seconds=0.5)
    assert str(caught.value) == ("slow.json took more than this server's limit of 0.5 seconds to read, so reading it was stopped "
                                 "(TOKVIZ_MAX_LOAD_SECONDS); the largest tokenizer files this server accepts read in under 10 seconds.")
    assert not [child for child in multiprocessing.active_children() if child.name == "tokviz-read"]  # killed, not left running
    assert bounded.call(sorted, [2, 1], name="next.json") == [1, 2]  # the next read goes on


def test_a_read_past_the_memory_bound_is_stopped_with_a_sentence():
    with pytest.raises(bounded.LoadMemoryError, match=r"^big\.json needed more than this server's limit of 200 MB to read, "
                                                       r"so reading it was stopped \(TOKVIZ_MAX_LOAD_MEMORY_MB\)\.$"):
        bounded.call(bytearray, 2 * 1024**3, name="big.json", memory_mb=200)


def test_a_bug_in_the_child_is_raised_as_one_not_as_a_sentence():
    with pytest.raises(RuntimeError, match=r"(?s)Reading x\.json failed in its worker process:.*ValueError: invalid literal"):
        bounded.call(int, "not a number", name="x.json")


def test_a_tokenizer_crosses_whole_with_what_its_tokenizer_json_does_not_hold():
    """A tiktoken pair's tokenizer reads special-token text as text (encode_special_tokens), a .model's carries
    transformers' BOS template: HF's pickle (the tokenizer.json) holds neither, the way back does."""
    import io

    from tokviz.tiktoken_format import TiktokenSpec, load_tiktoken_pair, rank_file_text

    ranks = {bytes([byte]): byte for byte in range(256)} | {b"hi": 256}
    spec = TiktokenSpec("mine", r" ?\p{L}+|\S|\s+", (("<s>", 257),), "<s>")
    here = load_tiktoken_pair(rank_file_text(ranks).encode(), spec.to_json().encode())
    there = bounded.call(load_tiktoken_pair, rank_file_text(ranks).encode(), spec.to_json().encode(), name="mine.tiktoken")
    assert there.encode("hi <s>").ids == here.encode("hi <s>").ids == [257, 256, 32, 60, 115, 62]
    spm = pytest.importorskip("sentencepiece")
    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there", "a world of words"] * 20),
                                   model_writer=proto, vocab_size=16, model_type="unigram", minloglevel=2)
    model = bounded.call(load_bytes, "spiece.model", proto.getvalue(), name="spiece.model")
    assert model.transformers_post_processor.to_dict() == load_bytes("spiece.model", proto.getvalue()).transformers_post_processor.to_dict()


def test_a_page_script_running_as_main_is_not_run_again_in_the_child(tmp_path, monkeypatch):
    # Streamlit (and AppTest) run each page as ``__main__``; multiprocessing would import it by path in the
    # child, running the page there (an AppTest script then fails, and the read was "stopped from outside").
    import sys
    import types

    page = tmp_path / "page.py"
    page.write_text("raise SystemExit('the page script ran in the child')\n")
    script = types.ModuleType("__main__")
    script.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", script)
    assert bounded.call(sorted, [3, 1, 2], name="numbers") == [1, 2, 3]
    assert sys.modules["__main__"] is script
