"""A page's links: their targets (normalised once per page, absolute ones across
pages), the visible words with each link's position among them, the context window of
T words around a link (anchor included, P1), and the links-only list.

One pass over the DOM in document order gives the visible words and, for each
link, the position of its anchor words among them, so that the context window
of a link is a slice of that word list.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from selectolax.lexbor import LexborHTMLParser as HTMLParser
from selectolax.lexbor import LexborNode as Node

from focuscrawl.parse.manners import unfollowed_rel
from focuscrawl.types import Link
from focuscrawl.urls import normalize_url

_INVISIBLE = "script, style, noscript, template, svg, head"
_LINK_TAGS = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}


# Placed as a text node before each link, it splits the body text at the links. The
# HTML parser never leaves U+0000 in text (it drops it or writes U+FFFD), so the
# text holds exactly the marks placed; this is still checked.
_MARK = "\x00"
_LINK_SELECTOR = "a[href], area[href], iframe[src]"
# Link elements read per page, in document order: the work per page stays bounded
# (a 5 MB body holds ~400,000 '<a href=x>'); far more than any real page has.
MAX_LINK_ELEMENTS = 20_000
_CAN_MARK = hasattr(Node, "insert_before")  # selectolax builds without it walk the tree
Found = list[tuple[str, int, int, str, bool, str]]  # url, start, end, anchor, nofollow, hreflang


def drop_invisible(tree: HTMLParser) -> None:
    """Remove what a reader does not see (scripts, styles, templates, svg, the head):
    links and words there are none."""
    for node in tree.css(_INVISIBLE):
        node.decompose()


# An absolute href normalises the same on every page: pages of a site repeat their
# menus and cross-links, so the normalised form is kept across pages (bounded).
_absolute_target = lru_cache(maxsize=1 << 15)(normalize_url)


def _target(href: str, base: str) -> str | None:
    """``normalize_url(href, base)``, from the cross-page cache for absolute hrefs."""
    if href.startswith(("http://", "https://")):
        return _absolute_target(href)
    return normalize_url(href, base)


def _page_target(href: str, base: str, targets: dict[str, str | None]) -> str | None:
    """:func:`_target` of ``href``, once per page: ``targets`` holds the page's hrefs
    already normalised (menus repeat them)."""
    if href in targets:
        return targets[href]
    target = targets[href] = _target(href, base)
    return target


def _link(node: Node, base: str, targets: dict[str, str | None]) -> tuple[str, str, int, bool, str] | None:
    """(target, anchor, anchor words, nofollow, hreflang) of a link element, None if it
    has no http(s) target; ``hreflang`` the language ``<a hreflang>`` names, lower-cased.

    ``targets`` caches the normalised targets of the page's hrefs (menus repeat them).
    """
    tag = node.tag or ""
    attrs = node.attributes
    href = attrs.get(_LINK_TAGS[tag])
    if not href:
        return None
    target = _page_target(href, base, targets)
    if target is None:
        return None
    anchor = " ".join(node.text(deep=True).split()) or (attrs.get("alt") or "").strip()
    n_words = len(anchor.split()) if tag == "a" else 0
    rel = attrs.get("rel")
    hreflang = (attrs.get("hreflang") or "").strip().lower() if tag == "a" else ""
    return target, anchor, n_words, bool(rel) and unfollowed_rel(rel or ""), hreflang


def _marked_words_and_links(body: Node, base: str) -> tuple[list[str], Found] | None:
    """The visible words and the links with their word positions, from one ``text()`` call.

    Each kept link gets a mark before it; the number of words before the i-th
    mark is the i-th link's position. Same result as :func:`_walk_words_and_links`
    (a text node per separator-joined chunk), at a fraction of the cost of
    walking every node from Python. None if the marks cannot be trusted.
    """
    links: list[tuple[Node, tuple[str, str, int, bool, str]]] = []
    targets: dict[str, str | None] = {}
    # frames are collected before, with the head
    for node in itertools.islice(body.css(_LINK_SELECTOR), MAX_LINK_ELEMENTS):
        link = _link(node, base, targets)
        if link is not None:
            links.append((node, link))
    for node, _ in links:  # after all anchors are read: a mark may fall inside an outer link
        node.insert_before(_MARK)
    segments = (body.text(deep=True, separator=" ") or "").split(_MARK)
    if len(segments) != len(links) + 1:
        return None
    words: list[str] = segments[0].split()
    found: Found = []
    for (_, (target, anchor, n_words, nofollow, hreflang)), segment in zip(links, segments[1:], strict=True):
        found.append((target, len(words), len(words) + n_words, anchor, nofollow, hreflang))
        words.extend(segment.split())
    return words, found


def _walk_words_and_links(body: Node | None, base: str) -> tuple[list[str], Found]:
    """The visible words and the links with their word positions, node by node."""
    words: list[str] = []
    found: Found = []
    if body is None:
        return words, found
    targets: dict[str, str | None] = {}
    elements = 0
    for node in body.traverse(include_text=True):
        tag = node.tag
        if tag == "-text":
            words.extend((node.text_content or "").split())
        elif tag in _LINK_TAGS and tag != "frame" and elements < MAX_LINK_ELEMENTS:
            elements += 1
            link = _link(node, base, targets)
            if link is not None:
                target, anchor, n_words, nofollow, hreflang = link
                found.append((target, len(words), len(words) + n_words, anchor, nofollow, hreflang))
    return words, found


def words_and_links(body: Node, base: str, html: str) -> tuple[list[str], Found]:
    """The visible words of ``body`` (a tree without its invisible parts) and its links
    with their word positions: (target, start, end, anchor, nofollow, hreflang), in document order
    (frames excepted: they are outside ``body``). ``html`` is parsed afresh where the
    quick way's marks cannot be trusted."""
    marked = _marked_words_and_links(body, base) if _CAN_MARK else None
    if marked is None:  # the marks cannot be trusted: walk a fresh tree instead
        fresh = HTMLParser(html)
        drop_invisible(fresh)
        marked = _walk_words_and_links(fresh.body or fresh.root, base)
    return marked


def merge_links(found: Found, words: list[str], *, context_words: int, max_links: int) -> list[Link]:
    """One :class:`Link` per target of ``found``, in document order: ``count`` its
    occurrences, anchor and context (``context_words`` words around the anchor in
    ``words``) and ``hreflang`` those of the first; ``max_links`` (0 = all) keeps the first targets."""
    links: dict[str, Link] = {}
    for target, start, end, anchor, nofollow, hreflang in found:
        known = links.get(target)
        if known is not None:
            links[target] = Link(known.url, known.anchor, known.context, known.count + 1, known.nofollow,
                                 known.hreflang)  # fmt: skip
            continue
        if max_links and len(links) >= max_links:
            continue
        context = context_window(words, start, min(end, len(words)), context_words) if words else anchor
        links[target] = Link(target, anchor, context, 1, nofollow, hreflang)
    return list(links.values())


def context_window(words: list[str], start: int, end: int, window: int) -> str:
    """The ``window`` words around ``words[start:end]`` (the anchor), anchor included.

    The words left over after the anchor are shared evenly between both sides;
    a side that runs out of words gives its share to the other.

    >>> w = "a b c d e f g h i j".split()
    >>> context_window(w, 4, 5, 5)
    'c d e f g'
    >>> context_window(w, 0, 1, 4)
    'a b c d'
    >>> context_window(w, 9, 10, 3)
    'h i j'
    """
    anchor_len = end - start
    if anchor_len >= window:
        return " ".join(words[start : start + window])
    rest = window - anchor_len
    left = rest // 2
    right = rest - left
    if start - left < 0:
        right += left - start
        left = start
    if end + right > len(words):
        extra = end + right - len(words)
        right = len(words) - end
        left = min(start, left + extra)
    return " ".join(words[start - left : end + right])


def href_base(base_node: Node | None, url: str) -> str:
    """The URL relative links resolve against: ``<base href>`` (its node), else ``url``."""
    if base_node is None:
        return url
    return normalize_url(base_node.attributes.get("href") or "", url) or url


def links_without_text(tree: HTMLParser, base: str, frame_srcs: list[str], max_links: int) -> list[Link]:
    """The links a full parse finds, in its order, with URL, count and nofollow only
    (``base``: see :func:`href_base`; ``frame_srcs``: the frames' src, read before
    the invisible parts go)."""
    frame_targets = frame_srcs
    drop_invisible(tree)  # links in scripts, templates, svg... are not links (as in a full parse)
    body = tree.body or tree.root
    found: list[tuple[str, bool]] = []
    if body is not None:
        targets: dict[str, str | None] = {}
        for node in itertools.islice(body.css(_LINK_SELECTOR), MAX_LINK_ELEMENTS):
            attrs = node.attributes
            href = attrs.get(_LINK_TAGS[node.tag or ""])
            if not href:
                continue
            # _page_target inlined (some 30 links a page)
            if href in targets:
                target = targets[href]
            elif href.startswith(("http://", "https://")):
                target = targets[href] = _absolute_target(href)
            else:
                target = targets[href] = normalize_url(href, base)
            if target is not None:
                rel = attrs.get("rel")
                found.append((target, bool(rel) and unfollowed_rel(rel or "")))
    for src in frame_targets:
        target = normalize_url(src, base)
        if target is not None:
            found.append((target, False))
    counts: dict[str, int] = {}
    nofollow: dict[str, bool] = {}
    for target, nf in found:
        if target in counts:
            counts[target] += 1
        elif not max_links or len(counts) < max_links:
            counts[target] = 1
            nofollow[target] = nf
    links: list[Link] = []
    plain = _PLAIN_LINKS
    for target, n in counts.items():
        if n == 1 and not nofollow[target]:
            link = plain.get(target)
            if link is None:
                if len(plain) >= _PLAIN_LINKS_MAX:
                    plain.clear()
                link = plain[target] = Link(target)
            links.append(link)
        else:
            links.append(Link(target, count=n, nofollow=nofollow[target]))
    return links


# A links-only Link is its URL when it occurs once and is followed: such Links
# (immutable) are shared between the pages that link to the same URL, instead of
# built again (a frozen dataclass: ~1 us each, some 30 per page). Bounded.
_PLAIN_LINKS: dict[str, Link] = {}
_PLAIN_LINKS_MAX = 1 << 15
