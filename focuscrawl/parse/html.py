"""HTML -> :class:`~focuscrawl.types.Page` with selectolax: title, language, meta,
class names and ids, the visible text, and the links (:mod:`focuscrawl.parse.links`);
or, for the strategies that read nothing else, the links alone (a third of the cost).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import replace

from selectolax.lexbor import LexborHTMLParser as HTMLParser
from selectolax.lexbor import LexborNode as Node

from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.parse.guard import guard_html, needs_no_guard
from focuscrawl.parse.head import head_links
from focuscrawl.parse.links import (
    Found,
    drop_invisible,
    href_base,
    links_without_text,
    merge_links,
    words_and_links,
)
from focuscrawl.parse.manners import META_NAMES
from focuscrawl.types import FetchResult, Page
from focuscrawl.urls import normalize_url

_SPACES = re.compile(r"\s+")
_LANG_TAG = re.compile(r"[a-z0-9_-]{1,64}")  # what a lang attribute may hold (lowered)
# what a links-only parse reads besides the links (the robots meta tags: parse.manners)
_LINKS_PAGE_SELECTOR = "title, base[href], frame[src], link[rel], " + ", ".join(
    f"meta[name={name} i]" for name in META_NAMES
)


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


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

    ``links_only``: the page's title, language, links (URL, count, nofollow) and
    robots meta tags, the same as a full parse gives, but no HTML, text, anchors,
    contexts, other meta, class names or ids (left empty): for strategies that read nothing else (bfs,
    OPIC), at a third of the cost. :func:`page_from_fetch` parses a UTF-8 page
    for its links without decoding it where that gives the same tree.
    """
    html, _, cut_at = guard_html(html)  # hostile markup would stall the parser (see parse.guard)
    tree = HTMLParser(html)
    if links_only:
        page = _links_page(url, tree, max_links)
        page.markup_cut = cut_at is not None
        return page
    page = Page(url=url, html=html, lang=_lang(tree), markup_cut=cut_at is not None)
    title = tree.css_first("title")
    if title is not None:
        page.title = _clean(title.text())
    meta: dict[str, str] = {}
    link_nodes: list[Node] = []
    for node in tree.css("meta, link[rel]"):
        if node.tag == "link":
            link_nodes.append(node)
            continue
        key = node.attributes.get("name") or node.attributes.get("property") or node.attributes.get("http-equiv")
        content = node.attributes.get("content")
        if key and content is not None:
            meta.setdefault(key.strip().lower(), content.strip())
    page.meta = meta
    page.class_names, page.ids = class_names_and_ids(tree)

    base = href_base(tree.css_first("base[href]"), url)

    # frames live outside <body>: collect their targets before the invisible parts go
    frame_targets = [n.attributes.get("src") or "" for n in tree.css("frame[src]")]
    drop_invisible(tree)

    body = tree.body or tree.root
    words: list[str] = []
    found: Found = []
    if body is not None:
        words, found = words_and_links(body, base, html)
    page.text = " ".join(words)
    for src in frame_targets:
        target = normalize_url(src, base)
        if target is not None:
            found.append((target, len(words), len(words), "", False, ""))

    page.links = merge_links(found, words, context_words=context_words, max_links=max_links)
    if link_nodes:
        _add_head_links(page, link_nodes, base)
    return page


def _add_head_links(page: Page, nodes: list[Node], base: str) -> None:
    """The page's canonical URL, and its hreflang and feed alternates after its links
    (those it does not link to already). A feed it also links to from its body is
    marked as one where it is: else it is an ordinary link, its ``.xml`` refused by
    ``scope.deny_extensions``, and the feed is never read."""
    head = head_links(nodes, base)
    page.canonical = head.canonical
    if head.links:
        known = {link.url: i for i, link in enumerate(page.links)}
        for link in head.links:
            at = known.get(link.url)
            if at is None:
                known[link.url] = len(page.links)
                page.links.append(link)
            elif link.hreflang == "feed" and not page.links[at].hreflang:
                page.links[at] = replace(page.links[at], hreflang="feed")


def _lang(tree: HTMLParser) -> str:
    """The ``lang`` of the document element, always <html> (what css_first("html")
    finds first; no selector pass); "" when it is no language tag (letters, digits,
    ``-`` and the common ``_``, at most 64 characters: a hostile page's 100 KB ``lang``
    went into pages.jsonl whole, and the language evidence read it as the page's)."""
    root = tree.root
    if root is None:
        return ""
    lang = (root.attributes.get("lang") or root.attributes.get("xml:lang") or "").strip().lower()
    return lang if _LANG_TAG.fullmatch(lang) else ""


def _links_page(url: str, tree: HTMLParser, max_links: int) -> Page:
    """The page of a links-only parse (see :func:`parse_html`), ``html`` left empty."""
    page = Page(url=url, lang=_lang(tree))
    # the first title, the first base[href], the frames and the robots meta tags, in one
    # selector pass (each css() walks the whole tree: ~7-14 us a page)
    title = base_node = None
    frame_srcs: list[str] = []
    link_nodes: list[Node] = []
    for node in tree.css(_LINKS_PAGE_SELECTOR):
        tag = node.tag
        if tag == "title":
            if title is None:
                title = node
        elif tag == "base":
            if base_node is None:
                base_node = node
        elif tag == "link":
            link_nodes.append(node)
        elif tag == "meta":
            name, content = node.attributes.get("name"), node.attributes.get("content")
            if name and content is not None:
                page.meta.setdefault(name.strip().lower(), content.strip())
        else:
            frame_srcs.append(node.attributes.get("src") or "")
    if title is not None:
        page.title = _clean(title.text())
    base = href_base(base_node, url)
    page.links = links_without_text(tree, base, frame_srcs, max_links)
    if link_nodes:
        _add_head_links(page, link_nodes, base)
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
    >>> _utf8_as_is(("<div>" * 300).encode(), True), _utf8_as_is(b"", True)  # the guard cuts
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
