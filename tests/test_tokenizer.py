"""Tokenizer: encode/decode on worked examples, invariants (hypothesis), trace, training, errors."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
from tokviz.errors import TokvizError, UnknownIdError

tokenizers = pytest.importorskip("tokenizers")

PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
# Any Unicode text, surrogates excluded (they cannot be UTF-8 encoded, by HF either).
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
# For comparisons with HF: unassigned code points (Cn) excluded, since Python's Unicode
# database (14.0 in Python 3.11) and HF's Rust one disagree on what is assigned.
ASSIGNED_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cn")), max_size=60)


def _hf_pipeline(kind: str, lines: list[str]):
    from tokenizers import decoders as hd
    from tokenizers import models as hm
    from tokenizers import normalizers as hn
    from tokenizers import pre_tokenizers as hp
    from tokenizers import processors as hr
    from tokenizers import trainers as ht

    if kind == "gpt2":
        tok = tokenizers.Tokenizer(hm.BPE())
        tok.pre_tokenizer = hp.ByteLevel(add_prefix_space=False)
        tok.post_processor = hr.ByteLevel(trim_offsets=True)
        tok.decoder = hd.ByteLevel()
        tok.train_from_iterator(
            lines,
            ht.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"], initial_alphabet=hp.ByteLevel.alphabet(), show_progress=False),
        )
    elif kind == "bert":
        tok = tokenizers.Tokenizer(hm.WordPiece(unk_token="[UNK]"))
        tok.normalizer = hn.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = hp.BertPreTokenizer()
        tok.train_from_iterator(
            lines, ht.WordPieceTrainer(vocab_size=600, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False)
        )
        tok.post_processor = hr.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
        tok.decoder = hd.WordPiece()
    else:  # t5-like
        tok = tokenizers.Tokenizer(hm.Unigram())
        tok.normalizer = hn.NFKC()
        tok.pre_tokenizer = hp.Metaspace()
        tok.decoder = hd.Metaspace()
        tok.train_from_iterator(
            lines, ht.UnigramTrainer(vocab_size=400, special_tokens=["<unk>", "</s>"], unk_token="<unk>", show_progress=False)
        )
        tok.post_processor = hr.TemplateProcessing(single="$A </s>", pair="$A </s> $B:1 </s>:1", special_tokens=[("</s>", 1)])
    return tok


@pytest.fixture(scope="module")
def pipelines(shared_corpus_lines):
    built = {}
    for kind in ("gpt2", "bert", "t5"):
        hf = _hf_pipeline(kind, shared_corpus_lines)
        hf = type(hf).from_str(hf.to_str())  # as HF reads its file, as tokviz does (see tokviz.json_floats)
        built[kind] = (Tokenizer.from_str(hf.to_str()), hf)
    return built


# ---------------------------------------------------------------------- worked examples
def _word_level() -> Tokenizer:
    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2, "[CLS]": 3, "[SEP]": 4}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok


def test_encode_worked_example():
    tok = _word_level()
    enc = tok.encode("hello  big world")
    assert enc.ids == [1, 0, 2]
    assert enc.tokens == ["hello", "[UNK]", "world"]
    assert enc.offsets == [(0, 5), (7, 10), (11, 16)]
    assert enc.word_ids == [0, 1, 2]
    assert tok.decode(enc.ids) == "hello [UNK] world"


def test_pair_without_post_processor_gets_type_ids_and_sequence_ids():
    tok = _word_level()
    enc = tok.encode("hello", "world")
    assert enc.ids == [1, 2]
    assert enc.type_ids == [0, 1]
    assert enc.sequence_ids == [0, 1]
    assert enc.offsets == [(0, 5), (0, 5)]


def test_special_tokens_and_processor():
    tok = _word_level()
    tok.add_special_tokens(["[CLS]", "[SEP]"])
    tok.post_processor = processors.BertProcessing(("[SEP]", 4), ("[CLS]", 3))
    enc = tok.encode("hello world")
    assert enc.tokens == ["[CLS]", "hello", "world", "[SEP]"]
    assert tok.decode(enc.ids) == "hello world"
    assert tok.decode(enc.ids, skip_special_tokens=False) == "[CLS] hello world [SEP]"
    assert tok.encode("hello", add_special_tokens=False).tokens == ["hello"]
    assert tok.encode_batch(["hello", ("hello", "world")])[1].tokens == ["[CLS]", "hello", "[SEP]", "world", "[SEP]"]
    assert tok.decode_batch([[1], [2]]) == ["hello", "world"]


def test_vocab_lookups_include_added_tokens():
    tok = _word_level()
    assert tok.add_tokens(["brand", AddedToken("new", single_word=True)]) == 2
    assert tok.get_vocab_size() == 7 and tok.get_vocab_size(with_added_tokens=False) == 5
    assert tok.token_to_id("new") == 6 and tok.id_to_token(5) == "brand"
    assert tok.get_vocab()["brand"] == 5
    assert tok.encode("brandnew hello").tokens == ["brand", "[UNK]", "hello"]  # 'new' is single_word


def test_unknown_id_in_decode_is_named():
    tok = _word_level()
    with pytest.raises(UnknownIdError, match="999"):
        tok.decode([1, 999])


def test_user_errors():
    tok = _word_level()
    with pytest.raises(TokvizError, match="strategy"):
        tok.enable_truncation(8, strategy="middle_out")
    with pytest.raises(TokvizError, match="stride"):
        tok.enable_truncation(4, stride=5)
    with pytest.raises(TokvizError, match="direction"):
        tok.enable_padding(direction="up")
    with pytest.raises(TokvizError, match="string"):
        tok.encode(42)  # type: ignore[arg-type]
    tok.enable_truncation(2, strategy="only_second")
    with pytest.raises(TokvizError, match="pair"):
        tok.encode("hello world big")


def test_truncation_and_padding_settings_read_like_hf():
    ours = _word_level()
    theirs = tokenizers.Tokenizer.from_str(ours.to_str())
    for tok in (ours, theirs):
        tok.enable_truncation(16, stride=2, strategy="only_first", direction="left")
        tok.enable_padding(length=20, pad_to_multiple_of=4, pad_id=3)
    assert ours.truncation == theirs.truncation
    assert ours.padding == theirs.padding
    ours.no_truncation()
    ours.no_padding()
    assert ours.truncation is None and ours.padding is None


def _all_fields(encoding) -> tuple:
    fields = (
        encoding.ids, encoding.type_ids, encoding.tokens, encoding.offsets, encoding.word_ids,
        encoding.special_tokens_mask, encoding.attention_mask, encoding.sequence_ids,
    )
    return fields, [_all_fields(piece) for piece in encoding.overflowing]


@pytest.mark.parametrize("kind", ["gpt2", "bert", "t5"])
def test_truncation_that_cuts_nothing_keeps_the_fast_lane(pipelines, kind, monkeypatch):
    # A file that ships with truncation on (max_length 512) encodes a short text on the fast
    # lane; a text that does not fit overflows as in HF -- under a template (BERT's, T5's),
    # from the fast lane's own encoding between its special tokens, not encoded again.
    hf = tokenizers.Tokenizer.from_str(pipelines[kind][1].to_str())
    ours = Tokenizer.from_str(hf.to_str())
    text = "Hello there, a short line."
    long_text = "Hello there, a long line. " * 40
    for tok in (ours, hf):
        tok.enable_truncation(40, stride=3)
        tok.enable_padding(length=48)
    assert len(hf.encode(text)) == 48 and len(hf.encode(text).overflowing) == 0 < len(hf.encode(long_text).overflowing)
    general = []
    real = Tokenizer._encode_input
    monkeypatch.setattr(Tokenizer, "_encode_input", lambda self, *args: general.append(args) or real(self, *args))
    for sample in (text, long_text):
        for specials in (True, False):
            general.clear()
            mine, theirs = ours.encode(sample, add_special_tokens=specials), hf.encode(sample, add_special_tokens=specials)
            assert _all_fields(mine) == _all_fields(theirs), (sample[:30], specials)
            templated = specials and kind != "gpt2"  # (GPT-2's ByteLevel processor: the general path)
            assert bool(general) is (sample == long_text and not templated), (sample[:30], specials)


@pytest.mark.parametrize(
    ("single", "max_length", "stride", "direction"),
    [("[CLS] $A [SEP]", 7, 2, "right"), ("$A:1 [SEP]:0", 5, 0, "left"), ("[CLS]:1 [SEP] $A [SEP]", 9, 3, "right"), ("$A", 4, 1, "left")],
)
def test_truncating_a_templated_sequence_matches_hf(pipelines, single, max_length, stride, direction):
    # The sequence is taken from between the template's special tokens: every field of the
    # encoding and of its overflowing pieces as HF makes them, type ids and masks included.
    from tokenizers import processors as hf_processors

    hf = tokenizers.Tokenizer.from_str(pipelines["bert"][1].to_str())
    specials = [("[CLS]", hf.token_to_id("[CLS]")), ("[SEP]", hf.token_to_id("[SEP]"))]
    hf.post_processor = hf_processors.TemplateProcessing(single=single, pair="$A $B", special_tokens=specials)
    ours = Tokenizer.from_str(hf.to_str())
    for tok in (ours, hf):
        tok.enable_truncation(max_length, stride=stride, direction=direction)
        tok.enable_padding(length=max_length + 2, direction="left")
    for text in ("Hello there, a long line with café and 東京 in it.", "short", ""):
        assert _all_fields(ours.encode(text)) == _all_fields(hf.encode(text)), (single, text)


# ---------------------------------------------------------------------- properties
@PROPERTY_SETTINGS
@given(text=ANY_TEXT, pair=st.one_of(st.none(), ANY_TEXT))
def test_encode_never_raises_and_offsets_stay_inside(pipelines, text, pair):
    for kind, (ours, _) in pipelines.items():
        enc = ours.encode(text, pair)
        for sequence_id, source in enumerate((text, pair)):
            if source is None:
                continue
            previous_start = 0
            for (start, end), special, sequence in zip(enc.offsets, enc.special_tokens_mask, enc.sequence_ids):
                if special or sequence != sequence_id:
                    continue
                assert 0 <= start <= end <= len(source), (kind, text, start, end)
                assert start >= previous_start, (kind, text)
                previous_start = start


@PROPERTY_SETTINGS
@given(text=ANY_TEXT)
def test_byte_level_bpe_round_trips(pipelines, text):
    ours, _ = pipelines["gpt2"]
    # Special tokens kept: Hypothesis mines string constants such as '<|endoftext|>' from the
    # loaded modules, and a special token is skipped by the default decode.
    assert ours.decode(ours.encode(text).ids, skip_special_tokens=False) == text


@PROPERTY_SETTINGS
@given(text=ASSIGNED_TEXT)
def test_pipelines_match_hf_on_any_text(pipelines, text):
    for kind, (ours, theirs) in pipelines.items():
        mine, reference = ours.encode(text), theirs.encode(text)
        assert (mine.ids, mine.offsets, mine.word_ids) == (reference.ids, reference.offsets, reference.word_ids), kind
        assert ours.decode(mine.ids) == theirs.decode(reference.ids), kind


@PROPERTY_SETTINGS
@given(text=st.lists(st.sampled_from([*"ab é€😀 \t\n'sX", " <|endoftext|>", "<|endoftext|>"]), max_size=30).map("".join))
def test_byte_level_fast_path_equals_general_path(pipelines, text):
    fast, _ = pipelines["gpt2"]
    general = Tokenizer.from_str(fast.to_str())
    general.use_fast_path = False
    for prefix in (False, True):
        for tok in (fast, general):
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix)
            tok.post_processor = processors.ByteLevel(add_prefix_space=prefix, trim_offsets=True)
        a, b = fast.encode(text), general.encode(text)
        assert (a.ids, a.tokens, a.offsets, a.word_ids, a.sequence_ids) == (b.ids, b.tokens, b.offsets, b.word_ids, b.sequence_ids)
    for tok in (fast, general):
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.post_processor = processors.ByteLevel(trim_offsets=True)


# ---------------------------------------------------------------------- trace
def test_trace_records_every_stage(pipelines):
    ours, _ = pipelines["bert"]
    trace = ours.trace("Héllo, wörld!", "Bye")
    first = trace.sequences[0]
    assert first.original == "Héllo, wörld!"
    assert first.normalized == "hello, world!"
    # 'H' lowercased, 'é' and 'ö' lose their accents; everything else is untouched.
    assert first.changed == (True, True, False, False, False, False, False, False, True, False, False, False, False)
    assert first.alignments[1] == (1, 2)
    assert [p.text for p in first.pre_tokens] == ["hello", ",", "world", "!"]
    assert [p.offsets for p in first.pre_tokens] == [(0, 5), (5, 6), (7, 12), (12, 13)]
    assert first.decoded == "hello, world!" and first.round_trip
    assert trace.encoding.ids == ours.encode("Héllo, wörld!", "Bye").ids
    assert trace.decoded == ours.decode(trace.encoding.ids) == "hello, world! bye"
    assert trace.sequences[1].normalized == "bye" and trace.sequences[1].changed == (True, False, False)
    tokens = [t for p in first.pre_tokens for t in p.tokens]
    assert all(0 <= t.offsets[0] < t.offsets[1] <= 13 for t in tokens)


def test_trace_marks_added_tokens_and_byte_level_round_trip(pipelines):
    ours, _ = pipelines["gpt2"]
    trace = ours.trace("a<|endoftext|>b é")
    pre_tokens = trace.sequences[0].pre_tokens
    assert [p.added for p in pre_tokens] == [False, True, False, False]
    assert trace.sequences[0].round_trip
    assert trace.decoded == "a<|endoftext|>b é".replace("<|endoftext|>", "")


# ---------------------------------------------------------------------- training
def test_train_from_iterator_matches_hf(course_corpus):
    from tokviz import trainers

    ours = Tokenizer(models.BPE())
    ours.pre_tokenizer = pre_tokenizers.Whitespace()
    calls = []
    returned = ours.train_from_iterator(
        course_corpus, trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]", "[PAD]"]), progress=lambda *a: calls.append(a)
    )
    assert returned is None  # as HF's; the history stays on the tokenizer
    history = ours.training_history
    theirs = tokenizers.Tokenizer(tokenizers.models.BPE())
    theirs.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    theirs.train_from_iterator(
        course_corpus, tokenizers.trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]", "[PAD]"], show_progress=False)
    )
    assert history.model is ours.model
    assert ours.get_vocab() == theirs.get_vocab()
    assert ours.encode("This is tokenization.").tokens == theirs.encode("This is tokenization.").tokens
    assert [t.content for t in ours.get_added_tokens_decoder().values()] == ["[UNK]", "[PAD]"]
    assert ours.get_added_tokens_decoder()[0].special
    assert calls, "progress was never reported"


def test_train_reads_files(tmp_path, course_corpus):
    from tokviz import trainers

    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(course_corpus), encoding="utf-8")
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train([str(path)], trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    assert tok.encode("This chapter").tokens == ["This", "chapter"]
    assert tok.token_to_id("[UNK]") == 0


def test_decoder_attribute_is_used():
    tok = Tokenizer(models.WordLevel({"▁a": 0, "▁b": 1}, unk_token="▁a"))
    tok.decoder = decoders.Metaspace()
    assert tok.decode([0, 1]) == "a b"


@pytest.mark.parametrize("kind", ["BPE", "WordPiece", "WordLevel"])
def test_training_keeps_the_untrained_models_unknown_token_as_hf(kind: str) -> None:
    """HF's trainers set the vocab (and merges) but keep the model's unk_token."""
    import tokenizers as hf

    from tokviz import Tokenizer, models, pre_tokenizers, trainers

    lines = ["hug pug pun bun hugs", "the hugs of the pun", "a bun and a pug"] * 3
    ours_model = {"BPE": models.BPE, "WordPiece": models.WordPiece, "WordLevel": models.WordLevel}[kind](unk_token="[UNK]")
    hf_model = {"BPE": hf.models.BPE, "WordPiece": hf.models.WordPiece, "WordLevel": hf.models.WordLevel}[kind](unk_token="[UNK]")
    ours_trainer = {
        "BPE": lambda: trainers.BpeTrainer(vocab_size=40, special_tokens=["[UNK]"]),
        "WordPiece": lambda: trainers.WordPieceTrainer(vocab_size=40, special_tokens=["[UNK]"], scoring="frequency"),
        "WordLevel": lambda: trainers.WordLevelTrainer(vocab_size=40, special_tokens=["[UNK]"]),
    }[kind]()
    hf_trainer = {
        "BPE": lambda: hf.trainers.BpeTrainer(vocab_size=40, special_tokens=["[UNK]"]),
        "WordPiece": lambda: hf.trainers.WordPieceTrainer(vocab_size=40, special_tokens=["[UNK]"]),
        "WordLevel": lambda: hf.trainers.WordLevelTrainer(vocab_size=40, special_tokens=["[UNK]"]),
    }[kind]()
    ours, theirs = Tokenizer(ours_model), hf.Tokenizer(hf_model)
    ours.pre_tokenizer, theirs.pre_tokenizer = pre_tokenizers.Whitespace(), hf.pre_tokenizers.Whitespace()
    ours.train_from_iterator(lines, ours_trainer)
    history = ours.training_history
    theirs.train_from_iterator(lines, hf_trainer)
    assert ours.model.unk_token == "[UNK]"
    assert history.model_at(history.min_vocab_size + 2).unk_token == "[UNK]"  # the slider's models too
    text = "hugs zebra ☃ bun"
    assert ours.encode(text).tokens == theirs.encode(text).tokens
    assert "[UNK]" in ours.encode(text).tokens


def test_a_trainer_for_another_algorithm_is_refused_before_any_word_is_read() -> None:
    """As HF: ``Tokenizer(BPE()).train([], UnigramTrainer())`` names the mismatch, not the empty corpus."""
    from tokviz import models, trainers
    from tokviz.errors import TokvizError

    with pytest.raises(TokvizError, match="UnigramTrainer can only train a Unigram; this tokenizer's model is a BPE"):
        Tokenizer(models.BPE()).train_from_iterator([], trainers.UnigramTrainer())
