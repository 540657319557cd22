"""``encode_batch(..., processes=N)`` (tokviz.processes), the packed encodings the workers send
(tokviz.encoding.pack_encodings / unpack_encodings) and the forked workers (tokviz.forking).

The parallel route must give exactly the encodings of one process, field for field, for
single inputs, pairs, word lists, truncation with overflowing pieces and padding; a worker
that fails or dies must cost nothing but time; and a packed encoding must behave as an
Encoding in every use (fields, edits, copies, pickles, comparisons) while it builds its
fields lazily.
"""

from __future__ import annotations

import copy
import os
import pickle
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.processes as processes
from tokviz import Tokenizer
from tokviz.encoding import Encoding, new_encoding, pack_encodings, unpack_encodings
from tokviz.forking import ChildFailed, ForkedWorker, fork_call, finished_requests

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers are Linux-only")


def _everything(encoding: Encoding) -> tuple:
    n = len(encoding.ids)
    return (
        encoding.ids, encoding.type_ids, encoding.tokens, encoding.word_ids, encoding.offsets,
        encoding.special_tokens_mask, encoding.attention_mask, encoding.n_sequences,
        [encoding.token_to_sequence(i) for i in range(n)],
        [_everything(piece) for piece in encoding.overflowing],
    )


@pytest.fixture(scope="module")
def bert_json(shared_corpus_lines) -> str:
    from tests.engine.test_cut import EXTRA_LINES, build_hf

    return build_hf("bert", list(shared_corpus_lines) + EXTRA_LINES).to_str()


@pytest.fixture(scope="module")
def batch_lines(shared_corpus_lines) -> list[str]:
    # More than PARALLEL_MIN_INPUTS after the head, with non-ASCII and empty lines among them.
    lines = list(shared_corpus_lines) * 3 + ["", "Ünïcödé naïve café 中文 😀", " \t "]
    return lines[: processes.PARALLEL_MIN_INPUTS * 3]


@pytest.fixture()
def forks(monkeypatch):
    """Always use workers (however cheap the pipeline), and count the workers forked."""
    started = []
    real_start = ForkedWorker.start.__func__

    def counting_start(cls, func, allow_threads=False):
        worker = real_start(cls, func, allow_threads)
        started.append(worker)
        return worker

    monkeypatch.setattr(processes, "TRANSFER_SECONDS_PER_TOKEN", 0.0)
    monkeypatch.setattr(ForkedWorker, "start", classmethod(counting_start))
    return started


# ---------------------------------------------------------------------- encode_batch(processes=N)
@pytest.mark.parametrize("count", [2, 3])
def test_processes_give_the_encodings_of_one_process(bert_json, batch_lines, forks, count):
    serial, parallel = Tokenizer.from_str(bert_json), Tokenizer.from_str(bert_json)
    expected = [_everything(e) for e in serial.encode_batch(batch_lines)]
    assert [_everything(e) for e in parallel.encode_batch(batch_lines, processes=count)] == expected
    assert len(forks) == count - 1 and all(worker is not None for worker in forks)


def test_processes_with_pairs_words_truncation_and_padding(bert_json, batch_lines, forks):
    serial, parallel = Tokenizer.from_str(bert_json), Tokenizer.from_str(bert_json)
    for tok in (serial, parallel):
        tok.enable_truncation(24, stride=4)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
    # Lines cut to 150 characters: a pair's overflowing pieces multiply (every piece of one with every piece of the
    # other), and whole corpus lines made 270,000 encodings here for nothing more than these do.
    short = [line[:150] for line in batch_lines]
    pairs = list(zip(short, reversed(short)))
    assert [_everything(e) for e in parallel.encode_batch(pairs, processes=2)] == [_everything(e) for e in serial.encode_batch(pairs)]
    words = [line.split() for line in short]
    assert [_everything(e) for e in parallel.encode_batch(words, is_pretokenized=True, processes=2)] == [
        _everything(e) for e in serial.encode_batch(words, is_pretokenized=True)
    ]
    assert any(e.overflowing for e in serial.encode_batch(pairs)), "the batch should have overflowing pieces"
    assert len(forks) == 2


def test_a_cheap_pipeline_stays_in_this_process(bert_json, batch_lines, monkeypatch):
    started = []
    monkeypatch.setattr(processes, "TRANSFER_SECONDS_PER_TOKEN", 1.0)  # (moving an encoding: dearer than anything)
    monkeypatch.setattr(ForkedWorker, "start", classmethod(lambda cls, *a, **k: started.append(1)))
    tok = Tokenizer.from_str(bert_json)
    assert [e.ids for e in tok.encode_batch(batch_lines, processes=2)] == [e.ids for e in Tokenizer.from_str(bert_json).encode_batch(batch_lines)]
    assert started == []


def test_a_failing_or_dying_worker_costs_only_time(bert_json, batch_lines, forks, monkeypatch):
    real_pack = processes.pack_encodings
    calls = []

    def failing_pack(encodings):
        calls.append(1)  # (in the child: its own count)
        if len(calls) == 2:
            raise RuntimeError("a worker's piece failed")
        if len(calls) == 4:
            os._exit(3)  # the worker dies with pieces in hand
        return real_pack(encodings)

    monkeypatch.setattr(processes, "pack_encodings", failing_pack)
    expected = [_everything(e) for e in Tokenizer.from_str(bert_json).encode_batch(batch_lines)]
    assert [_everything(e) for e in Tokenizer.from_str(bert_json).encode_batch(batch_lines, processes=2)] == expected
    assert calls == []  # nothing was packed in this process
    assert [worker.alive for worker in forks] == [False]  # the worker did die


def test_spawned_workers_where_this_process_cannot_fork(bert_json, batch_lines, monkeypatch):
    monkeypatch.setattr(processes, "TRANSFER_SECONDS_PER_TOKEN", 0.0)
    monkeypatch.setattr(processes, "can_fork", lambda allow_threads=False: False)
    tok = Tokenizer.from_str(bert_json)
    expected = [_everything(e) for e in Tokenizer.from_str(bert_json).encode_batch(batch_lines)]
    assert [_everything(e) for e in tok.encode_batch(batch_lines, processes=2)] == expected


def test_pieces_follow_characters_not_inputs():
    # One long input weighs as much as many short ones: (10 x "ab") then 100 characters.
    assert processes._pieces(["ab"] * 10 + ["x" * 100], 2, 4) == [(2, 6), (6, 9), (9, 11)]
    assert processes._pieces([("ab", "cd")] * 6, 0, 3) == [(0, 2), (2, 4), (4, 6)]
    assert processes._pieces(["a"] * 5, 5, 3) == []


# ---------------------------------------------------------------------- packed encodings
def _encoding(ids, words=None, ranges=None, overflowing=None) -> Encoding:
    n = len(ids)
    encoding = new_encoding(
        tuple(ids), tuple(i % 2 for i in range(n)), tuple(f"t{i}" for i in ids), tuple(words or [None] * n),
        tuple((i, i + 1) for i in range(n)), tuple([1] + [0] * (n - 1)) if n else (), (1,) * n, dict(ranges or {}),
    )
    if overflowing:
        encoding._overflowing = overflowing
    return encoding


def test_packing_keeps_every_field_and_oddity():
    batch = [
        _encoding([5, 6, 7], [None, 0, 0], {0: (1, 3)}),
        _encoding([]),
        _encoding([1 << 40, -3], [0, 1 << 33], {1: (0, 2), 0: (0, 0)}),  # 64-bit ids and words, ranges out of order
        _encoding([9], overflowing=[_encoding([8], [0], {0: (0, 1)}), _encoding([])]),
    ]
    batch[0]._tokens = ("a\x00b", "", "\ud800")  # a NUL inside a token, an empty token, a lone surrogate
    unpacked = unpack_encodings(pack_encodings(batch))
    assert unpacked == batch
    assert [_everything(e) for e in unpacked] == [_everything(e) for e in batch]
    assert unpack_encodings(pack_encodings([])) == []
    assert unpacked[2].ids == [1 << 40, -3] and unpacked[2]._sequence_ranges == {1: (0, 2), 0: (0, 0)}
    assert list(unpacked[2]._sequence_ranges) == [1, 0]


def test_a_packed_encoding_builds_its_fields_on_first_use_only():
    [packed] = unpack_encodings(pack_encodings([_encoding([5, 6], [0, 1])]))
    assert type(packed).__name__ == "_PackedEncoding" and isinstance(packed, Encoding)
    assert packed.ids == [5, 6]
    assert type(packed).__name__ == "_PackedEncoding"  # (the other fields are not built yet)
    assert packed.offsets == [(0, 1), (1, 2)] and packed.word_ids == [0, 1]
    assert repr(packed).startswith("Encoding(num_tokens=2")
    packed.tokens, packed.type_ids, packed.special_tokens_mask, packed.attention_mask, packed.overflowing, packed.n_sequences
    assert type(packed) is Encoding  # every field built: a plain Encoding from now on


def test_a_packed_encoding_shares_no_mutable_state():
    # Equal masks are one tuple in the batch (immutable); the sequence ranges, a dict, are each encoding's own.
    first, second = unpack_encodings(pack_encodings([_encoding([1, 2], ranges={0: (0, 2)}), _encoding([3, 4], ranges={0: (0, 2)})]))
    assert first._attention_mask is second._attention_mask
    first.set_sequence_id(1)
    assert second._sequence_ranges == {0: (0, 2)}


@pytest.mark.parametrize("use", ["pad", "truncate", "merge", "copy", "deepcopy", "pickle", "eq", "char_to_token"])
def test_a_packed_encoding_is_an_encoding_in_every_use(use):
    original = [_encoding([5, 6, 7], [None, 0, 1], {0: (1, 3)}), _encoding([8, 9], [0, 0])]

    def apply(batch):
        first, second = batch
        if use == "pad":
            first.pad(6, pad_id=0, pad_token="[PAD]", direction="left")
            return _everything(first)
        if use == "truncate":
            first.truncate(2, stride=1)
            return _everything(first)
        if use == "merge":
            return _everything(Encoding.merge([first, second], growing_offsets=True))
        if use == "copy":
            return [_everything(copy.copy(first)), _everything(first.copy())]
        if use == "deepcopy":
            return _everything(copy.deepcopy(first))
        if use == "pickle":
            clone = pickle.loads(pickle.dumps(first))
            return type(clone) is Encoding, _everything(clone)
        if use == "eq":
            return first == second, first == first, second == original[1]
        return [first.char_to_token(i) for i in range(4)], first.word_to_tokens(1)

    assert apply(unpack_encodings(pack_encodings(original))) == apply([e.copy() for e in original])


_token = st.text(st.characters(), max_size=3)
_encodings = st.lists(
    st.lists(st.tuples(st.integers(-(2**40), 2**40), _token, st.one_of(st.none(), st.integers(0, 2**35))), max_size=6).map(
        lambda triples: new_encoding(
            tuple(t[0] for t in triples), (0,) * len(triples), tuple(t[1] for t in triples), tuple(t[2] for t in triples),
            tuple((abs(t[0]) % 7, abs(t[0]) % 11) for t in triples), (0,) * len(triples), (1,) * len(triples), {},
        )
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(_encodings)
def test_packing_round_trips_any_encodings(batch):
    assert [_everything(e) for e in unpack_encodings(pack_encodings(batch))] == [_everything(e) for e in batch]


# ---------------------------------------------------------------------- forked workers
def test_a_forked_worker_answers_in_order_and_reports_failures():
    worker = ForkedWorker.start(lambda n: b"x" * n if n >= 0 else 1 / 0, allow_threads=True)
    assert worker is not None
    try:
        for request in (3, -1, 0):
            worker.send(request)
        answers = []
        while worker.pending:
            answers += [(request, answer) for _, request, answer in finished_requests([worker], block=True)]
        assert answers == [(3, b"xxx"), (-1, None), (0, b"")]
    finally:
        worker.close()


def test_a_dead_worker_fails_its_pending_requests():
    worker = ForkedWorker.start(lambda n: os._exit(1), allow_threads=True)
    worker.send(1)
    worker.send(2)
    answers = []
    while worker.pending:
        answers += [(request, answer) for _, request, answer in finished_requests([worker], block=True)]
    worker.close()
    assert answers == [(1, None), (2, None)] and not worker.alive


def test_fork_call_sends_json_or_bytes_and_reports_a_failure():
    assert fork_call(lambda x: {"a": x, "t": (1, "\ud800")}, 5, allow_threads=True).result() == {"a": 5, "t": [1, "\ud800"]}
    assert fork_call(lambda x: bytes(x), 3, allow_threads=True).result() == b"\x00\x00\x00"
    with pytest.raises(ChildFailed):
        fork_call(lambda x: 1 / x, 0, allow_threads=True).result()
