"""Notebook views by registration: a core object answers Jupyter's ``_repr_html_`` with the view
registered for its class, so the core never imports :mod:`tokviz.viz` (which registers its views
when it is imported; ``import tokviz`` imports it when IPython is running).

>>> class Thing:
...     def _repr_html_(self):
...         return html_view(self)
>>> Thing()._repr_html_() is None  # no view: Jupyter falls back to repr()
True
>>> register_html_view(Thing, lambda thing: "<b>thing</b>"); Thing()._repr_html_()
'<b>thing</b>'
"""

from __future__ import annotations

from typing import Any, Callable

_VIEWS: dict[type, Callable[[Any], str]] = {}


def register_html_view(cls: type, view: Callable[[Any], str]) -> None:
    """Draw instances of ``cls`` (and of its subclasses) with ``view`` in a notebook."""
    _VIEWS[cls] = view


def html_view(obj: Any) -> str | None:
    """The registered view of ``obj`` (the nearest class in its MRO), or None."""
    for cls in type(obj).__mro__:
        view = _VIEWS.get(cls)
        if view is not None:
            return view(obj)
    return None
