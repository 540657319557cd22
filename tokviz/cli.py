"""``python -m tokviz train``: train a tokenizer on corpora of gigabytes, from the command line.

The app trains on what fits in a page; this trains on files, streamed, never loaded whole:

1. the files are cut into chunks (byte ranges of text / JSON Lines / CSV, Parquet row
   groups: :mod:`tokviz.corpus_stream`);
2. each chunk is normalized, pre-tokenized and counted on a Dask worker
   (``dask.distributed``: a ``LocalCluster`` of ``--workers`` processes, or the cluster of
   ``--scheduler tcp://host:8786``); the counts come back and are merged in corpus order,
   so they equal a serial count exactly;
3. the trainer trains from the merged counts, as HF's trainers do after ``feed``;
4. ``OUT/tokenizer.json``, ``OUT/history.json`` (the whole training, which the app opens:
   Inspect, "Open a training") and ``OUT/transformers/`` (``AutoTokenizer.from_pretrained``) are written.

``--model sentencepiece`` is different on purpose: SentencePiece trains from sentences, not
word counts, so the files are read in this process and at most ``--input-sentence-size``
sentences are kept (a uniform random sample when there are more, as sentencepiece's
``input_sentence_size`` + ``shuffle_input_sentence`` do); no Dask workers are used.

Exit codes: 0 done; 2 bad command line; 3 a file that cannot be read as asked (missing,
not UTF-8, no such field or column); 4 the training cannot run on what was read (empty
corpus, vocab size too small); 5 the Dask cluster failed or cannot be reached.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from tokviz.errors import CorpusReadError, TokvizError

__all__ = ["main", "build_parser", "pipeline_for"]

MODELS = ("bpe", "wordpiece", "unigram", "wordlevel", "sentencepiece")
PRESETS = ("gpt2", "bert", "t5", "char_bpe")
#: The pipeline each model gets when no --preset is given.
DEFAULT_PRESET = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "t5", "wordlevel": "bert"}
_MODEL_NAMES = {"bpe": "BPE", "wordpiece": "WordPiece", "unigram": "Unigram", "wordlevel": "WordLevel"}

EXIT_USAGE, EXIT_INPUT, EXIT_TRAINING, EXIT_CLUSTER = 2, 3, 4, 5
#: How long to try reaching a --scheduler before giving up (Dask's own timeout format).
SCHEDULER_TIMEOUT = "20s"

_EPILOG = """\
examples:
  python -m tokviz train corpus.txt --model bpe --vocab-size 32000 --out out/
  python -m tokviz train a.txt b.txt --model wordpiece --preset bert --vocab-size 30522 --out bert/ --workers 4
  python -m tokviz train wiki.parquet --column text --model unigram --vocab-size 8000 --out t5/
  python -m tokviz train data.jsonl --field body --model bpe --vocab-size 50000 --out gpt/ --scheduler tcp://10.0.0.5:8786
  python -m tokviz train big.txt --model sentencepiece --model-type unigram --vocab-size 8000 --out spm/

pipelines (--preset): gpt2 = byte-level BPE (no unknown token), bert = lowercase, strip accents,
split on punctuation, ## continuations, t5 = NFKC, Metaspace, char_bpe = whitespace words with </w>.
Without --preset: bpe -> gpt2, wordpiece -> bert, unigram -> t5, wordlevel -> bert.

files: *.txt and anything unknown = one text per line; *.jsonl/*.ndjson = one JSON object per line
(--field); *.csv = a header line then rows (--column); *.parquet = a text column (--column).
Every file is UTF-8. A --scheduler's workers need tokviz installed and the files at the same paths.

writes: OUT/tokenizer.json, OUT/history.json (open it in the app: Inspect -> Open a training),
OUT/transformers/ (for transformers' AutoTokenizer.from_pretrained); sentencepiece also OUT/spm.model.

exit codes: 0 done, 2 bad command line, 3 unreadable input, 4 training failed, 5 Dask cluster failed.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tokviz",
        description="tokviz from the command line.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    train = commands.add_parser(
        "train",
        help="train a tokenizer on large files (counted in parallel on Dask workers)",
        description="Train a tokenizer on text, JSON Lines, CSV or Parquet files of any size.\n"
        "The files are streamed in chunks, never loaded whole; words are counted in parallel on Dask\n"
        "worker processes and merged; the trainer then trains from the merged counts.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    train.add_argument("files", nargs="+", metavar="FILE", help="corpus files, read in the order given")
    what = train.add_argument_group("what to train")
    what.add_argument("--model", required=True, choices=MODELS, help="the algorithm")
    what.add_argument("--vocab-size", required=True, type=int, metavar="N", help="target vocabulary size (special tokens included)")
    what.add_argument("--preset", choices=PRESETS, help="the pipeline: normalizers, pre-tokenizer, special tokens, "
                      "post-processor (default: the usual one for --model, see below)")
    what.add_argument("--min-frequency", type=int, metavar="N", help="BPE/WordPiece/WordLevel: ignore pairs or words seen fewer times")
    where = train.add_argument_group("input and output")
    where.add_argument("--out", required=True, metavar="DIR", help="folder to write into (created if needed)")
    where.add_argument("--format", choices=("txt", "jsonl", "csv", "parquet"), help="file format (default: from each extension)")
    where.add_argument("--field", "--column", dest="field", metavar="NAME",
                       help="jsonl: the field holding the text; csv/parquet: the column")
    run = train.add_argument_group("where counting runs")
    run.add_argument("--workers", type=int, default=2, metavar="K",
                     help="worker processes of the local Dask cluster (default 2); 0 counts in this process, no Dask")
    run.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="use this running Dask scheduler's workers instead of a local cluster")
    run.add_argument("--chunk-mb", type=float, default=16.0, metavar="MB", help="bytes per counting task (default 16)")
    run.add_argument("--no-progress", action="store_true", help="no progress bars (they go to stderr)")
    run.add_argument("--report", metavar="FILE", help="also write timings and peak memory (client and workers) as JSON")
    spm = train.add_argument_group("--model sentencepiece")
    spm.add_argument("--model-type", choices=("unigram", "bpe", "char", "word"), default="unigram",
                     help="sentencepiece's model_type (default unigram)")
    spm.add_argument("--input-sentence-size", type=int, default=1_000_000, metavar="N",
                     help="keep at most N sentences, a uniform random sample when there are more (default 1,000,000; 0 = all)")
    spm.add_argument("--character-coverage", type=float, default=0.9995, metavar="F",
                     help="share of characters the alphabet covers (default 0.9995; 1.0 for small alphabets)")
    return parser


def pipeline_for(model: str, preset: str | None, min_frequency: int | None = None) -> Any:
    """The :class:`~tokviz.pipeline_config.PipelineConfig` for ``--model`` and ``--preset``.

    >>> config = pipeline_for("unigram", "bert")
    >>> config.model, config.post_processor, config.unk_token
    ('Unigram', 'bert', '[UNK]')
    """
    from tokviz.pipeline_config import applicable
    from tokviz.presets import PRESETS as APP_PRESETS

    config = APP_PRESETS[preset or DEFAULT_PRESET[model]].build()
    wanted = _MODEL_NAMES[model]
    if config.model != wanted:
        changes: dict[str, Any] = {"model": wanted}
        if wanted in ("WordPiece", "WordLevel") and config.unk_token is None:
            specials = config.special_tokens if "[UNK]" in config.special_tokens else ("[UNK]", *config.special_tokens)
            changes.update(unk_token="[UNK]", special_tokens=specials)
        if wanted == "WordPiece" and config.continuing_subword_prefix is None:
            changes["continuing_subword_prefix"] = "##"
        config = dataclasses.replace(config, **changes)
    if min_frequency is not None:
        config = dataclasses.replace(config, min_frequency=min_frequency)
    return applicable(config)


# --------------------------------------------------------------------------- progress


class _Bars:
    """tqdm bars on stderr, or nothing with ``--no-progress``."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._phase: Any = None
        self._phase_name = ""

    def bytes_bar(self, total: int, what: str) -> Any:
        if not self.enabled:
            return _NoBar()
        from tqdm import tqdm

        return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=what, file=sys.stderr, dynamic_ncols=True)

    def training(self, phase: str, done: int, total: int) -> None:
        """The trainers' ``progress(phase, done, total)`` as one bar per phase."""
        if not self.enabled:
            return
        from tqdm import tqdm

        if phase != self._phase_name:
            self.close()
            self._phase_name = phase
            self._phase = tqdm(total=total or None, desc=phase, file=sys.stderr, dynamic_ncols=True)
        bar = self._phase
        if total and bar.total != total:
            bar.total = total
        if done > bar.n:
            bar.update(done - bar.n)  # tqdm redraws at most every 0.1 s

    def close(self) -> None:
        if self._phase is not None:
            self._phase.close()
            self._phase = None


class _NoBar:
    def update(self, _n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _peak_rss_mb() -> float:
    """This process's peak resident memory in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> float:
    """CPU seconds this process has used (user + system): steadier than wall time on a loaded machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------- the command


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.vocab_size < 1:
        parser.error(f"--vocab-size must be 1 or more, not {args.vocab_size}")
    if args.workers < 0:
        parser.error(f"--workers must be 0 or more, not {args.workers}")
    if args.chunk_mb <= 0:
        parser.error(f"--chunk-mb must be positive, not {args.chunk_mb}")
    if args.scheduler is not None and not args.scheduler.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        parser.error(f"--scheduler must be an address like tcp://host:8786, not {args.scheduler!r}")
    if args.min_frequency is not None and args.min_frequency < 0:
        parser.error(f"--min-frequency must be 0 or more, not {args.min_frequency}")
    if args.model == "sentencepiece" and args.preset is not None:
        parser.error("--preset does not apply to --model sentencepiece (it has its own normalization); use --model-type")
    if args.input_sentence_size < 0:
        parser.error(f"--input-sentence-size must be 0 (all) or more, not {args.input_sentence_size}")
    if not 0.0 < args.character_coverage <= 1.0:
        parser.error(f"--character-coverage must be in (0, 1], not {args.character_coverage}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_args(parser, args)
    try:
        return _train(args)
    except CorpusReadError as error:
        _say(f"error: {error}")
        return EXIT_INPUT
    except TokvizError as error:
        _say(f"error: {error}")
        return EXIT_TRAINING
    except _ClusterError as error:
        _say(f"error: {error}")
        return EXIT_CLUSTER
    except KeyboardInterrupt:
        _say("interrupted")
        return 130


class _ClusterError(Exception):
    """The Dask cluster could not be started or reached, or a worker died."""


def _train(args: argparse.Namespace) -> int:
    from tokviz.corpus_stream import plan_chunks

    started = time.perf_counter()
    out = Path(args.out)
    chunk_bytes = max(1, int(args.chunk_mb * 1024 * 1024))
    chunks = plan_chunks(args.files, args.format, args.field, chunk_bytes=chunk_bytes)
    total_bytes = sum(chunk.size for chunk in chunks)
    bars = _Bars(not args.no_progress)
    report: dict[str, Any] = {"files": list(args.files), "bytes": total_bytes, "chunks": len(chunks), "model": args.model,
                              "vocab_size": args.vocab_size}
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CorpusReadError(f"Cannot create the output folder {out}: {error.strerror or error}.") from None
    if args.model == "sentencepiece":
        history, tokenizer = _train_sentencepiece(args, chunks, total_bytes, bars, out, report)
        config = None
    else:
        config = pipeline_for(args.model, args.preset, args.min_frequency)
        words = _count(args, config, chunks, total_bytes, bars, report)
        trained_at = time.perf_counter()
        history = _train_from_counts(config, args.vocab_size, words, bars)
        report["train_seconds"] = round(time.perf_counter() - trained_at, 2)
        report["unique_words"] = len(words)
        del words
        from tokviz.pipeline_config import tokenizer_with_model

        tokenizer = tokenizer_with_model(config, history.model)
    written_at = time.perf_counter()
    _write_outputs(out, history, tokenizer, config, args)
    report["write_seconds"] = round(time.perf_counter() - written_at, 2)
    report["seconds"] = round(time.perf_counter() - started, 2)
    report["client_peak_rss_mb"] = round(_peak_rss_mb(), 1)
    report["client_cpu_seconds"] = round(_cpu_seconds(), 2)
    report["trained_vocab_size"] = tokenizer.get_vocab_size()
    size_note = "" if tokenizer.get_vocab_size() >= args.vocab_size else f" (asked {args.vocab_size:,}: {history.stop_reason})"
    _say(f"trained {history.algorithm} with {tokenizer.get_vocab_size():,} tokens{size_note} on {total_bytes / 1e6:,.1f} MB "
         f"in {report['seconds']:.1f} s; wrote {out}/tokenizer.json, {out}/history.json, {out}/transformers/")
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def _count(args: argparse.Namespace, config: Any, chunks: list, total_bytes: int, bars: _Bars, report: dict) -> Any:
    from tokviz.corpus_stream import count_parallel, count_serial
    from tokviz.errors import EmptyCorpusError

    counted_at = time.perf_counter()
    bar = bars.bytes_bar(total_bytes, "count words")

    def done(index: int) -> None:
        bar.update(chunks[index].size)

    try:
        if args.workers == 0 and args.scheduler is None:
            words = count_serial(chunks, config, done)
            report["workers"] = 0
        else:
            words = _count_on_dask(args, config, chunks, done, report)
    finally:
        bar.close()
    report["count_seconds"] = round(time.perf_counter() - counted_at, 2)
    if not words:
        raise EmptyCorpusError(f"No word to train on in {', '.join(args.files)}: the files are empty or blank.")
    return words


def _count_on_dask(args: argparse.Namespace, config: Any, chunks: list, done: Any, report: dict) -> Any:
    import logging

    from tokviz.corpus_stream import count_parallel

    try:
        from distributed import Client, LocalCluster
    except ImportError as error:  # pragma: no cover - distributed is in requirements.txt
        raise _ClusterError(f"dask.distributed is not installed ({error}); use --workers 0") from None
    cluster = None
    try:
        if args.scheduler is not None:
            client = Client(args.scheduler, timeout=SCHEDULER_TIMEOUT)
        else:
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                   silence_logs=logging.ERROR)
            client = Client(cluster)
    except (OSError, TimeoutError) as error:
        where = args.scheduler or "a local cluster"
        raise _ClusterError(f"Cannot start or reach the Dask scheduler ({where}): {error}") from None
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        report["workers"] = workers
        report["scheduler"] = args.scheduler or "local"
        if workers == 0:
            raise _ClusterError(f"The Dask scheduler {args.scheduler} has no workers.")
        try:
            words = count_parallel(chunks, config, client, done)
        except TokvizError:
            raise
        except Exception as error:  # a worker died, the connection dropped, ...
            if type(error).__module__.startswith(("distributed", "dask", "asyncio", "concurrent")):
                raise _ClusterError(f"The Dask cluster failed while counting: {type(error).__name__}: {error}") from None
            raise
        peaks = client.run(_peak_rss_mb)
        report["worker_peak_rss_mb"] = {str(address): round(value, 1) for address, value in peaks.items()}
        report["worker_cpu_seconds"] = {str(address): round(value, 2) for address, value in client.run(_cpu_seconds).items()}
        return words
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _train_from_counts(config: Any, vocab_size: int, words: Any, bars: _Bars) -> Any:
    from tokviz.models.trainer import train_for_model
    from tokviz.pipeline_config import build_model, build_trainer

    try:
        # HF's trainers keep the options of the model they train (unk_token, dropout, ...), as run_training does.
        return train_for_model(build_trainer(config, vocab_size), words, build_model(config), bars.training)
    finally:
        bars.close()


def _train_sentencepiece(args: argparse.Namespace, chunks: list, total_bytes: int, bars: _Bars, out: Path,
                         report: dict) -> tuple[Any, Any]:
    from tokviz.corpus_stream import read_chunk
    from tokviz.sentencepiece import train_sentencepiece
    from tokviz.sentencepiece.convert import tokenizer_from_proto
    from tokviz.sentencepiece.processor import SentencePieceError

    bar = bars.bytes_bar(total_bytes, "read sentences")

    def sentences() -> Any:
        for chunk in chunks:
            yield from read_chunk(chunk)
            bar.update(chunk.size)
        bar.close()

    started = time.perf_counter()
    try:
        history = train_sentencepiece(
            sentence_iterator=sentences(), vocab_size=args.vocab_size, model_type=args.model_type,
            input_sentence_size=args.input_sentence_size, shuffle_input_sentence=True,
            character_coverage=args.character_coverage, progress=bars.training,
        )
    except SentencePieceError as error:
        raise _SentencePieceTrainingError(str(error)) from None
    finally:
        bar.close()
        bars.close()
    report["train_seconds"] = round(time.perf_counter() - started, 2)
    report["sentences"] = history.sentences
    (out / "spm.model").write_bytes(history.to_model_bytes())
    return history, tokenizer_from_proto(history.proto)


class _SentencePieceTrainingError(TokvizError):
    """sentencepiece refused the training (vocab size too small or too large for the corpus, ...)."""


def _write_outputs(out: Path, history: Any, tokenizer: Any, config: Any, args: argparse.Namespace) -> None:
    from tokviz import history_io
    from tokviz.export import save_pretrained

    tokenizer.save(out / "tokenizer.json")
    history_io.save(history, out / "history.json", config=config)
    save_pretrained(tokenizer, out / "transformers")
