"""Models from files and back, as HF's: ``save(folder, prefix)`` writes the same bytes as
``tokenizers``; ``read_file`` / ``from_file`` and the older ``BPE("vocab.json", "merges.txt")``
forms read them; the HF submodule aliases."""

from __future__ import annotations

import pytest
import tokenizers as hf

import tokviz

VOCAB = {"[UNK]": 0, "a": 1, "b": 2, "ab": 3, "##b": 4, "é": 5}


def saved(lib, folder, build, prefix):
    out = folder / lib.__name__
    out.mkdir(exist_ok=True)
    paths = build(lib).save(str(out), prefix)
    assert isinstance(paths, list)
    return [(p.rsplit("/", 1)[-1], open(p, "rb").read()) for p in paths]


@pytest.mark.parametrize(
    "build",
    [
        lambda lib: lib.models.BPE(VOCAB, [("a", "b")], unk_token="[UNK]"),
        lambda lib: lib.models.WordPiece(VOCAB, unk_token="[UNK]"),
        lambda lib: lib.models.WordLevel(VOCAB, unk_token="[UNK]"),
        lambda lib: lib.models.Unigram([("[UNK]", 0.0), ("a", -1.5), ("é", -2.0)], 0),
    ],
    ids=["BPE", "WordPiece", "WordLevel", "Unigram"],
)
@pytest.mark.parametrize("prefix", [None, "pre"])
def test_save_writes_hf_s_files(tmp_path, build, prefix):
    assert saved(tokviz, tmp_path, build, prefix) == saved(hf, tmp_path, build, prefix)


def test_read_file_from_file_and_the_filename_forms(tmp_path):
    bpe_files = tokviz.models.BPE(VOCAB, [("a", "b")]).save(str(tmp_path))
    (wordpiece_file,) = tokviz.models.WordPiece(VOCAB).save(str(tmp_path), "wp")
    (wordlevel_file,) = tokviz.models.WordLevel(VOCAB).save(str(tmp_path), "wl")
    assert tokviz.models.BPE.read_file(*bpe_files) == (VOCAB, [("a", "b")])
    assert tokviz.models.WordPiece.read_file(wordpiece_file) == VOCAB
    assert tokviz.models.WordLevel.read_file(wordlevel_file) == VOCAB
    for lib in (tokviz, hf):
        models = lib.models
        built = [
            models.BPE.from_file(*bpe_files, unk_token="[UNK]"),
            models.BPE(*bpe_files, unk_token="[UNK]"),
            models.WordPiece.from_file(wordpiece_file, max_input_chars_per_word=5),
            models.WordPiece(wordpiece_file),
            models.WordLevel.from_file(wordlevel_file, unk_token="[UNK]"),
            models.WordLevel(wordlevel_file, unk_token="[UNK]"),
        ]
        tokens = [[t.value for t in model.tokenize("abx")] for model in built]
        assert tokens == [["ab", "[UNK]"]] * 2 + [["[UNK]"]] * 2 + [["[UNK]"]] * 2
        assert built[2].max_input_chars_per_word == 5
        with pytest.raises(ValueError, match="must be both specified"):
            models.BPE(bpe_files[0])
        with pytest.raises(ValueError, match="both be from memory or both filenames"):
            models.BPE(vocab=VOCAB, merges=bpe_files[1])
        with pytest.raises(Exception):
            models.BPE.from_file(str(tmp_path / "nope.json"), bpe_files[1])


def test_hf_submodule_aliases():
    assert tokviz.tokenizers.Tokenizer is tokviz.Tokenizer
    assert tokviz.models.models.Unigram is tokviz.models.Unigram
    assert tokviz.decoders.decoders.DecodeStream is tokviz.decoders.DecodeStream
    assert tokviz.processors.processors.TemplateProcessing is tokviz.processors.TemplateProcessing
    assert tokviz.normalizers.normalizers.NFKC is tokviz.normalizers.NFKC
    assert tokviz.pre_tokenizers.pre_tokenizers.Whitespace is tokviz.pre_tokenizers.Whitespace
    for name in ("decoders", "processors", "models", "normalizers", "pre_tokenizers"):
        assert getattr(getattr(hf, name), name) is not None  # the same names exist in HF


def test_from_pretrained_loads_the_hub_s_tokenizer_json(tmp_path, monkeypatch):
    """HF's Tokenizer.from_pretrained(identifier, revision, token): tokenizer.json from the Hub
    through huggingface_hub (faked here: no network in tests)."""
    huggingface_hub = pytest.importorskip("huggingface_hub")
    source = tokviz.Tokenizer(tokviz.models.WordLevel({"[UNK]": 0, "hug": 1}, unk_token="[UNK]"))
    source.pre_tokenizer = tokviz.pre_tokenizers.Whitespace()
    source.save(str(tmp_path / "tokenizer.json"))
    asked = []

    def fake_download(repo_id, filename, revision=None, token=None):
        asked.append((repo_id, filename, revision, token))
        return str(tmp_path / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    loaded = tokviz.Tokenizer.from_pretrained("someone/hug-model", revision="v1", token="t0k")
    assert asked == [("someone/hug-model", "tokenizer.json", "v1", "t0k")]
    assert loaded.encode("hug pug").ids == [1, 0]
    with pytest.raises(TypeError):
        tokviz.Tokenizer.from_pretrained(3)
