"""Time one vocab-slider move on the Train page: model_at + re-tokenize + render, 20 KB of test text.

Trains once per preset on ~1 MB of a shared corpus (grimm_tales.txt), then for several
slider positions times the three steps the page runs when the slider moves:

1. ``history.model_at(k)`` (uncached: the page caches it, so this is the worst case),
2. ``tokenizer_with_model(config, model).encode(test_text)`` (a new model and a new tokenizer
   each time, so every cache is cold, as on the page's first visit of a size),
3. ``spans_from_encoding`` + ``render_token_spans(..., pinned=True, origins=...)`` of the
   encoding (escaped HTML with click-to-pin cards, as the page draws it with "Show all lines").

The peer: HF ``tokenizers`` loading the same tokenizer (tokviz's exported tokenizer.json)
and encoding the same text, timed in the same run; HF has no ``model_at``, so the ratio is
for the encode step only. Target (issue 4): the whole move under 200 ms.

    python bench/bench_slider.py [--presets gpt2,bert,t5,char_bpe,sp_bpe] [--vocab 5000] [--clock cpu]

``sp_bpe`` is a SentencePiece-like BPE (the T5 preset's NFKC + Metaspace with a BPE model).
Target (issue 13): the whole move under 100 ms.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tokenizers  # noqa: E402

from tokviz.corpus import held_out_split  # noqa: E402
from tokviz.metrics import unknown_token_id  # noqa: E402
from tokviz.pipeline_config import build_tokenizer, build_trainer, tokenizer_with_model  # noqa: E402
from tokviz.presets import PRESETS  # noqa: E402
from tokviz.viz.spans import render_token_spans, spans_from_encoding, token_origins  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "grimm_tales.txt"
TEST_BYTES = 20_000


def sentencepiece_like():
    """A SentencePiece-style BPE (NFKC, Metaspace, BPE with unk), from the T5 preset's text side."""
    from dataclasses import replace

    return replace(PRESETS["t5"].build(), model="BPE", special_tokens=("<unk>",), unk_token="<unk>", post_processor="none")


#: The clock: wall time by default; ``--clock cpu`` uses this process's CPU time (steadier on a
#: busy machine; every step here is single-threaded in both libraries).
CLOCK = time.perf_counter


def best_of(function, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = CLOCK()
        function()
        times.append(CLOCK() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="gpt2,bert,t5,char_bpe,sp_bpe")
    parser.add_argument("--vocab", type=int, default=5000)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: CPU seconds of this process (steadier when the machine is busy)")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    text = CORPUS.read_text(encoding="utf-8-sig")[:1_000_000]
    split = held_out_split(text, every=10, max_test_lines=100_000)
    test_text, used = [], 0
    for line in split.test_lines:
        if used + len(line.encode()) + 1 > TEST_BYTES:
            break
        test_text.append(line)
        used += len(line.encode()) + 1
    test_text = "\n".join(test_text)
    print(f"corpus: {CORPUS.name} first 1 MB ({len(split.train_lines):,} training lines); test text {len(test_text.encode()):,} bytes\n")
    print("| preset | trained | slider at | model_at | encode | render | move total | tokens | HF encode | tokviz/HF encode |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in args.presets.split(","):
        config = sentencepiece_like() if key == "sp_bpe" else PRESETS[key].build()
        started = time.perf_counter()
        trained_tokenizer = build_tokenizer(config)
        trained_tokenizer.train_from_iterator(split.train_lines, build_trainer(config, args.vocab))
        history = trained_tokenizer.training_history
        trained = time.perf_counter() - started
        low, high = history.min_vocab_size, history.max_vocab_size
        for size in sorted({low, (low + high) // 2, high}):
            model_seconds = best_of(lambda: history.model_at(size), 3)
            origins = token_origins(history, size)  # the page caches these per (training, size)
            # A move to a size not seen before builds a new model and a new tokenizer: the model's
            # and the tokenizer's caches are all empty, so time the encode on fresh ones (cold).
            encode_times = []
            for _ in range(5):
                model = history.model_at(size)
                started = CLOCK()
                tokenizer = tokenizer_with_model(config, model)
                encoding = tokenizer.encode(test_text)
                encode_times.append(CLOCK() - started)
            encode_seconds = min(encode_times)
            byte_level = config.byte_alphabet
            # The page draws the spans with click-to-pin cards and the token origins ("Show all lines": all of them).
            render_seconds = best_of(
                lambda: render_token_spans(test_text, spans_from_encoding(encoding, unknown_token_id(tokenizer)), byte_level=byte_level,
                                           pinned=True, origins=origins)
            )
            hf = tokenizers.Tokenizer.from_str(tokenizer.to_str())
            hf_seconds = best_of(lambda: hf.encode(test_text))
            assert hf.encode(test_text).ids == encoding.ids, "tokviz and HF disagree on the test text"
            total = model_seconds + encode_seconds + render_seconds
            print(
                f"| {key} | {high:,} in {trained:.1f} s | {size:,} | {model_seconds * 1e3:.1f} ms | {encode_seconds * 1e3:.1f} ms | "
                f"{render_seconds * 1e3:.1f} ms | **{total * 1e3:.0f} ms** | {len(encoding.ids):,} | {hf_seconds * 1e3:.1f} ms | "
                f"{encode_seconds / hf_seconds:.1f}x |"
            )
    print(f"\nstatistics: python {sys.version.split()[0]}, tokenizers {tokenizers.__version__}; each time is the best of 3-5 runs; "
          f"clock: {args.clock}")


if __name__ == "__main__":
    main()
