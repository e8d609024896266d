"""HTML -> :class:`~focuscrawl.types.Page` with selectolax.

One pass over the DOM in document order gives the visible words and, for each
link, the position of its anchor words among them, so that the context window
of T words around a link (anchor included, P1) is a slice of that word list.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterable
from functools import lru_cache

from selectolax.lexbor import LexborHTMLParser as HTMLParser
from selectolax.lexbor import LexborNode as Node

from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.parse.guard import guard_html, needs_no_guard
from focuscrawl.types import FetchResult, Link, Page
from focuscrawl.urls import normalize_url

_INVISIBLE = "script, style, noscript, template, svg, head"
_LINK_TAGS = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
_SPACES = re.compile(r"\s+")


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _context(words: list[str], start: int, end: int, window: int) -> str:
    """The ``window`` words around ``words[start:end]`` (the anchor), anchor included.

    The words left over after the anchor are shared evenly between both sides;
    a side that runs out of words gives its share to the other.

    >>> w = "a b c d e f g h i j".split()
    >>> _context(w, 4, 5, 5)
    'c d e f g'
    >>> _context(w, 0, 1, 4)
    'a b c d'
    >>> _context(w, 9, 10, 3)
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


def _class_tokens(nodes: Iterable[Node], attr: str) -> frozenset[str]:
    out: set[str] = set()
    for node in nodes:
        value = node.attributes.get(attr)
        if value:
            out.update(value.split() if attr == "class" else [value.strip()])
    out.discard("")
    return frozenset(out)


def class_names_and_ids(tree: HTMLParser) -> tuple[frozenset[str], frozenset[str]]:
    """All class tokens and ids of a parsed document (``Page.class_names`` / ``ids``)."""
    return _class_tokens(tree.css("[class]"), "class"), _class_tokens(tree.css("[id]"), "id")


# Placed as a text node before each link, it splits the body text at the links. The
# HTML parser never leaves U+0000 in text (it drops it or writes U+FFFD), so the
# text holds exactly the marks placed; this is still checked.
_MARK = "\x00"
_LINK_SELECTOR = "a[href], area[href], iframe[src]"
# Link elements read per page, in document order: the work per page stays bounded
# (a 5 MB body holds ~400,000 '<a href=x>'); far more than any real page has.
MAX_LINK_ELEMENTS = 20_000
_CAN_MARK = hasattr(Node, "insert_before")  # selectolax builds without it walk the tree
_Found = list[tuple[str, int, int, str, bool]]  # url, start, end, anchor, nofollow


def _drop_invisible(tree: HTMLParser) -> None:
    for node in tree.css(_INVISIBLE):
        node.decompose()


def _visible_tree(html: str) -> HTMLParser:
    tree = HTMLParser(html)
    _drop_invisible(tree)
    return tree


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


def _link(node: Node, base: str, targets: dict[str, str | None]) -> tuple[str, str, int, bool] | None:
    """(target, anchor, anchor words, nofollow) of a link element, None if it has no http(s) target.

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
    return target, anchor, n_words, "nofollow" in (attrs.get("rel") or "").lower()


def _marked_words_and_links(body: Node, base: str) -> tuple[list[str], _Found] | None:
    """The visible words and the links with their word positions, from one ``text()`` call.

    Each kept link gets a mark before it; the number of words before the i-th
    mark is the i-th link's position. Same result as ``_walk_words_and_links``
    (a text node per separator-joined chunk), at a fraction of the cost of
    walking every node from Python. None if the marks cannot be trusted.
    """
    links: list[tuple[Node, tuple[str, str, int, bool]]] = []
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
    found: _Found = []
    for (_, (target, anchor, n_words, nofollow)), segment in zip(links, segments[1:], strict=True):
        found.append((target, len(words), len(words) + n_words, anchor, nofollow))
        words.extend(segment.split())
    return words, found


def _walk_words_and_links(body: Node | None, base: str) -> tuple[list[str], _Found]:
    """The visible words and the links with their word positions, node by node."""
    words: list[str] = []
    found: _Found = []
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
                target, anchor, n_words, nofollow = link
                found.append((target, len(words), len(words) + n_words, anchor, nofollow))
    return words, found


def parse_html(
    url: str,
    html: str,
    *,
    context_words: int = 20,
    max_links: int = 0,
    links_only: bool = False,
) -> Page:
    """Parse decoded HTML of the page at ``url`` (a normalised URL).

    Links are resolved against ``<base href>`` (or ``url``), normalised, and merged
    per target: ``Link.count`` is the number of occurrences, anchor and context
    are those of the first occurrence. ``max_links`` (0 = all) keeps the first
    distinct targets in document order.

    ``links_only``: the page's title, language and links (URL, count, nofollow),
    the same as a full parse gives, but no HTML, text, anchors, contexts, meta,
    class names or ids (left empty): for strategies that read nothing else (bfs,
    OPIC), at a third of the cost. :func:`page_from_fetch` parses a UTF-8 page
    for its links without decoding it where that gives the same tree.
    """
    html = guard_html(html).html  # hostile markup would stall the parser (see parse.guard)
    tree = HTMLParser(html)
    if links_only:
        return _links_page(url, tree, max_links)
    page = Page(url=url, html=html, lang=_lang(tree))
    title = tree.css_first("title")
    if title is not None:
        page.title = _clean(title.text())
    meta: dict[str, str] = {}
    for node in tree.css("meta"):
        key = node.attributes.get("name") or node.attributes.get("property") or node.attributes.get("http-equiv")
        content = node.attributes.get("content")
        if key and content is not None:
            meta.setdefault(key.strip().lower(), content.strip())
    page.meta = meta
    page.class_names, page.ids = class_names_and_ids(tree)

    base = _base_url(tree, url)

    # frames live outside <body>: collect their targets before the invisible parts go
    frame_targets = [n.attributes.get("src") or "" for n in tree.css("frame[src]")]
    _drop_invisible(tree)

    body = tree.body or tree.root
    words: list[str] = []
    found: _Found = []
    if body is not None:
        marked = _marked_words_and_links(body, base) if _CAN_MARK else None
        if marked is None:  # the marks cannot be trusted: walk a fresh tree instead
            fresh = _visible_tree(html)
            marked = _walk_words_and_links(fresh.body or fresh.root, base)
        words, found = marked
    page.text = " ".join(words)
    for src in frame_targets:
        target = normalize_url(src, base)
        if target is not None:
            found.append((target, len(words), len(words), "", False))

    links: dict[str, Link] = {}
    for target, start, end, anchor, nofollow in found:
        known = links.get(target)
        if known is not None:
            links[target] = Link(known.url, known.anchor, known.context, known.count + 1, known.nofollow)
            continue
        if max_links and len(links) >= max_links:
            continue
        context = _context(words, start, min(end, len(words)), context_words) if words else anchor
        links[target] = Link(target, anchor, context, 1, nofollow)
    page.links = list(links.values())
    return page


def _lang(tree: HTMLParser) -> str:
    """The ``lang`` of the document element, always <html> (what css_first("html")
    finds first; no selector pass)."""
    root = tree.root
    if root is None:
        return ""
    return (root.attributes.get("lang") or root.attributes.get("xml:lang") or "").strip().lower()


def _links_page(url: str, tree: HTMLParser, max_links: int) -> Page:
    """The page of a links-only parse (see :func:`parse_html`), ``html`` left empty."""
    page = Page(url=url, lang=_lang(tree))
    # the first title, the first base[href] and the frames, in one selector pass
    # (each css() walks the whole tree: ~7-14 us a page)
    title = base_node = None
    frame_srcs: list[str] = []
    for node in tree.css("title, base[href], frame[src]"):
        tag = node.tag
        if tag == "title":
            if title is None:
                title = node
        elif tag == "base":
            if base_node is None:
                base_node = node
        else:
            frame_srcs.append(node.attributes.get("src") or "")
    if title is not None:
        page.title = _clean(title.text())
    page.links = _links_only(tree, _href_base(base_node, url), frame_srcs, max_links)
    return page


def _utf8_as_is(body: bytes, checked: bool) -> bytes | None:
    """``body``, a UTF-8 page, as the parser may take it without decoding: bytes
    that give the tree its decoded and guarded text gives; None where they might not.

    selectolax parses bytes as UTF-8 and would encode a ``str`` back to UTF-8 first,
    so a links-only parse of the bytes saves the decoding and that encoding (~25 us
    of a 20 KB page, a sixth of the parse). They give the same tree where the bytes
    are valid UTF-8 (``checked``: the charset's detection found them so) without a
    byte-order mark (decoding drops it) or a sequence cut at the end (decoding makes
    it U+FFFD), and where the nesting guard would leave the text as it is.

    >>> _utf8_as_is("<p>café</p>".encode(), False), _utf8_as_is(b"\\xef\\xbb\\xbf<p>x</p>", True)
    (b'<p>caf\\xc3\\xa9</p>', b'<p>x</p>')
    >>> _utf8_as_is(b"<p>caf\\xe9</p>", False), _utf8_as_is("<p>café".encode(), True)
    (None, None)
    """
    if body.startswith(codecs.BOM_UTF8):
        body = body[len(codecs.BOM_UTF8) :]
    if not body or body[-1] >= 0x80:
        return None
    if not (checked or body.isascii()):
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return body if needs_no_guard(body) else None


def _base_url(tree: HTMLParser, url: str) -> str:
    return _href_base(tree.css_first("base[href]"), url)


def _href_base(base_node: Node | None, url: str) -> str:
    """The URL relative links resolve against: ``<base href>`` (its node), else ``url``."""
    if base_node is None:
        return url
    return normalize_url(base_node.attributes.get("href") or "", url) or url


def _links_only(tree: HTMLParser, base: str, frame_srcs: list[str], max_links: int) -> list[Link]:
    """The links a full parse finds, in its order, with URL, count and nofollow only
    (``base``: see :func:`_href_base`; ``frame_srcs``: the frames' src, read before
    the invisible parts go)."""
    frame_targets = frame_srcs
    _drop_invisible(tree)  # links in scripts, templates, svg... are not links (as in a full parse)
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
                found.append((target, "nofollow" in (attrs.get("rel") or "").lower()))
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


def page_from_fetch(
    result: FetchResult,
    *,
    context_words: int = 20,
    max_links: int = 0,
    links_only: bool = False,
) -> Page:
    """Decode and parse a fetched HTML response into a Page (status, headers kept)."""
    charset = result.charset or detect_charset(result.content_type, result.body)
    raw = _utf8_as_is(result.body, result.utf8_checked) if links_only and charset == "utf-8" else None
    if raw is not None:  # the links of the bytes as they are: the same as of the decoded text
        page = _links_page(result.final_url, HTMLParser(raw), max_links)
    else:
        html = decode_html(result.body, charset)
        page = parse_html(
            result.final_url, html, context_words=context_words, max_links=max_links, links_only=links_only
        )
    page.status = result.status
    page.content_type = result.content_type
    page.charset = charset
    page.headers = result.headers
    page.body = result.body
    return page


def page_from_bytes(
    url: str,
    body: bytes,
    content_type: str = "text/html",
    *,
    context_words: int = 20,
) -> Page:
    """Parse archived bytes (e.g. a WARC record) the same way the crawler does."""
    charset = detect_charset(content_type, body)
    page = parse_html(url, decode_html(body, charset), context_words=context_words)
    page.content_type = content_type
    page.charset = charset
    page.body = body
    return page
