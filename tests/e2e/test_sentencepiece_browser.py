"""Real browser: the SentencePiece tutorial's flow in the app (issue 15 item 5).

Upload an IMDb-like CSV (a ``review`` column made from the shared corpora), pick its ``review``
column, choose SentencePiece BPE at 5000 in the Custom form, train, and read the pieces of the
tutorial's three sentences. The app holds every 10th line out for testing, so the reference
``sentencepiece`` model is trained on exactly the lines the app trained on (the app's own split
of the same column) with the options the app passes (``--model_type=bpe --vocab_size=5000
--max_sentence_length=9999``, and ``hard_vocab_limit=false``, which changes nothing at a target
the corpus reaches). The ``.model`` the page downloads is sentencepiece's own file, byte for byte.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from app_driver import act, choose, open_page, set_text, span_ids

pytestmark = pytest.mark.e2e

SENTENCES = ["________", "I didn't at all think of it _this ___way.", "I have waited a long time for someone to film"]


def imdb_like_csv(corpora: Path) -> bytes:
    """2,000 "reviews" of five consecutive lines of big.txt each, in a ``review`` column (commas and quotes included)."""
    lines = [line for line in (corpora / "big.txt").read_text(encoding="utf-8").split("\n") if line.strip()][:10_000]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["review", "sentiment"])
    for i in range(0, len(lines), 5):
        writer.writerow([" ".join(lines[i:i + 5]), "positive" if i % 2 else "negative"])
    return out.getvalue().encode("utf-8")


def open_inputs(page) -> None:
    """Unfold the "Corpus and pipeline" panel (it folds once trained, and its title names the corpus and pipeline,
    so a change draws it folded again)."""
    if page.locator(".st-key-target_vocab input").first.is_visible():
        return
    page.locator("[data-testid=stExpander] summary", has_text="Corpus and pipeline").first.click()
    page.locator(".st-key-target_vocab input").first.wait_for(state="visible")


def test_the_tutorials_flow_gives_sentencepieces_pieces(app_url: str, page, tmp_path: Path, screenshot_dir: Path, shared_corpora_dir: Path) -> None:
    spm = pytest.importorskip("sentencepiece")
    from tokviz.corpus import held_out_split, read_upload
    from tokviz.pipeline_config import sentencepiece_config, sentencepiece_options

    data = imdb_like_csv(shared_corpora_dir)
    path = tmp_path / "IMDb_Reviews.csv"
    path.write_bytes(data)
    # The reference: sentencepiece on the lines the app trains on (the column, minus the held-out lines).
    split = held_out_split(read_upload(data, path.name, column="review").text)
    config = sentencepiece_config(sp_model_type="bpe", max_sentence_length=9999)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(split.train_lines), model_writer=model, minloglevel=2,
                                   **sentencepiece_options(config, 5000))
    reference = spm.SentencePieceProcessor(model_proto=model.getvalue())

    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, f"{app_url}/train")
    open_inputs(page)
    act(page, lambda: page.locator(".st-key-corpus_file input[type=file]").set_input_files(str(path)))
    open_inputs(page)
    assert page.locator(".st-key-corpus_column input[role=combobox]").first.input_value() == "review"
    for key, option in (("preset", "Custom…"), ("cfg_model", "SentencePiece"), ("cfg_sp_model_type", "bpe")):
        open_inputs(page)
        choose(page, key, option)
    for key, value in (("cfg_max_sentence_length", "9999"), ("target_vocab", "5000")):
        open_inputs(page)
        set_text(page, key, value)
    open_inputs(page)
    page.screenshot(path=str(screenshot_dir / "train_sentencepiece_settings_1440x900.png"))
    act(page, lambda: page.locator(".st-key-train button").click())
    page.get_by_text("Trained SentencePiece BPE in").first.wait_for()
    page.get_by_text(f"SentencePiece trained on {len(split.train_lines):,} raw lines").first.wait_for()
    assert page.get_by_text(f"left after holding out {len(split.test_lines)} for testing").count() >= 1

    for sentence in SENTENCES:
        set_text(page, "test_text", sentence)
        ids = [int(value) for value in span_ids(page)]
        assert ids == reference.encode_as_ids(sentence), sentence
        shown = page.locator(".tokviz-spans").last.locator("summary.tok").all_text_contents()
        assert [piece.replace("▁", " ").strip() for piece in shown] == \
            [piece.replace("▁", " ").strip() for piece in reference.encode_as_pieces(sentence)], sentence
    page.screenshot(path=str(screenshot_dir / "train_sentencepiece_1440x900.png"))

    # The .model download: sentencepiece's own file, made when clicked.
    page.get_by_role("tab", name="Export").click()  # tabs switch in the browser: no rerun
    button = page.get_by_role("button", name="sentencepiece .model")
    button.wait_for(state="visible")
    with page.expect_download() as download:
        button.click()
    downloaded = Path(download.value.path()).read_bytes()
    assert downloaded == model.getvalue()
    loaded = spm.SentencePieceProcessor(model_proto=downloaded)
    assert [loaded.encode_as_pieces(sentence) for sentence in SENTENCES] == [reference.encode_as_pieces(sentence) for sentence in SENTENCES]


def test_a_sentencepiece_model_uploads_on_inspect_and_compare(app_url: str, page, tmp_path: Path, screenshot_dir: Path, shared_corpora_dir: Path) -> None:
    """A ``.model`` made by sentencepiece (BPE with byte fallback) opens on Inspect and on Compare (the
    workspace's uploads) and cuts a text into sentencepiece's ids, the byte pieces of unseen characters included."""
    spm = pytest.importorskip("sentencepiece")
    model = sentencepiece_model(spm, shakespeare_lines(shared_corpora_dir), vocab_size=600, model_type="bpe", byte_fallback=True)
    path = tmp_path / "shakespeare-bpe.model"
    path.write_bytes(model)
    reference = spm.SentencePieceProcessor(model_proto=model)
    text = "Wherefore art thou, Romeo? naïve 日本 café"
    expected = reference.encode_as_ids(text)
    assert any(reference.is_byte(piece) for piece in expected)  # the text reaches byte fallback

    page.set_viewport_size({"width": 1400, "height": 2000})
    inspect_and_compare_ids(page, app_url, path, text, expected, screenshot_dir / "compare_sentencepiece_model_upload.png")


def shakespeare_lines(corpora: Path) -> list[str]:
    return [line for line in (corpora / "tinyshakespeare.txt").read_text(encoding="utf-8").split("\n") if line.strip()][:3000]


def sentencepiece_model(spm, lines: list[str], **options) -> bytes:
    """The ``.model`` bytes sentencepiece's trainer writes for ``lines`` with ``options``."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, minloglevel=2, **options)
    return model.getvalue()


def inspect_and_compare_ids(page, app_url: str, path: Path, text: str, expected: list[int], screenshot: Path) -> None:
    """Upload ``path`` on Inspect and on Compare, cut ``text`` on each, and check both give the ``expected`` ids."""
    open_page(page, f"{app_url}/inspect")
    # the upload box is always shown; a new upload becomes the chosen tokenizer
    act(page, lambda: page.locator(".st-key-inspect_tokenizer_file input[type=file]").set_input_files(str(path)))
    set_text(page, "inspect_text", text)
    assert [int(value) for value in span_ids(page)] == expected

    open_page(page, f"{app_url}/compare")
    page.locator("[data-testid=stExpander] summary", has_text="Pretrained tokenizers from files").first.click()
    act(page, lambda: page.locator(".st-key-compare_files input[type=file]").set_input_files(str(path)))
    page.get_by_text(f"{path.name} —").first.wait_for()  # its segmentation, named by its file
    set_text(page, "compare_text", text)
    views = page.locator(".tokviz-spans")
    segmentations = [[int(value) for value in span_ids(page, index) if value is not None] for index in range(views.count())]
    assert expected in segmentations
    page.screenshot(path=str(screenshot))


def test_a_model_keeping_runs_of_spaces_cuts_like_sentencepiece_on_inspect_and_compare(app_url: str, page, tmp_path: Path, screenshot_dir: Path,
                                                                                        shared_corpora_dir: Path) -> None:
    """A ``.model`` trained with ``remove_extra_whitespaces: false`` (as code models are): Inspect and Compare cut text with
    runs of spaces and indentation into sentencepiece's own ids, each space kept (with the flag's default the runs collapse,
    and the ids differ: the check would catch a conversion that drops the field)."""
    spm = pytest.importorskip("sentencepiece")
    lines = shakespeare_lines(shared_corpora_dir) + ["    indented  twice   and  more", "def speak(self):", "        return  'O Romeo'"] * 50
    model = sentencepiece_model(spm, lines, vocab_size=500, model_type="unigram", remove_extra_whitespaces=False)
    path = tmp_path / "spaces-kept-unigram.model"
    path.write_bytes(model)
    reference = spm.SentencePieceProcessor(model_proto=model)
    text = "    def speak(self):   return  'O   Romeo'  "
    expected = reference.encode_as_ids(text)
    assert "".join(reference.id_to_piece(expected)).count("▁") == text.count(" ") + 1  # every space kept (and the dummy prefix)
    collapsed = sentencepiece_model(spm, lines, vocab_size=500, model_type="unigram")
    assert spm.SentencePieceProcessor(model_proto=collapsed).encode_as_ids(text) != expected

    page.set_viewport_size({"width": 1280, "height": 720})
    inspect_and_compare_ids(page, app_url, path, text, expected, screenshot_dir / "compare_model_spaces_kept.png")
