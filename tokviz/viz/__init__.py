"""Views shared by the app and notebooks: escaped HTML spans, plotly charts, tables.

``tokviz.viz.EncodingVisualizer`` (HF's notebook class, every label escaped) is exported lazily.
"""

from __future__ import annotations

from tokviz._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {"EncodingVisualizer": "tokviz.viz.notebook", "Annotation": "tokviz.viz.notebook"})
