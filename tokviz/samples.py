"""Built-in sample corpora, shipped inside the package as data files.

The default sample (``tokviz/data/sample.txt``, about 4 KB) was written for tokviz: English
prose, Korean, Chinese, Japanese, a few European and other scripts, code, numbers and
emoji, so that every pipeline has something interesting to do on the first screen.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

#: name shown in the UI -> file under tokviz/data/
SAMPLES: dict[str, str] = {"Multilingual sample (built in)": "sample.txt"}
DEFAULT_SAMPLE = "Multilingual sample (built in)"


@cache
def load_sample(name: str = DEFAULT_SAMPLE) -> str:
    """The text of a built-in sample: ``load_sample()[:20] == 'The tokenizer is th'`` + 'e'."""
    try:
        file_name = SAMPLES[name]
    except KeyError:
        raise KeyError(f"no built-in sample named {name!r}; choose one of {sorted(SAMPLES)}") from None
    return resources.files("tokviz").joinpath("data", file_name).read_text(encoding="utf-8")
