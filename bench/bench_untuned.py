"""Pipelines nobody tuned for: ``encode()`` per line, cold and warm, tokviz vs HF ``tokenizers``, same run.

Issue 34 asks for at most 2x HF on every pipeline kind, "including kinds the bench does not
build". This script builds eight such kinds with HF's trainers (in memory, or saved with
``--save-dir`` and read back with ``--from-dir``), modelled on real tokenizer.json files:

* ``wordpiece_punct``: WordPiece on WhitespaceSplit + Punctuation + Digits, Lowercase;
* ``llama_digits``: a Llama-type byte-fallback BPE (Prepend/Replace normalizer) with Digits;
* ``falcon``: BPE on Punctuation + ByteLevel + Digits (Falcon's pre-tokenizer, ByteLevel post-processor);
* ``bloom``: BPE on BLOOM's Split regex then ByteLevel(use_regex=False);
* ``gemma``: byte-fallback BPE, Replace(" ", "▁"), no pre-tokenizer, no prepended mark;
* ``mistral``: byte-fallback BPE on Metaspace(prepend_scheme="first", split=False), no normalizer;
* ``deberta``: Unigram with a Precompiled charsmap and Metaspace, [CLS] $A [SEP];
* ``bert_strip``: WordPiece on BertPreTokenizer with NFD + StripAccents + Lowercase;
* ``wordlevel_char``: WordLevel on CharDelimiterSplit(" ").

The test lines are :func:`bench_pipelines.test_lines` (corpus, multilingual and Chinese lines).
``--profile`` also runs one cold pass of tokviz under cProfile and splits its time between
the word encoders (``engine/bpe``, ``engine/wordpiece``, ``engine/unigram``, ``tokviz/models``)
and the rest (cuts, normalization, offsets, assembly).

    python bench/bench_untuned.py --clock cpu --save-dir /tmp/u34
    python bench/bench_untuned.py --clock cpu --from-dir /tmp/u34 --kinds falcon,bloom --profile
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_pipelines as shared  # noqa: E402

KINDS = ("wordpiece_punct", "llama_digits", "falcon", "bloom", "gemma", "mistral", "deberta", "bert_strip", "wordlevel_char")
#: BLOOM's Split pattern (as its tokenizer.json has it).
BLOOM_PATTERN = " ?[^(\\s|[.,!?…。，、।۔،])]+"
BYTE_SPECIALS = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]


def _byte_fallback_bpe(lines: list[str], vocab_size: int, normalizer: dict | None, pre_tokenizer: dict | None):
    """A Llama-type BPE (byte fallback, trained on Metaspace words) with the given components."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=BYTE_SPECIALS, limit_alphabet=1000, show_progress=False)
    tok.train_from_iterator(lines + shared.chinese_lines(len(lines) // 4), trainer)
    data = json.loads(tok.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("<0x")]
    data["normalizer"] = normalizer
    data["pre_tokenizer"] = pre_tokenizer
    tok = Tokenizer.from_str(json.dumps(data))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    return tok


def build_hf(kind: str, lines: list[str], vocab_size: int):
    """One HF tokenizer of ``kind``, trained on ``lines``."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    byte_alphabet = pre_tokenizers.ByteLevel.alphabet()
    if kind in ("wordpiece_punct", "bert_strip"):
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        if kind == "wordpiece_punct":
            tok.normalizer = normalizers.Lowercase()
            tok.pre_tokenizer = pre_tokenizers.Sequence(
                [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("merged_with_next"), pre_tokenizers.Digits(True)]
            )
        else:
            tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
            tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False))
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
        tok.decoder = decoders.WordPiece()
        return tok
    if kind == "llama_digits":
        prepend_replace = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
        return _byte_fallback_bpe(lines, vocab_size, prepend_replace, {"type": "Digits", "individual_digits": True})
    if kind == "gemma":
        return _byte_fallback_bpe(lines, vocab_size, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}, None)
    if kind == "mistral":
        metaspace = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
        return _byte_fallback_bpe(lines, vocab_size, None, metaspace)
    if kind in ("falcon", "bloom"):
        tok = Tokenizer(models.BPE())
        if kind == "falcon":
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
                pre_tokenizers.Digits(individual_digits=False),
            ])
            specials = [">>TITLE<<", ">>ABSTRACT<<", ">>INTRODUCTION<<", "<|endoftext|>"]
        else:
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(BLOOM_PATTERN), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ])
            specials = ["<unk>", "<s>", "</s>", "<pad>"]
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, initial_alphabet=byte_alphabet, show_progress=False)
        tok.train_from_iterator(lines, trainer)
        tok.post_processor = processors.ByteLevel(trim_offsets=True)
        tok.decoder = decoders.ByteLevel()
        return tok
    if kind == "deberta":
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.Sequence([normalizers.Precompiled(shared.precompiled_charsmap(lines)), normalizers.Replace(Regex(" {2,}"), " ")])
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]
        tok.train_from_iterator(lines, trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=specials, unk_token="[UNK]", show_progress=False))
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))]
        )
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        return tok
    if kind == "wordlevel_char":
        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.CharDelimiterSplit(" ")
        tok.train_from_iterator(lines, trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False))
        return tok
    raise SystemExit(f"unknown kind {kind!r}; choose from {', '.join(KINDS)}")


#: Modules whose time is the word encoders' (helper 34b's side of the table).
WORD_ENCODER_FILES = ("tokviz/engine/bpe.py", "tokviz/engine/wordpiece.py", "tokviz/engine/unigram.py", "tokviz/models/")


def profile_split(tok_class, text: str, lines: list[str]) -> tuple[float, float]:
    """One cold pass under cProfile: the shares of time (own time; a builtin's shared among its
    callers) in the word encoders and elsewhere in tokviz."""
    tok = tok_class.from_str(text)
    profile = cProfile.Profile()
    profile.enable()
    for line in lines:
        tok.encode(line)
    profile.disable()
    stats = pstats.Stats(profile).stats

    def in_encoder(path: str) -> bool:
        return any(name in path for name in WORD_ENCODER_FILES)

    encoder = 0.0
    for (path, _, _), (_, _, own, _, callers) in stats.items():
        if in_encoder(path):
            encoder += own
        elif path == "~" and callers:
            # A builtin's own time goes to its callers, in proportion to the time each call took.
            called = sum(timing[2] for timing in callers.values()) or 1.0
            encoder += own * sum(timing[2] for caller, timing in callers.items() if in_encoder(caller[0])) / called
    total = sum(entry[2] for entry in stats.values())
    return encoder / total, 1 - encoder / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--train-limit", type=float, default=3e6, help="train on the first N characters of the corpora")
    parser.add_argument("--vocab-size", type=int, default=25_000)
    parser.add_argument("--every", type=int, default=53, help="test on every N-th corpus line")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    parser.add_argument("--save-dir", default=None, help="also write each kind's tokenizer.json here (KIND.json)")
    parser.add_argument("--from-dir", default=None, help="read KIND.json from this directory instead of training")
    parser.add_argument("--profile", action="store_true", help="also split tokviz's cold time: word encoders / the rest")
    args = parser.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    shared.CLOCK = clock

    import tokenizers

    from tokviz import Tokenizer

    train = [] if args.from_dir else shared.read_corpus(int(args.train_limit))
    lines = shared.test_lines(args.every)
    print(f"testing on {len(lines):,} lines, encode() per line; clock: {args.clock}; warm: best of {args.rounds}\n", flush=True)
    columns = "| kind | load HF | tokviz | ratio | cold HF | tokviz | ratio | warm HF | tokviz | ratio | identical |"
    if args.profile:
        columns += " cold: word encoders / rest |"
    print(columns)
    print("|" + "---|" * (columns.count("|") - 1))
    for kind in args.kinds.split(","):
        if args.from_dir:
            text = Path(args.from_dir, f"{kind}.json").read_text(encoding="utf-8")
        else:
            text = build_hf(kind, train, args.vocab_size).to_str()
            if args.save_dir:
                Path(args.save_dir).mkdir(parents=True, exist_ok=True)
                Path(args.save_dir, f"{kind}.json").write_text(text, encoding="utf-8")
        hf_load = shared.best(lambda: tokenizers.Tokenizer.from_str(text), 3)
        ours_load = shared.best(lambda: Tokenizer.from_str(text), 3)
        hf, ours = tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)
        hf_cold, hf_encodings = shared.encode_all(hf.encode, lines)
        ours_cold, ours_encodings = shared.encode_all(ours.encode, lines)
        identical = sum((a.ids, a.offsets) == (b.ids, b.offsets) for a, b in zip(hf_encodings, ours_encodings))
        del hf_encodings, ours_encodings
        hf_warm = min(shared.encode_all(hf.encode, lines)[0] for _ in range(args.rounds))
        ours_warm = min(shared.encode_all(ours.encode, lines)[0] for _ in range(args.rounds))
        row = (f"| {kind} | {hf_load * 1e3:.1f} ms | {ours_load * 1e3:.1f} ms | {ours_load / hf_load:.2f}x | "
               f"{hf_cold * 1e3:.0f} ms | {ours_cold * 1e3:.0f} ms | {ours_cold / hf_cold:.2f}x | "
               f"{hf_warm * 1e3:.0f} ms | {ours_warm * 1e3:.0f} ms | {ours_warm / hf_warm:.2f}x | {identical}/{len(lines)} |")
        if args.profile:
            gc.collect()
            encoder, rest = profile_split(Tokenizer, text, lines)
            row += f" {encoder:.0%} / {rest:.0%} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
