"""Time ``tokviz.audit.audit`` on a 50,000-token byte-level BPE and a 32,000-piece Unigram with 1 MB of texts,
next to HF ``tokenizers`` (and ``sentencepiece``) doing the same encodings: every token's own text, every
witness, and the texts encoded and decoded back.

    python3 bench/bench_audit.py                       # both kinds, texts from ../shared/corpora
    python3 bench/bench_audit.py --kinds bpe --mb 1
    python3 bench/bench_audit.py --kinds "catalog:Llama 3,catalog:Mistral v1"   # real tokenizers (tokviz.catalog)

The tokenizers are trained here by HF (BPE) and sentencepiece (Unigram) on the shared corpora, so the
bench needs ``../shared/corpora`` (or ``--corpus FILE``). The audit runs in this one process, on one core;
the peer's time is measured in the same run, so the ratio survives a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def corpus_text(paths: list[Path]) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


def train_bpe(text: str, vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tokenizer.train_from_iterator(text.splitlines(), trainer)
    return tokenizer


def train_unigram(text: str, vocab_size: int, folder: str) -> str:
    import sentencepiece as spm

    path = os.path.join(folder, "corpus.txt")
    Path(path).write_text(text, encoding="utf-8")
    prefix = os.path.join(folder, "unigram")
    spm.SentencePieceTrainer.train(input=path, model_prefix=prefix, vocab_size=vocab_size, model_type="unigram",
                                   minloglevel=2,
                                   num_threads=1, seed_sentencepiece_size=2_000_000, max_sentencepiece_length=24)
    return prefix + ".model"


def peer_time(encode_texts, decode_ids, report, texts: list[str]) -> float:
    """The peer's time for the encodings the audit made: own texts, witnesses, the texts and their decoding."""
    own = [v.own_text for v in report.verdicts if v.own_text]
    witnesses = [v.witness for v in report.verdicts if v.witness]
    start = time.perf_counter()
    encode_texts(own)
    encode_texts(witnesses)
    encoded = encode_texts(texts)
    decode_ids(encoded)
    return time.perf_counter() - start


def run(kind: str, train_text: str, texts: list[str], folder: str, unigram_text: str) -> None:
    import tokviz
    from tokviz.audit import audit

    if kind.startswith("catalog:"):  # a real tokenizer from the installed packages (tokviz.catalog)
        from tokenizers import Tokenizer as HfTokenizer

        from tokviz import catalog

        tokenizer = catalog.load(kind.removeprefix("catalog:"))
        hf = HfTokenizer.from_str(tokenizer.to_str())

        def encode_texts(items):
            return [e.ids for e in hf.encode_batch(items, add_special_tokens=False)]

        def decode_ids(ids):
            return hf.decode_batch(ids)

        peer = "HF tokenizers on the same tokenizer.json (encode_batch, all its threads)"
    elif kind == "bpe":
        hf = train_bpe(train_text, 50_000)
        tokenizer = tokviz.Tokenizer.from_str(hf.to_str())

        def encode_texts(items):
            return [e.ids for e in hf.encode_batch(items, add_special_tokens=False)]

        def decode_ids(ids):
            return hf.decode_batch(ids)

        peer = "HF tokenizers (encode_batch, all its threads)"
    else:
        import sentencepiece as spm

        model = train_unigram(unigram_text, 32_000, folder)
        tokenizer = tokviz.load(model)
        processor = spm.SentencePieceProcessor(model_file=model)

        def encode_texts(items):
            return processor.encode(items)

        def decode_ids(ids):
            return processor.decode(ids)

        peer = "sentencepiece (encode of lists)"
    size = tokenizer.get_vocab_size()
    start = time.perf_counter()
    cpu_start = time.process_time()
    report = audit(tokenizer, texts)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    peer_seconds = peer_time(encode_texts, decode_ids, report, texts)
    chars = sum(map(len, texts))
    counts = {row["finding"]: row["tokens"] for row in report.summary()}
    print(f"{kind}: vocab {size:,}, texts {len(texts):,} lines / {chars / 1e6:.2f} M characters")
    print(f"  tokviz audit: {seconds:.1f} s wall, {cpu:.1f} s CPU (one process)")
    print(f"  {peer}: {peer_seconds:.2f} s for the same encodings (own texts, witnesses, texts and decoding)")
    print(f"  ratio audit / peer encodings: {seconds / peer_seconds:.1f}x; under 60 s: {'yes' if seconds < 60 else 'NO'}")
    print("  findings: " + ", ".join(f"{name}: {count:,}" for name, count in counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default="bpe,unigram")
    parser.add_argument("--mb", type=float, default=1.0, help="megabytes of texts to audit with")
    parser.add_argument("--corpus", action="append", type=Path, help="training corpus files (default: the shared corpora)")
    args = parser.parse_args()
    training = args.corpus or [CORPORA / name for name in ("big.txt", "wikitext2_valid.txt", "tinyshakespeare.txt", "grimm_tales.txt")]
    if not all(path.exists() for path in training):
        sys.exit(f"Training corpora not found ({', '.join(map(str, training))}); pass --corpus FILE.")
    train_text = corpus_text(training)
    held_out = CORPORA / "wikitext2_test.txt"
    source = held_out.read_text(encoding="utf-8") if held_out.exists() else train_text
    budget = int(args.mb * 1_000_000)
    texts, total = [], 0
    for line in source.splitlines():
        if line.strip():
            texts.append(line)
            total += len(line.encode("utf-8"))
            if total >= budget:
                break
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (shared with other sessions)")
    with tempfile.TemporaryDirectory() as folder:
        for kind in args.kinds.split(","):
            run(kind.strip(), train_text, texts, folder, train_text + "\n" + source)


if __name__ == "__main__":
    main()
