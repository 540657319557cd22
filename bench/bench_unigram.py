"""Unigram training: tokviz ``UnigramTrainer(method="em")`` vs HF ``UnigramTrainer`` vs sentencepiece.

Run from the project root:  ``python bench/bench_unigram.py [--quick]``

1. Speed and memory on the benchmark corpus (the five shared corpora, 6.8 MB), vocab 8000,
   Metaspace words: each trainer runs in its own fresh process (peak memory = that
   process's max RSS). tokviz is timed twice: training from word counts alone, and word
   counting + training (what HF's ``train_from_iterator`` does in its timed call).
2. Quality at vocab 2000 and 8000: every 10th non-empty line is held out; all three train
   on the rest (tokviz and HF on identical Metaspace word counts); we print the Jaccard of
   the piece sets and tokens per (Metaspace) word on the held-out lines.

Prints markdown tables; paste the latest into bench/README.md.
"""

from __future__ import annotations

import io
import json
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPORA = ROOT.parent / "shared" / "corpora"
NAMES = ("tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt")


def _corpus_lines() -> list[str]:
    text = "".join((CORPORA / name).read_text(encoding="utf-8-sig") for name in NAMES)
    return text.splitlines()


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_tokviz(vocab_size: int, queue) -> None:
    from tokviz import pre_tokenizers
    from tokviz.models.unigram.trainer import UnigramTrainer
    from tokviz.word_counts import count_words

    lines = _corpus_lines()
    started, cpu = time.perf_counter(), time.process_time()
    words = count_words(lines, pre_tokenizer=pre_tokenizers.Metaspace())
    counted = time.perf_counter()
    history = UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>").train_from_word_counts(words)
    done = time.perf_counter()
    queue.put(dict(total=done - started, train=done - counted, cpu=time.process_time() - cpu, size=history.model.get_vocab_size(),
                   em_steps=len(history.em_steps), rounds=len(history.prune_rounds), peak=_peak_mb()))


def _run_hf(vocab_size: int, queue) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    lines = _corpus_lines()
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False)
    started, cpu = time.perf_counter(), time.process_time()
    tokenizer.train_from_iterator(lines, trainer=trainer)
    queue.put(dict(total=time.perf_counter() - started, cpu=time.process_time() - cpu, size=tokenizer.get_vocab_size(), peak=_peak_mb()))


def _run_spm(vocab_size: int, queue) -> None:
    import sentencepiece as spm

    lines = [line for line in _corpus_lines() if line.strip()]
    started, cpu = time.perf_counter(), time.process_time()
    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=proto, vocab_size=vocab_size,
                                   model_type="unigram", minloglevel=2, num_threads=2)
    queue.put(dict(total=time.perf_counter() - started, cpu=time.process_time() - cpu, size=vocab_size, peak=_peak_mb()))


def _in_fresh_process(target, vocab_size: int) -> dict:
    context = mp.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(vocab_size, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def speed(vocab_size: int = 8000) -> None:
    ours = _in_fresh_process(_run_tokviz, vocab_size)
    hf = _in_fresh_process(_run_hf, vocab_size)
    sp = _in_fresh_process(_run_spm, vocab_size)
    print(f"### Speed: benchmark corpus (6.8 MB), vocab {vocab_size}, Metaspace words\n")
    print("| trainer | wall seconds | CPU seconds (all threads) | peak memory (MB) | wall vs HF |")
    print("|---|---:|---:|---:|---:|")
    print(f"| HF `UnigramTrainer` (count + train) | {hf['total']:.2f} | {hf['cpu']:.2f} | {hf['peak']:.0f} | 1.00x |")
    print(f"| tokviz em (count + train) | {ours['total']:.2f} | {ours['cpu']:.2f} | {ours['peak']:.0f} | {ours['total'] / hf['total']:.2f}x |")
    print(f"| tokviz em (train from word counts) | {ours['train']:.2f} | | | {ours['train'] / hf['total']:.2f}x |")
    print(f"| sentencepiece (2 threads) | {sp['total']:.2f} | {sp['cpu']:.2f} | {sp['peak']:.0f} | {sp['total'] / hf['total']:.2f}x |")
    print(f"\ntokviz: {ours['em_steps']} EM steps, {ours['rounds']} pruning rounds, vocab {ours['size']} (HF {hf['size']})\n")


def quality(vocab_sizes=(2000, 8000)) -> None:
    import sentencepiece as spm
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from tokviz.models.unigram.trainer import UnigramTrainer
    from tokviz.word_counts import count_words

    lines = [line for line in _corpus_lines() if line.strip()]
    train = [line for i, line in enumerate(lines) if i % 10 != 9]
    held_out = [line for i, line in enumerate(lines) if i % 10 == 9]
    metaspace = pre_tokenizers.Metaspace()
    words = count_words(train, pre_tokenizer=metaspace)
    held_words = count_words(held_out, pre_tokenizer=metaspace)
    n_words = sum(held_words.values())
    print("### Quality: benchmark corpus, every 10th line held out, tokens per Metaspace word\n")
    print("| vocab | Jaccard(tokviz, HF) | tokviz | HF | sentencepiece | tokviz / HF | tokviz / SP |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for vocab_size in vocab_sizes:
        history = UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>").train_from_word_counts(words)
        hf = Tokenizer(models.Unigram())
        hf.pre_tokenizer = metaspace
        hf.train_from_iterator(train, trainer=trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"],
                                                                      unk_token="<unk>", show_progress=False))
        section = json.loads(hf.to_str())["model"]
        hf_model = models.Unigram([tuple(entry) for entry in section["vocab"]], section["unk_id"], False)
        proto = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=proto, vocab_size=vocab_size,
                                       model_type="unigram", minloglevel=2, num_threads=2)
        sp = spm.SentencePieceProcessor(model_proto=proto.getvalue())
        ours_set, hf_set = set(history.model.get_vocab()), set(hf.get_vocab())
        jaccard = len(ours_set & hf_set) / len(ours_set | hf_set)
        ours_tpw = sum(c * len(history.model.tokenize(w)) for w, c in held_words.items()) / n_words
        hf_tpw = sum(c * len(hf_model.tokenize(w)) for w, c in held_words.items()) / n_words
        sp_tpw = sum(len(sp.encode(line)) for line in held_out) / n_words
        print(f"| {vocab_size} | {jaccard:.4f} | {ours_tpw:.4f} | {hf_tpw:.4f} | {sp_tpw:.4f} | {ours_tpw / hf_tpw:.4f} | {ours_tpw / sp_tpw:.4f} |")
    print()


if __name__ == "__main__":
    speed()
    if "--quick" not in sys.argv:
        quality()
