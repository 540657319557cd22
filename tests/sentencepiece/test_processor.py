"""tokviz.sentencepiece.SentencePieceProcessor called as sentencepiece 0.2.x's users call it, against the real package."""

from __future__ import annotations

import copy
import io
import pickle
from pathlib import Path

import numpy as np
import pytest

spm = pytest.importorskip("sentencepiece")

import tokviz.sentencepiece as tsp  # noqa: E402

TEXTS = ["I saw a girl with a telescope.", "  hello  world  ", "ＫＡＤＯＫＡＷＡ ABC 123", "吾輩は猫である。😊 藤", "", "a\tb\nc"]


@pytest.fixture(scope="module")
def corpus(read_shared_corpus) -> list[str]:
    return read_shared_corpus("big.txt").split("\n")[:3000]


@pytest.fixture(scope="module", params=["unigram", "bpe"])
def pair(request: pytest.FixtureRequest, corpus: list[str]) -> tuple:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=out, vocab_size=800,
                                   model_type=request.param, minloglevel=2)
    return spm.SentencePieceProcessor(model_proto=out.getvalue()), tsp.SentencePieceProcessor(model_proto=out.getvalue())


def test_return_types_match_sentencepiece(pair: tuple) -> None:
    ref, ours = pair
    for kind in (int, str, bytes, "serialized_proto"):
        assert ours.encode(TEXTS, return_type=kind) == ref.encode(TEXTS, return_type=kind), kind
        assert ours.encode([t.encode() for t in TEXTS], return_type=kind) == ref.encode([t.encode() for t in TEXTS], return_type=kind)
    for text in TEXTS:
        assert ours.encode(text, return_type="offset_mapping") == ref.encode(text, return_type="offset_mapping"), text
        assert ours.encode(text.encode(), return_type="offset_mapping") == ref.encode(text.encode(), return_type="offset_mapping")
        assert ours.encode(text, return_type="numpy").tolist() == ref.encode(text, return_type="numpy").tolist()
        ids = ref.encode(text)
        for kind in (str, bytes, "serialized_proto", "offset_mapping"):
            assert ours.decode(ids, return_type=kind) == ref.decode(ids, return_type=kind), (text, kind)
        assert ours.decode(ids, return_type="offset_mapping", return_bytes=True) == \
            ref.decode(ids, return_type="offset_mapping", return_bytes=True)
        assert ours.normalize(text, with_offsets=True) == ref.normalize(text, with_offsets=True)
        assert ours.normalize(text.encode(), with_offsets=True) == ref.normalize(text.encode(), with_offsets=True)


def test_proto_objects_are_editable_messages(pair: tuple) -> None:
    ref, ours = pair
    text = "I saw a girl with a telescope."
    mine = ours.encode(text, return_type="proto")
    theirs = ref.encode(text, return_type="proto")
    assert [(p.piece, p.id, p.surface, p.begin, p.end) for p in mine.pieces] == \
        [(p.piece, p.id, p.surface, p.begin, p.end) for p in theirs.pieces]
    assert mine.SerializeToString() == theirs.SerializeToString()
    assert ours.decode(ours.encode(text), return_type="proto") == mine  # decode's proto is encode's
    if ours.model.model_type == tsp.ModelType.UNIGRAM:
        assert ours.nbest_encode(text, nbest_size=3, return_type="serialized_proto") == \
            ref.nbest_encode(text, nbest_size=3, return_type="serialized_proto")


def test_decode_inputs(pair: tuple) -> None:
    ref, ours = pair
    ids = ref.encode("hello world")
    pieces = ref.encode("hello world", return_type=str)
    for value in (ids, tuple(ids), np.array(ids, dtype=np.int64), np.array(ids, dtype=np.int32)[::-1], [ids, []], [[], pieces],
                  [p.encode() for p in pieces], np.array([ids, ids]), [np.array(ids), np.array(ids[:2])], None, [], ids[0]):
        assert ours.decode(value) == ref.decode(value)
    with pytest.raises(TypeError):
        ours.decode(np.array([1.0, 2.0]))
    with pytest.raises(IndexError):
        ours.decode([10_000])


def test_errors_are_sentencepieces(pair: tuple) -> None:
    ref, ours = pair
    for call in (lambda sp: sp.piece_to_id(123), lambda sp: sp.id_to_piece("a"), lambda sp: sp.encode("a", return_type=int, out_type=int),
                 lambda sp: sp.encode("a", return_type="immutable_proto"), lambda sp: sp.decode([1], return_type=str, return_bytes=True),
                 lambda sp: sp.encode("a", return_type="offset_mapping", add_bos=True), lambda sp: sp.nbest_encode("a", unknown=1),
                 lambda sp: sp.id_to_piece(-1), lambda sp: sp.get_score(len(sp))):
        try:
            call(ref)
        except Exception as exc:  # noqa: BLE001 - the reference's type is what we compare
            expected = type(exc)
        else:
            raise AssertionError("the reference accepted it")
        with pytest.raises(expected):
            call(ours)
    if ours.model.model_type == tsp.ModelType.BPE:
        with pytest.raises(RuntimeError):
            ours.nbest_encode("hello", nbest_size=2)


def test_immutable_proto_is_refused_as_sentencepiece_refuses_it(pair: tuple) -> None:
    _, ours = pair
    for call in (lambda: ours.encode("a", return_type="immutable_proto"), lambda: ours.encode("a", out_type="immutable_proto"),
                 lambda: ours.decode([1], return_type="immutable_proto")):
        with pytest.raises(ValueError, match=r"^immutable_proto is deprecated and no longer supported\. Use return_type='proto' instead\.$"):
            call()


def test_add_bos_needs_a_control_piece() -> None:
    out = io.BytesIO()
    tsp.SentencePieceTrainer.train(sentence_iterator=iter(["hug pug hugs", "hug the pug"] * 20), model_writer=out,
                                   user_defined_symbols=["<s>", "</s>"], model_type="bpe", vocab_size=20)
    sp = tsp.SentencePieceProcessor(model_proto=out.getvalue())
    assert sp.bos_id() == -1
    with pytest.raises(ValueError):
        sp.encode("hug", add_bos=True)


def test_options_pickles_and_factories(pair: tuple, tmp_path: Path) -> None:
    _, ours = pair
    path = tmp_path / "m.model"
    path.write_bytes(ours.serialized_model_proto())
    sp = tsp.SentencePieceProcessor.from_file(str(path), add_bos=True, add_eos=True, return_type=str)
    expected = ["<s>", *ours.encode("hello world", return_type=str), "</s>"]
    assert sp.encode("hello world") == expected
    assert pickle.loads(pickle.dumps(sp)).encode("hello world") == expected
    assert copy.deepcopy(sp).encode("hello world") == expected
    fresh = tsp.SentencePieceProcessor.__new__(tsp.SentencePieceProcessor)
    fresh.__setstate__(ours.serialized_model_proto())
    assert fresh.encode("hello world") == ours.encode("hello world")
    with pytest.raises(ValueError):
        tsp.SentencePieceProcessor.from_proto(ours.serialized_model_proto(), model_file=str(path))


def test_batches_threads_and_parallel_encode_give_encode(pair: tuple, corpus: list[str]) -> None:
    _, ours = pair
    lines = corpus[:200]
    pool = tsp.ThreadPool(4)
    assert pool.num_threads() == 4
    single = [ours.encode(line) for line in lines]
    assert ours.encode(lines, num_threads=4) == ours.encode(lines, thread_pool=pool) == single
    assert ours.parallel_encode("\n".join(lines), chunk_len=100, num_threads=2) == ours.encode("\n".join(lines))
    array = ours.encode("hello world", return_type="numpy")
    assert array.dtype == np.int32 and not array.flags.writeable


def test_global_settings(corpus: list[str]) -> None:
    out = io.BytesIO()
    tsp.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=out, vocab_size=500, minloglevel=2)
    sp = tsp.SentencePieceProcessor(model_proto=out.getvalue())
    tsp.SetRandomGeneratorSeed(7)
    first = [sp.encode("hello world again", enable_sampling=True, alpha=0.5) for _ in range(20)]
    tsp.set_random_generator_seed(7)
    assert [sp.encode("hello world again", enable_sampling=True, alpha=0.5) for _ in range(20)] == first
    long_text = "the" * 3000
    try:
        tsp.SetNBestTimeout(1)  # milliseconds, as sentencepiece counts them: the best path alone
        assert len(sp.nbest_encode(long_text, nbest_size=10)) == 1
        tsp.set_nbest_timeout(600_000)  # ten minutes: the search ends first
        assert len(sp.nbest_encode(long_text, nbest_size=10)) == 10
    finally:
        tsp.set_nbest_timeout(0)
    assert len(sp.nbest_encode("the" * 30, nbest_size=10)) == 10
    with pytest.raises(RuntimeError, match="FlatBuffer"):
        tsp.ConvertToFlatbuffer(serialized_model_proto=out.getvalue())
    with pytest.raises(ValueError):
        tsp.ConvertToFlatbuffer()


def test_a_batch_encodes_each_text_as_sentencepiece_does(pair: tuple, corpus: list[str]) -> None:
    # (a batch's plain texts take the one-text path: 4 copies of a 1.16M-character text 0.44 -> 0.11 s, and
    # sentencepiece's gil_release_test no longer depends on the machine's load)
    ref, ours = pair
    texts = [*TEXTS, *corpus[:300], "Hello, world! " * 2000]
    for out_type in (int, str):
        assert ours.encode(texts, out_type=out_type) == ref.encode(texts, out_type=out_type)
        assert ours.encode([t.encode() for t in texts], out_type=out_type) == ref.encode([t.encode() for t in texts], out_type=out_type)
    assert ours.encode(texts, add_bos=True, add_eos=True) == ref.encode(texts, add_bos=True, add_eos=True)
    assert ours.encode(texts[:20], out_type=str, reverse=True, emit_unk_piece=True) == \
        ref.encode(texts[:20], out_type=str, reverse=True, emit_unk_piece=True)
