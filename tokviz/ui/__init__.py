"""The only tokviz package that imports streamlit: the page frame, the session workspace and its
links, the training cache, the corpus input, shared widgets and one module of views per page.

Pages stay thin: they lay out widgets and call these modules and the pure tokviz modules,
which never import streamlit.

=================  ===========================================================
``shell``          page registry, page frame (config, navigation, presentation), errors
``workspace``      the session workspace in ``st.session_state``, widget binding, links
``training``       the shared training cache, word counts, the session's tokenizer
``corpus_input``   the session's corpus: text box, upload, overview
``widgets``        pipeline choice and Custom form, vocab slider, token spans
``train_views``    the Train page's result tabs
``compare_views``  the Compare page's configuration forms and curves
``tokenizer_choice``  the tokenizer the Pipeline and Inspect pages look at
``learn_views``    the Learn page's step views and word-count editor
=================  ===========================================================
"""

from tokviz.ui.shell import PAGES, PageInfo

__all__ = ["PAGES", "PageInfo"]
