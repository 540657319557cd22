"""User text inside Markdown: the one escaping function for every string a page renders as Markdown.

Streamlit renders captions, notices (``st.error``/``st.info``/...), ``st.markdown``, widget labels
and help texts as GitHub-flavoured Markdown with its own extras: ``:red[...]`` colours, ``$...$``
math, ``:material/...:`` icons. A user string (a link's value, a file or column name, a token, an
error message quoting a pattern) put into one of them must show as typed, never as markup: a link
``[Session expired: sign in again](http://...)`` inside the app's red error box is a phishing page.

:func:`md_escape` neutralises all of it:

- every character that can open Markdown gets a backslash (CommonMark lets any ASCII punctuation be
  escaped, and it then stands for itself): links, images, emphasis, code spans, headings, lists,
  tables, HTML tags and entities (``&``), ``$`` math, and a ``:`` before a letter or digit, where
  Streamlit's directives start (``:red[...]``, ``:material/...:``); other punctuation (``'``, ``,``,
  ``:`` before a space) is left as it is, so messages stay readable as plain strings;
- bare-URL autolinks (``http://``, ``www.``, ``name@host.tld``) are made by Streamlit's Markdown on
  the text *after* escapes are resolved, so no backslash stops them: a WORD JOINER (U+2060, zero
  width, invisible) is put after ``:`` before ``//``, between ``www`` and ``.`` and after ``@``.
  The text reads the same; a copied URL carries that invisible character.

>>> print(md_escape("*bold* [x](y)"))
\\*bold\\* \\[x\\]\\(y\\)
>>> md_escape("http://e.co www.e.co a@e.co")
'http:\\u2060//e\\\\.co www\\u2060\\\\.e\\\\.co a@\\u2060e\\\\.co'
>>> print(md_escape(":red[x] $1 <b>"))
\\:red\\[x\\] \\$1 \\<b\\>
"""

from __future__ import annotations

import re

__all__ = ["md_escape", "WORD_JOINER"]

#: Invisible, zero-width, and no word break: what keeps a bare URL from becoming a link.
WORD_JOINER = "\u2060"

#: What can open Markdown: CommonMark's inline and block markers, HTML and entities, math, setext underlines.
_SPECIALS = re.compile(r"[\\`*_{}\[\]()<>#+\-.!|~$&=]|:(?=\w)")
#: Where an autolink would start: between ":" and "//", between "www" and ".", after "@".
_AUTOLINK_POINTS = re.compile(r"(?<=:)(?=//)|(?i:(?<=www)(?=\.))|(?<=@)")


def md_escape(text: str) -> str:
    """``text`` as a Markdown string that renders exactly ``text`` (see the module's docstring)."""
    text = _AUTOLINK_POINTS.sub(WORD_JOINER, str(text))
    return _SPECIALS.sub(lambda found: "\\" + found.group(), text)
