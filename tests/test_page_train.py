"""AppTest checks of the Train page (issue 4): it trains on the sample, each model trains, the
vocab slider re-tokenizes, uploads train, bad input shows a message, user text is never markup."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page

PAGE = "pages/train.py"
XSS = '<img src=x onerror=alert(1)> and <script>alert("x")</script> plus "quotes" & ampersands'


def open_train(query: dict[str, str] | None = None) -> AppTest:
    """The Train page as a browser opens it: a link (``query``) is the first run's URL."""
    return open_page(PAGE, query=query or {})


def open_tab(app: AppTest, label: str) -> AppTest:
    """Open the result tab ``label`` (only the open tab is built) and run."""
    app.session_state["_tokviz_workspace"].train.tab = label  # the workspace holds the open tab (kept across pages)
    return app.run()


def assert_clean(app: AppTest) -> None:
    assert not app.exception, [str(error.value) for error in app.exception]


def metric(app: AppTest, label: str) -> str:
    return next(item.value for item in app.metric if item.label == label)


def span_html(app: AppTest) -> str:
    """The token-span view of the test text (the last html block on the page)."""
    return [block.proto.body for block in app.html if "tokviz-spans" in block.proto.body][-1]


def test_page_trains_on_the_sample_without_pressing_anything() -> None:
    app = open_train()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert app.title[0].value == "Train a tokenizer"
    assert app.selectbox(key="preset").value == "gpt2"
    assert any(caption.value.startswith("Trained BPE in") for caption in app.caption)
    assert int(metric(app, "tokens")) > 50
    assert span_html(app).count('class="tok"') == int(metric(app, "tokens"))
    # The URL is a link to this pipeline.
    assert app.query_params["preset"] == "gpt2" and app.query_params["vocab"] == "1000"


@pytest.mark.parametrize(
    ("preset", "tabs"),
    [
        ("gpt2", ["Merge history", "Vocabulary", "Charts", "Export"]),
        ("bert", ["Merge history", "WordPiece trace", "Vocabulary", "Charts", "Export"]),
        ("t5", ["EM and pruning", "Lattice and sampling", "Vocabulary", "Charts", "Export"]),
        ("char_bpe", ["Merge history", "Vocabulary", "Charts", "Export"]),
    ],
)
def test_each_preset_trains_and_shows_its_views(preset: str, tabs: list[str]) -> None:
    app = open_train()
    app.selectbox(key="preset").set_value(preset).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert [tab.label for tab in app.tabs] == tabs
    assert int(metric(app, "tokens")) > 0
    assert app.query_params["preset"] == preset


def test_custom_wordlevel_trains() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("custom").run()
    app.selectbox(key="cfg_model").set_value("WordLevel").run()
    assert_clean(app)
    # The model's needs are filled in as HF's examples do, and one line says so: no error on a first try.
    assert not app.error, [error.value for error in app.error]
    assert (app.text_input(key="cfg_unk_token").value, app.text_input(key="cfg_special_tokens").value) == ("[UNK]", "<|endoftext|> [UNK] [CLS] [SEP] [PAD] [MASK]")
    assert any(caption.value.startswith("Filled in as HF's examples do for WordLevel") for caption in app.caption)
    app.text_input(key="cfg_unk_token").set_value("").run()  # emptied on purpose: the one message says why it is needed
    assert [error.value for error in app.error if "unknown token" in error.value] == [
        r"WordLevel needs an unknown token \(e\.g\. \[UNK\]\) for words outside its vocabulary\."]  # one message, Markdown-escaped
    app.text_input(key="cfg_special_tokens").set_value("[UNK] <|endoftext|>")
    app.text_input(key="cfg_unk_token").set_value("[UNK]").run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert any(caption.value.startswith("Trained WordLevel") for caption in app.caption)
    assert app.query_params["model"] == "WordLevel" and "preset" not in app.query_params


def test_custom_form_starts_from_the_preset_and_its_options_reach_the_trainer() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("bert").run()
    app.selectbox(key="preset").set_value("custom").run()
    assert app.multiselect(key="cfg_normalizers").value == ["BertNormalizer"]
    assert app.text_input(key="cfg_special_tokens").value == "[PAD] [UNK] [CLS] [SEP] [MASK]"
    # The BERT-like preset trains with HF's frequency scoring; the course's likelihood is the other choice.
    assert app.radio(key="cfg_scoring").value == "frequency"
    app.radio(key="cfg_scoring").set_value("likelihood").run()
    assert_clean(app)
    assert app.query_params["scoring"] == "likelihood"
    assert any("Trained WordPiece" in caption.value for caption in app.caption)


def test_moving_the_vocab_slider_changes_the_token_count_without_retraining() -> None:
    app = open_train()
    slider = app.slider(key="vocab_slider")
    assert (slider.min, slider.max, slider.value) == (257, 1000, 1000)
    at_full = int(metric(app, "tokens"))
    app.slider(key="vocab_slider").set_value(300).run()
    assert_clean(app)
    at_300 = int(metric(app, "tokens"))
    assert at_300 > at_full
    assert span_html(app).count('class="tok"') == at_300
    app.slider(key="vocab_slider").set_value(257).run()
    assert int(metric(app, "tokens")) > at_300


def test_ids_toggle_shows_ids_instead_of_text() -> None:
    def labels(app: AppTest) -> list[str]:
        # Each token is a <summary class="tok"> (click to pin its card); its label ends at </summary>.
        return [piece.split("</summary>")[0].split(">")[-1] for piece in span_html(app).split('class="tok"')[1:]]

    app = open_train()
    app.text_area(key="test_text").set_value("the tokenizer").run()
    assert labels(app) and not any(label.isdigit() for label in labels(app))
    app.toggle(key="show_ids").set_value(True).run()
    assert labels(app) and all(label.isdigit() for label in labels(app))


def test_csv_upload_with_a_chosen_column_trains_on_that_column() -> None:
    rows = ["id,label,review"] + [f"{i},pos,the film number {i} was a wonderful surprise" for i in range(40)]
    app = open_train()
    app.file_uploader(key="corpus_file").set_value(("reviews.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert_clean(app)
    assert app.selectbox(key="corpus_column").value == "review"
    app.selectbox(key="corpus_column").set_value("label").run()
    assert_clean(app)
    assert metric(app, "characters") == f"{len(chr(10).join(['pos'] * 40)):,}"
    app.selectbox(key="corpus_column").set_value("review").run()
    app.button(key="train").click().run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert any("column 'review'" in caption.value for caption in app.caption)
    assert app.text_area(key="test_text").value.startswith("the film number 9 was")


def test_non_utf8_upload_trains_with_a_notice() -> None:
    app = open_train()
    text = "\n".join(["café crème brûlée à la française"] * 20).encode("cp1252")
    app.file_uploader(key="corpus_file").set_value(("menu.txt", text, "text/plain")).run()
    assert_clean(app)
    notices = [warning.value.replace("\\", "") for warning in app.warning]  # as rendered: escapes removed
    assert any("not valid UTF-8" in notice and "Windows-1252" in notice for notice in notices)
    assert "café" in app.text_area(key="test_text").value


def test_empty_corpus_shows_a_message() -> None:
    app = open_train()
    app.text_area(key="corpus_text").set_value("").run()
    assert_clean(app)
    assert any("The corpus is empty" in error.value for error in app.error)
    # The rest of the page keeps working on the last tokenizer.
    assert app.slider(key="vocab_slider").max == 1000


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("archive.txt", b"PK\x03\x04" + bytes(range(256)) * 4, "ZIP archive"),
        ("data.csv", b"a,b\x00\x01\x02\x03" * 50, "binary file"),
        ("image.json", b"\x89PNG\r\n\x1a\n" + bytes(200), "PNG image"),
    ],
)
def test_binary_upload_shows_a_message(name: str, data: bytes, message: str) -> None:
    app = open_train()
    app.file_uploader(key="corpus_file").set_value((name, data, "application/octet-stream")).run()
    assert_clean(app)
    assert any(message in error.value for error in app.error), [error.value for error in app.error]


def test_oversized_upload_is_refused(monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_UPLOAD_BYTES", 1_000)
    app = open_train()
    app.file_uploader(key="corpus_file").set_value(("big.txt", b"word " * 1_000, "text/plain")).run()
    assert_clean(app)
    assert any("upload limit of 1,000 bytes" in error.value for error in app.error)


def test_vocab_below_the_alphabet_shows_a_message_for_bpe_and_unigram() -> None:
    app = open_train()
    app.number_input(key="target_vocab").set_value(100).run()
    assert_clean(app)
    assert any("nothing to slide" in info.value and "no merge was trained" in info.value for info in app.info)
    assert not app.slider  # no slider with a single position
    app.selectbox(key="preset").set_value("t5").run()
    assert_clean(app)
    assert any("too small" in error.value for error in app.error), [error.value for error in app.error]


def html_tags(body: str) -> set[str]:
    """Every tag name in an HTML fragment, as a browser's parser would see them."""
    from html.parser import HTMLParser

    tags: set[str] = set()

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.add(tag)

    Collector().feed(body)
    return tags


def test_user_html_in_corpus_and_test_text_is_shown_as_text() -> None:
    app = open_train()
    app.text_area(key="corpus_text").set_value("\n".join([XSS] * 30)).run()
    app.text_area(key="test_text").set_value(XSS + "\n" + XSS).run()
    assert_clean(app)
    for show_ids in (False, True):
        app.toggle(key="show_ids").set_value(show_ids).run()
        assert app.html
        for block in app.html:
            assert html_tags(block.proto.body) <= {"style", "div", "span", "br", "wbr", "details", "summary"}
    body = span_html(app.toggle(key="show_ids").set_value(False).run())
    assert "&lt;" in body and "onerror" in body and "script" in body  # shown, as text


@pytest.mark.parametrize("preset", ["bert", "t5"])
def test_html_is_escaped_in_every_view(preset: str) -> None:
    app = open_train()
    app.text_area(key="corpus_text").set_value("\n".join([XSS] * 30)).run()
    app.selectbox(key="preset").set_value(preset).run()
    assert_clean(app)
    for block in app.html:
        assert html_tags(block.proto.body) <= {"style", "div", "span", "br", "wbr", "details", "summary"}


def test_a_link_reopens_the_same_preset_and_vocab_size() -> None:
    app = open_train({"preset": "bert", "vocab": "700"})
    assert_clean(app)
    assert app.selectbox(key="preset").value == "bert"
    assert app.number_input(key="target_vocab").value == 700
    assert app.slider(key="vocab_slider").max == 700


def test_a_custom_link_reopens_the_custom_pipeline() -> None:
    from tokviz.links import to_query_params
    from tokviz.pipeline_config import PipelineConfig, component

    config = PipelineConfig(
        normalizers=(component("NFD"), component("Lowercase"), component("StripAccents")),
        pre_tokenizers=(component("Whitespace"),),
        model="BPE",
        special_tokens=("[UNK]",),
        unk_token="[UNK]",
        end_of_word_suffix="</w>",
    )
    app = open_train(to_query_params(config, 600))
    assert_clean(app)
    assert app.selectbox(key="preset").value == "custom"
    assert app.multiselect(key="cfg_normalizers").value == ["NFD", "Lowercase", "StripAccents"]
    assert app.text_input(key="cfg_end_of_word_suffix").value == "</w>"
    assert app.slider(key="vocab_slider").max == 600


def test_a_broken_link_shows_a_message_and_opens_the_default() -> None:
    app = open_train({"preset": "llama", "vocab": "500"})
    assert_clean(app)
    assert any("preset 'llama'" in error.value for error in app.error)
    assert app.selectbox(key="preset").value == "gpt2"


def test_unigram_views_draw_lattice_nbest_and_samples() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("t5").run()
    assert len(app.get("plotly_chart")) >= 2  # the open tab only: EM objective, (pruning rounds), log-probs
    open_tab(app, "Lattice and sampling")
    app.text_input(key="lattice_word").set_value("tokenizer").run()
    assert_clean(app)
    assert len(app.get("plotly_chart")) == 1  # the lattice; the closed tabs are not built
    assert app.slider(key="sample_alpha").value == 0.1
    open_tab(app, "Charts")
    assert len(app.get("plotly_chart")) == 3  # held-out curve, token lengths, single-token words (no merges)
    open_tab(app, "Lattice and sampling")  # the word typed before is kept while its tab was closed
    assert app.text_input(key="lattice_word").value == "tokenizer"


def test_wordpiece_trace_view_explains_unknown_words() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("bert").run()
    open_tab(app, "WordPiece trace")
    app.text_input(key="trace_word").set_value("qqqq\u0416\u0416").run()
    assert_clean(app)
    assert any("nothing in the vocabulary matches" in warning.value for warning in app.warning)


def test_vocabulary_tab_lists_the_vocab_at_the_slider_size() -> None:
    app = open_train()
    assert not any("tokens at this vocab size" in caption.value for caption in app.caption)  # closed: not built
    open_tab(app, "Vocabulary")
    app.slider(key="vocab_slider").set_value(300).run()
    assert "300 tokens at this vocab size, by id." in [caption.value for caption in app.caption]


def test_export_offers_the_files() -> None:
    app = open_train()
    assert not app.get("download_button")  # the Export tab is closed: nothing of it is built
    open_tab(app, "Export")
    labels = [button.proto.label for button in app.get("download_button")]
    assert labels == ["tokenizer.json", "vocab.txt", "merges.txt", "Download for transformers", "history.csv", "history.json"]


def test_merge_step_picker_shows_what_the_merge_changed() -> None:
    app = open_train()
    app.number_input(key="merge_step").set_value(1).run()
    assert_clean(app)
    assert any(text.value.startswith("Merge #1: 'Ġ' + 't' → 'Ġt'") for text in app.text)


def test_custom_unigram_course_method_trains_and_explains_its_views() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("t5").run()
    app.selectbox(key="preset").set_value("custom").run()
    app.radio(key="cfg_unigram_method").set_value("course").run()
    app.number_input(key="target_vocab").set_value(400).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert app.query_params["unigram_method"] == "course"
    assert [tab.label for tab in app.tabs][:2] == ["EM and pruning", "Lattice and sampling"]


def test_a_large_corpus_waits_for_the_train_button() -> None:
    lines = [f"line {i}: the quick brown fox {i % 97} jumps over the lazy dog {i % 89}" for i in range(2_500)]
    data = "\n".join(lines).encode()
    assert len(data) > 100_000
    app = open_train()
    app.file_uploader(key="corpus_file").set_value(("big.txt", data, "text/plain")).run()
    assert_clean(app)
    assert any("press **Train** to train again" in warning.value for warning in app.warning)
    app.button(key="train").click().run()
    assert_clean(app)
    assert not any("train again" in warning.value for warning in app.warning)
    assert app.text_area(key="test_text").value.startswith("line 9: the quick brown fox")


def test_the_progress_bar_follows_the_trainer_callback() -> None:
    from tokviz.ui.training import progress_callback

    class Bar:
        def __init__(self) -> None:
            self.updates: list[tuple[int, str]] = []

        def progress(self, value: int, text: str) -> None:
            self.updates.append((value, text))

    bar = Bar()
    report = progress_callback(bar)
    for done in (0, 1, 2, 50, 200):
        report("merges", done, 200)
    report("count words", 3, 0)
    # One update per whole percent; a phase without a total shows 0.
    assert bar.updates == [
        (0, "merges: 0 / 200"),  # 1 / 200 is still 0%: no update
        (1, "merges: 2 / 200"),
        (25, "merges: 50 / 200"),
        (100, "merges: 200 / 200"),
        (0, "count words: 3 / 0"),
    ]


@pytest.mark.parametrize("preset", ["bert", "t5", "char_bpe"])
def test_the_slider_re_tokenizes_with_every_model(preset: str) -> None:
    app = open_train()
    app.selectbox(key="preset").set_value(preset).run()
    slider = app.slider(key="vocab_slider")
    at_full = int(metric(app, "tokens"))
    app.slider(key="vocab_slider").set_value(slider.min).run()
    assert_clean(app)
    assert int(metric(app, "tokens")) > at_full


def test_rendering_is_capped_with_a_notice(monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_RENDERED_TOKENS", 10)
    app = open_train()
    tokens = int(metric(app, "tokens"))
    assert any(info.value == f"Showing the first 10 of {tokens:,} tokens; the counts above cover all of them." for info in app.info)
    assert span_html(app).count('class="tok"') == 10


def test_preview_shows_accented_pre_tokens_as_text() -> None:
    app = open_train()
    app.text_area(key="corpus_text").set_value("Café crème déjà vu\n" * 5).run()
    app.selectbox(key="preset").set_value("char_bpe").run()
    preview = next(block.proto.body for block in app.html if "tokviz-spans" in block.proto.body)  # the first spans: the preview
    assert "Café" in preview and "⟨" not in preview


def test_user_text_in_notices_is_escaped_markdown() -> None:
    app = open_train()
    name = "[click](http://x) *bold*.txt"
    app.file_uploader(key="corpus_file").set_value((name, "naïve text here\n".encode("cp1252") * 20, "text/plain")).run()
    assert_clean(app)
    notice = next(warning.value for warning in app.warning if "UTF" in warning.value)
    assert notice.startswith("\\[click\\]\\(http:\u2060//x\\) \\*bold\\*\\.txt is not valid UTF\\-8")  # no autolink either
    assert any("upload \\[click\\]\\(http:\u2060//x\\) \\*bold\\*\\.txt" in caption.value for caption in app.caption)


def test_unigram_slider_starts_at_the_trained_size_and_reaches_earlier_rounds() -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("t5").run()
    app.number_input(key="target_vocab").set_value(400).run()
    assert_clean(app)
    slider = app.slider(key="vocab_slider")
    captions = " ".join(caption.value for caption in app.caption)
    assert f"{slider.value:,} = trained size" in captions
    assert slider.value < slider.max  # the seed and earlier pruning rounds lie above it
    assert "earlier pruning rounds" in captions


def test_merge_step_box_starts_on_the_first_merge_follows_the_training_and_steps() -> None:
    """Issue 12: after GPT-2 → BERT the box said 742 while the text said "Step 682", its "−" did
    nothing, and it started on the last merge (count 1)."""
    app = open_train()
    box = app.number_input(key="merge_step")
    assert box.value == 1 and box.max == 743  # the sample's 743 merges at vocab 1,000; the first is the most frequent
    app.number_input(key="merge_step").increment().run()
    app.number_input(key="merge_step").increment().run()
    assert app.number_input(key="merge_step").value == 3
    assert any(text.value.startswith("Merge #3: ") for text in app.text)
    app.number_input(key="merge_step").decrement().run()
    assert app.number_input(key="merge_step").value == 2 and any(text.value.startswith("Merge #2: ") for text in app.text)
    app.selectbox(key="preset").set_value("bert").run()
    assert_clean(app)
    box = app.number_input(key="merge_step")
    merges = int(box.max)
    assert box.value == 1 and merges < 743  # BERT-like's own merges, from the first
    assert any(text.value.startswith("Merge #1: ") for text in app.text)
    app.number_input(key="merge_step").set_value(merges).run()
    assert any(text.value.startswith(f"Merge #{merges:,}: ") or text.value.startswith(f"Merge #{merges}: ") for text in app.text)


def test_unknown_tokens_of_the_t5_like_preset_are_counted_and_drawn_as_unknown() -> None:
    """T5-like at 1,000 on the sample: 9 of the 162 test tokens are <unk> (HF gives the same ids), and the spans say so."""
    app = open_train({"preset": "t5", "vocab": "1000"})
    assert_clean(app)
    assert (metric(app, "tokens"), metric(app, "unknown tokens")) == ("162", "9")
    app.toggle(key="show_all_lines").set_value(True).run()
    assert span_html(app).count('class="tok unk"') == 9


def test_a_link_with_one_component_twice_opens_the_custom_form_without_a_duplicate_widget() -> None:
    app = open_train({"preset": "custom", "model": "BPE", "vocab": "300", "n0": "Strip", "n0.left": "false", "n1": "Strip", "p0": "Whitespace"})
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert app.multiselect(key="cfg_normalizers").value == ["Strip", "Strip #2"]
    assert (app.checkbox(key="cfg_n_Strip_left").value, app.checkbox(key="cfg_n_Strip #2_left").value) == (False, True)
    assert app.query_params["n0"] == "Strip" and app.query_params["n1"] == "Strip" and app.query_params["n0.left"] == "false"


def test_the_result_tab_is_kept_across_pages_and_in_the_link() -> None:
    app = open_tab(open_train(), "Charts")
    assert_clean(app)
    assert app.query_params["tab"] == "Charts"
    app.switch_page("pages/learn.py")
    app.run()
    app.switch_page(PAGE)
    app.run()
    assert app.session_state["result_tab"] == "Charts" and app.query_params["tab"] == "Charts"


def test_copy_link_carries_the_slider_and_the_test_text() -> None:
    app = open_train()
    app.slider(key="vocab_slider").set_value(778).run()
    app.text_area(key="test_text").set_value("a teacher's text").run()
    assert_clean(app)
    link = next(code.value for code in app.code if "/train?" in code.value)
    assert "size=778" in link and "text=a+teacher%27s+text" in link
    assert app.query_params["size"] == "778" and app.query_params["text"] == "a teacher's text"


@pytest.mark.parametrize("name, data", [
    ("deep.json", b"[" * 100_000 + b"]" * 100_000),
    ("deep.jsonl", b'{"a":' * 1_000 + b"1" + b"}" * 1_000 + b"\n"),
], ids=["json-100k", "jsonl-1000"])
def test_a_deeply_nested_json_corpus_gets_a_sentence_and_the_page_still_draws(name, data) -> None:
    app = open_train()
    app.file_uploader(key="corpus_file").set_value((name, data, "application/json")).run()
    assert_clean(app)
    assert any("nests its values more than 40 levels deep" in error.value for error in app.error)
    assert app.button(key="train") is not None and app.slider(key="vocab_slider") is not None  # the rest of Train is drawn


def test_a_csv_of_10000_columns_offers_every_column() -> None:
    header = ",".join(f"c{index}" for index in range(10_000))
    row = ",".join("x" * (1 + index % 7) for index in range(10_000))
    app = open_train()
    app.file_uploader(key="corpus_file").set_value(("wide.csv", f"{header}\n{row}\n{row}\n".encode(), "text/csv")).run()
    assert_clean(app)
    picker = app.selectbox(key="corpus_column")
    assert len(picker.options) == 10_000 and picker.value == "c6"


def test_the_link_that_locked_the_worker_gets_a_sentence_and_no_training() -> None:
    """/train?vocab=800&model=Unigram&p0=Whitespace&n_sub_iterations=1000000000&...: refused before any training."""
    app = open_train({"vocab": "800", "model": "Unigram", "p0": "Whitespace", "n_sub_iterations": "1000000000",
                      "special_tokens": '["<unk>"]', "unk_token": "<unk>"})
    assert_clean(app)
    assert any("n_sub_iterations is 1,000,000,000, above this server" in error.value.replace("\\", "") for error in app.error)
    assert app.button(key="train") is not None


@pytest.mark.parametrize("model", ["Unigram", "WordPiece", "WordLevel", "BPE"])
def test_custom_pipeline_of_each_model_trains_with_the_defaults_on_a_first_try(model: str) -> None:
    app = open_train()
    app.selectbox(key="preset").set_value("custom").run()
    app.selectbox(key="cfg_model").set_value(model).run()
    assert_clean(app)
    assert not app.error and not app.warning, [item.value for item in [*app.error, *app.warning]]
    assert int(metric(app, "tokens")) > 50


@pytest.mark.parametrize("preset", ["t5", "sp_unigram"])
def test_unigram_presets_at_their_default_size_show_em_steps_and_pruning_rounds(preset: str) -> None:
    """On the built-in sample at the default size: pruning rounds ran (at 1,000 the training stopped at its ~650-piece seed)."""
    app = open_train()
    app.selectbox(key="preset").set_value(preset).run()
    assert_clean(app)
    assert app.number_input(key="target_vocab").value == 500 and app.query_params["vocab"] == "500"
    assert not any("no pruning round ran" in info.value for info in app.info)
    history = app.session_state["_tokviz_workspace"].train.trained
    from tokviz.ui.training import training_of

    record = training_of(history)
    steps = getattr(record, "unigram", None) or record  # sentencepiece's history keeps them in its UnigramResult
    assert len(steps.prune_rounds) >= 1 and len(steps.em_steps) >= 2  # what the EM and pruning views draw
    app.selectbox(key="preset").set_value("gpt2").run()  # back to a BPE preset: its own start
    assert app.number_input(key="target_vocab").value == 1000
