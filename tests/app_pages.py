"""Opening the app's pages under Streamlit's AppTest: the one helper every page test uses.

Two ways in, as a browser has them: ``open_page(page)`` is a user who lands on the home page and then picks
``page`` in the navigation; ``open_page(page, query={...})`` is a link opened in a fresh tab, whose URL is the
first run's (the query parameters are read before anything else runs).
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")

# AppTest's timeout is a ceiling, not a wait: generous so a loaded CI machine does not fail a run that works.
TIMEOUT = 240


def open_page(page: str = "app.py", *, query: dict[str, str] | None = None, timeout: float = TIMEOUT) -> AppTest:
    """The app with ``page`` shown: reached from the home page, or opened straight from a link when ``query``
    is given (an empty dict is a bare link to the page)."""
    app = AppTest.from_file(APP, default_timeout=timeout)
    if query is None:
        app.run()
        if page == "app.py":
            return app
    else:
        for key, value in query.items():
            app.query_params[key] = value
    if page != "app.py":
        app.switch_page(page)
    return app.run()


def assert_clean(app: AppTest) -> None:
    """No exception and no error box on the page."""
    assert not app.exception, [str(error.value) for error in app.exception]
    assert not app.error, [error.value for error in app.error]
