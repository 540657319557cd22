"""BPE words straight to ``(ids, values, starts, ends)`` tuples for the engine's word caches
(no ``Token`` objects): :func:`bpe_word_encoder` and, for byte-level pipelines,
:func:`byte_symbol_tokens`; and where a BPE model never merges (:func:`model_splits_at`,
:func:`letter_runs`, :func:`word_pieces`), so a long word may be merged piece by piece."""

from __future__ import annotations

import re
from itertools import accumulate, chain, islice, repeat
from operator import add, eq, sub
from typing import Any

from tokviz.byte_level import text_to_symbols
from tokviz.models.bpe.model import (
    BYTE_FALLBACK_TOKENS, LIST_MERGE_MAX_SYMBOLS, NO_MERGE, BpeTables, apply_merges, merge_all,
)


#: ``(n,)`` for small n, shared: one less object per cached word for the cycle collector.
ONE_TUPLE_LIMIT = 256
ONE_TUPLES = tuple((n,) for n in range(ONE_TUPLE_LIMIT))
#: Words of two tokens up to this long share their offsets (``TWO_STARTS``, ``TWO_ENDS``).
TWO_TOKENS_MAX_CHARS = 24
#: Words up to this long that are a token are proven to stay one (certify recurses per level).
CERTIFY_MAX_CHARS = 256
#: ``(0, n)`` and ``(n, m)``, the offsets of a word of two tokens, shared likewise.
TWO_STARTS = tuple((0, n) for n in range(TWO_TOKENS_MAX_CHARS + 1))
TWO_ENDS = tuple(tuple((n, m) for m in range(TWO_TOKENS_MAX_CHARS + 1)) for n in range(TWO_TOKENS_MAX_CHARS + 1))


def bpe_word_encoder(model: Any) -> Any:
    """A function ``word -> (ids, values, starts, ends)`` equal to ``model.tokenize`` for a BPE
    model without dropout (no ``Token`` objects), or None for anything else. A word that is a
    token is that token once ``certify`` has proven (memoized) that the merges rebuild it; other
    words are merged.

    >>> from tokviz.models import BPE
    >>> encode = bpe_word_encoder(BPE({"h": 0, "u": 1, "g": 2, "ug": 3, "hug": 4}, [("u", "g"), ("h", "ug")]))
    >>> encode("hugu"), encode("hx")
    (((4, 1), ('hug', 'u'), (0, 3), (3, 4)), ((0,), ('h',), (0,), (1,)))
    >>> bpe_word_encoder(BPE({"<unk>": 0, "h": 1}, [], unk_token="<unk>", fuse_unk=True))("hxyh")
    ((1, 0, 1), ('h', '<unk>', 'h'), (0, 1, 3), (1, 3, 4))
    """
    tables = model.word_tables() if hasattr(model, "word_tables") else None
    if not isinstance(tables, BpeTables):
        return None
    vocab = tables.vocab
    get = vocab.get
    id_of = vocab.__getitem__
    token_of = tables.vocab_r.__getitem__
    merge_map = tables.merge_map
    pair_merge = merge_map.get
    new_ids = tables.merge_new_ids
    prefix = model.continuing_subword_prefix or ""
    suffix = model.end_of_word_suffix or ""
    # plain: one id per token string, so a token's text is exactly what it covers (plus the
    # suffix on the last token): lengths come from the values and need not be carried along.
    plain = tables.plain and not prefix
    ignore_merges = model.ignore_merges
    empty = ((), (), (), ())
    no_merge = NO_MERGE
    max_symbols = LIST_MERGE_MAX_SYMBOLS
    at_zero = ONE_TUPLES[0]
    never = repeat(no_merge)  # endless: map stops at the pairs' end

    def encode(word: str) -> tuple[tuple[Any, ...], ...] | None:
        if not word:
            return empty
        if ignore_merges:
            token_id = get(word)
            if token_id is not None:
                size = len(word)
                return (token_id,), (word,), at_zero, ONE_TUPLES[size] if size < ONE_TUPLE_LIMIT else (size,)
        elif shortcut and len(word) <= CERTIFY_MAX_CHARS:  # (certify recurses once per level of the tree)
            if suffix:
                # The token of the word's text and the suffix, made from the word's symbols: its
                # chars, the last one with the suffix (memoized under ~id, see certify).
                token_id = get(word + suffix)
                if token_id is not None:
                    made = made_get(~token_id)
                    if made is None:
                        if not producer:
                            build_producer()
                        made = certify_final(token_id)
                    if made != never_rank:
                        size = len(word)
                        return (token_id,), (token_of(token_id),), at_zero, ONE_TUPLES[size] if size < ONE_TUPLE_LIMIT else (size,)
            else:
                token_id = get(word)
                if token_id is not None:
                    made = made_get(token_id)
                    if made is None:
                        if not producer:
                            build_producer()
                        made = certify(token_id)
                    if made != never_rank:
                        size = len(word)
                        return (token_id,), (word,), at_zero, ONE_TUPLES[size] if size < ONE_TUPLE_LIMIT else (size,)
        if prefix or suffix:
            ids = [get(word[0]), *[get(prefix + char) for char in word[1:]]] if prefix else list(map(get, word))
            if suffix:
                ids[-1] = get((prefix + word[-1] if prefix and len(word) > 1 else word[-1]) + suffix)
            if None in ids:
                return unknown(word, ids)
        else:
            try:  # (no scan for None: a char that is no token raises, rarely)
                ids = list(map(id_of, word))
            except KeyError:
                return unknown(word, list(map(get, word)))
        if not plain:
            lengths = [1] * len(ids)
            apply_merges(ids, lengths, merge_map, new_ids)
            ends = tuple(accumulate(lengths))
            return tuple(ids), tuple(map(token_of, ids)), (0, *ends[:-1]), ends
        count = len(ids)
        if count == 2:
            rank = pair_merge((ids[0], ids[1]))
            if rank is not None:
                token_id = new_ids[rank]
                return (token_id,), (token_of(token_id),), at_zero, ONE_TUPLES[2]
        elif count > max_symbols:
            merge_all(ids, None, merge_map, new_ids)
        elif count > 2:
            # apply_merges inlined (this is the hot loop of a cold encode): the rank of each
            # adjacent pair, then repeatedly the lowest (leftmost on ties), patching only the
            # two pairs next to the new token.
            pair_merges = list(map(pair_merge, zip(ids, islice(ids, 1, None)), never))
            while pair_merges:
                best = min(pair_merges)
                if best == no_merge:
                    break
                i = pair_merges.index(best)
                new_id = new_ids[best]
                ids[i] = new_id
                del ids[i + 1]
                del pair_merges[i]
                if i:
                    pair_merges[i - 1] = pair_merge((ids[i - 1], new_id), no_merge)
                if i < len(pair_merges):
                    pair_merges[i] = pair_merge((new_id, ids[i + 1]), no_merge)
        if len(ids) == 1:
            return (ids[0],), (token_of(ids[0]),), at_zero, ONE_TUPLES[count] if count < ONE_TUPLE_LIMIT else (count,)
        if len(ids) == 2:
            first, second = ids
            first_value = token_of(first)
            second_value = token_of(second)
            middle = len(first_value)
            if count <= TWO_TOKENS_MAX_CHARS:  # (shared offsets: fewer objects for the collector)
                return (first, second), (first_value, second_value), TWO_STARTS[middle], TWO_ENDS[middle][count]
            return (first, second), (first_value, second_value), (0, middle), (middle, count)
        values = tuple(map(token_of, ids))
        if suffix:
            ends = (*accumulate(map(len, values[:-1])), count)
        else:
            ends = tuple(accumulate(map(len, values)))
        return tuple(ids), values, (0, *ends[:-1]), ends

    # A word that is itself a token is usually that one token; certify(t) proves it for t
    # (memoized per token) without merging: t = a + b by its merge at rank r; if a and b
    # each rebuild themselves (ranks rising up their merge trees) and no pair across their
    # boundary can merge before both are complete, the merges of t's chars run as those of
    # a and of b side by side, then join a and b. Across the boundary only the symbols of
    # a's right edge (its last char, the token that char first joins, ..., a) meet those of
    # b's left edge, each while it exists: from its merge's rank until the next one up.
    # With an end_of_word_suffix a word's last symbol is its last char and the suffix: the
    # word's token must be made from chars and, last, such a symbol (certify_final).
    # A converted SentencePiece model (byte fallback, more merges than tokens) merges its words
    # until its word caches are first cleared (use_proofs): a first proof costs more than one
    # merge there (Llama 2 first pass 2.07x HF merging, 2.44x proving) but memoized proofs pay
    # once the same tokens come again with the caches gone (1.84x proving, 2.82x merging).
    # Words of several tokens are merged: guessing and proving them was slower on a first pass
    # (openllama 46.4 -> 44.5 ms, llama_digits 81.5 -> 66.4) and no faster after a cleared cache.
    # An empty token in a merge would let that merge remake its other part (a proof would
    # recurse on it); one in no merge is never a symbol (Whisper's files hold one), so words
    # are proven as in any vocabulary.
    empty_id = get("")
    can_prove = plain and not prefix and not ignore_merges and (empty_id is None or empty_id not in chain.from_iterable(merge_map))
    shortcut = can_prove and not (model.byte_fallback and len(merge_map) > len(vocab))

    def use_proofs() -> None:
        nonlocal shortcut
        shortcut = can_prove
    suffix_symbol_size = len(suffix) + 1
    # rank_made[t]: the rank of the merge that makes t once proven (a char: -1), never_rank if
    # not; route[t]: that merge's pair (the merge table's own key: nothing new for the cycle
    # collector). rank_made[~t], route[~t]: the same for t as a word's last token (certify_final).
    rank_made: dict[int, int] = {}
    made_get = rank_made.get
    made_of = rank_made.__getitem__
    route: dict[int, tuple[int, int]] = {}
    route_of = route.__getitem__
    producer: dict[int, tuple[int, int]] = {}
    producer_get = producer.get
    by_rank: list[tuple[Any, ...]] = []  # [pairs by rank, new ids by rank] (see build_producer)
    never_rank = 1 << 62

    def build_producer() -> None:
        ranked = len(merge_map) == len(new_ids)  # (else a pair listed twice: the map's order is not the ranks')
        # Of several merges making a token, the first (lowest rank): in a SentencePiece model's
        # tokenizer.json, where every split of a token is a merge (listed by the ids of its
        # parts), the first was the route the merges take for about two thirds of such tokens
        # in the bench's converted Llama, the last for fewer (certify tries the others after).
        producer.update(zip(reversed(new_ids if ranked else tuple(map(new_ids.__getitem__, merge_map.values()))), reversed(merge_map)))
        if len(producer) < len(merge_map) and ranked:
            # The pairs and new ids by rank: such a file lists the merges of a token together.
            # (Tuples, not lists: the cycle collector stops walking a tuple of untracked items.)
            by_rank[:] = (tuple(merge_map), new_ids)

    def certify(token_id: int) -> int:
        pair = producer_get(token_id)
        made = never_rank
        if pair is None:
            if len(token_of(token_id)) == 1:  # a char's own symbol
                made = -1
        else:
            left, right = pair
            rank = merge_map[pair]
            left_made = made_get(left)
            if left_made is None:
                left_made = certify(left)
            # (ranks must rise up the tree; where they do not, the merges decide)
            if left_made < rank:
                right_made = made_get(right)
                if right_made is None:
                    right_made = certify(right)
                if right_made < rank and edges_never_merge(left, left_made, right, right_made, right):
                    made = rank
                    route[token_id] = pair
            if made == never_rank and len(producer) < len(merge_map):
                # Several merges make some tokens (a SentencePiece model's tokenizer.json lists
                # every split of a token into two): the chars may reach t by another of them.
                made = certify_other_splits(token_id, rank)
        rank_made[token_id] = made
        return made

    def certify_split(pair: tuple[int, int], rank: int) -> bool:
        # certify's proof for t = left + right by the merge of this rank.
        left, right = pair
        left_made = made_before(left, rank)
        # (ranks must rise up the tree; where they do not, the merges decide)
        if left_made < rank:
            right_made = made_before(right, rank)
            return right_made < rank and edges_never_merge(left, left_made, right, right_made, right)
        return False

    def made_before(part: int, rank: int) -> int:
        # The part's rank_made, certifying it -- unless it is not certified yet and its first
        # merge comes at or after this rank: then it cannot be made in time for this split
        # (NEVER_RANK, and it stays uncertified).
        made = made_get(part)
        if made is None:
            made_by = producer_get(part)
            if made_by is not None and merge_map[made_by] >= rank:
                return never_rank
            made = certify(part)
        return made

    def certify_other_splits(token_id: int, first_rank: int) -> int:
        # Every other merge that makes t (the splits of its text into two tokens), lowest rank
        # first: the first proven is the route the merges take (a proof shows the chars reach
        # that pair with nothing across it merged, and then it merges). A converted
        # SentencePiece file lists a token's merges together: those right after the first
        # are tried before looking for the others among the splits of its text.
        rank = first_rank + 1
        if by_rank:
            pairs_by_rank, new_ids_by_rank = by_rank
            last = len(new_ids_by_rank)
            while rank < last and new_ids_by_rank[rank] == token_id:
                pair = pairs_by_rank[rank]
                if certify_split(pair, rank):
                    route[token_id] = pair
                    return rank
                rank += 1
        text = token_of(token_id)
        splits = []
        for cut in range(1, len(text)):
            pair = (get(text[:cut]), get(text[cut:]))
            split_rank = merge_map.get(pair) if None not in pair else None
            if split_rank is not None and new_ids[split_rank] == token_id and not first_rank <= split_rank < rank:
                splits.append((split_rank, pair))
        for split_rank, pair in sorted(splits):
            if certify_split(pair, split_rank):
                route[token_id] = pair
                return split_rank
        return never_rank

    def certify_final(token_id: int) -> int:
        # certify for t as a word's last token with a suffix: its last symbol is a char and
        # the suffix, the others chars -- so its left part is certified as any token, its right
        # part as a last token again (a separate function: certify stays as lean as without one).
        pair = producer_get(token_id)
        made = never_rank
        if pair is None:
            text = token_of(token_id)
            if len(text) == suffix_symbol_size and text.endswith(suffix):  # a last char's symbol
                made = -1
        else:
            left, right = pair
            rank = merge_map[pair]
            left_made = made_get(left)
            if left_made is None:
                left_made = certify(left)
            if left_made < rank:
                right_made = made_get(~right)
                if right_made is None:
                    right_made = certify_final(right)
                if right_made < rank and edges_never_merge(left, left_made, right, right_made, ~right):
                    made = rank
                    route[~token_id] = pair
        rank_made[~token_id] = made
        return made

    def edges_never_merge(x: int, x_made: int, y: int, y_made: int, y_key: int) -> bool:
        # Back in time from (a, b) (both certified, made at ranks x_made and y_made): the
        # later-made of the two edge symbols steps down to its part on the boundary side (on a
        # tie the right one: the left merge goes first). Each pair met is checked: it would
        # merge first if its rank is below the merge ending its left symbol and not above the
        # one ending its right symbol. (b may be a final token, its route under y_key = ~b;
        # its left part and spine are not.)
        x_end = y_end = never_rank
        while True:
            if y_made >= x_made:
                if y_made < 0:
                    return True  # both are chars: every pair met was checked
                y_end = y_made
                y = route_of(y_key)[0]
                y_key = y
                y_made = made_of(y)
            else:
                x_end = x_made
                x = route_of(x)[1]
                x_made = made_of(x)
            across = pair_merge((x, y))
            if across is not None:
                if across < x_end and across <= y_end:
                    return False

    unk_id = None if model.byte_fallback or model.unk_token is None else get(model.unk_token)
    fuse_unk = model.fuse_unk
    merge_word = tables.merge_word

    # Byte fallback (a newline or an emoji in a Llama word): a char that is not a token becomes
    # the <0xNN> tokens of its UTF-8 bytes (None where one is missing: the model's own rules).
    byte_ids = list(map(get, BYTE_FALLBACK_TOKENS)) if model.byte_fallback and not prefix and not suffix else None

    def unknown(word: str, symbol_ids: list[Any]) -> tuple[tuple[Any, ...], ...]:
        if byte_ids is not None:
            entry = byte_fallback(word, symbol_ids)
            if entry is not None:
                return entry
        if unk_id is None:
            # Byte fallback, dropped chars, or an unk token missing from the vocabulary (which
            # raises): the model's own rules, on these rare words.
            tokens = merge_word(word)
            return (
                tuple([token.id for token in tokens]),
                tuple([token.value for token in tokens]),
                tuple([token.offsets[0] for token in tokens]),
                tuple([token.offsets[1] for token in tokens]),
            )
        # Unknown symbols become unk (a run of them one unk with fuse_unk), as the model's _symbols.
        ids: list[int] = []
        lengths: list[int] = []
        previous_unknown = False
        for symbol_id in symbol_ids:
            if symbol_id is not None:
                ids.append(symbol_id)
                lengths.append(1)
                previous_unknown = False
            elif previous_unknown and fuse_unk:
                lengths[-1] += 1
            else:
                ids.append(unk_id)
                lengths.append(1)
                previous_unknown = True
        apply_merges(ids, lengths, merge_map, new_ids)
        ends = tuple(accumulate(lengths))
        return tuple(ids), tuple(map(token_of, ids)), (0, *ends[:-1]), ends

    def byte_fallback(word: str, symbol_ids: list[Any]) -> tuple[tuple[Any, ...], ...] | None:
        # The model's symbols (_symbols) without Token objects: ids and byte lengths, merged,
        # then byte offsets as char offsets (a token inside a char's bytes covers the char).
        ids: list[int] = []
        lengths: list[int] = []
        sizes = [1] * len(word) if word.isascii() else list(map(len, map(str.encode, word)))
        for char, symbol_id, size in zip(word, symbol_ids, sizes):
            if symbol_id is not None:
                ids.append(symbol_id)
                lengths.append(size)
                continue
            for byte in char.encode("utf-8"):
                byte_id = byte_ids[byte]
                if byte_id is None:
                    return None
                ids.append(byte_id)
                lengths.append(1)
        apply_merges(ids, lengths, merge_map, new_ids)
        ends = list(accumulate(lengths))
        starts = [0, *ends[:-1]]
        if len(sizes) != ends[-1]:  # (some char has several bytes)
            char_of_byte = list(chain.from_iterable(map(repeat, range(len(word)), sizes)))
            starts = list(map(char_of_byte.__getitem__, starts))
            ends = [char_of_byte[end - 1] + 1 for end in ends]
        return tuple(ids), tuple(map(token_of, ids)), tuple(starts), tuple(ends)

    if shortcut:
        # The tables the proofs start from, now: the encoder is made with a tokenizer's load,
        # and a first encode would build them (GPT-2's 50k merges: ~3 ms of a cold pass).
        build_producer()
    encode.use_proofs = use_proofs  # type: ignore[attr-defined]
    return encode


def byte_symbol_tokens(word: str, model_tokenize: Any, encode: Any = None) -> tuple[str, tuple[tuple[Any, ...], ...]]:
    """A byte-level word's symbols and its tokens on them: ``(symbols, (ids, values, starts,
    ends))``, offsets in symbols. ``encode``: the model's :func:`bpe_word_encoder`, if it has
    one (else ``model_tokenize``, with ``Token`` objects).

    >>> from tokviz.models import BPE
    >>> byte_symbol_tokens("a é", BPE({"a": 0, "Ġ": 1, "Ã": 2, "©": 3, "Ã©": 4}, [("Ã", "©")]).tokenize)
    ('aĠÃ©', ((0, 1, 4), ('a', 'Ġ', 'Ã©'), (0, 1, 2), (1, 2, 4)))
    """
    symbols = text_to_symbols(word)
    entry = encode(symbols) if encode is not None else None
    if entry is None:
        tokens = model_tokenize(symbols)
        entry = (
            tuple([t.id for t in tokens]),
            tuple([t.value for t in tokens]),
            tuple([t.offsets[0] for t in tokens]),
            tuple([t.offsets[1] for t in tokens]),
        )
    return symbols, entry


#: bytes.translate table: 1 for a byte that starts a UTF-8 char, 0 for a continuation byte.
_LEAD_BYTES = bytes(0 if 0x80 <= byte < 0xC0 else 1 for byte in range(256))


def symbol_offsets_to_chars(word: str, starts: tuple[int, ...], ends: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Token offsets in a word's UTF-8 byte symbols as offsets in its chars: a token inside a
    char's bytes covers that whole char, as the general path aligns it (an empty token stays empty).

    >>> symbol_offsets_to_chars("hé", (0, 1, 2), (1, 2, 3))
    ((0, 1, 1), (1, 2, 2))
    >>> symbol_offsets_to_chars("hé", (0, 1, 3), (1, 3, 3))  # an empty token at the end
    ((0, 1, 2), (1, 2, 2))
    """
    if not any(map(eq, starts, ends)):
        # No empty token (the usual), in C: chars up to each symbol, counted by the bytes
        # that start a char (1 for a lead byte, 0 for a continuation byte): a token from
        # symbol s to e covers chars[s + 1] - 1 to chars[e].
        chars = list(accumulate(word.encode("utf-8").translate(_LEAD_BYTES), initial=0))
        at = chars.__getitem__
        return tuple(map(sub, map(at, map(add, starts, repeat(1))), repeat(1))), tuple(map(at, ends))
    char_of_symbol = [index for index, char in enumerate(word) for _ in range(len(char.encode("utf-8")))]
    count = len(char_of_symbol)
    size = len(word)
    return (
        tuple([char_of_symbol[s] if s < count else size for s in starts]),
        tuple([(char_of_symbol[s] if s < count else size) if s == e else char_of_symbol[e - 1] + 1 for s, e in zip(starts, ends)]),
    )


# ---------------------------------------------------------------------- where a BPE model never merges
_DIGITS = frozenset("0123456789")


def plain_bpe_vocab(model: Any) -> dict[str, int] | None:
    """A BPE model's vocabulary when its words may be cut where it never merges (no dropout,
    ``ignore_merges``, subword prefix or suffix), else None."""
    tables = model.word_tables()
    if not isinstance(tables, BpeTables) or model.ignore_merges:
        return None
    if model.continuing_subword_prefix or model.end_of_word_suffix:
        return None
    return tables.vocab  # read only: a copy of 32k tokens is not free


def joined_tokens(vocab: dict[str, int]) -> str | None:
    """The tokens joined by NUL, for searches in C; None if a token holds a NUL."""
    joined = "\x00".join(vocab)
    return joined if joined.count("\x00") == len(vocab) - 1 else None


def model_splits_at(model: Any, char: str, joined: str | None = None) -> frozenset[str] | None:
    """Where a BPE model never joins across ``char`` when it follows another char: the chars
    it may be joined to (a token holds ``char`` right after them), or None when it may join it
    to anything (``char`` is no token, or follows an unk or byte token's ``>`` in one).
    ``joined``: :func:`joined_tokens` of its vocabulary, if made.

    >>> from tokviz import models
    >>> model_splits_at(models.BPE({"a": 0, "▁": 1, "▁▁a": 2}, []), "▁"), model_splits_at(models.BPE({"a": 0, "▁": 1, "▁a▁▁a": 2}, []), "▁")
    (frozenset(), frozenset({'a'}))
    >>> sorted(model_splits_at(models.BPE({"a": 0, "b": 1, "▁": 2, "▁▁▁a": 3, "b▁▁▁": 4, "▁▁": 5, "a▁b": 6}, []), "▁"))
    ['a', 'b']
    >>> model_splits_at(models.BPE({"a": 0, "▁": 1, "<0x0A>▁": 2}, [], byte_fallback=True), "▁") is None
    True
    >>> model_splits_at(models.BPE({"a": 0, "▁": 1, ">": 2, ">▁": 3, "<0x0A>": 4}, [], byte_fallback=True), "▁")
    frozenset({'>'})
    """
    vocab = plain_bpe_vocab(model)
    if vocab is None or char not in vocab:
        return None
    if joined is None:
        joined = joined_tokens(vocab)
    if joined is None:
        blocked = set()
        for token in vocab:
            position = token.find(char, 1)
            while position > 0:
                if token[position - 1] != char:
                    blocked.add(token[position - 1])
                position = token.find(char, position + 1)
    else:
        # In C: each ``char`` left after these two passes opens a run after another char.
        inner = joined.replace(char + char, char + "\x00").replace("\x00" + char, "\x00")
        if inner.startswith(char):
            inner = inner[1:]
        if char not in inner:
            return frozenset()
        # (find in a loop: Gemma's 262k tokens ~100 ms by a loop per token, ~24 ms by a regex)
        blocked = set()
        position = inner.find(char)
        while position > 0:
            blocked.add(inner[position - 1])
            position = inner.find(char, position + 1)
    if ">" in blocked:
        # A '>' ending an unk or byte token's text is not the char before the run: when no
        # token holds such a text before ``char``, the '>' is a '>' (Gemma's ">▁</") and only
        # blocks the runs after one.
        odd = "<0x[0-9A-F]{2}>" + ("" if not model.unk_token else "|" + re.escape(model.unk_token))
        search = re.compile(f"(?:{odd}){re.escape(char)}").search
        if search(joined) if joined is not None else any(map(search, vocab)):
            return None
    return frozenset(blocked)


def model_isolates(model: Any, char: str, joined: str | None = None) -> bool:
    """Whether a BPE model never joins ``char`` (one byte in UTF-8) to the chars around it:
    no token holds it with other chars, or (it is not a token) its byte-fallback token is in
    no merge. Then a word can be cut on both sides of it (a newline inside a Llama word).
    ``joined``: as for :func:`model_splits_at`.

    >>> from tokviz import models
    >>> model_isolates(models.BPE({"a": 0, "<0x0A>": 1}, [], byte_fallback=True), "\\n")
    True
    >>> model_isolates(models.BPE({"a": 0, "<0x0A>": 1, "<0x0A>a": 2}, [("<0x0A>", "a")], byte_fallback=True), "\\n")
    False
    """
    vocab = plain_bpe_vocab(model)
    if vocab is None:
        return False
    if char not in vocab:
        if not model.byte_fallback:
            return False  # an unk, which fuse_unk may join to unknown chars around it
        char = f"<0x{ord(char):02X}>"
        if len(char) != 6 or char not in vocab:
            return False
    if joined is None:
        joined = joined_tokens(vocab)
    return joined is not None and joined.count(char) == 1


def letter_runs(model: Any, mark: str, newline: str, joined: str | None = None) -> str | None:
    """A regex for a one-word BPE model's words (``mark``: the escaped word-start char;
    ``newline``: "\\n" when newlines are cut out) that also cuts between letters or digits
    and other chars, or None when a merged token holds both kinds side by side (Non-ASCII
    letters so joined, Llama's "².", count as other chars, and with them the ASCII digits).
    ``joined``: as for :func:`model_splits_at`.

    >>> from tokviz import models
    >>> vocab = {c: i for i, c in enumerate("ab,.▁")}
    >>> vocab.update({"ab": 5, ",.": 6, "▁a": 7})
    >>> print(letter_runs(models.BPE(vocab, [("a", "b"), (",", "."), ("▁", "a")]), "▁", ""))
    ▁*(?:[^\\W_]+|(?:[^\\w▁]|_)+)|▁+
    >>> letter_runs(models.BPE({**vocab, "b,": 8}, [("a", "b"), (",", "."), ("▁", "a"), ("b", ",")]), "▁", "") is None
    True
    """
    vocab = plain_bpe_vocab(model)
    tables = model.word_tables()
    if vocab is None or not tables.plain:
        return None
    if model.fuse_unk and not (model.byte_fallback and all(map(vocab.__contains__, BYTE_FALLBACK_TOKENS))):
        return None
    unk = model.unk_token
    if unk and joined is not None and "\x00" not in unk and not unk.replace("▁", "").isalnum():
        # The usual refusal (a Llama's merged "▁<unk>") found from the few tokens holding the
        # unk text, before listing every made token (1.6 -> 0.2 ms of such a load).
        position = joined.find(unk)
        while position >= 0:
            start, end = joined.rfind("\x00", 0, position) + 1, joined.find("\x00", position)
            token = joined[start:end if end >= 0 else len(joined)]
            if any(tables.merge_new_ids[rank] == vocab[token] for cut in range(1, len(token))
                   if (rank := tables.merge_map.get((vocab.get(token[:cut]), vocab.get(token[cut:])))) is not None):
                return None
            position = joined.find(unk, start + len(token))
    made = list(map(tables.vocab_r.__getitem__, set(tables.merge_new_ids)))
    # The refusals below first on all made tokens, in C (a token holding a NUL, "<0x" or an unk
    # text of other chars is a mixed one): 4.6 -> 1.8 ms of a Llama-type load that refuses.
    joined = "\x00".join(made)
    if joined.count("\x00") >= len(made) or "<0x" in joined or (unk and "\x00" not in unk and not unk.replace("▁", "").isalnum() and unk in joined):
        return None
    # Only the tokens with chars of both kinds may cross (Llama 2: 1,183 of 29,612 made).
    mixed_tokens = [token for token in made if not token.replace("▁", "").isalnum()]
    mixed = "\x00".join(mixed_tokens)
    if mixed_tokens and (mixed.count("\x00") >= len(mixed_tokens) or "<0x" in mixed or (model.unk_token and model.unk_token in mixed)):
        return None  # (a token holds a NUL, or a merge joins a byte token or the unk token)
    moved = ""  # non-ASCII letters or digits that count as other chars
    for _ in range(2):
        letters = f"[^\\W_{moved}]"
        others = f"(?:[^\\w{mark}{newline}]|[_{moved}])" if moved else f"(?:[^\\w{mark}{newline}]|_)"
        separated = others.replace("]|", "\\x00]|", 1)  # (not the NUL between the tokens)
        if re.search(f"[A-Za-z](?={separated})|(?<={separated})[A-Za-z]", mixed):
            return None  # (an ASCII letter crossing refuses, found at the first: Gemma's 39k mixed tokens 22 -> 3 ms)
        crossing = set(re.findall(f"{letters}(?={separated})|(?<={separated}){letters}", mixed))
        if not crossing:
            return f"{mark}*(?:{letters}+|{others}+)|{mark}+"
        if moved or not all(char in _DIGITS or not char.isascii() for char in crossing):
            return None
        if not crossing.isdisjoint(_DIGITS):
            crossing.update(_DIGITS)
        moved = re.escape("".join(sorted(crossing)))
    return None


def pieces_pattern(model: Any, mark: str, joins: frozenset[str], joined: str | None = None) -> str:
    """The regex of the pieces (tiling a word) a BPE model never merges across: before runs of
    ``mark`` but after ``joins`` (:func:`model_splits_at`), around newlines it isolates, and
    at :func:`letter_runs`' cuts.

    >>> from tokviz.models import BPE
    >>> pieces_pattern(BPE({"a": 0, "▁": 1, ",": 2, "▁a": 3, "a,": 4}, [("▁", "a"), ("a", ",")]), "▁", frozenset())
    '▁*[^▁]+|▁+'
    >>> print(pieces_pattern(BPE({"a": 0, ",": 1, ".": 2, "▁": 3, ",.": 4}, [(",", ".")]), "▁", frozenset()))
    ▁*(?:[^\\W_]+|(?:[^\\w▁]|_)+)|▁+
    """
    mark = re.escape(mark)
    newline = "\n" if model_isolates(model, "\n", joined) else ""
    joined_runs = f"(?:(?<=[{''.join(map(re.escape, sorted(joins)))}]){mark}+[^{mark}{newline}]*)*" if joins else ""
    runs = None if joins else letter_runs(model, mark, newline, joined)
    return (runs or f"{mark}*[^{mark}{newline}]+{joined_runs}|{mark}+") + ("|\n" if newline else "")


def word_pieces(model: Any) -> Any:
    """``word -> its pieces`` (:func:`pieces_pattern` with the '▁' mark) for a BPE model that
    never joins a run of '▁' to the char before it, or None: a long word (a Llama line, which
    no pre-tokenizer cuts) is then merged piece by piece, each piece once.

    >>> from tokviz.models import BPE
    >>> word_pieces(BPE({"a": 0, "b": 1, ",": 2, "▁": 3, "▁a": 4}, [("▁", "a")]))("▁ab▁a,")  # (letter runs too)
    ['▁ab', '▁a', ',']
    """
    vocab = plain_bpe_vocab(model)
    if vocab is None or "▁" not in vocab:
        return None
    joined = joined_tokens(vocab)
    joins = model_splits_at(model, "▁", joined)
    if joins is None:
        return None
    return re.compile(pieces_pattern(model, "▁", joins, joined)).findall
