"""Duplicate and near-duplicate pages: mirrors, printer-friendly copies, session-ID
variants, syndicated articles (issue 37 item 3).

A page's fingerprint is taken over its normalised visible text (lower-cased,
whitespace collapsed): an exact digest (64 bits of XXH3) and a MinHash sketch of its
word 3-shingles. The sketch is one-permutation MinHash (Li, Owen and Zhang 2012): each
shingle hashed once, the hash space cut into 32 bins, a bin's value the 16 bits below
the bin's in its smallest hash (b-bit minwise hashing, Li and König 2010), so 64 bytes
a page. Two pages are duplicates when their digests are equal, near-duplicates when
their sketches agree on at least ``similarity`` of the bins either fills (an estimate
of the Jaccard similarity of their shingle sets; 0.8 by default).

The index is LSH over the sketch (as ACHE's and datasketch's): 8 bands of 4 bins, a
band's value folded to 16 bits; only pages sharing a band value are compared (a page
with Jaccard 0.8 to an indexed one shares a band with probability 0.98, 0.5: 0.40).
Its memory is bounded: 65,536 buckets a band at most, the sketches in one numpy array,
digests and slots in ``array`` columns (about 110 bytes a page) and the pages' URLs;
past ``max_pages`` pages new pages are still checked but no longer added.

Pages with fewer than ``min_words`` words are never judged (error pages and script
shells would all be duplicates of each other).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np
import xxhash

_M1 = np.uint64(0xBF58476D1CE4E5B9)  # splitmix64's finaliser constants
_M2 = np.uint64(0x94D049BB133111EB)
BINS = 32  # one-permutation MinHash bins (5 bits of a shingle's hash)
BANDS, ROWS = 8, 4  # LSH: BANDS x ROWS = BINS
_EMPTY = 0xFFFF_FFFF  # a bin no shingle fell into (above any 16-bit value)
_EDGES = np.arange(BINS, dtype=np.uint64) << np.uint64(64 - 5)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on every element (a well-spread 64-bit hash)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    out: np.ndarray = x ^ (x >> np.uint64(31))
    return out


def normalised_text(text: str) -> str:
    """The text a fingerprint is taken over: lower-cased, whitespace collapsed (the
    parser's visible text is already collapsed: only then is it left as it is).

    >>> normalised_text("  Hello\\n  World "), normalised_text("a b")
    ('hello world', 'a b')
    """
    text = text.lower()
    if "  " in text or "\n" in text or "\t" in text or text[:1] == " " or text[-1:] == " ":
        return " ".join(text.split())
    return text


def _shingles(data: bytes) -> np.ndarray:
    """Hashes of the word 3-shingles of ``data`` (normalised text): the 8 bytes from each
    word's start (into the next words for a short one) as one integer, three
    consecutive words' joined and mixed."""
    n = len(data)
    buf = np.frombuffer(data + bytes(8), dtype=np.uint8)
    # every 8-byte window as one little-endian uint64, without a copy (stride 1 byte)
    windows = np.ndarray((n,), dtype="<u8", buffer=buf, strides=(1,))
    words = windows[np.concatenate(([0], np.flatnonzero(buf[:n] == 32) + 1))]
    if len(words) >= 3:
        words = words[:-2] ^ (words[1:-1] * _M1) ^ (words[2:] * _M2)
    return _mix(words)


def sketch(shingles: np.ndarray) -> np.ndarray:
    """The one-permutation MinHash of a set of 64-bit hashes: per bin (the top 5 bits),
    the next 16 bits of its smallest hash, or ``_EMPTY``.

    >>> a = _shingles(b"the quick brown fox jumps over the lazy dog again and again and again")
    >>> b = _shingles(b"the quick brown fox jumps over the lazy cat again and again and again")
    >>> int((sketch(a) == sketch(b)).sum()) > int((sketch(a) == sketch(a * _M1)).sum())
    True
    """
    ordered = np.sort(shingles)
    first = np.searchsorted(ordered, _EDGES)
    found = first < len(ordered)
    first[~found] = 0
    lows = ordered[first]
    found &= (lows >> np.uint64(64 - 5)) == np.arange(BINS, dtype=np.uint64)
    values = ((lows >> np.uint64(64 - 5 - 16)) & np.uint64(0xFFFF)).astype(np.uint32)
    values[~found] = _EMPTY
    return values


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The share of the bins either sketch fills on which they agree (Jaccard's estimate).

    >>> similarity(np.array([1, 2, _EMPTY, _EMPTY]), np.array([1, 3, 4, _EMPTY]))
    0.3333333333333333
    """
    filled = int(np.count_nonzero((a != _EMPTY) | (b != _EMPTY)))
    return int(np.count_nonzero((a == b) & (a != _EMPTY))) / filled if filled else 1.0


@dataclass(frozen=True, slots=True)
class Fingerprint:
    digest: int  # XXH3 of the normalised text: exact duplicates
    sketch: np.ndarray  # BINS uint32 (16-bit values or _EMPTY): near-duplicates
    words: int


def fingerprint(text: str) -> Fingerprint:
    """The fingerprint of a page's visible text.

    >>> f = fingerprint("A  b C"); f.words, f.digest == fingerprint("a b c").digest
    (3, True)
    """
    norm = normalised_text(text)
    data = norm.encode("utf-8", "replace")
    if not data:
        return Fingerprint(xxhash.xxh3_64_intdigest(b""), np.full(BINS, _EMPTY, dtype=np.uint32), 0)
    return Fingerprint(xxhash.xxh3_64_intdigest(data), sketch(_shingles(data)), norm.count(" ") + 1)


def band_keys(values: np.ndarray) -> list[int]:
    """The 16-bit LSH key of each band of a sketch (a tuple of ints hashes the same in
    every process: no hash seed).

    >>> band_keys(np.arange(BINS)) == band_keys(np.arange(BINS)), len(band_keys(np.arange(BINS)))
    (True, 8)
    """
    v = values.tolist()
    return [hash(tuple(v[i : i + ROWS])) & 0xFFFF for i in range(0, BINS, ROWS)]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """What a page duplicates: the first page seen with that content."""

    of: str
    exact: bool
    similarity: float  # the sketches' agreement (1.0 for an exact duplicate)


class DuplicateIndex:
    """The fingerprints of the pages seen, searched for a new page's (near-)duplicate."""

    def __init__(self, *, similarity: float = 0.8, min_words: int = 20, max_pages: int = 1_000_000) -> None:
        if not 0.0 < similarity <= 1.0:
            raise ValueError(f"duplicate similarity {similarity} is not in (0, 1]")
        self.similarity = similarity
        self.min_words = min_words
        self.max_pages = max_pages
        self._sketches = np.empty((1024, BINS), dtype=np.uint16)  # grown by doubling
        self._digests = array("Q")
        self._urls: list[str] = []
        # band b's key -> the slots of the pages that have it
        self._buckets: list[dict[int, array[int]]] = [{} for _ in range(BANDS)]

    def __len__(self) -> int:
        return len(self._urls)

    def find(self, fp: Fingerprint) -> tuple[Duplicate | None, list[int]]:
        """The page ``fp`` duplicates (an exact one first) or None, and ``fp``'s band keys."""
        keys = band_keys(fp.sketch)
        if fp.words < self.min_words:
            return None, keys
        slots: set[int] = set()
        for band, key in enumerate(keys):
            bucket = self._buckets[band].get(key)
            if bucket is not None:
                slots.update(bucket)
        if not slots:
            return None, keys
        candidates = np.fromiter(sorted(slots), dtype=np.int64, count=len(slots))
        exact = np.flatnonzero(np.frombuffer(self._digests, dtype=np.uint64)[candidates] == np.uint64(fp.digest))
        if len(exact):
            return Duplicate(self._urls[int(candidates[exact[0]])], True, 1.0), keys
        stored = self._sketches[candidates].astype(np.uint32)
        stored[stored == 0xFFFF] = _EMPTY  # a 16-bit value of 0xFFFF reads as empty: rare, harmless
        query = np.where(fp.sketch == 0xFFFF, _EMPTY, fp.sketch)
        filled = np.count_nonzero((stored != _EMPTY) | (query != _EMPTY), axis=1)
        same = np.count_nonzero((stored == query) & (query != _EMPTY), axis=1)
        shares = same / np.maximum(filled, 1)
        best = int(np.argmax(shares))  # the first slot among the most similar
        if shares[best] < self.similarity:
            return None, keys
        return Duplicate(self._urls[int(candidates[best])], False, round(float(shares[best]), 4)), keys

    def add(self, url: str, fp: Fingerprint, keys: list[int]) -> bool:
        """Remember a page that duplicates none (False: too short, or the index is full)."""
        if fp.words < self.min_words or len(self._urls) >= self.max_pages:
            return False
        slot = len(self._urls)
        if slot == len(self._sketches):
            grown = np.empty((2 * slot, BINS), dtype=np.uint16)
            grown[:slot] = self._sketches
            self._sketches = grown
        self._sketches[slot] = np.minimum(fp.sketch, 0xFFFF)
        self._urls.append(url)
        self._digests.append(fp.digest)
        for band, key in enumerate(keys):
            bucket = self._buckets[band].get(key)
            if bucket is None:
                bucket = self._buckets[band][key] = array("I")
            bucket.append(slot)
        return True

    def check(self, url: str, text: str) -> Duplicate | None:
        """The page ``url`` with visible ``text``: what it duplicates, or None (then remembered)."""
        fp = fingerprint(text)
        found, keys = self.find(fp)
        if found is None:
            self.add(url, fp, keys)
        return found
