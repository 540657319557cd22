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


def _registered(views: dict[type, Callable[..., Any]], obj: Any) -> Callable[..., Any] | None:
    """The view registered for the nearest class of ``obj`` in its MRO, or None."""
    return next((views[cls] for cls in type(obj).__mro__ if cls in views), None)


def html_view(obj: Any) -> str | None:
    """The registered view of ``obj`` (the nearest class in its MRO), or None."""
    view = _registered(_VIEWS, obj)
    return None if view is None else view(obj)


_FIGURES: dict[type, Callable[..., Any]] = {}


def register_figure_view(cls: type, view: Callable[..., Any]) -> None:
    """Draw instances of ``cls`` as a chart with ``view(obj, *args, **kwargs)`` (``ComparisonFrame.figure``)."""
    _FIGURES[cls] = view


def figure_view(obj: Any, *args: Any, **kwargs: Any) -> Any:
    """The registered chart of ``obj``; a ``LookupError`` when :mod:`tokviz.viz` has not registered one."""
    view = _registered(_FIGURES, obj)
    if view is not None:
        return view(obj, *args, **kwargs)
    raise LookupError(f"No chart is registered for {type(obj).__name__}: import tokviz.viz.notebook first (tokviz imports it in a notebook).")
