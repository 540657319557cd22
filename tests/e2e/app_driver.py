"""Driving the app in Chromium without fixed sleeps: wait for the app's own finished condition.

Every page draws a run marker in its sidebar, and a fragment one of its own (``<div class="tokviz-run" title="N">``, N counts
the session's runs; ``tokviz.ui.shell.page_setup``). A run started by an action has finished
when all of these hold, and keep holding for a short window (so a rerun the script asked for
itself, ``st.rerun()``, cannot pass for the end):

- the highest marker's number moved past the one read before the action;
- Streamlit's script state is ``notRunning`` on a connected session, its status widget is gone;
- no widget skeleton is left (widgets whose code is still loading).

A loaded machine only makes the wait longer; nothing here depends on how long a run takes.
"""

from __future__ import annotations

from typing import Any

FINISHED_JS = """([after, quietMs]) => {
    const root = document.querySelector('[data-test-script-state]');
    const markers = [...document.querySelectorAll('.tokviz-run')].map(m => Number(m.getAttribute('title')));
    const run = markers.length ? Math.max(...markers) : -1;
    const done = root !== null
        && root.getAttribute('data-test-script-state') === 'notRunning'
        && root.getAttribute('data-test-connection-state') === 'CONNECTED'
        && document.querySelector('[data-testid="stStatusWidget"]') === null
        && document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
        && run > after;
    const now = performance.now();
    const seen = window.__tokvizFinished;
    if (!done) { window.__tokvizFinished = null; return false; }
    if (!seen || seen.run !== run) { window.__tokvizFinished = {run: run, since: now}; return false; }
    return now - seen.since >= quietMs;
}"""


def run_number(page: Any) -> int:
    """The number of the session's latest run drawn on the page (-1 before the first)."""
    return int(page.evaluate(
        "() => { const m = [...document.querySelectorAll('.tokviz-run')].map(n => Number(n.getAttribute('title')));"
        " return m.length ? Math.max(...m) : -1; }"
    ))


def wait_for_app(page: Any, after: int = -1, *, timeout_ms: int = 240_000, quiet_ms: int = 400) -> int:
    """Wait until a run numbered above ``after`` has finished and stayed finished; return its number."""
    page.wait_for_function(FINISHED_JS, arg=[after, quiet_ms], timeout=timeout_ms, polling=100)
    return run_number(page)


def act(page: Any, action, *, timeout_ms: int = 240_000) -> int:
    """Do ``action()`` (a click, a key press) and wait for the run it starts to finish."""
    before = run_number(page)
    action()
    return wait_for_app(page, before, timeout_ms=timeout_ms)


def open_page(page: Any, url: str, *, timeout_ms: int = 240_000) -> int:
    """Go to ``url`` and wait for its first run to finish."""
    page.goto(url)
    return wait_for_app(page, -1, timeout_ms=timeout_ms)


def set_text(page: Any, key: str, text: str) -> int:
    """Type ``text`` into the text area or input of widget ``key`` and apply it (Ctrl+Enter)."""
    box = page.locator(f".st-key-{key} textarea, .st-key-{key} input").first
    box.fill(text)
    # Streamlit applies a text area on Ctrl+Enter, a text or number input on Enter.
    key_press = "Control+Enter" if box.evaluate("node => node.tagName") == "TEXTAREA" else "Enter"
    return act(page, lambda: box.press(key_press))


def go_to(page: Any, title: str) -> int:
    """Switch pages with the sidebar's link named ``title`` (as a user does)."""
    link = page.locator('[data-testid="stSidebar"] a', has_text=title).first
    return act(page, link.click)


def choose(page: Any, key: str, option: str, *, timeout_ms: int = 240_000) -> int:
    """Pick ``option`` (its visible label) in the select box of widget ``key``.

    A run that ends after the box was opened (a training finishing in the background redraws
    the page) closes its list: then the list is opened again, until the option is clicked or
    ``timeout_ms`` has passed. Each try waits for the option itself, not for a fixed time."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    box = page.locator(f".st-key-{key} button[aria-haspopup=listbox]").first
    choice = page.get_by_role("option", name=option, exact=True).first
    before = run_number(page)
    tries = max(timeout_ms // 10_000, 1)
    for attempt in range(tries):
        if not choice.is_visible():
            box.click()
        try:
            choice.click(timeout=10_000)
            break
        except PlaywrightTimeoutError:
            if attempt == tries - 1:
                raise
    return wait_for_app(page, before, timeout_ms=timeout_ms)


def selected(page: Any, key: str) -> str:
    """The label the select box of widget ``key`` shows."""
    return page.locator(f".st-key-{key} input[role=combobox]").first.input_value()


def slider_value(page: Any, key: str = "vocab_slider") -> int:
    return int(page.locator(f".st-key-{key} input[type=range]").first.input_value())


def step_slider(page: Any, key: str, presses: int, arrow: str = "ArrowLeft") -> int:
    """Move slider ``key`` by ``presses`` key steps (as a keyboard user does); returns its new value."""
    thumb = page.locator(f".st-key-{key} input[type=range]").first  # the thumb's keyboard handle
    thumb.focus()
    before = run_number(page)
    for _ in range(presses):
        thumb.press(arrow)
    wait_for_app(page, before)
    return slider_value(page, key)


def span_ids(page: Any, nth: int = -1) -> list[str]:
    """The ids of the ``nth`` span view on the page, read from each token's pinned card (or its tooltip)."""
    views = page.locator(".tokviz-spans")
    view = views.nth(nth if nth >= 0 else views.count() + nth)
    return view.evaluate(
        r"""v => v.querySelector('.card')
            ? Array.from(v.querySelectorAll('.card')).map(card => {
                const keys = Array.from(card.querySelectorAll('.k'));
                const at = keys.findIndex(k => k.textContent === 'id');
                return at < 0 ? null : card.querySelectorAll('.v')[at].textContent.replace(/,/g, '');
              })
            : Array.from(v.querySelectorAll('.tok')).map(tok => {
                const found = /\nid: (\d+)/.exec(tok.getAttribute('title') || '');
                return found ? found[1] : null;
              })"""
    )


def in_first_screen(page: Any, selector: str) -> bool:
    """Whether the element's box lies inside the viewport with the page scrolled to its top."""
    viewport = page.viewport_size
    box = page.locator(f"{selector} >> visible=true").first.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 40) <= viewport["height"] and box["x"] + box["width"] <= viewport["width"] + 1
