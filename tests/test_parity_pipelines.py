"""Full pipelines trained BY HF tokenizers, exchanged as tokenizer.json, encoded by both.

Four pipelines, as the real models build them:

- BERT: BertNormalizer + BertPreTokenizer + WordPiece + BertProcessing + WordPiece decoder
- GPT-2: ByteLevel pre-tokenizer + BPE + ByteLevel post-processor and decoder
- RoBERTa: ByteLevel (prefix space) + BPE + RobertaProcessing + ByteLevel decoder
- T5: NFKC + Replace + Metaspace + Unigram + TemplateProcessing + Metaspace decoder

Each is trained by HF on grimm_tales.txt (0.5 MB). The tokenizer.json HF saves is loaded
by tokviz; the tokenizer.json tokviz saves is loaded by HF; all three tokenizers must give
the same encodings (every field, overflowing pieces included) on the 300 shared lines and
the hand-written hard strings, single and pair, plain / truncated / padded, and decode alike.
"""

from __future__ import annotations

import json

import pytest

tokenizers = pytest.importorskip("tokenizers")

from tokviz import Tokenizer  # noqa: E402
from tokviz.errors import TokvizError  # noqa: E402

FIELDS = (
    "ids",
    "tokens",
    "offsets",
    "type_ids",
    "special_tokens_mask",
    "attention_mask",
    "word_ids",
    "sequence_ids",
    "n_sequences",
)

pytestmark = pytest.mark.slow


def _train(kind: str, lines: list[str]):
    from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

    if kind == "bert":
        tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(
            lines,
            trainers.WordPieceTrainer(
                vocab_size=3000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False
            ),
        )
        tok.post_processor = processors.BertProcessing(
            ("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]"))
        )
        tok.decoder = decoders.WordPiece()
    elif kind in ("gpt2", "roberta"):
        tok = tokenizers.Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=kind == "roberta")
        tok.decoder = decoders.ByteLevel()
        special = ["<|endoftext|>"] if kind == "gpt2" else ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        tok.train_from_iterator(
            lines,
            trainers.BpeTrainer(
                vocab_size=3000,
                special_tokens=special,
                initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                show_progress=False,
            ),
        )
        if kind == "gpt2":
            tok.post_processor = processors.ByteLevel(trim_offsets=True)
        else:
            tok.post_processor = processors.RobertaProcessing(
                ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")), trim_offsets=True, add_prefix_space=True
            )
    else:  # t5
        tok = tokenizers.Tokenizer(models.Unigram())
        tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        tok.train_from_iterator(
            lines,
            trainers.UnigramTrainer(
                vocab_size=2000, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>", show_progress=False
            ),
        )
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B:1 </s>:1", special_tokens=[("</s>", tok.token_to_id("</s>"))]
        )
    return tok


@pytest.fixture(scope="module")
def corpus_lines(read_shared_corpus) -> list[str]:
    return read_shared_corpus("grimm_tales.txt").splitlines()


@pytest.fixture(scope="module")
def strings(shared_corpus_lines, hard_strings) -> list[str]:
    return list(hard_strings) + list(shared_corpus_lines)


def _difference(ours, theirs, path: str = "") -> str | None:
    for field in FIELDS:
        mine, reference = getattr(ours, field), getattr(theirs, field)
        if mine != reference:
            return f"{path}{field}: tokviz {mine!r:.300} != HF {reference!r:.300}"
    if len(ours.overflowing) != len(theirs.overflowing):
        return f"{path}overflowing: tokviz {len(ours.overflowing)} pieces != HF {len(theirs.overflowing)}"
    for index, (mine, reference) in enumerate(zip(ours.overflowing, theirs.overflowing)):
        found = _difference(mine, reference, f"{path}overflowing[{index}].")
        if found:
            return found
    return None


def _inputs(strings: list[str]) -> list[tuple[str, str | None]]:
    """Every string alone, and paired with another string of the set."""
    items: list[tuple[str, str | None]] = [(text, None) for text in strings]
    items += [(text, strings[(index * 7 + 3) % len(strings)]) for index, text in enumerate(strings)]
    return items


def _configure(tok, mode: str) -> None:
    # The same calls work on both libraries.
    tok.no_truncation()
    tok.no_padding()
    if mode == "truncate":
        tok.enable_truncation(40, stride=6)
    elif mode == "truncate_left_only_first":
        tok.enable_truncation(40, stride=2, strategy="only_first", direction="left")
    elif mode == "pad":
        tok.enable_padding(pad_id=0, pad_token="<pad>", pad_to_multiple_of=8)
    elif mode == "pad_fixed_left":
        tok.enable_padding(direction="left", pad_id=0, pad_type_id=1, pad_token="<pad>", length=64)
        tok.enable_truncation(64)


def _compare(ours, theirs, inputs, mode: str) -> list[str]:
    problems = []
    for text, pair in inputs:
        try:
            reference = theirs.encode(text, pair)
        except BaseException as error:  # HF refuses (even panics on) some truncations: so must we
            if isinstance(error, KeyboardInterrupt):
                raise
            try:
                ours.encode(text, pair)
            except TokvizError:
                continue
            problems.append(f"[{mode}] {text!r:.60} + {pair!r:.40}: HF raised, tokviz did not")
            continue
        found = _difference(ours.encode(text, pair), reference)
        if found:
            problems.append(f"[{mode}] {text!r:.60} + {pair!r:.40}: {found}")
    return problems


PIPELINES = ("bert", "gpt2", "roberta", "t5")
MODES = ("plain", "truncate", "truncate_left_only_first", "pad", "pad_fixed_left")


@pytest.fixture(scope="module")
def trained(corpus_lines):
    # Each as HF reads it back from its tokenizer.json, as tokviz does (serde_json may move a
    # Unigram score by one ulp: a tie between two segmentations then goes the other way).
    return {kind: tokenizers.Tokenizer.from_str(_train(kind, corpus_lines).to_str()) for kind in PIPELINES}


@pytest.mark.parametrize("kind", PIPELINES)
def test_hf_tokenizer_json_loads_in_tokviz_and_encodes_identically(kind, trained, strings):
    hf = trained[kind]
    ours = Tokenizer.from_str(hf.to_str())
    inputs = _inputs(strings)
    assert len(inputs) >= 600  # >= 300 strings, single and pair
    problems = []
    for mode in MODES:
        _configure(hf, mode)
        _configure(ours, mode)
        problems += _compare(ours, hf, inputs, mode)
    _configure(hf, "plain")
    assert not problems, f"{len(problems)} differences, first: " + "\n".join(problems[:5])


@pytest.mark.parametrize("kind", PIPELINES)
def test_tokviz_tokenizer_json_loads_in_hf_and_encodes_identically(kind, trained, strings):
    original = trained[kind]
    ours = Tokenizer.from_str(original.to_str())
    for mode in ("truncate", "pad"):
        # Truncation and padding travel inside the file too.
        _configure(ours, mode)
        saved = ours.to_str()
        theirs = tokenizers.Tokenizer.from_str(saved)
        # Compared with HF's own reload: serde_json may move a Unigram score by one ulp.
        reloaded = tokenizers.Tokenizer.from_str(original.to_str())
        assert json.loads(theirs.to_str())["model"] == json.loads(reloaded.to_str())["model"]
        problems = _compare(ours, theirs, _inputs(strings), mode)
        assert not problems, f"{len(problems)} differences, first: " + "\n".join(problems[:5])


@pytest.mark.parametrize("kind", PIPELINES)
def test_decode_agrees_with_hf(kind, trained, strings):
    hf = trained[kind]
    _configure(hf, "plain")
    ours = Tokenizer.from_str(hf.to_str())
    for text in strings:
        ids = hf.encode(text).ids
        for skip in (True, False):
            assert ours.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip), text


@pytest.mark.parametrize("kind", PIPELINES)
def test_encode_batch_pads_to_the_longest_like_hf(kind, trained, strings):
    hf = trained[kind]
    ours = Tokenizer.from_str(hf.to_str())
    _configure(hf, "pad")
    _configure(ours, "pad")
    batch = [strings[i] for i in range(0, 120, 7)] + [(strings[1], strings[40])]
    try:
        for mine, reference in zip(ours.encode_batch(batch), hf.encode_batch(batch)):
            assert _difference(mine, reference) is None
    finally:
        _configure(hf, "plain")


def test_pretokenized_input_matches_hf(trained):
    for kind in PIPELINES:
        hf = trained[kind]
        _configure(hf, "plain")
        ours = Tokenizer.from_str(hf.to_str())
        words = ["Hello", "wörld", "", "  spaced ", "ﬁne!"]
        pair = ["second", "piece"]
        assert _difference(ours.encode(words, is_pretokenized=True), hf.encode(words, is_pretokenized=True)) is None
        assert _difference(ours.encode(words, pair, is_pretokenized=True), hf.encode(words, pair, is_pretokenized=True)) is None


def test_added_tokens_match_hf_on_a_trained_pipeline(trained):
    hf = tokenizers.Tokenizer.from_str(trained["bert"].to_str())
    ours = Tokenizer.from_str(hf.to_str())
    from tokenizers import AddedToken as HFAddedToken

    from tokviz import AddedToken

    for lib, added in ((hf, HFAddedToken), (ours, AddedToken)):
        lib.add_tokens([added("Yesterday", normalized=True), added("<m>", single_word=True, lstrip=True, rstrip=True)])
        lib.add_special_tokens(["<SEP2>"])
    for text in ("I read a book yesterday", "x <m> y<m> <m>", "[CLS] a<SEP2>b [SEP]", "YESTERDAY<SEP2>"):
        assert _difference(ours.encode(text, "pair <m> here"), hf.encode(text, "pair <m> here")) is None, text
    assert json.loads(ours.to_str())["added_tokens"] == json.loads(hf.to_str())["added_tokens"]
