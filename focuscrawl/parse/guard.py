"""A bound on the nesting depth of HTML, applied before the HTML parser sees it.

HTML tree construction is quadratic in the nesting depth: many start tags (div,
ul, dl, section, form...) search the stack of open elements for a ``p`` in scope,
stray end tags search it for their element, and misnested formatting tags run
the adoption agency over it. Lexbor needs 3 s for 20,000 nested ``<div>`` and
25 s for 10,000 rounds of ``<em>``x10 ``<div>`` ``</em>``x10 (see
``benchmarks/bench_parse_guard.py``). Browsers cap the depth of the tree they
build (Blink at 512); here tags that would open an element deeper than
:data:`MAX_DEPTH` are cut out of the text, with their end tags and stray end
tags, before parsing. Text and links are kept: ``<a>``, raw-text elements and
elements that do not nest (void elements, ``p``, ``li``, ``td``...) are never
cut, and neither are comments or script, style and similar contents, which are
skipped whole.

The depth is counted from the tags alone (start +1, end -1, never below 0), a
bound from above on what the parser builds for pages whose block elements are
closed; on the pages of the test webs it never reaches the cap, and such pages
are returned unchanged.
"""

from __future__ import annotations

import re
import string
from typing import AnyStr, NamedTuple

import numpy as np

__all__ = ["MAX_DEPTH", "MAX_TAGS", "Guarded", "bound_nesting", "guard_html", "needs_no_guard"]

MAX_DEPTH = 256
# Markup read per page: the text is cut before its 100,001st '<'. Large real pages
# (long Wikipedia articles, big listings) have 20,000-50,000 tags; a 5 MB body of
# tags has over a million, which even a linear pass takes seconds over.
MAX_TAGS = 100_000


class Guarded(NamedTuple):
    html: str
    cut_tags: int  # start and end tags cut for nesting too deep
    truncated_at: int | None  # the offset the text was cut at for having too many tags


def guard_html(html: str, max_depth: int = MAX_DEPTH, max_tags: int = MAX_TAGS) -> Guarded:
    """``html`` bounded for the parser: at most ``max_tags`` tags, nested at most ``max_depth`` deep.

    >>> guard_html("<b>1</b><b>2</b><b>3</b>", max_tags=3)
    Guarded(html='<b>1</b><b>2', cut_tags=0, truncated_at=12)
    """
    truncated_at = None
    tags = html.count("<")
    if tags > max_tags:
        # the end of the max_tags-th '<' and what follows up to the next '<', found in C
        match = re.match(rf"(?:[^<]*<){{{max_tags}}}[^<]*", html)
        if match is not None:  # always, given the count
            truncated_at = match.end()
            html = html[:truncated_at]
            tags = max_tags
    html, cut = bound_nesting(html, max_depth, tags)
    return Guarded(html, cut, truncated_at)

# One token of the text: a comment or a raw-text element (script, style...) skipped
# whole, or a start or end tag. Groups: the whole token, "/" of an end tag, the name.
_TOKEN = re.compile(
    r"(<!--.*?(?:-->|\Z)"
    r"|<(?:script|style|textarea|title|xmp|noembed|noframes|iframe|plaintext)\b.*?"
    r"(?:</(?:script|style|textarea|title|xmp|noembed|noframes|iframe|plaintext)\s*>|\Z)"
    r"|<(/?)([A-Za-z][A-Za-z0-9\-]*)[^>]*>?)",
    re.DOTALL | re.IGNORECASE,
)

# Elements that never nest in themselves (void, or closed by the next sibling of
# their kind) or that must stay (links, document structure, hidden contents):
# they neither count for the depth nor are ever cut.
_FLAT = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
    "param", "source", "track", "wbr", "frame",
    "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "rb", "rt", "rp", "rtc",
    "tbody", "thead", "tfoot", "colgroup", "caption",
    "a", "html", "head", "body", "frameset", "template", "noscript", "svg", "math", "select",
})  # fmt: skip
# Exact openings of the most common flat tags: subtracted from the number of '<'
# they give a cheap bound from above on the depth (a page below it needs no scan).
# Each is one pass over the text, counted until the bound is met: the commonest
# first (the frequencies on WebKB's 8,191 pages), so most pages take a few passes
# where all 22 took ~290 us on a 13 KB page.
_COMMON_FLAT = (
    "<a ", "<!", "<li>", "<p>", "<br>", "<img ", "<td>", "<td ", "<dd>", "<dt>", "<tr>",
    "<br ", "<tr ", "<p ", "<a>", "<option>", "<li ", "<option ", "<dd ", "<img>", "<dt ",
    "<br/",
)  # fmt: skip


_LOWER_AT_ONCE = 32_768  # characters (or bytes) from which the counts go to a lower-cased copy
_COMMON_FLAT_BYTES = tuple(opening.encode("ascii") for opening in _COMMON_FLAT)
# the flat openings that start a tag (a '<' and a letter): those the bytes' bound,
# which counts only such '<', may subtract ("<!" is none of them)
_FLAT_TAG_BYTES = tuple(opening for opening in _COMMON_FLAT_BYTES if opening[1:2].isalpha())
# every ASCII letter read as "a": "<a" then counts each '<' before a letter. So are
# the lead bytes of the four other characters that the guard's case-insensitive
# pattern takes for a letter (U+0130, U+0131, U+017F, U+212A: C4, C5, E2 in UTF-8),
# and with them others of those leads: counted too many, never too few.
_TAG_LEADS = string.ascii_letters.encode("ascii") + b"\xc4\xc5\xe2"
_LETTERS_AS_A = bytes.maketrans(_TAG_LEADS, b"a" * len(_TAG_LEADS))


def _flat_bound(html: AnyStr, openings: tuple[AnyStr, ...], starts: int, max_depth: int) -> int:
    """``starts`` less the common flat ``openings`` in ``html``, counted until it is at
    most ``max_depth`` (then the page needs no scan) or all are counted."""
    for opening in openings:
        starts -= html.count(opening)
        if starts <= max_depth:
            break
    return starts


def _shallow(html: AnyStr, starts: int, max_depth: int, openings: tuple[AnyStr, ...]) -> bool:
    """Whether the counts alone bound the nesting of ``html`` by ``max_depth``: then it
    needs no scan. ``starts`` bounds its start tags from above; ``openings`` are flat
    openings none of which starts a tag ``starts`` counts as more than one."""
    # the depth cannot exceed the number of start tags that nest: most pages stop here
    if starts <= max_depth:
        return True
    # A short page: the openings as written first (mostly lower case), without a
    # lower-cased copy. A long one goes to the copy at once: it finds at least what
    # the text as written does (the same answer), and the copy costs less than the
    # 21 passes that find nothing in an upper-case page (6 ms of 477 KB, against 0.4).
    if len(html) < _LOWER_AT_ONCE and _flat_bound(html, openings, starts, max_depth) <= max_depth:
        return True
    return _flat_bound(html.lower(), openings, starts, max_depth) <= max_depth


def needs_no_guard(html: bytes, max_depth: int = MAX_DEPTH, max_tags: int = MAX_TAGS) -> bool:
    """Whether :func:`guard_html` would return the decoded text of the UTF-8 ``html``
    unchanged, told from the bytes (no decoding): True only where it surely would.

    The guard leaves a text as it is when it has at most ``max_tags`` '<' (the same
    number in the bytes) and the depth its scan finds is at most ``max_depth``. Each
    start tag the scan counts begins with a '<' and a character its case-insensitive
    pattern takes for a letter: an ASCII letter, or one of four others whose UTF-8
    forms begin with C4, C5 or E2. The '<' before such a byte, less the flat openings
    found (a '<' each, whose tag adds nothing to the depth, or is no tag), bound
    that depth from above. Where this answers False, the text is guarded as usual.

    >>> needs_no_guard(b"<div>" * 300), needs_no_guard(b"<p>" * 300), needs_no_guard(b"<P>" * 300)
    (False, True, True)
    >>> needs_no_guard(b"<!WA4>" * 300 + b"<div>" * 9), needs_no_guard(b"<b>x" * 5, max_tags=4)
    (True, False)
    """
    tags = html.count(b"<")
    if tags > max_tags:
        return False
    if tags <= max_depth:
        return True
    # Only a '<' before a letter can open a tag: not "</", "<!" or a '<' in text.
    # WebKB's directory pages hold some 57,000 "<!WA4>" marks among 1,200 tags, where
    # counting every '<' made each page count all the flat openings twice (6-8 ms).
    # One pass over a copy with the letters read as "a", then one count (C speed).
    starts = html.translate(_LETTERS_AS_A).count(b"<a")
    return _shallow(html, starts, max_depth, _FLAT_TAG_BYTES)


def bound_nesting(
    html: str, max_depth: int = MAX_DEPTH, tags: int | None = None
) -> tuple[str, int]:
    """``html`` with the tags that nest deeper than ``max_depth`` cut out, and how many were cut.

    ``tags``: ``html.count("<")`` if the caller has it (a pass over the text saved).

    >>> bound_nesting("<div><div><div><a href=x>t</a></div></div></div>", 2)
    ('<div><div><a href=x>t</a></div></div>', 2)
    >>> bound_nesting("</b></b><b><b><b>x", 2)
    ('<b><b>x', 3)
    >>> bound_nesting("<p><p><p><li><li><script>'<div><div><div>'</script>", 2)[1]
    0
    """
    if tags is None:
        tags = html.count("<")
    if tags <= max_depth or _shallow(html, tags - html.count("</"), max_depth, _COMMON_FLAT):
        return html, 0
    # re.split gives [text, token, slash, name, text, token, slash, name, ..., text]:
    # the per-tag work is one list comprehension, the rest is numpy
    parts = _TOKEN.split(html)
    slashes, names = parts[2::4], parts[3::4]
    steps = np.array(
        [0 if name is None or name.lower() in _FLAT else (-1 if slash else 1)
         for slash, name in zip(slashes, names, strict=True)],
        dtype=np.int64,
    )  # fmt: skip
    # the depth after each tag, never below 0 (stray end tags close nothing):
    # a walk reflected at 0 is the plain sum minus its running minimum (Lindley)
    total = np.cumsum(steps)
    depth = total - np.minimum.accumulate(np.minimum(total, 0))
    if depth.size == 0 or int(depth.max()) <= max_depth:
        return html, 0
    before = np.concatenate(([0], depth[:-1]))
    # a start tag at the cap opens nothing (it is cut); an end tag above the cap
    # closes a cut element, one at depth 0 closes nothing: both are cut too
    cut = ((steps == 1) & (before >= max_depth)) | (
        (steps == -1) & ((before > max_depth) | (before == 0))
    )
    tokens = parts[1::4]
    for index in np.flatnonzero(cut).tolist():
        tokens[index] = ""
    texts = parts[0::4]
    out = [piece for pair in zip(texts, tokens, strict=False) for piece in pair]
    out.append(texts[-1])
    return "".join(out), int(cut.sum())
