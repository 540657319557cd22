"""``Tokenizer.encode_batch(..., processes=N)``: one batch on several cores.

HF encodes a batch with threads in Rust; pure Python cannot (the GIL), so tokviz uses
processes. On Linux they are forked (:class:`tokviz.forking.ForkedWorker`): each worker
starts from this tokenizer as it is, word caches included, and from the inputs, with
nothing pickled in.

How a batch is shared (``N`` processes, this one included):

1. The first twentieth is encoded here and timed, per token. A worker's encoding costs
   about :data:`TRANSFER_SECONDS_PER_TOKEN` to pack, send and take back; when that is more
   than :data:`PARALLEL_MAX_TRANSFER_SHARE` of encoding it (a very cheap pipeline), the
   rest is encoded here too.
2. The rest is cut into pieces of about equal characters (an input's cost follows its
   length, not its count), 32 per process. Each of the ``N - 1`` workers has three pieces
   in hand at a time, taken from the back, and gets the next one as soon as it answers;
   this process encodes pieces from the front between answers, and at the end the pieces
   a worker has not begun yet. So the work balances itself, whatever the pipeline costs
   and however busy the cores are.
3. A worker sends its encodings back as flat arrays of ints and the tokens' text
   (:func:`tokviz.encoding.pack_encodings`). Here they become Encodings that build each
   field on first use.

Where a process cannot fork (macOS, Windows) a pool of spawned processes, each loading the
tokenizer from its JSON, takes the workers' part; where a worker fails or dies, its pieces
are encoded here. The encodings are the same in every case.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from itertools import accumulate, chain, repeat
from operator import add
from typing import TYPE_CHECKING, Any

from tokviz.encoding import Encoding, pack_encodings, unpack_encodings
from tokviz.forking import ForkedWorker, can_fork, finished_requests

if TYPE_CHECKING:
    from tokviz.tokenizer import Tokenizer

#: Below this many inputs, ``encode_batch(..., processes=N)`` stays in this process.
PARALLEL_MIN_INPUTS = 256
#: CPU seconds per token to pack a worker's encodings, send them and take them back here
#: (measured on BERT, T5, Whisper and WordLevel batches of 12,000 lines: 0.8-1.0 us).
TRANSFER_SECONDS_PER_TOKEN = 0.9e-6
#: Workers are used only while moving an encoding costs less than this share of making it
#: (WordLevel, at 1.2 us a token, stays in one process: it measured 0.9 times as fast in two).
PARALLEL_MAX_TRANSFER_SHARE = 0.6
#: How many pieces per process the batch is cut into (more: finer balance, more messages).
_PIECES_PER_PROCESS = 32
#: Each input counts as its length in characters plus this (the fixed cost of one call).
_CALL_COST_IN_CHARACTERS = 24

# What spawned workers load once: (tokenizer, is_pretokenized, add_special_tokens).
_WORKER_JOB: Any = None


def encode_in_processes(
    tokenizer: Tokenizer, items: list[Any], is_pretokenized: bool, add_special_tokens: bool, processes: int
) -> list[Encoding]:
    """Encode ``items`` in ``processes`` processes, this one included; same encodings, in order."""
    head = min(len(items), max(PARALLEL_MIN_INPUTS // 4, len(items) // 20))
    started = time.process_time()
    encodings = tokenizer._encode_items(items[:head], is_pretokenized, add_special_tokens)
    seconds_per_token = (time.process_time() - started) / max(sum(map(len, encodings)), 1)
    worth_it = TRANSFER_SECONDS_PER_TOKEN < PARALLEL_MAX_TRANSFER_SHARE * seconds_per_token
    if not worth_it or len(items) - head < PARALLEL_MIN_INPUTS:
        encodings += tokenizer._encode_items(items[head:], is_pretokenized, add_special_tokens)
        return encodings
    pieces = _pieces(items, head, processes * _PIECES_PER_PROCESS)

    def encode_here(piece: int) -> list[Encoding]:
        start, stop = pieces[piece]
        return tokenizer._encode_items(items[start:stop], is_pretokenized, add_special_tokens)

    if can_fork(allow_threads=True):
        # (An explicit request: threads of the caller's, e.g. a notebook kernel's, do not stop it.)
        workers = [ForkedWorker.start(lambda piece: pack_encodings(encode_here(piece)), allow_threads=True) for _ in range(processes - 1)]
        try:
            done = _share_pieces(len(pieces), encode_here, [worker for worker in workers if worker is not None])
        finally:
            for worker in workers:
                if worker is not None:
                    worker.close()
    else:
        done = _share_pieces_spawned(tokenizer, items, pieces, is_pretokenized, add_special_tokens, processes - 1, encode_here)
    encodings += chain.from_iterable(done)
    return encodings


def _share_pieces(count: int, encode_here: Any, workers: list[ForkedWorker]) -> list[list[Encoding]]:
    """Pieces ``0 .. count - 1`` encoded by the workers and by this process, in order.

    This process takes pieces from the front, the workers from the back: each process then
    meets a stretch of the text whose rarer words its own caches learn, rather than
    every process learning the same words."""
    done: list[Any] = [None] * count
    front, back = 0, count - 1  # the next piece for this process, and for a worker

    def hand_out(worker: ForkedWorker) -> None:
        nonlocal back
        if front <= back and worker.alive:
            worker.send(back)
            back -= 1

    def take_answers(block: bool) -> None:
        for worker, piece, packed in finished_requests(workers, block):
            if done[piece] is None:  # (else this process encoded it meanwhile)
                # (a worker that failed or died: its piece is encoded here)
                done[piece] = unpack_encodings(packed) if packed is not None else encode_here(piece)
            hand_out(worker)

    def waiting(worker: ForkedWorker) -> list[int]:
        return [piece for piece in worker.pending if done[piece] is None]

    for worker in workers * 3:  # (three pieces in hand each: a worker never waits for this process)
        hand_out(worker)
    while True:
        take_answers(block=False)
        if front <= back:
            front += 1
            piece = front - 1
        else:
            # None left to hand out: rather than wait, encode a piece a worker has not begun
            # (each works through its pieces in order: any after its first is still queued).
            queued = [later for worker in workers for later in waiting(worker)[1:]]
            if not queued:
                break
            piece = min(queued)
        done[piece] = encode_here(piece)
    while any(waiting(worker) for worker in workers):
        take_answers(block=True)
    for worker in workers:
        if worker.pending:  # (answers nobody needs: this process encoded those pieces)
            worker.kill()
    return done


def _share_pieces_spawned(
    tokenizer: Tokenizer, items: list[Any], pieces: list[tuple[int, int]], is_pretokenized: bool, add_special_tokens: bool,
    workers: int, encode_here: Any,
) -> list[list[Encoding]]:
    """Where this process cannot fork: spawned workers take the second half of the pieces."""
    import multiprocessing

    theirs = len(pieces) * workers // (workers + 1)
    job = (type(tokenizer).from_str, tokenizer.to_str(), is_pretokenized, add_special_tokens)
    with multiprocessing.get_context("spawn").Pool(workers, _start_spawned_worker, (job,)) as pool:
        results = pool.imap(_encode_given, [items[start:stop] for start, stop in pieces[len(pieces) - theirs :]])
        done = [encode_here(piece) for piece in range(len(pieces) - theirs)]
        done += [unpack_encodings(packed) for packed in results]
    return done


def _pieces(items: list[Any], head: int, count: int) -> list[tuple[int, int]]:
    """``items[head:]`` cut into at most ``count`` pieces of about equal characters.

    >>> _pieces(["ab"] * 10 + ["x" * 100], 2, 4)
    [(2, 6), (6, 9), (9, 11)]
    """
    rest = items[head:]
    if set(map(type, rest)) <= {str}:  # (the usual batch: weighed in C)
        weights: Any = map(add, map(len, rest), repeat(_CALL_COST_IN_CHARACTERS))
    else:
        weights = map(_weight, rest)
    bounds = list(accumulate(weights, initial=0))
    pieces, start = [], head
    for piece in range(1, count + 1):
        stop = len(items) if piece == count else max(start, head + bisect_left(bounds, bounds[-1] * piece / count))
        if stop > start:
            pieces.append((start, stop))
        start = stop
    return pieces


def _weight(item: Any) -> int:
    """What encoding one input costs, about: its characters plus a fixed cost per call."""
    if isinstance(item, str):
        return len(item) + _CALL_COST_IN_CHARACTERS
    if isinstance(item, (tuple, list)):
        return sum(_weight(part) if isinstance(part, (str, tuple, list)) else 1 for part in item)
    return _CALL_COST_IN_CHARACTERS


def _start_spawned_worker(job: tuple[Any, str, bool, bool]) -> None:
    # (The job carries Tokenizer.from_str, pickled by reference: no import back up a layer.)
    global _WORKER_JOB
    from_str, json_text, is_pretokenized, add_special_tokens = job
    _WORKER_JOB = (from_str(json_text), is_pretokenized, add_special_tokens)


def _encode_given(items: list[Any]) -> bytes:
    tokenizer, is_pretokenized, add_special_tokens = _WORKER_JOB
    return pack_encodings(tokenizer._encode_items(items, is_pretokenized, add_special_tokens))
