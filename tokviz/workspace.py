"""What one user chose in the app, page by page: the session workspace, as plain data.

Streamlit deletes a widget's state when a run does not draw the widget, so widget keys
cannot hold what the user chose across pages. The app keeps one :class:`Workspace` per
session instead (``tokviz.ui.workspace`` stores it in ``st.session_state`` under a key no
widget owns): each page seeds its widgets from it and writes every change back. The URL
mirrors it (``tokviz.links``), so a reload or a shared link restores it.

>>> workspace = Workspace()
>>> workspace.corpus.source, workspace.train.preset, workspace.train.target_vocab
('sample', 'gpt2', 1000)
>>> [entry.choice for entry in workspace.compare.entries]
['gpt2', 'bert', 't5']

What it leaves out: trained results (they live in the server's training cache, keyed by
:class:`TrainingRequest`) and uploaded bytes of tokenizer files (kept by the uploader).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tokviz.pipeline_config import PipelineConfig
from tokviz.presets import DEFAULT_PRESET, PRESETS, preset_vocab

#: Vocab size a new workspace trains at.
DEFAULT_VOCAB = 1000


@dataclass(frozen=True, slots=True)
class TrainingRequest:
    """One training: the corpus (by hash), the pipeline and the target vocab size.

    Hashable, so it keys the server's training cache and the tokenizers derived from it.
    """

    corpus_key: str
    config: PipelineConfig
    vocab_size: int


@dataclass(slots=True)
class CorpusState:
    """The session's one corpus, shared by Train and Compare.

    ``source`` says which text is in use: the built-in sample, the text box (``pasted``) or an
    upload (its decoded ``upload_text``, kept here because Streamlit forgets an uploader's file
    when a run does not draw it).
    """

    source: str = "sample"
    pasted: str | None = None  # the text box's content; None: the sample's text
    upload_name: str = ""  # the uploaded file's name (with its column for a table)
    upload_text: str | None = None

    def describe(self) -> str:
        """A short phrase naming the corpus for captions.

        >>> CorpusState().describe(), CorpusState("upload", upload_name="reviews.csv, column 'review'").describe()
        ('the built-in sample', "upload reviews.csv, column 'review'")
        """
        if self.source == "upload":
            return f"upload {self.upload_name}"
        return "your pasted text" if self.source == "pasted" else "the built-in sample"


@dataclass(slots=True)
class TrainState:
    """The Train page: pipeline, target vocab, slider position, test text, and the last training."""

    preset: str = DEFAULT_PRESET  # a key of PRESETS, or "custom"
    config: PipelineConfig = field(default_factory=lambda: PRESETS[DEFAULT_PRESET].build())
    target_vocab: int = DEFAULT_VOCAB
    slider: int | None = None  # None: the trained size
    test_text: str | None = None  # None: the corpus's held-out lines
    tab: str | None = None  # the open result tab's label; None: the first
    trained: TrainingRequest | None = None  # the training whose results the page shows


@dataclass(slots=True)
class CompareEntry:
    """One configuration of the Compare page: a preset, or model × pre-tokenizer × normalizer with trainer options."""

    choice: str = "gpt2"  # a key of PRESETS, or "custom"
    model: str = "BPE"
    pre_tokenizer: str = "Whitespace"
    normalizer: str = "none"
    vocab: int = DEFAULT_VOCAB
    scoring: str = "frequency"  # WordPiece only: HF's (frequency) or the course's (likelihood)
    min_frequency: int = 0


def default_compare_entries() -> list[CompareEntry]:
    return [CompareEntry(choice, vocab=preset_vocab(choice)) for choice in ("gpt2", "bert", "t5")]


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """An uploaded tokenizer file kept in the session (links never carry it); ``encoding`` names a
    tiktoken rank file's encoding (``cl100k_base``), empty for other files."""

    name: str
    data: bytes
    encoding: str = ""


@dataclass(slots=True)
class CompareState:
    entries: list[CompareEntry] = field(default_factory=default_compare_entries)
    files: list[UploadedFile] = field(default_factory=list)  # pretrained tokenizers compared beside the trained ones
    catalog: list[str] = field(default_factory=list)  # tokviz.catalog names compared beside them ("session": the Train page's)
    text: str | None = None  # None: the first held-out lines
    eval_source: str = "held-out"  # or "paste"
    eval_text: str = ""


#: Tokenizer choices the Pipeline and Inspect pages offer besides the presets: the session's and an upload.
SESSION_TOKENIZER = "session"
UPLOADED_TOKENIZER = "upload"


@dataclass(slots=True)
class PipelineState:
    tokenizer: str = SESSION_TOKENIZER
    text: str | None = None  # None: the page's example text
    pair: str = ""
    files: list[UploadedFile] = field(default_factory=list)  # the uploaded tokenizer's files


@dataclass(slots=True)
class InspectState:
    tokenizer: str = SESSION_TOKENIZER
    text: str | None = None  # None: the page's example text
    files: list[UploadedFile] = field(default_factory=list)  # the uploaded tokenizer's files


#: Texts the Audit page audits with: the session's corpus, the built-in multilingual sample, an upload, or none.
AUDIT_TEXTS = ("corpus", "multilingual", "upload", "none")


@dataclass(slots=True)
class AuditState:
    """The Audit page: which tokenizer (as Pipeline and Inspect choose it), which texts, the slider, the table filters."""

    tokenizer: str = SESSION_TOKENIZER
    files: list[UploadedFile] = field(default_factory=list)  # the uploaded tokenizer's files
    texts: str = "corpus"  # one of AUDIT_TEXTS
    texts_upload: UploadedFile | None = None  # an uploaded text file (links never carry it)
    size: int | None = None  # vocab size on a trained tokenizer; None: its trained size
    threshold: float = 0.05  # R(t) under which a BPE token counts as an intermediate residue
    search: str = ""


def default_merges() -> dict[str, int]:
    return {"bpe": 3, "wordpiece": 5}


@dataclass(slots=True)
class LearnState:
    lesson: str = "bpe"
    step: int = 1
    predict: bool = False
    merges: dict[str, int] = field(default_factory=default_merges)  # merges to learn, per merge lesson
    unigram_vocab: int = 12
    word_counts: dict[str, int] | None = None  # None: the lessons' classic table
    byte_text: str = "a가 짧"
    sentence: str | None = None  # None: the normalization lesson's default sentence


@dataclass(slots=True)
class Workspace:
    corpus: CorpusState = field(default_factory=CorpusState)
    train: TrainState = field(default_factory=TrainState)
    compare: CompareState = field(default_factory=CompareState)
    pipeline: PipelineState = field(default_factory=PipelineState)
    inspect: InspectState = field(default_factory=InspectState)
    learn: LearnState = field(default_factory=LearnState)
    audit: AuditState = field(default_factory=AuditState)
    presentation: bool = False  # larger type, folded sidebar: for a projector
