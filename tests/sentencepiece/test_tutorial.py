"""The SentencePiece tutorial's code runs unchanged with ``import tokviz.sentencepiece as spm`` and prints what sentencepiece prints."""

from __future__ import annotations

import contextlib
import csv
import io
import os
from pathlib import Path

import pytest

sentencepiece = pytest.importorskip("sentencepiece")
pd = pytest.importorskip("pandas")

import tokviz.sentencepiece  # noqa: E402


# The tutorial's code, verbatim but for the notebook's bare expressions, which we print.
TUTORIAL = '''
train_df = pd.read_csv('IMDb_Reviews.csv')
with open('imdb_review.txt', 'w', encoding='utf8') as f:
    f.write('\\n'.join(train_df['review']))
spm.SentencePieceTrainer.Train('--input=imdb_review.txt --model_prefix=imdb --vocab_size=5000 --model_type=bpe --max_sentence_length=9999')
sp = spm.SentencePieceProcessor()
sp.load("imdb.model")
for line in ["________", "I didn't at all think of it _this ___way.", "I have waited a long time for someone to film"]:
    print(sp.encode_as_pieces(line)); print(sp.encode_as_ids(line))
print(sp.GetPieceSize()); print(sp.IdToPiece(430)); print(sp.PieceToId('▁character'))
print(sp.DecodeIds([41, 141, 1364, 1120, 4, 666, 285, 92, 1078, 33, 91]))
print(sp.DecodePieces(['▁I', '▁have', '▁wa', 'ited', '▁a', '▁long', '▁time', '▁for', '▁someone', '▁to', '▁film']))
'''


def _write_imdb_like_csv(path: Path, big: str) -> None:
    """A ``review`` column of 2,000 "reviews", each five consecutive lines of big.txt (commas and quotes included)."""
    lines = [line for line in big.split("\n") if line.strip()][:10_000]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["review", "sentiment"])
        for i in range(0, len(lines), 5):
            writer.writerow([" ".join(lines[i:i + 5]), "positive" if i % 2 else "negative"])


def _run(module: object, workdir: Path) -> str:
    out = io.StringIO()
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(out):
            exec(TUTORIAL, {"spm": module, "pd": pd})  # noqa: S102 - the tutorial's own code
    finally:
        os.chdir(previous)
    return out.getvalue()


def test_tutorial_prints_what_sentencepiece_prints(tmp_path: Path, read_shared_corpus) -> None:
    ours_dir, theirs_dir = tmp_path / "tokviz", tmp_path / "sentencepiece"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    big = read_shared_corpus("big.txt")
    _write_imdb_like_csv(ours_dir / "IMDb_Reviews.csv", big)
    _write_imdb_like_csv(theirs_dir / "IMDb_Reviews.csv", big)
    theirs = _run(sentencepiece, theirs_dir)
    ours = _run(tokviz.sentencepiece, ours_dir)
    assert ours == theirs
    # the files themselves are sentencepiece's, byte for byte
    assert (ours_dir / "imdb.model").read_bytes() == (theirs_dir / "imdb.model").read_bytes()
    assert (ours_dir / "imdb.vocab").read_bytes() == (theirs_dir / "imdb.vocab").read_bytes()
    assert ours.splitlines()[6] == "5000"
