"""Page features of Web comments that transfer between sites (the learned comment detector's inputs).

P0's detector looks only at class names, and the names that mark comments differ
from site to site: on comments-dev a keyword list learned on some sites does not
beat the 25 default keywords on the others (``benchmarks/bench_comments.py``).
What comment sections share across sites is their *shape*: many elements named
after comments, numbered comment ids (``comment-9257``), "Reply" buttons,
avatars, times of day and dates, "12 comments" counters, schema.org Comment
microdata, comment-system containers (Disqus, Facebook, Coral...) and a
``<section id=comments>``. :func:`comment_features` measures these on a parsed
page; counts enter as ``log(1 + n)``, flags as 0/1.

Markup features read the lower-cased HTML, text features the page's visible
text (``Page.text``), name features its class tokens and ids: no second parse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from focuscrawl.relevance.comment_keywords import holds_keyword
from focuscrawl.types import Page

__all__ = ["FEATURES", "comment_features"]

# "comment" in the languages of comments-dev and its neighbours (a substring of a name)
_WORD = r"(?:comment|kommentar|comentario|commentaire|commento|komentarz|reacti)"
_NAME = re.compile(_WORD)
# a comment's own id: comment-9257, comment_id_123, kommentar4711
_NUMBERED = re.compile(_WORD + r"[a-z]*[-_]?(?:id[-_]?)?\d{2,}$")
# an element whose whole text is "Reply" (its link or button), in the lower-cased HTML
_REPLY = re.compile(
    r">\s*(?:reply|antworten|responder|r[ée]pondre|rispondi|odpowiedz|beantworten|reageer)\s*<"
)
_SAID = re.compile(
    r"\b(?:said|says|wrote|schrieb|schreibt|sagt|meint|dijo|escribi[óo]|a écrit)\s*:"
)
_DATE = re.compile(r"\b(?:\d{1,2}[./]\s?\d{1,2}[./]\s?(?:19|20)?\d{2}|(?:19|20)\d{2}-\d{2}-\d{2})\b")
_CLOCK = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b")
_AGO = re.compile(
    r"\b(?:\d+|an?|one)\s+(?:minutes?|hours?|days?|weeks?|months?|years?)\s+ago\b"
    r"|\bvor\s+\d+\s+(?:minuten|stunden|tagen|wochen|monaten|jahren)\b"
    r"|\bhace\s+\d+\s+(?:minutos|horas|d[íi]as)\b"
)
_AVATAR = re.compile(r"<img\b[^>]*(?:avatar|gravatar)")
_COUNT = re.compile(
    r"\b[1-9]\d*\s+(?:comments?|kommentare?|comentarios?|commentaires?|reacties|replies"
    r"|responses|antworten|leserkommentare?)\b"
)
_ZERO = re.compile(r"\b(?:0|no|keine|sin|aucun)\s+(?:comments?|kommentare?|comentarios?|commentaires?)\b")
_FORM = re.compile(
    r"<textarea\b[^>]*(?:name|id)=[\"']?[^\"'>]*(?:comment|kommentar|comentario|message|reply)"
)
# one pattern per literal start: an alternation without a common prefix scans 4x slower
_MICRODATA = (
    re.compile(r"itemprop=[\"']?comment(?:text)?\b"),
    re.compile(r"schema\.org/(?:comment|usercomments)\b"),
    re.compile(r"\"@type\"\s*:\s*\"comment\""),
    re.compile(r"\"commentcount\"\s*:\s*\"?[1-9]"),
)
_SECTION = re.compile(
    r"<(?:section|div|ol|ul)\b[^>]*\bid=[\"']?"
    r"(?:comments|kommentare|comentarios|commentaires|comment-list|thecomments)\b"
)
# class/id names of comment systems' containers (the comments themselves often arrive by script)
_SYSTEMS = (
    "disqus_thread", "fb-comments", "commento", "coral", "vuukle", "hyvor", "isso-thread",
    "livefyre", "viafoura", "spot-im", "spotim", "openweb", "remark42", "utterances", "giscus",
)  # fmt: skip

#: the features in the order :func:`comment_features` returns them
FEATURES: tuple[str, ...] = (
    "keywords",  # P0's rule: a class name holds one of the model's keywords (0/1)
    "names",  # log(1 + class/id names holding a word for "comment")
    "numbered",  # log(1 + ids of numbered comments: comment-9257)
    "time",  # log(1 + <time> elements)
    "reply",  # log(1 + elements whose text is "Reply", "Antworten"...)
    "avatar",  # log(1 + <img> with avatar/gravatar)
    "said",  # log(1 + "said:" / "schrieb:" in the text)
    "date",  # log(1 + dates 12.03.2019, 3/12/19, 2019-03-12 in the text)
    "clock",  # log(1 + times of day 14:05 in the text)
    "ago",  # log(1 + "3 days ago" / "vor 3 Tagen" in the text)
    "count",  # log(1 + "12 comments" with a count above 0 in the text)
    "zero",  # "0 comments" / "no comments" / "keine Kommentare" in the text (0/1)
    "form",  # a <textarea> named for a comment, message or reply (0/1)
    "microdata",  # schema.org Comment / UserComments, itemprop=comment, commentCount > 0 (0/1)
    "section",  # an element with id=comments (kommentare, comentarios...) (0/1)
    "system",  # a class or id of a comment system: Disqus, Facebook, Coral... (0/1)
)


def _log_count(pattern: re.Pattern[str], text: str) -> float:
    return math.log1p(sum(1 for _ in pattern.finditer(text)))


def comment_features(page: Page, keywords: Sequence[str]) -> list[float]:
    """The :data:`FEATURES` of ``page``; ``keywords`` are P0's keywords, folded
    (:func:`~focuscrawl.relevance.comment_keywords.fold_name`).

    >>> page = Page("https://x.test/", html='<li id="comment-12"><a>Reply</a></li>',
    ...             text="Anna said: hi", ids=frozenset({"comment-12"}))
    >>> dict(zip(FEATURES, (round(v, 3) for v in comment_features(page, ["commentlist"]))))["numbered"]
    0.693
    """
    html = page.html.lower()
    text = page.text.lower()
    names = [n.lower() for n in page.class_names | page.ids]
    return [
        float(holds_keyword(page.class_names, keywords)),
        math.log1p(sum(1 for n in names if _NAME.search(n))),
        math.log1p(sum(1 for n in (i.lower() for i in page.ids) if _NUMBERED.search(n))),
        math.log1p(html.count("<time")),
        _log_count(_REPLY, html),
        _log_count(_AVATAR, html),
        _log_count(_SAID, text),
        _log_count(_DATE, text),
        _log_count(_CLOCK, text),
        _log_count(_AGO, text),
        _log_count(_COUNT, text),
        float(_ZERO.search(text) is not None),
        float(_FORM.search(html) is not None),
        float(any(p.search(html) is not None for p in _MICRODATA)),
        float(_SECTION.search(html) is not None),
        float(any(s in n for n in names for s in _SYSTEMS)),
    ]
