"""Encoding and loading speed on every kind of pipeline: tokviz vs HF ``tokenizers``, same run.

For each kind of pretrained tokenizer in issue 13's table, HF ``tokenizers`` builds one with
the same components as the real ones and trains it on the shared corpora (tokviz cannot use
the real files here); tokviz loads HF's ``tokenizer.json``. Then, per kind, in one run:

* **load**: ``Tokenizer.from_str`` of the same JSON (best of 3 each);
* **encode cold**: one ``encode()`` per line on a freshly loaded tokenizer (empty word caches);
* **encode warm**: the same lines again on the same tokenizer (best of ``--rounds``);
* **batch**: ``encode_batch`` of all lines on a freshly loaded tokenizer (cold);
* ``--warmed-load``: only the loads, in one warmed process (two loads of each first, then the
  best of 5 ``from_str``), beside the best of 3 the table gives;
* ``--cold-calls``: each call cold (``model._clear_cache()`` before it, as HF's models offer);
* the ids of every line are compared (they must be identical), and tokviz's peak Python
  memory while encoding (``tracemalloc``) is printed with the process's peak RSS at the end.

The test lines are every ``--every``-th line of the five shared corpora (about 2,000 lines)
plus multilingual and emoji lines. Ratios are tokviz's time over HF's (lower is better;
issue 13's target is at most 2x). HF may use threads in ``encode_batch``; HF's per-call
``encode`` is single-threaded.

    python bench/bench_pipelines.py                    # all kinds, full corpus for training
    python bench/bench_pipelines.py --kinds bert,t5 --train-limit 2e6
    python bench/bench_pipelines.py --long-text 100000 --kinds llama_zh,clip   # one long mixed-script encode()
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPORA = ROOT.parent / "shared" / "corpora"
FILES = ("tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt")

# Lines in other scripts and with emoji (the shared corpora are English).
MULTILINGUAL = [
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Le cœur a ses raisons que la raison ne connaît point.",
    "¿Dónde está la biblioteca? ¡Allí, señor!",
    "Быстрая коричневая лиса прыгает через ленивую собаку.",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",
    "我们今天去公园散步，天气非常好。",
    "東京は日本の首都です。桜が咲いています。",
    "한국어 문장도 잘 처리되어야 합니다.",
    "مرحبا بالعالم، هذه جملة عربية.",
    "שלום עולם, זה משפט בעברית.",
    "नमस्ते दुनिया, यह एक हिंदी वाक्य है।",
    "สวัสดีครับ ยินดีต้อนรับ",
    "Tiếng Việt có nhiều dấu: ă â ê ô ơ ư đ.",
    "I ❤️ tokenizers 🤗🚀 — emoji 👩‍👩‍👧‍👦 and flags 🇫🇷🇯🇵!",
    "Smileys 😀😃😄 and hands 👍🏽👋🏿 in one line.",
    "Mixed: naïve café, Ångström, ﬁ ligature, ① circled, Ｆｕｌｌｗｉｄｔｈ.",
    "Tabs\tand  double  spaces   and trailing spaces   ",
    "Numbers 3.14159, 1,000,000 and dates 2026-11-24.",
    "Code: def f(x): return x**2  # comment",
    "Accents: e\u0301 (combining) vs é (precomposed).",
]

CLIP_PATTERN = (
    r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
)
KINDS = (
    "wordlevel", "bert", "clip", "whisper", "bart", "llama2", "llama2_spm", "openllama", "albert", "t5",
    "llama_zh", "split_added",
)
#: The regex of the ``split_added`` kind: words, single digits, runs of punctuation (isolated).
SPLIT_PATTERN = r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+"


def chinese_lines(count: int, seed: int = 0) -> list[str]:
    """``count`` lines of made-up Chinese text with English words and numbers mixed in.

    The shared corpora are English and no Chinese corpus ships with the project, so the text is
    generated (deterministically): "words" of one to three chars drawn Zipf-like from the 3,000
    first CJK ideographs (a common word recurs, as in real text, so BPE learns multi-char
    tokens), clauses ended by Chinese punctuation, and an English word or a number now and then.
    """
    import random

    rng = random.Random(seed)
    chars = [chr(0x4E00 + i) for i in range(3000)]
    char_weights = [1 / (i + 1) for i in range(len(chars))]
    words = ["".join(rng.choices(chars, char_weights, k=rng.choice((1, 2, 2, 2, 3)))) for _ in range(6000)]
    word_weights = [1 / (i + 1) ** 0.9 for i in range(len(words))]
    english = "the model data token Python GPU training of and vocabulary".split()
    lines = []
    for _ in range(count):
        clauses = []
        for _ in range(rng.randint(1, 4)):
            parts = rng.choices(words, word_weights, k=rng.randint(3, 12))
            if rng.random() < 0.3:
                parts.insert(rng.randrange(len(parts)), f" {rng.choice(english)} ")
            if rng.random() < 0.15:
                parts.insert(rng.randrange(len(parts)), str(rng.randint(1, 2030)))
            clauses.append("".join(parts) + rng.choice("，，。、；"))
        lines.append("".join(clauses)[:-1] + rng.choice("。！？"))
    return lines


def read_corpus(limit: int | None) -> list[str]:
    text = "".join((CORPORA / name).read_text(encoding="utf-8-sig") for name in FILES)
    return (text[:limit] if limit else text).splitlines()


def test_lines(every: int) -> list[str]:
    lines = read_corpus(None)[::every]
    extra = [line for _ in range(3) for line in MULTILINGUAL]
    # Chinese lines with English mixed in (a different seed from the training text's).
    return lines + extra + chinese_lines(60, seed=1)


def precompiled_charsmap(lines: list[str], rule: str = "nmt_nfkc") -> bytes:
    """A real SentencePiece ``precompiled_charsmap`` (train a tiny model with that rule)."""
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines[:2000]),
        model_writer=model,
        vocab_size=200,
        hard_vocab_limit=False,
        normalization_rule_name=rule,
        minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


def build_hf(kind: str, lines: list[str], vocab_size: int):
    """One HF tokenizer of ``kind``, trained on ``lines``, with the real ones' components."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    byte_alphabet = pre_tokenizers.ByteLevel.alphabet()
    if kind == "wordlevel":
        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.train_from_iterator(lines, trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False))
        return tok
    if kind == "bert":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False))
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
        )
        tok.decoder = decoders.WordPiece()
        return tok
    if kind == "clip":
        tok = Tokenizer(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>", continuing_subword_prefix=""))
        tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(CLIP_PATTERN), behavior="removed", invert=True),
                # (its own regex on, as transformers' CLIP converter writes it; it cuts no piece
                # of the split, so the model learns the same merges as without)
                pre_tokenizers.ByteLevel(add_prefix_space=False),
            ]
        )
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=["<|startoftext|>", "<|endoftext|>"], end_of_word_suffix="</w>",
            initial_alphabet=byte_alphabet, show_progress=False,
        )
        tok.train_from_iterator(lines, trainer)
        tok.post_processor = processors.RobertaProcessing(
            ("<|endoftext|>", tok.token_to_id("<|endoftext|>")), ("<|startoftext|>", tok.token_to_id("<|startoftext|>")),
            add_prefix_space=False, trim_offsets=False,
        )
        tok.decoder = decoders.BPEDecoder(suffix="</w>")
        return tok
    if kind in ("whisper", "bart"):
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        specials = ["<|endoftext|>"] if kind == "whisper" else ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, initial_alphabet=byte_alphabet, show_progress=False)
        tok.train_from_iterator(lines, trainer)
        tok.decoder = decoders.ByteLevel()
        if kind == "whisper":
            # Whisper: special tokens for the task and 1,501 timestamps, ignore_merges on.
            extra = ["<|startoftranscript|>", "<|en|>", "<|de|>", "<|fr|>", "<|transcribe|>", "<|translate|>", "<|notimestamps|>"]
            tok.add_special_tokens(extra + [f"<|{i * 0.02:.2f}|>" for i in range(1501)])
            tok.post_processor = processors.TemplateProcessing(
                single="<|startoftranscript|> <|notimestamps|> $A <|endoftext|>",
                special_tokens=[(t, tok.token_to_id(t)) for t in ("<|startoftranscript|>", "<|notimestamps|>", "<|endoftext|>")],
            )
            data = json.loads(tok.to_str())
            data["model"]["ignore_merges"] = True
            return Tokenizer.from_str(json.dumps(data))
        # BART-like: 1,029 added tokens (5 special + 1,024 ordinary ones, normalized and not).
        from tokenizers import AddedToken

        tok.add_tokens([AddedToken(f"<extra_{i}>", normalized=i % 2 == 0) for i in range(1000)])
        tok.add_tokens(["madeupword" + "abcdefghijklmnopqrstuvwx"[i] for i in range(24)])
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")), trim_offsets=True)
        return tok
    if kind in ("llama2", "openllama"):
        # Trained with Metaspace words (as SentencePiece splits by whitespace); used as the
        # converted files are: Llama 2 with the Prepend/Replace normalizer and no
        # pre-tokenizer, OpenLLaMA with the newer Metaspace(prepend_scheme="first", split=False).
        tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, limit_alphabet=150, show_progress=False)
        train_lines = lines + [line for _ in range(20) for line in MULTILINGUAL] if kind == "openllama" else lines
        tok.train_from_iterator(train_lines, trainer)
        data = json.loads(tok.to_str())
        # Byte tokens are ordinary vocabulary entries in the real files (not added tokens).
        data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("<0x")]
        if kind == "llama2":
            data["normalizer"] = {
                "type": "Sequence",
                "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}],
            }
            data["pre_tokenizer"] = None
        else:
            data["normalizer"] = None
            data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
        tok = Tokenizer.from_str(json.dumps(data))
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
        )
        return tok
    if kind == "llama2_spm":
        # Llama 2's tokenizer.json as transformers makes it from a SentencePiece BPE model: every
        # split of a piece into two pieces is a merge (most tokens are made by several), in HF's
        # SentencePieceExtractor order (tokviz.sentencepiece.convert.bpe_merges follows it); the
        # model here is trained by the sentencepiece library (byte fallback, digits split).
        import sentencepiece

        sys.path.insert(0, str(ROOT))
        from tokviz.sentencepiece.convert import bpe_merges

        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=model, model_type="bpe", vocab_size=vocab_size,
            byte_fallback=True, split_digits=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
            allow_whitespace_only_pieces=True, character_coverage=0.99995, unk_id=0, bos_id=1, eos_id=2,
            input_sentence_size=len(lines), minloglevel=2, num_threads=2,
        )
        processor = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())
        pieces = [(processor.id_to_piece(i), processor.get_score(i)) for i in range(processor.get_piece_size())]
        vocab = {piece: index for index, (piece, _) in enumerate(pieces)}
        tok = Tokenizer(models.BPE(vocab, bpe_merges(pieces), unk_token="<unk>", fuse_unk=True, byte_fallback=True))
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.add_special_tokens(["<unk>", "<s>", "</s>"])
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
        )
        return tok
    if kind == "llama_zh":
        # A Llama-type BPE (byte fallback, no pre-tokenizer: a whole line is one word) whose
        # vocabulary holds Chinese and English, trained with Metaspace words as SentencePiece
        # splits them, then used with Llama 2's Prepend/Replace normalizer.
        tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, limit_alphabet=4000, show_progress=False)
        tok.train_from_iterator(lines + chinese_lines(len(lines) // 2), trainer)
        data = json.loads(tok.to_str())
        data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("<0x")]
        data["normalizer"] = {
            "type": "Sequence",
            "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}],
        }
        data["pre_tokenizer"] = None
        tok = Tokenizer.from_str(json.dumps(data))
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
        )
        return tok
    if kind == "split_added":
        # A BPE behind a Split regex (punctuation isolated, whitespace removed), with NFKC and a
        # list of added tokens: specials, and ordinary words some of which the text contains.
        from tokenizers import AddedToken

        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated")
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["[UNK]", "[BOS]", "[EOS]"], show_progress=False)
        tok.train_from_iterator(lines, trainer)
        tok.add_special_tokens(["<|user|>", "<|assistant|>", "<|system|>"])
        tok.add_tokens([AddedToken(word, single_word=i % 3 == 0, lstrip=i % 4 == 1, normalized=i % 2 == 0)
                        for i, word in enumerate(["King", "thee", "said", "Gretel", "::", "Valkyria", "the game", "🤗"])])
        tok.post_processor = processors.TemplateProcessing(
            single="[BOS] $A [EOS]", special_tokens=[("[BOS]", tok.token_to_id("[BOS]")), ("[EOS]", tok.token_to_id("[EOS]"))]
        )
        tok.decoder = decoders.BPEDecoder()
        return tok
    if kind in ("albert", "t5"):
        charsmap = precompiled_charsmap(lines)
        tok = Tokenizer(models.Unigram())
        steps = [normalizers.Precompiled(charsmap), normalizers.Replace(Regex(" {2,}"), " ")]
        if kind == "albert":
            steps = [
                normalizers.Replace("``", '"'), normalizers.Replace("''", '"'),
                normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase(), *steps,
            ]
        tok.normalizer = normalizers.Sequence(steps)
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        specials = ["<pad>", "</s>", "<unk>"] if kind == "t5" else ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>", show_progress=False)
        tok.train_from_iterator(lines, trainer)
        if kind == "t5":
            # As tokenizer.json files made by older transformers converters have it (T5's and
            # ALBERT's on the Hub): whitespace split off first, then each word gets its '▁'.
            tok.pre_tokenizer = pre_tokenizers.Sequence(
                [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")]
            )
            tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))])
        else:
            tok.post_processor = processors.TemplateProcessing(
                single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))]
            )
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        return tok
    raise SystemExit(f"unknown kind {kind!r}; choose from {', '.join(KINDS)}")


CLOCK = time.perf_counter


def best(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = CLOCK()
        function()
        times.append(CLOCK() - started)
    return min(times)


def encode_all(encode, lines: list[str]) -> tuple[float, list]:
    # (A collection first: else a pass over what the last load or run left behind, e.g. the
    # containers tokviz's from_str makes with the collector paused, lands in the next run timed.)
    gc.collect()
    started = CLOCK()
    encodings = [encode(line) for line in lines]
    return CLOCK() - started, encodings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--train-limit", type=float, default=None, help="train on the first N characters only")
    parser.add_argument("--vocab-size", type=int, default=25_000)
    parser.add_argument("--every", type=int, default=53, help="test on every N-th corpus line")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=0, help="also time encode_batch(..., processes=N)")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall",
        help="cpu: CPU seconds of this process for load and encode (steadier on a busy machine; "
        "per-call encode is single-threaded in both libraries); batches are always wall time",
    )
    parser.add_argument(
        "--large-batch", type=int, default=0,
        help="only time encode_batch of every N-th corpus line (a large batch) in one process and in --processes",
    )
    parser.add_argument(
        "--save-dir", default=None,
        help="also write each kind's tokenizer.json here (KIND.json), for a later run with --from-dir",
    )
    parser.add_argument(
        "--from-dir", default=None,
        help="load KIND.json from this directory instead of training: a fresh process that has only loaded "
        "the tokenizers (HF's timings depend on what the process did before)",
    )
    parser.add_argument(
        "--long-text", type=int, default=0,
        help="only time one encode() of the test lines joined by newlines, cut to N characters (cold, then warm)",
    )
    parser.add_argument(
        "--ours-first", action="store_true",
        help="time tokviz's cold pass before HF's (HF's first cold pass in a process is the slower one, by up to "
        "1.5x: with --from-dir and one kind, this is the order that gives HF its best cold figure)",
    )
    parser.add_argument(
        "--script-lines", type=int, default=0,
        help="only time N lines of each of three scripts (Chinese, Korean, Cyrillic), made of the chars of the "
        "multilingual lines in new combinations (a new word per line or more): cold on a fresh tokenizer, then warm",
    )
    parser.add_argument(
        "--cold-calls", action="store_true",
        help="only time encode() per line with the model's word caches emptied before every call "
        "(model._clear_cache(), BPE and Unigram models; WordPiece and WordLevel have none in HF)",
    )
    parser.add_argument(
        "--warmed-load", action="store_true",
        help="only time the loads: best of 3, then (two loads of each first) best of 5 in the warmed process",
    )
    args = parser.parse_args()
    global CLOCK
    if args.clock == "cpu":  # (the switch was printed but never applied until 2026-11-24 19:15 UTC)
        CLOCK = time.process_time

    import tokenizers

    from tokviz import Tokenizer

    if args.large_batch:
        large_batch(args)
        return
    train = [] if args.from_dir else read_corpus(int(args.train_limit) if args.train_limit else None)
    if args.long_text:
        long_text(args, train)
        return
    if args.cold_calls:
        cold_calls(args, train)
        return
    if args.warmed_load:
        warmed_loads(args, train)
        return
    if args.script_lines:
        script_lines(args, train)
        return
    lines = test_lines(args.every)
    megabytes = sum(len(line.encode()) for line in lines) / 1e6
    print(f"training on {len(train):,} lines; testing on {len(lines):,} lines ({megabytes:.2f} MB, "
          f"{len(MULTILINGUAL) * 3} multilingual/emoji, 60 Chinese); clock: {args.clock}\n", flush=True)
    header = "| kind | load HF | load tokviz | ratio | encode cold HF | tokviz | ratio | encode warm HF | tokviz | ratio | batch HF | tokviz | ratio | identical | tokviz peak |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    summary = []
    for kind in args.kinds.split(","):
        text = tokenizer_json(kind, train, args)
        hf_load = best(lambda: tokenizers.Tokenizer.from_str(text), 3)
        ours_load = best(lambda: Tokenizer.from_str(text), 3)

        hf_fresh, ours_fresh = tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)
        if args.ours_first:
            ours_cold, ours_encodings = encode_all(ours_fresh.encode, lines)
            hf_cold, hf_encodings = encode_all(hf_fresh.encode, lines)
        else:
            hf_cold, hf_encodings = encode_all(hf_fresh.encode, lines)
            ours_cold, ours_encodings = encode_all(ours_fresh.encode, lines)
        identical = sum(a.ids == b.ids for a, b in zip(hf_encodings, ours_encodings))
        del hf_encodings, ours_encodings
        hf_warm = min(encode_all(hf_fresh.encode, lines)[0] for _ in range(args.rounds))
        ours_warm = min(encode_all(ours_fresh.encode, lines)[0] for _ in range(args.rounds))

        hf_batch_tok, ours_batch_tok = tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)
        started = time.perf_counter()
        hf_batch_tok.encode_batch(lines)
        hf_batch = time.perf_counter() - started
        started = time.perf_counter()
        ours_batch_encodings = ours_batch_tok.encode_batch(lines)
        ours_batch = time.perf_counter() - started
        batch_identical = sum(a.ids == b.ids for a, b in zip(hf_fresh.encode_batch(lines), ours_batch_encodings))
        # Peak memory in a separate cold pass (tracemalloc slows Python allocations down).
        tracemalloc.start()
        encode_all(Tokenizer.from_str(text).encode, lines)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        row = [
            kind,
            f"{hf_load * 1e3:.1f} ms", f"{ours_load * 1e3:.1f} ms", f"{ours_load / hf_load:.2f}x",
            f"{hf_cold * 1e3:.0f} ms", f"{ours_cold * 1e3:.0f} ms", f"{ours_cold / hf_cold:.2f}x",
            f"{hf_warm * 1e3:.0f} ms", f"{ours_warm * 1e3:.0f} ms", f"{ours_warm / hf_warm:.2f}x",
            f"{hf_batch * 1e3:.0f} ms", f"{ours_batch * 1e3:.0f} ms", f"{ours_batch / hf_batch:.2f}x",
            f"{identical}/{len(lines)}" + ("" if batch_identical == len(lines) else f" (batch {batch_identical})"),
            f"{peak / 1e6:.1f} MB",
        ]
        print("| " + " | ".join(row) + " |", flush=True)
        summary.append((kind, ours_load / hf_load, ours_cold / hf_cold, ours_warm / hf_warm, ours_batch / hf_batch))
        if args.processes:
            pool_tok = Tokenizer.from_str(text)
            started = time.perf_counter()
            pooled = pool_tok.encode_batch(lines, processes=args.processes)
            pooled_seconds = time.perf_counter() - started
            same = sum(a.ids == b.ids for a, b in zip(pooled, ours_batch_encodings))
            print(f"|   {kind}: encode_batch(processes={args.processes}) {pooled_seconds * 1e3:.0f} ms "
                  f"(x{ours_batch / pooled_seconds:.2f} vs one process), identical {same}/{len(lines)}", flush=True)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess peak RSS: {peak_rss:.0f} MB (both libraries, all kinds)")
    worst = max(summary, key=lambda row: max(row[1:]))
    print(f"worst ratio: {worst[0]} (load {worst[1]:.2f}x, cold {worst[2]:.2f}x, warm {worst[3]:.2f}x, batch {worst[4]:.2f}x)")


def tokenizer_json(kind: str, train: list[str], args) -> str:
    """The kind's tokenizer.json: trained by HF here, or read from --from-dir (and saved to --save-dir)."""
    if args.from_dir:
        with open(f"{args.from_dir}/{kind}.json", encoding="utf-8") as file:
            return file.read()
    text = build_hf(kind, train, args.vocab_size).to_str()
    if args.save_dir:
        import os

        os.makedirs(args.save_dir, exist_ok=True)
        with open(f"{args.save_dir}/{kind}.json", "w", encoding="utf-8") as file:
            file.write(text)
    return text


def long_text(args, train: list[str]) -> None:
    """One ``encode()`` of a long text (the test lines joined by newlines): cold on a fresh
    tokenizer, then warm (best of --rounds), both libraries, ids and offsets compared."""
    import tokenizers

    from tokviz import Tokenizer

    corpus = read_corpus(None)[:: args.every]
    chinese = chinese_lines(400, seed=2)
    # Mixed scripts, CJK included: every fifth line a multilingual one, every fifth a Chinese one.
    mixed = [
        line for index, english in enumerate(corpus)
        for line in (english, MULTILINGUAL[index % len(MULTILINGUAL)] if index % 5 == 0 else None,
                     chinese[index % len(chinese)] if index % 5 == 2 else None)
        if line is not None
    ]
    texts = {"corpus": "\n".join(corpus)[: args.long_text], "mixed scripts": "\n".join(mixed)[: args.long_text]}
    print(f"one encode() of {args.long_text:,} characters of test lines joined by newlines; clock: {args.clock}\n")
    cold_warm_header("text")
    for kind in args.kinds.split(","):
        json_text = tokenizer_json(kind, train, args)
        for name, text in texts.items():
            times = []
            results = []
            for cls in (tokenizers.Tokenizer, Tokenizer):
                tok = cls.from_str(json_text)
                gc.collect()
                started = CLOCK()
                encoding = tok.encode(text)
                cold = CLOCK() - started
                warm = best(lambda: tok.encode(text), args.rounds)
                times.append((cold, warm))
                results.append((encoding.ids, encoding.offsets))
            (hf_cold, hf_warm), (ours_cold, ours_warm) = times
            cold_warm_row(kind, name, hf_cold, ours_cold, hf_warm, ours_warm, results[0] == results[1])


def cold_warm_header(what: str) -> None:
    print(f"| kind | {what} | cold HF | tokviz | ratio | warm HF | tokviz | ratio | identical |")
    print("|---|---|---|---|---|---|---|---|---|")


def cold_warm_row(kind: str, what: str, hf_cold: float, ours_cold: float, hf_warm: float, ours_warm: float, identical: Any) -> None:
    print(f"| {kind} | {what} | {hf_cold * 1e3:.1f} ms | {ours_cold * 1e3:.1f} ms | {ours_cold / hf_cold:.2f}x | "
          f"{hf_warm * 1e3:.1f} ms | {ours_warm * 1e3:.1f} ms | {ours_warm / hf_warm:.2f}x | {identical} |", flush=True)


def lines_of_scripts(count: int, seed: int = 0) -> dict[str, list[str]]:
    """``count`` lines per script, of the multilingual lines' chars in new combinations: runs
    of Chinese and Japanese chars (no spaces: under Metaspace or a letters regex, one long
    word each), Korean words of two to four syllables, Cyrillic words of three to nine letters."""
    import random

    rng = random.Random(seed)
    han = sorted(set(MULTILINGUAL[5] + MULTILINGUAL[6]) - set("，。"))
    hangul = sorted(set(MULTILINGUAL[7]) - set(" ."))
    cyrillic = sorted(set(MULTILINGUAL[3].lower()) - set(" ."))

    def words(alphabet: list[str], low: int, high: int, n: int) -> str:
        return " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(low, high))) for _ in range(n))

    return {
        "Chinese": ["".join(rng.choice(han) for _ in range(30)) + "，" + "".join(rng.choice(han) for _ in range(20)) + "。" for _ in range(count)],
        "Korean": [words(hangul, 2, 4, 8) + "." for _ in range(count)],
        "Cyrillic": [words(cyrillic, 3, 9, 8).capitalize() + "." for _ in range(count)],
    }


def script_lines(args, train: list[str]) -> None:
    """``encode()`` per line of :func:`lines_of_scripts`: cold on a fresh tokenizer per script,
    then warm (best of --rounds), both libraries; ids and offsets compared."""
    import tokenizers

    from tokviz import Tokenizer

    scripts = lines_of_scripts(args.script_lines)
    print(f"{args.script_lines} lines per script, encode() per line; clock: {args.clock}\n")
    cold_warm_header("script")
    for kind in args.kinds.split(","):
        json_text = tokenizer_json(kind, train, args)
        for script, lines in scripts.items():
            hf, ours = tokenizers.Tokenizer.from_str(json_text), Tokenizer.from_str(json_text)
            hf_cold, hf_encodings = encode_all(hf.encode, lines)
            ours_cold, ours_encodings = encode_all(ours.encode, lines)
            identical = sum((a.ids, a.offsets) == (b.ids, b.offsets) for a, b in zip(hf_encodings, ours_encodings))
            del hf_encodings, ours_encodings
            hf_warm = min(encode_all(hf.encode, lines)[0] for _ in range(args.rounds))
            ours_warm = min(encode_all(ours.encode, lines)[0] for _ in range(args.rounds))
            cold_warm_row(kind, script, hf_cold, ours_cold, hf_warm, ours_warm, f"{identical}/{len(lines)}")


def cold_calls(args, train: list[str]) -> None:
    """``encode()`` per line, each call cold: ``model._clear_cache()`` before it (not timed),
    both libraries, on a tokenizer that has encoded once (its tables built, as HF's are at
    load). Best of --rounds passes; ids compared."""
    import tokenizers

    from tokviz import Tokenizer

    lines = test_lines(args.every)
    print(f"encode() of each of {len(lines):,} lines with the word caches emptied before every call "
          f"(model._clear_cache()); clock: {args.clock}; best of {args.rounds}\n")
    print("| kind | HF | tokviz | ratio | identical |")
    print("|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        json_text = tokenizer_json(kind, train, args)
        times = []
        results = []
        for cls in (tokenizers.Tokenizer, Tokenizer):
            tok = cls.from_str(json_text)
            clear = getattr(tok.model, "_clear_cache", None)
            if clear is None:
                break
            tok.encode(lines[0])
            encode = tok.encode
            fastest = None
            for _ in range(args.rounds):
                gc.collect()
                total = 0.0
                encodings = []
                for line in lines:
                    clear()
                    started = CLOCK()
                    encodings.append(encode(line))
                    total += CLOCK() - started
                fastest = total if fastest is None else min(fastest, total)
            times.append(fastest)
            results.append([encoding.ids for encoding in encodings])
        if len(times) < 2:
            print(f"| {kind} | (no word cache to clear in HF) | | | |")
            continue
        identical = sum(a == b for a, b in zip(*results))
        print(f"| {kind} | {times[0] * 1e3:.1f} ms | {times[1] * 1e3:.1f} ms | {times[1] / times[0]:.2f}x | "
              f"{identical}/{len(lines)} |", flush=True)


def large_batch(args) -> None:
    """``encode_batch`` of a large batch: one process vs ``--processes`` (fresh tokenizers), alternated."""
    from tokviz import Tokenizer

    train = [] if args.from_dir else read_corpus(int(args.train_limit) if args.train_limit else None)
    lines = read_corpus(None)[:: args.large_batch]
    processes = args.processes or 2
    print(f"encode_batch of {len(lines):,} lines, 1 process vs {processes}: wall seconds, best of {args.rounds} alternated "
          "rounds, fresh tokenizers. 'then ids' adds reading every encoding's ids (encodings from workers build their "
          "fields on first use). CPU: this process + the workers, in the last round.\n")
    print(f"| kind | 1 process | {processes} processes | speed-up | 1 process, then ids | {processes} processes, then ids | speed-up | "
          f"CPU {processes} processes | identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        text = tokenizer_json(kind, train, args)
        best_times: dict = {}
        for _ in range(args.rounds):
            for count in (None, processes):
                tok = Tokenizer.from_str(text)
                gc.collect()
                children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu_started = time.process_time()
                started = time.perf_counter()
                encodings = tok.encode_batch(lines, processes=count)
                wall = time.perf_counter() - started
                ids = [e.ids for e in encodings]
                with_ids = time.perf_counter() - started
                cpu = time.process_time() - cpu_started
                children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
                workers = (children_after.ru_utime + children_after.ru_stime) - (children_before.ru_utime + children_before.ru_stime)
                old = best_times.get(count)
                best_times[count] = (min(wall, old[0]) if old else wall, min(with_ids, old[1]) if old else with_ids, cpu, workers, ids)
                del encodings, ids
        (serial, serial_ids, _, _, serial_result), (parallel, parallel_ids, cpu, workers_cpu, parallel_result) = best_times[None], best_times[processes]
        same = sum(a == b for a, b in zip(serial_result, parallel_result))
        print(f"| {kind} | {serial:.2f} s | {parallel:.2f} s | {serial / parallel:.2f}x | {serial_ids:.2f} s | {parallel_ids:.2f} s | "
              f"{serial_ids / parallel_ids:.2f}x | {cpu:.2f} s + {workers_cpu:.2f} s | {same}/{len(lines)} |", flush=True)


def warmed_loads(args, train: list[str]) -> None:
    """Loads only: best of 3 (the table's measure), then the best of 5 after two loads of each (a
    warmed process: what a server that loads tokenizers all day sees)."""
    import tokenizers

    from tokviz import Tokenizer

    print("| kind | load HF | tokviz | ratio | warmed HF | tokviz | ratio |\n|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        text = tokenizer_json(kind, train, args)
        timings = [best(lambda: tokenizers.Tokenizer.from_str(text), 3), best(lambda: Tokenizer.from_str(text), 3)]
        for _ in range(2):
            tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)
        timings += [best(lambda: tokenizers.Tokenizer.from_str(text), 5), best(lambda: Tokenizer.from_str(text), 5)]
        hf, ours, hf_warm, ours_warm = (seconds * 1e3 for seconds in timings)
        print(f"| {kind} | {hf:.1f} ms | {ours:.1f} ms | {ours / hf:.2f}x | {hf_warm:.1f} ms | {ours_warm:.1f} ms | "
              f"{ours_warm / hf_warm:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
