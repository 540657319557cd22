"""Offline: no page of the app makes the browser contact any host but the app's own (issue 12).

A classroom network may have no internet: a favicon or a font fetched from an outside server
then fails (and leaks who is using the app). Every page of tokviz's page registry is opened by
its URL path in Chromium; every request the browser makes is logged (and any to another host
aborted, so the test does not depend on the machine's network); the page's favicon and every
``src`` / ``href`` in the document must be the app's own or inline (``data:``, ``blob:``).
Each page is waited for by the app's own finished condition (``app_driver.wait_for_app``: the
run marker, Streamlit's script state ``notRunning``, its status widget gone), then the network
idle — never a fixed sleep.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import urlsplit

import pytest

from app_driver import wait_for_app

pytestmark = pytest.mark.e2e

INLINE_SCHEMES = ("data", "blob", "about", "javascript")


def page_paths() -> list[tuple[str, str]]:
    """``(title, url path)`` of every page in tokviz's registry; the first (default) page is ``/``."""
    from tokviz.ui import PAGES

    paths = []
    for index, page in enumerate(PAGES):
        paths.append((page.title, "" if index == 0 else PurePosixPath(page.path).stem))
    return paths


def wait_for_run_to_finish(page) -> None:
    """The app's own finished condition (``app_driver.wait_for_app``), then the network idle."""
    wait_for_app(page)
    page.wait_for_load_state("networkidle")


def foreign_urls(urls: list[str], origin: str) -> list[str]:
    """The URLs that leave ``origin`` (inline schemes excepted).

    >>> foreign_urls(["http://127.0.0.1:8501/x.js", "data:image/svg+xml,<svg/>", "https://fonts.gstatic.com/a.svg"], "http://127.0.0.1:8501")
    ['https://fonts.gstatic.com/a.svg']
    """
    own = urlsplit(origin)
    outside = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in INLINE_SCHEMES:
            continue
        if (parts.scheme, parts.hostname, parts.port) != (own.scheme, own.hostname, own.port):
            outside.append(url)
    return outside


def test_page_registry_is_not_empty() -> None:
    assert [path for _, path in page_paths()][0] == "" and len(page_paths()) >= 2


def test_no_request_leaves_the_apps_origin(app_url: str, browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(240_000)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))

    def keep_inside(route) -> None:
        if foreign_urls([route.request.url], app_url):
            route.abort()  # recorded by the request log above; never actually fetched
        else:
            route.continue_()

    context.route("**/*", keep_inside)
    try:
        page = context.new_page()
        in_document: dict[str, list[str]] = {}
        for title, path in page_paths():
            page.goto(f"{app_url}/{path}")
            wait_for_run_to_finish(page)
            # Favicons are fetched by the browser itself (not always reported as page requests):
            # check every address the document points at, the favicon link included.
            in_document[title] = page.evaluate(
                """() => Array.from(document.querySelectorAll('[src], link[href]'))
                    .map(element => element.src || element.href).filter(Boolean)"""
            )
            icon = page.evaluate("() => (document.querySelector(\"link[rel~='icon']\") || {}).href || ''")
            assert icon and not foreign_urls([icon], app_url), (title, icon)
        assert not foreign_urls(requests, app_url), sorted(set(foreign_urls(requests, app_url)))
        for title, urls in in_document.items():
            assert not foreign_urls(urls, app_url), (title, sorted(set(foreign_urls(urls, app_url))))
        assert len(requests) > 10  # the log really saw the pages load
    finally:
        context.close()
