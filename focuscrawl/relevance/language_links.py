"""The language a link names: its URL (path, file-name, query and host conventions, the
host's ccTLD: :data:`TLD_LANGUAGES`), its ``hreflang`` and a language its anchor names.

Sites rarely put their translations on the language's ccTLD; they name the
language in the URL instead. :func:`url_language` reads the conventions below
and answers a normalised code (:func:`~focuscrawl.relevance.language_id.normalise_lang`,
so ``zh-TW`` and ``zh_CN`` are ``zh``) or None.

=================  =================================================  =============
where              form (the tag is a BCP 47 language tag, any case)  example
=================  =================================================  =============
path segment       ``/TAG/``, ``/TAG-REGION/``, ``/TAG-Script-REG/``  ``/docs/2.4/ja/``, ``/zh-Hant-TW/``
file name          ``NAME.TAG.EXT`` or ``NAME.EXT.TAG``               ``index.ja.html``, ``index.html.ko``
query              ``lang``, ``hl``, ``locale``, ``language``, ``lng``  ``?lang=ja``, ``?hl=zh-CN``
host               first label ``TAG`` or ``TAG-REGION``              ``ja.wikipedia.org``
=================  =================================================  =============

A tag counts only if it is in :data:`URL_TAGS`: the languages most often named
in URLs, less the two-letter words that are more often something else in a path
(``id``, ``it``, ``is``, ``no``, ``my``, ``do``, ``to``, ``so``, ``me``, ``us``,
``in``, ``on``, ``or``, ``be``, ``am``, ``as``, ``js``: ``/it/`` is usually IT,
``/id/`` an identifier). In a path or host the country codes that sites use for
their language (``jp``, ``kr``, ``cn``, ``tw``) count for it too. A URL naming
two languages (``/ja/`` in a path, ``?lang=en``) is read by the most specific
place: query, then file name, then the last path segment that names one, then
the host. A tag may carry a script and a region (``zh-Hant-TW``, ``sr-Latn``,
``es-419``) or a locale's modifier (``sr@latin``, read as ``sr-Latn``; GNOME's and
glibc's directories name it so).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, urlsplit

from focuscrawl.relevance.language_id import normalise_lang
from focuscrawl.relevance.scripts import script_of, tag_chinese_script
from focuscrawl.urls import hostname_of

__all__ = [
    "TLD_LANGUAGES",
    "URL_TAGS",
    "hreflang_language",
    "named_language",
    "tld_language",
    "tld_languages",
    "url_language",
    "url_language_for",
    "url_language_tag",
]

URL_TAGS = frozenset(
    ["ar", "bg", "bn", "ca", "cs", "da", "de", "el", "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "ga", "gl", "he", "hi", "hr", "hu", "hy", "ja", "ka", "kk", "km", "ko", "lt", "lv", "mk", "ml", "mn", "mr", "ms", "nb", "nl", "nn", "pl", "pt", "ro", "ru", "sk", "sl", "sq", "sr", "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "uz", "vi", "zh", "zh-cn", "zh-tw", "zh-hk", "zh-sg", "zh-hans", "zh-hant", "pt-br", "pt-pt", "en-us", "en-gb", "es-es", "es-mx", "fr-fr", "fr-ca", "de-de", "ja-jp", "ko-kr"]
)
# country codes used for the country's language in paths and host names
_COUNTRY_AS_LANGUAGE = {"jp": "ja", "kr": "ko", "cn": "zh-cn", "tw": "zh-tw", "hk": "zh-hk"}
_QUERY_KEYS = frozenset({"lang", "hl", "locale", "language", "lng", "lc"})
# a language, then a script and/or a region (BCP 47: ``zh-hant-tw``, ``sr-latn``,
# ``es-419``), or a locale's modifier (glibc: ``sr@latin``, ``ca@valencia``)
_TAG = re.compile(r"^([a-z]{2,3})(?:-([a-z]{4}))?(?:-([a-z]{2}|[0-9]{3}))?(?:@([a-z]+))?$")
_MODIFIER_SCRIPTS = {"latin": "latn", "cyrillic": "cyrl"}  # a locale's modifier naming its script


def _tag(token: str, *, countries: bool) -> str | None:
    """The language tag of one URL token (lower case), if it is a tag of :data:`URL_TAGS`."""
    low = token.lower().replace("_", "-")
    match = _TAG.match(low)
    if match is None:
        return None
    language, script, region, modifier = match.groups()
    if modifier is not None:  # the tag the locale means: sr@latin is sr-latn
        script = script or _MODIFIER_SCRIPTS.get(modifier)
        low = "-".join(filter(None, (language, script, region)))
    if low in URL_TAGS or (language in URL_TAGS and (script or region or modifier) is not None):
        return low
    if countries and low in _COUNTRY_AS_LANGUAGE:
        return _COUNTRY_AS_LANGUAGE[low]
    return None


@lru_cache(maxsize=65536)
def url_language(url: str) -> str | None:
    """The language ``url`` names by the conventions of the module docstring, or None.

    >>> [url_language(u) for u in (
    ...     "http://a.org/docs/2.4/ja/mod/core.html", "http://a.org/index.ko.html",
    ...     "http://a.org/p?hl=zh-TW", "http://ja.wikipedia.org/wiki/X", "http://a.org/it/jobs",
    ...     "http://a.org/index.html.ja", "http://a.org/jp/", "http://a.org/ja/x?lang=en")]
    ['ja', 'ko', 'zh', 'ja', None, 'ja', 'ja', 'en']
    """
    tag = url_language_tag(url)
    return None if tag is None else normalise_lang(tag)


@lru_cache(maxsize=65536)
def url_language_tag(url: str) -> str | None:
    """The language tag ``url`` names, lower case, not normalised (``zh-tw``; a country
    code as its language's tag: ``/tw/`` is ``zh-tw``), or None.

    >>> [url_language_tag(u) for u in ("http://a.org/zh-TW/x.html", "http://a.org/cn/", "http://a.org/x.ja.html")]
    ['zh-tw', 'zh-cn', 'ja']
    >>> [url_language_tag(u) for u in ("http://a.org/zh-Hant-TW/", "http://a.org/sr@latin/x.html",
    ...                                "http://a.org/es-419/", "http://a.org/ca@valencia/", "http://a.org/x.html.sr@latin")]
    ['zh-hant-tw', 'sr-latn', 'es-419', 'ca', 'sr-latn']
    """
    parts = urlsplit(url)
    for key, value in parse_qsl(parts.query):
        if key.lower() in _QUERY_KEYS and (lang := _tag(value, countries=False)):
            return lang
    segments = [s for s in parts.path.split("/") if s]
    if segments and "." in segments[-1]:
        pieces = segments[-1].split(".")
        for piece in reversed(pieces[1:]):  # index.ja.html, index.html.ja (not the name itself)
            if lang := _tag(piece, countries=False):
                return lang
        segments = segments[:-1]
    for segment in reversed(segments):
        if lang := _tag(segment, countries=True):
            return lang
    labels = (parts.hostname or "").split(".")
    if len(labels) > 2 and (lang := _tag(labels[0], countries=True)):
        return lang
    return None


def url_language_for(url: str, chinese: str | None) -> str | None:
    """:func:`url_language`, a Chinese URL told by its script in a crawl that wants one
    (``chinese``: :func:`~focuscrawl.relevance.scripts.wanted_chinese_script`): a URL
    naming the other script names ``zh-Hans`` or ``zh-Hant``, which no target is.

    >>> [url_language_for("http://a.org/x.zh-cn.html", c) for c in ("zh-Hant", "zh-Hans", None)]
    ['zh-Hans', 'zh', 'zh']
    """
    lang = url_language(url)
    if lang == "zh" and chinese is not None:
        script = tag_chinese_script(url_language_tag(url) or "")
        if script is not None and script != chinese:
            return script
    return lang


# languages named in their own script in Han (a chooser's anchors), in a text of at most
# _NAME_LETTERS letters: 日本語 is Japanese, 中文 / 汉语 / 漢語 / 华语 / 華語 Chinese
_HAN_LANGUAGE_NAMES = (("日本語", "ja"), ("日本语", "ja"), ("中文", "zh"), ("汉语", "zh"), ("漢語", "zh"),
                       ("华语", "zh"), ("華語", "zh"))  # fmt: skip
_NAME_LETTERS = 8
_LANGUAGE_SUBTAG = re.compile("[a-z]{2,3}")


def named_language(anchor: str) -> str | None:
    """The language a short Han-only anchor names in its own script (a language
    chooser's 日本語, 简体中文, 正體中文 (台灣)), None if it names none.

    >>> [named_language(a) for a in ("日本語", "简体中文", "正體中文 (台灣)", "設定", "Deutsch", "日本語のページ")]
    ['ja', 'zh', 'zh', None, None, None]
    """
    if script_of(anchor) != "han":
        return None
    letters = "".join(ch for ch in anchor if ch.isalpha())
    if len(letters) > _NAME_LETTERS:
        return None
    return next((lang for name, lang in _HAN_LANGUAGE_NAMES if name in letters), None)


def hreflang_language(tag: str) -> str | None:
    """The language an ``hreflang`` (or ``<a hreflang>``) names, normalised; None for
    none (empty, a feed's mark, ``x-default``).

    >>> [hreflang_language(t) for t in ("ja-JP", "zh-tw", "x-default", "feed", "")]
    ['ja', 'zh', None, None, None]
    """
    if not tag or tag == "feed":
        return None
    lang = normalise_lang(tag)
    return lang if _LANGUAGE_SUBTAG.fullmatch(lang) else None


# ccTLD -> languages, the main one first. Where a country has several official
# languages the order follows the share of speakers (ch: de, fr, it; be: nl, fr);
# English-speaking ccTLDs are listed so that a table hit means "not the target".
_TLD_TABLE = """
cn hk mo tw:zh | sg:en,zh,ms | jp:ja | kr kp:ko | de at li:de | ch:de,fr,it | lu:lb,fr,de | fr mc:fr
be:nl,fr | nl:nl | it sm va:it | es:es | mx ar cl co pe ve uy py bo ec cr cu do gt hn ni pa sv:es
pt br ao mz:pt | ru:ru | by:be,ru | kz:kk,ru | ua:uk | pl:pl | cz:cs | sk:sk | hu:hu
ro md:ro | bg:bg | gr cy:el | tr:tr | se:sv | no:no | dk:da | fi:fi,sv | is:is | ee:et
lv:lv | lt:lt | si:sl | hr:hr | rs:sr | ba:bs | mk:mk | al:sq | il:he | ir:fa | pk:ur
sa ae eg ma dz tn iq jo kw lb ly om qa sy ye bh sd:ar | in:hi,en | bd:bn | th:th | vn:vi
id:id | my:ms | ph:tl,en | uk gb ie us au nz:en | ca:en,fr | za:en,af | ge:ka | am:hy
"""


def _parse_tld_table(spec: str) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for entry in spec.replace("\n", " | ").split("|"):
        if entry.strip():
            tlds, langs = entry.split(":")
            for tld in tlds.split():
                table[tld] = tuple(lang.strip() for lang in langs.split(","))
    return table


TLD_LANGUAGES: dict[str, tuple[str, ...]] = _parse_tld_table(_TLD_TABLE)


def tld_language(host: str) -> str | None:
    """Primary language of the host's country-code TLD, None for generic TLDs.

    >>> tld_language("www.asahi.co.jp"), tld_language("https://zeit.de/x"), tld_language("a.com")
    ('ja', 'de', None)
    """
    langs = tld_languages(host)
    return langs[0] if langs else None


def tld_languages(host: str) -> tuple[str, ...]:
    """Every language of the ccTLD's table entry, the main one first (``ch`` -> de, fr, it)."""
    name = hostname_of(host).rstrip(".").lower()
    return TLD_LANGUAGES.get(name.rsplit(".", 1)[-1], ())
