"""tokviz: a tokenizer playground. Run with ``streamlit run app.py``."""

import streamlit as st

from tokviz.ui import PAGES

st.set_page_config(page_title="tokviz · tokenizer playground", page_icon=":material/token:", layout="wide")

navigation = st.navigation(
    [st.Page(page.path, title=page.title, icon=page.icon, default=(index == 0)) for index, page in enumerate(PAGES)]
)
navigation.run()
