"""HF's mutable API on tokviz: model setters, copy-on-write tokenizers, the app's two sessions,
pickled state, copies, AddedToken, repr. Literal values; parity with ``tokenizers`` where HF
defines the behaviour."""

from __future__ import annotations

import copy
import pickle

import pytest
import tokenizers as hf

import tokviz
from tokviz import AddedToken, Tokenizer, normalizers
from tokviz.models import BPE, Unigram, WordLevel, WordPiece
from tests._async import run_coroutine


HUG_VOCAB = {"b": 0, "g": 1, "h": 2, "n": 3, "p": 4, "s": 5, "u": 6, "ug": 7, "un": 8, "hug": 9}
HUG_MERGES = [("u", "g"), ("u", "n"), ("h", "ug")]


def hug_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer(BPE(HUG_VOCAB, HUG_MERGES))
    tokenizer.pre_tokenizer = tokviz.pre_tokenizers.Whitespace()
    return tokenizer


# ---------------------------------------------------------------------- model setters
@pytest.mark.parametrize("lib", [tokviz, hf], ids=["tokviz", "hf"])
def test_model_setters_change_encoding_as_in_hf(lib):
    tokenizer = lib.Tokenizer(lib.models.BPE(HUG_VOCAB, HUG_MERGES, unk_token="b"))
    assert tokenizer.encode("hugz", add_special_tokens=False).tokens == ["hug", "b"]
    tokenizer.model.dropout = 1.0  # every merge dropped
    assert tokenizer.model.dropout == 1.0
    assert tokenizer.encode("hug").tokens == ["h", "u", "g"]
    tokenizer.model.dropout = None
    tokenizer.model.unk_token = "s"  # (new words each time: HF's word cache outlives a setter)
    assert tokenizer.encode("hugx").tokens == ["hug", "s"]
    tokenizer.model.unk_token = None  # an unknown char is then dropped
    assert tokenizer.encode("hugy").tokens == ["hug"]


@pytest.mark.parametrize(
    ("model", "name", "value", "error"),
    [
        (lambda lib: lib.models.BPE(), "dropout", "x", TypeError),
        (lambda lib: lib.models.BPE(), "unk_token", 3, TypeError),
        (lambda lib: lib.models.BPE(), "fuse_unk", "x", TypeError),
        (lambda lib: lib.models.BPE(), "byte_fallback", None, TypeError),
        (lambda lib: lib.models.BPE(), "no_such_option", 1, AttributeError),
        (lambda lib: lib.models.WordPiece(), "max_input_chars_per_word", "x", TypeError),
        (lambda lib: lib.models.WordPiece(), "max_input_chars_per_word", -1, OverflowError),
        (lambda lib: lib.models.WordPiece(), "continuing_subword_prefix", None, TypeError),
        (lambda lib: lib.models.WordLevel(), "unk_token", 1, TypeError),
        (lambda lib: lib.models.Unigram(), "alpha", "x", TypeError),
        (lambda lib: lib.models.Unigram(), "nbest_size", -1, OverflowError),
    ],
)
def test_model_setters_refuse_as_hf_does(model, name, value, error):
    for lib in (tokviz, hf):
        with pytest.raises(error):
            setattr(model(lib), name, value)
    with pytest.raises(error, match=name):
        setattr(model(tokviz), name, value)


def test_wordpiece_and_wordlevel_setters_take_effect():
    model = WordPiece({"[UNK]": 0, "<oov>": 1, "a": 2, "##b": 3, "$$b": 4})
    assert [t.value for t in model.tokenize("ab")] == ["a", "##b"]
    model.continuing_subword_prefix = "$$"
    assert [t.value for t in model.tokenize("ab")] == ["a", "$$b"]
    model.max_input_chars_per_word = 1
    model.unk_token = "<oov>"
    assert [t.value for t in model.tokenize("ab")] == ["<oov>"]
    level = WordLevel({"a": 0, "<unk>": 1, "[UNK]": 2})
    level.unk_token = "[UNK]"
    assert level.tokenize("zz")[0].id == 2


def test_unigram_sampling_options_as_hf():
    vocab = [("<unk>", 0.0), ("h", -3.0), ("u", -3.0), ("g", -3.0), ("hu", -4.0), ("hug", -5.0), ("ug", -4.0)]
    model = Unigram(vocab, 0, alpha=0.5)
    assert (model.alpha, model.nbest_size, Unigram().alpha) == (0.5, None, None)
    drawn = {tuple(t.value for t in model.tokenize("hug")) for _ in range(200)}
    assert drawn == {("hug",), ("hu", "g"), ("h", "ug"), ("h", "u", "g")}
    model.alpha = 0.0
    assert {tuple(t.value for t in model.tokenize("hug")) for _ in range(20)} == {("hug",)}
    model.nbest_size = 64
    assert model.nbest_size == 64


# ---------------------------------------------------------------------- copy-on-write tokenizers
@pytest.mark.parametrize("lib", [tokviz, hf], ids=["tokviz", "hf"])
def test_models_clear_and_resize_their_caches_as_hf(lib):
    unigram = lib.models.Unigram([("<unk>", 0.0), ("h", -3.0), ("u", -3.0), ("g", -3.0), ("hug", -2.0)], 0, False)
    for model, expected in (
        (lib.models.BPE(HUG_VOCAB, HUG_MERGES), ["hug", "s", "p", "un"]),
        (unigram, ["hug", "s", "p", "u", "n"]),  # unknown chars keep their text
    ):
        tokenizer = lib.Tokenizer(model)
        tokenizer.pre_tokenizer = lib.pre_tokenizers.Whitespace()
        assert tokenizer.encode("hugs pun").tokens == expected
        tokenizer.model._clear_cache()
        assert tokenizer.encode("hugs pun").tokens == expected
        tokenizer.model._resize_cache(0)
        assert tokenizer.encode("hugs pun").tokens == expected
        tokenizer.model._resize_cache(3)
        assert tokenizer.encode("hugs pun").tokens == expected
        with pytest.raises(TypeError):
            tokenizer.model._resize_cache("3")
        with pytest.raises(OverflowError):
            tokenizer.model._resize_cache(-1)
    assert not hasattr(lib.models.WordPiece({"a": 0}), "_clear_cache")  # HF's WordPiece has none


def test_clear_cache_makes_the_next_encode_cold():
    # The chunk and word caches of the tokenizer's fast paths go too (not the plan's tables:
    # no setup again), so a timing after _clear_cache() measures a cold encode.
    unigram = Unigram([("<unk>", 0.0), ("h", -3.0), ("u", -3.0), ("g", -3.0), ("hug", -2.0)], 0, False)
    for model, expected in ((BPE(HUG_VOCAB, HUG_MERGES), ["hug", "s", "p", "un"]), (unigram, ["hug", "s", "p", "u", "n"])):
        tokenizer = Tokenizer(model)
        tokenizer.pre_tokenizer = tokviz.pre_tokenizers.Whitespace()
        assert tokenizer.encode("hugs pun").tokens == expected
        plan = tokenizer._engine().cut()
        assert plan is not None and plan.words  # the words were cached
        tokenizer.model._clear_cache()
        assert tokenizer._engine().cut() is plan and not plan.words
        assert tokenizer.encode("hugs pun").tokens == expected and plan.words
        tokenizer.model._resize_cache(0)
        assert tokenizer._engine().cut() is plan and not plan.words
        assert tokenizer.encode("hugs pun").tokens == expected
    # GPT-2's pipeline (ByteLevel, no normalizer) keeps its words on the tokenizer.
    tokenizer = Tokenizer(BPE({"h": 0, "u": 1, "g": 2, "Ġ": 3, "ug": 4, "hug": 5}, [("u", "g"), ("h", "ug")]))
    tokenizer.pre_tokenizer = tokviz.pre_tokenizers.ByteLevel(add_prefix_space=False)
    assert tokenizer.encode("hug hug").tokens == ["hug", "Ġ", "hug"] and tokenizer._engine().cut().words
    tokenizer.model._clear_cache()
    assert tokenizer.encode("hug").tokens == ["hug"] and list(tokenizer._engine().cut().words) == ["hug"]


def test_copy_shares_until_a_getter_then_edits_stay_private():
    original = hug_tokenizer()
    original.encode("hugs pun")  # warm caches
    twin = copy.copy(original)
    assert twin._model is original._model  # shared, cheaply
    twin.model.dropout = 1.0
    assert twin._model is not original._model
    assert original.model.dropout is None
    assert original.encode("hug").tokens == ["hug"]
    assert twin.encode("hug").tokens == ["h", "u", "g"]
    twin.normalizer = normalizers.Lowercase()
    twin.add_special_tokens(["[X]"])
    assert original.normalizer is None and original.token_to_id("[X]") is None
    assert twin.encode("HUG [X]").tokens == ["h", "u", "g", "[X]"]
    # the original's getter also gives it a private copy: editing it leaves the twin alone
    original.pre_tokenizer.__class__  # reach it
    original.model.unk_token = "b"
    assert twin.model.unk_token is None


def test_deepcopy_and_pickle_are_independent_and_hf_state():
    original = hug_tokenizer()
    original.add_tokens(["pun"])
    for twin in (copy.deepcopy(original), pickle.loads(pickle.dumps(original))):
        twin.model.unk_token = "s"
        assert original.model.unk_token is None
        assert twin.encode("hugs pun").tokens == ["hug", "s", "pun"]
    state = original.__getstate__()
    assert isinstance(state, bytes) and state.startswith(b'{"version":"1.0"')
    fresh = Tokenizer(BPE())
    fresh.__setstate__(state)
    assert fresh.encode("hugs pun").ids == [9, 5, 10]
    hf_tok = hf.Tokenizer.from_str(state.decode())
    assert hf_tok.encode("hugs pun").ids == [9, 5, 10]


def test_two_sessions_of_the_app_never_see_each_others_edits():
    """Two sessions ask the app's cache for the same tokenizer (tokviz.ui.training.tokenizer_at);
    one edits its model and normalizer, the other's encodings do not change."""
    from tokviz.pipeline_config import PipelineConfig
    from tokviz.training import run_training
    from tokviz.ui.training import request_for, tokenizer_at, trained_size

    lines = ["hug pug pun bun hugs"] * 5 + ["the hugging bunny puns"] * 3
    config = PipelineConfig(model="BPE", unk_token="[UNK]", special_tokens=("[UNK]",))
    request = request_for("two-sessions-test", config, 40)
    history = run_training(config, 40, lines)
    size = trained_size(history)
    first = tokenizer_at(request, size, history)
    second = tokenizer_at(request, size, history)
    text = "hugs and puns, HUG"
    before = second.encode(text)
    first.model.dropout = 1.0
    first.normalizer = normalizers.Lowercase()
    first.add_tokens(["puns"])
    assert first.encode(text).tokens != before.tokens
    third = tokenizer_at(request, size, history)  # a later session
    for tokenizer in (second, third):
        after = tokenizer.encode(text)
        assert (after.tokens, after.ids, after.offsets) == (before.tokens, before.ids, before.offsets)
        assert tokenizer.model.dropout is None and tokenizer.normalizer is None


# ---------------------------------------------------------------------- AddedToken
def test_added_token_defaults_setters_and_state_as_hf():
    for lib in (tokviz, hf):
        token = lib.AddedToken()
        assert (token.content, token.normalized, token.special) == ("", True, False)
        token = lib.AddedToken("<mask>")
        token.special = True  # what transformers does
        assert (token.special, token.normalized) == (True, False)
        token.content = "<m>"
        with pytest.raises(AttributeError):
            token.lstrip = True
        with pytest.raises(TypeError):
            token.special = "yes"
        assert token.__getstate__() == {
            "content": "<m>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True,
        }
    assert repr(AddedToken("a", lstrip=True)) == repr(hf.AddedToken("a", lstrip=True))
    assert AddedToken("a") == AddedToken("a") != AddedToken("a", rstrip=True)
    assert pickle.loads(pickle.dumps(AddedToken("x", special=True))) == AddedToken("x", special=True)


def test_tokenizer_keeps_its_own_added_tokens():
    token = AddedToken("pun")
    tokenizer = hug_tokenizer()
    tokenizer.add_tokens([token])
    token.content = "hug"  # edits the caller's token only
    assert tokenizer.encode("pun").tokens == ["pun"]


def test_xlnet_fast_tokenizer_wraps_a_tokviz_tokenizer():
    transformers = pytest.importorskip("transformers")
    tokenizer = Tokenizer(Unigram([("<unk>", 0.0), ("▁hug", -1.0), ("s", -2.0), ("▁", -3.0)], 0))
    tokenizer.pre_tokenizer = tokviz.pre_tokenizers.Metaspace()
    tokenizer.decoder = tokviz.decoders.Metaspace()
    fast = transformers.XLNetTokenizerFast(tokenizer_object=tokenizer)
    assert fast.tokenize("hugs") == ["▁hug", "s"]
    assert fast("hugs")["input_ids"][:2] == [1, 2]


# ---------------------------------------------------------------------- repr, batches, async
def test_repr_and_str_are_hf_s():
    for build in (
        lambda lib: lib.Tokenizer(lib.models.BPE({"a": 0, "b": 1, "ab": 2, "c": 3, "d": 4, "e": 5}, [("a", "b")])),
        lambda lib: lib.Tokenizer(lib.models.WordPiece({"a": 0})),
    ):
        ours, theirs = build(tokviz), build(hf)
        for tok in (ours, theirs):
            tok.add_special_tokens(["[X]"])
            tok.enable_truncation(8)
            tok.enable_padding(length=9)
        assert repr(ours) == repr(theirs)
        assert str(ours) == str(theirs)
    vocab = [("A", 0.0), ("B", -0.01), ("C", -0.02), ("D", -0.03), ("E", -0.04), ("F", -0.5)]
    assert str(Unigram(vocab, 0)) == str(hf.models.Unigram(vocab, 0))
    assert str(Unigram(vocab, 0)).endswith('("E", -0.04), ...], byte_fallback=False)')


def test_batches_async_and_special_token_switch():
    tokenizer = hug_tokenizer()
    tokenizer.add_special_tokens(["pun"])
    texts = ["hugs pun", "bun"]
    expected = [e.tokens for e in tokenizer.encode_batch(texts)]
    assert [e.tokens for e in tokenizer.encode_batch_fast(texts)] == expected == [["hug", "s", "pun"], ["b", "un"]]
    assert [e.tokens for e in run_coroutine(tokenizer.async_encode_batch(texts))] == expected
    assert run_coroutine(tokenizer.async_encode("hugs")).ids == [9, 5]
    assert run_coroutine(tokenizer.async_decode_batch([[9, 5], [0, 8]])) == ["hug s", "b un"]
    with pytest.raises(TypeError, match="list of inputs"):
        tokenizer.encode_batch(123)
    tokenizer.encode_special_tokens = True
    assert tokenizer.encode("pun").tokens == ["p", "un"]
    tokenizer.encode_special_tokens = False
    assert tokenizer.encode("pun").tokens == ["pun"]


# ---------------------------------------------------------------------- details HF's binding tests check
@pytest.mark.parametrize("lib", [tokviz, hf], ids=["tokviz", "hf"])
def test_add_special_tokens_makes_the_callers_tokens_special(lib):
    tokenizer = lib.Tokenizer(lib.models.BPE())
    tokens = [lib.AddedToken("the"), lib.AddedToken("quick", normalized=True), lib.AddedToken()]
    assert tokenizer.add_special_tokens(tokens) == 2  # the empty token is not added
    assert [(t.special, t.normalized) for t in tokens] == [(True, False), (True, True), (True, False)]
    given = lib.AddedToken("w", special=True, normalized=True)
    given.special = False  # an explicit normalized stays
    derived = lib.AddedToken("w", special=True)
    derived.special = False  # a default one follows
    assert (given.normalized, derived.normalized) == (True, True)
    assert pickle.loads(pickle.dumps(lib.AddedToken("q", normalized=True))).normalized is True


@pytest.mark.parametrize("lib", [tokviz, hf], ids=["tokviz", "hf"])
def test_decode_stream_copies_are_independent(lib):
    tokenizer = lib.Tokenizer(lib.models.BPE())
    tokenizer.add_tokens(["my", "name", "is", "john"])
    stream = lib.decoders.DecodeStream(skip_special_tokens=False)
    assert [stream.step(tokenizer, 0), stream.step(tokenizer, 1)] == ["my", " name"]
    twin = copy.copy(stream)
    assert [stream.step(tokenizer, 2), twin.step(tokenizer, 2), stream.step(tokenizer, 3), twin.step(tokenizer, 3)] == [
        " is", " is", " john", " john",
    ]
    assert lib.decoders.DecodeStream([0, 1, 2]).step(tokenizer, 3) == " john"


@pytest.mark.parametrize("lib", [tokviz, hf], ids=["tokviz", "hf"])
def test_template_and_unigram_errors_say_what_hf_says(lib):
    template = lib.processors.TemplateProcessing
    for bad in ("[CLS] $$ [SEP]", "[CLS] $A: [SEP]", "$Z"):
        with pytest.raises(ValueError, match="Cannot build Piece from string"):
            template(single=bad)
    with pytest.raises(ValueError, match=r"Missing SpecialToken\(s\) with id\(s\) `\[CLS\]"):
        template(single=["[CLS]"])
    tokenizer = lib.Tokenizer(lib.models.Unigram([("a", -1.0)], None, False))
    with pytest.raises(Exception) as raised:
        tokenizer.encode("ab")
    assert str(raised.value) == "Encountered an unknown token but `unk_id` is missing"


def test_reprs_print_strings_unescaped_as_hf():
    """HF's reprs put strings between quotes without escaping (a quote prints as three);
    TemplateProcessing's one-entry special-token map prints as a map."""
    def reprs(lib):
        tokenizer = lib.Tokenizer(lib.models.BPE({'"': 0, "\n": 1, "a\\b": 2}, []))
        tokenizer.add_special_tokens(['"'])
        tokenizer.enable_padding(pad_token='"')
        return [
            repr(lib.normalizers.Replace('"', "é\t")),
            repr(lib.AddedToken('"\n\\')),
            repr(lib.processors.TemplateProcessing(single="[CLS] $A", special_tokens=[("[CLS]", 1)])),
            repr(lib.processors.BertProcessing(('"', 1), ("[CLS]", 2))),
            repr(lib.models.Unigram([('"', 0.0), ("\\", -1.0)], 0)),
            repr(lib.trainers.BpeTrainer(special_tokens=['"'], initial_alphabet=['"'])),
            repr(tokenizer),
            str(tokenizer),
        ]

    ours = reprs(tokviz)
    assert ours == reprs(hf)
    assert ours[0] == 'Replace(pattern=String("""), content="é\t")'
    assert ours[2].endswith('special_tokens={"[CLS]":SpecialToken(id="[CLS]", ids=[1], tokens=["[CLS]"])})')
