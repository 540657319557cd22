"""AppTest of choosing from the built-in catalog: Compare's picker, Inspect's and Pipeline's select box, Train's
shortcut to Compare, and the choice kept in the workspace and the link."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_models")
pytest.importorskip("mistral_common")

from tests.app_pages import assert_clean, open_page  # noqa: E402
from tokviz.ui.workspace import WORKSPACE_KEY  # noqa: E402

def test_compare_picks_llama3_and_tekken_beside_the_trained_configurations() -> None:
    app = open_page("pages/compare.py")
    assert_clean(app)
    picker = app.multiselect(key="compare_catalog")
    assert picker.value == []
    # Labels grouped by family, each naming its package and version.
    assert [label.split(" (")[0] for label in picker.options] == [
        "Llama · Llama 3", "Llama · Llama 4", "Mistral · Mistral v1", "Mistral · Mistral v2", "Mistral · Mistral v3",
        "Mistral · Mistral v7", "Mistral · Tekken", "Mistral · Tekken"]
    assert picker.options[0].startswith("Llama · Llama 3 (llama-models ")
    picker.set_value(["Llama 3", "Tekken (Mistral NeMo)"]).run()
    assert_clean(app)
    notes = [item.value for item in app.markdown if item.value.startswith("**")]
    assert any(note.startswith("**Llama 3** — ") for note in notes)
    assert any(note.startswith("**Tekken \\(Mistral NeMo\\)** — ") for note in notes)
    frame = next(table.value for table in app.table if "tokens/word" in table.value.columns)
    assert {"Llama 3", "Tekken (Mistral NeMo)"} <= set(frame["configuration"])
    assert app.session_state[WORKSPACE_KEY].compare.catalog == ["Llama 3", "Tekken (Mistral NeMo)"]


def test_inspect_and_pipeline_offer_the_catalog_grouped_by_family() -> None:
    app = open_page("pages/inspect.py")
    box = app.selectbox(key="inspect_tokenizer")
    catalog_labels = [label.split(" (")[0] for label in box.options if label.startswith(("Llama · ", "Mistral · "))]
    assert catalog_labels[:3] == ["Llama · Llama 3", "Llama · Llama 4", "Mistral · Mistral v1"] and len(catalog_labels) == 8
    box.set_value("catalog:Tekken (Mistral NeMo)").run()
    assert_clean(app)
    assert any("licence: Apache" in caption.value and "`mistral_common.tokens.tokenizers.tekken.Tekkenizer.encode(" in caption.value
               for caption in app.caption)
    app.switch_page("pages/pipeline.py")
    app.run()
    app.selectbox(key="pipeline_tokenizer").set_value("catalog:Llama 3").run()
    assert_clean(app)
    assert any("Llama 3 Community License Agreement" in caption.value for caption in app.caption)


def test_train_shortcut_opens_compare_with_the_session_tokenizer_llama3_and_tekken() -> None:
    app = open_page("pages/train.py")
    assert_clean(app)
    button = app.button(key="train_compare_catalog")
    assert button.label == "Compare with Llama 3 and Tekken"
    button.click().run()  # one click from Train
    assert_clean(app)
    assert app.multiselect(key="compare_catalog").value == ["session", "Llama 3", "Tekken (Mistral NeMo)"]
    frame = next(table.value for table in app.table if "tokens/word" in table.value.columns)
    names = set(frame["configuration"])
    assert {"This session's tokenizer", "Llama 3", "Tekken (Mistral NeMo)"} <= names


def test_links_carry_catalog_choices_by_name() -> None:
    from tokviz.links import from_link, to_link
    from tokviz.workspace import Workspace

    workspace = Workspace()
    workspace.compare.catalog = ["session", "Llama 3", "Tekken (Mistral NeMo)"]
    workspace.inspect.tokenizer = "catalog:Mistral v3"
    link = to_link(workspace)
    assert link["ccat"] == "session,Llama 3,Tekken (Mistral NeMo)" and link["itok"] == "catalog:Mistral v3"
    restored, notes = from_link(link)
    assert restored.compare.catalog == workspace.compare.catalog and restored.inspect.tokenizer == "catalog:Mistral v3"
    assert notes == []
    _, notes = from_link({"ccat": "Llama 3,GPT-9", "ptok": "catalog:GPT-9"})
    assert any("no 'GPT-9'" in note for note in notes) and any("catalog entry" in note for note in notes)


def test_audit_offers_the_catalog_and_its_link_names_an_entry() -> None:
    from tokviz.links import from_link

    app = open_page("pages/audit.py")
    assert_clean(app)
    options = app.selectbox(key="audit_tokenizer").options
    assert [label.split(" (")[0] for label in options if label.startswith(("Llama · ", "Mistral · "))][:2] == ["Llama · Llama 3", "Llama · Llama 4"]
    workspace, notes = from_link({"atok": "catalog:Tekken (Mistral NeMo)"})
    assert workspace.audit.tokenizer == "catalog:Tekken (Mistral NeMo)" and notes == []


@pytest.fixture()
def stand_in_hub(monkeypatch, tmp_path):
    """The Hub stand-in of tests/test_hub.py, reached by this process's huggingface_hub (endpoint and cache patched)."""
    import threading
    from http.server import ThreadingHTTPServer

    import huggingface_hub.constants as constants

    from tests.test_hub import StandIn, _repos

    StandIn.repos = _repos()
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def test_a_hub_repository_by_id_on_inspect_and_compare(stand_in_hub) -> None:
    app = open_page("pages/inspect.py")
    app.selectbox(key="inspect_tokenizer").set_value("hub:").run()
    assert [info.value for info in app.info][:1] == ["Type a repository id, e.g. mistralai/Mistral-Nemo-Instruct-2407."]
    app.text_input(key="inspect_tokenizer_hub").input("tokviz-test/wordlevel").run()
    assert_clean(app)
    assert app.session_state[WORKSPACE_KEY].inspect.tokenizer == "hub:tokviz-test/wordlevel"
    assert any("128" not in caption.value and "3 of 3 tokens" in caption.value for caption in app.caption)
    app.text_input(key="inspect_tokenizer_hub").input("tokviz-test/gated").run()
    assert any("is gated" in error.value for error in app.error)
    app.switch_page("pages/compare.py")
    app.run()
    app.text_input(key="compare_hub").input("tokviz-test/wordlevel").run()
    assert_clean(app)
    frame = next(table.value for table in app.table if "tokens/word" in table.value.columns)
    assert "tokviz-test/wordlevel" in set(frame["configuration"])


def test_a_missing_package_is_named_with_what_to_install(monkeypatch) -> None:
    from tokviz import catalog

    monkeypatch.setattr(catalog, "_installed", lambda module: module != "mistral_common")
    app = open_page("pages/pipeline.py")
    assert_clean(app)
    labels = app.selectbox(key="pipeline_tokenizer").options
    assert any(label.startswith("Llama · Llama 3") for label in labels) and not any(label.startswith("Mistral · ") for label in labels)
    assert any("python3 \\-m pip install mistral\\-common" in caption.value or "pip install mistral" in caption.value
               for caption in app.caption), [caption.value for caption in app.caption]


def test_the_panel_counts_only_what_it_offers() -> None:
    """A link naming the Train page's tokenizer before anything was trained here: the picker cannot offer it, and
    the panel's title counts what the picker shows (it said "4 chosen" over 3)."""
    app = open_page("pages/compare.py", query={"ccat": "session,Llama 3"})
    assert not app.exception
    assert any(expander.label.endswith("(1 chosen)") for expander in app.expander)
