"""Eight browser sessions train eight different configurations on one server at the same time.

One ``streamlit run`` server; one Chromium with eight contexts (eight independent Streamlit
sessions). All eight pages are opened first, so their trainings run concurrently in the
server's script threads; then each is awaited in turn. Every session must show its own
result: the token count of the held-out text equals what tokviz computes in this process
for that configuration, and no session shows an error. The server's peak resident memory
(``VmHWM`` of the server and any children) must stay under :data:`PEAK_RSS_BOUND_MB`.

Measured on the 2-core CI box (2026-11-22): peak RSS 225 MB for the eight trainings
on the built-in sample; the bound leaves room for a different Python or Streamlit build.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

#: Peak resident memory the server may reach while serving the eight sessions.
PEAK_RSS_BOUND_MB = 600

#: (preset, target vocab size) of each session: every one a different training.
CONFIGURATIONS = [
    ("gpt2", 300), ("gpt2", 700), ("gpt2", 1000), ("bert", 400),
    ("bert", 900), ("t5", 500), ("t5", 900), ("char_bpe", 600),
]


def _e2e_conftest():
    """The e2e fixtures module, loaded by path (both test folders have a conftest.py)."""
    spec = importlib.util.spec_from_file_location("tokviz_e2e_conftest", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_token_count(preset: str, vocab_size: int) -> int:
    """What the Train page shows as "tokens" for this configuration on the built-in sample."""
    from tokviz.corpus import held_out_split
    from tokviz.pipeline_config import build_tokenizer, build_trainer, configured_model, tokenizer_with_model
    from tokviz.presets import PRESETS
    from tokviz.samples import load_sample
    from tokviz.metrics import measure
    from tokviz.viz.tables import token_stats

    split = held_out_split(load_sample())
    config = PRESETS[preset].build()
    trained_tokenizer = build_tokenizer(config)
    trained_tokenizer.train_from_iterator(split.train_lines, build_trainer(config, vocab_size))
    history = trained_tokenizer.training_history
    size = min(max(history.model.get_vocab_size(), history.min_vocab_size), history.max_vocab_size)  # where the slider starts
    tokenizer = tokenizer_with_model(config, configured_model(config, history.model_at(size)))
    text = "\n".join(split.test_lines)
    return int(token_stats(measure(tokenizer, text))["tokens"])


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, []))
    return found


def peak_rss_by_process(pid: int) -> dict[str, float]:
    """Peak resident set (``VmHWM``, MB) of ``pid`` and of each of its children, by ``name pid``."""
    peaks = {}
    for process in _descendants(pid):
        try:
            status = Path(f"/proc/{process}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if "VmHWM" in fields:
            peaks[f"{fields['Name'].strip()} {process}"] = int(fields["VmHWM"].split()[0]) / 1024
    return peaks


def peak_rss_mb(pid: int) -> float:
    """Peak resident set (``VmHWM``) of ``pid`` and its children, in MB."""
    return sum(peak_rss_by_process(pid).values())


_SHOWN_TOKENS = """() => {
    const metrics = [...document.querySelectorAll('[data-testid="stMetric"]')];
    const metric = metrics.find(m => m.querySelector('[data-testid="stMetricLabel"]')?.innerText.trim() === 'tokens');
    const running = document.querySelector('[data-testid="stStatusWidget"]');
    return metric && !running ? metric.querySelector('[data-testid="stMetricValue"]').innerText : null;
}"""


def test_eight_sessions_train_different_configurations_at_once(browser, tmp_path: Path, capsys) -> None:
    fixtures = _e2e_conftest()
    process, url = fixtures.start_server(tmp_path / "server.log")
    contexts = []
    try:
        pages = []
        for preset, vocab_size in CONFIGURATIONS:  # open all eight before waiting for any
            context = browser.new_context(viewport={"width": 1200, "height": 2400})
            contexts.append(context)
            page = context.new_page()
            page.goto(f"{url}/train?preset={preset}&vocab={vocab_size}", wait_until="commit")
            pages.append(page)
        shown = []
        for page in pages:
            handle = page.wait_for_function(_SHOWN_TOKENS, timeout=150_000)
            shown.append(int(handle.json_value().replace(",", "")))
        for page, (preset, vocab_size) in zip(pages, CONFIGURATIONS):
            errors = page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
            assert errors.count() == 0, (preset, vocab_size, errors.all_inner_texts())
            assert f"preset={preset}" in page.url and f"vocab={vocab_size}" in page.url
        peaks = peak_rss_by_process(process.pid)
        peak = sum(peaks.values())
    finally:
        for context in contexts:
            context.close()
        fixtures.stop_server(process)
    expected = [expected_token_count(preset, vocab_size) for preset, vocab_size in CONFIGURATIONS]
    with capsys.disabled():  # shown in every run, not only a failing one
        print(f"\ntokens shown {shown}; server peak RSS {peak:.0f} MB against the bound of {PEAK_RSS_BOUND_MB} MB "
              f"({', '.join(f'{name}: {mb:.0f} MB' for name, mb in peaks.items())})")
    assert shown == expected
    assert len(set(expected)) >= 6  # the configurations really differ, so a mixed-up session would show
    assert peak < PEAK_RSS_BOUND_MB
