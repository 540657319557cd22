"""tokviz.cache_store: trainings kept by key, bounded by bytes and entries; the JSON codec round trip the
replicas rely on (a history read back tokenizes as the one trained). Redis itself: tests/test_replicas.py."""

from __future__ import annotations

from tokviz import cache_store
from tokviz.cache_store import MemoryStore, TrainingStore
from tokviz.pipeline_config import PipelineConfig, build_tokenizer, tokenizer_with_model
from tokviz.presets import PRESETS
from tokviz.samples import load_sample
from tokviz.training import run_training

SAMPLE = tuple(line for line in load_sample().splitlines() if line.strip())


def test_memory_store_drops_the_least_recently_used_once_past_its_bytes() -> None:
    store = MemoryStore(max_bytes=100, max_entries=10)
    store.put("a", "A", 40)
    store.put("b", "B", 40)
    assert store.get("a") == "A"  # "a" is now the most recently used
    store.put("c", "C", 40)  # 120 bytes > 100: "b" goes, not "a"
    assert (store.get("a"), store.get("b"), store.get("c"), store.bytes) == ("A", None, "C", 80)
    store.put("huge", "H", 101)  # larger than the whole budget: not kept, nothing else dropped
    assert (store.get("huge"), len(store), store.bytes) == (None, 2, 80)
    store.put("a", "A2", 10)  # replacing a key counts its new size only
    assert (store.get("a"), store.bytes) == ("A2", 50)


def test_memory_store_also_bounds_entries() -> None:
    store = MemoryStore(max_bytes=10**9, max_entries=2)
    for key in "xyz":
        store.put(key, key.upper(), 1)
    assert (store.get("x"), store.get("y"), store.get("z")) == (None, "Y", "Z")


def test_request_key_separates_fields_and_is_stable() -> None:
    key = cache_store.request_key("c0ffee", "PipelineConfig(model='BPE')", 1000)
    assert key == cache_store.request_key("c0ffee", "PipelineConfig(model='BPE')", 1000)
    assert len(key) == 32 and key != cache_store.request_key("c0ffee", "PipelineConfig(model='BPE')", 100)
    # The pipeline's repr is its identity across replicas: no object addresses in it.
    assert " at 0x" not in repr(PRESETS["bert"].build()) and repr(PRESETS["t5"].build()) == repr(PRESETS["t5"].build())


def test_a_stored_training_reads_back_as_json_and_tokenizes_the_same(monkeypatch) -> None:
    monkeypatch.setenv("TOKVIZ_CACHE_MAX_MB", "64")
    text = "The tokenizer's vocabulary, read back from the shared cache: 3 words."
    for preset in ("gpt2", "bert", "t5"):
        config = PRESETS[preset].build()
        history = run_training(config, 500, SAMPLE)
        store = TrainingStore(None)
        store.put("k", history)
        assert store.get("k") is history and store.local.bytes > 1000  # the JSON's size is what is counted
        from tokviz import history_io

        again = history_io.loads(history_io.dumps(history))
        for size in (again.min_vocab_size + 10, again.max_vocab_size):
            model = history.model if size == history.max_vocab_size else history.model_at(size)
            model_again = again.model if size == again.max_vocab_size else again.model_at(size)
            assert tokenizer_with_model(config, model_again).encode(text).ids == tokenizer_with_model(config, model).encode(text).ids, (preset, size)
    assert build_tokenizer(PipelineConfig(model="BPE")) is not None


def test_the_process_store_counts_a_history_s_memory_not_its_json(monkeypatch) -> None:
    """What bounds the cache is what the decoded histories hold in memory (several times their JSON)."""
    from tokviz import history_io
    from tokviz.history import retained_bytes

    config = PRESETS["bert"].build()
    history = run_training(config, 600, load_sample().splitlines())
    text = history_io.dumps(history)
    store = TrainingStore(None)
    store.put("a", history, text)
    assert store.local.bytes == retained_bytes(history) > 2 * len(text)
    monkeypatch.setenv("TOKVIZ_CACHE_MAX_MB", str(retained_bytes(history) * 1.5 / (1024 * 1024)))
    small = TrainingStore(None)
    small.put("a", history, text)
    small.put("b", history, text)  # two would pass the budget: the older one goes
    assert small.get("a") is None and small.get("b") is history
