"""Charset detection and decoding of HTML bodies, the way browsers do it.

Order (WHATWG "encoding sniffing", simplified): byte-order mark, the HTTP
``charset`` parameter, ``<meta charset>`` / ``http-equiv`` in the first 4 KB, the
XML declaration, then "valid UTF-8" and finally windows-1252.

Two deliberate departures from a plain reading of the standard:

* An HTTP ``charset=utf-8`` on a body that is *not* valid UTF-8 is ignored (a
  common server misconfiguration on old Latin-1 pages); the page's own
  declaration or the fallback decides.
* Labels are mapped like the WHATWG Encoding Standard: ``iso-8859-1``,
  ``latin-1`` and ``us-ascii`` mean windows-1252 (``"cp1252"``), ``gb2312`` and
  ``gbk`` mean ``"gb18030"``. ``"euc-kr"`` and ``"shift_jis"`` keep their
  names, but :func:`decode_html` decodes them with their Microsoft supersets
  (cp949, cp932), which is what the standard's decoders really are.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["charset_label", "decode_html", "detect_charset", "looks_like_html", "sniff_charset"]

_PRESCAN_BYTES = 4096

# WHATWG label -> name returned here; anything else goes through codecs.lookup.
_ALIASES: dict[str, str] = {
    **dict.fromkeys(
        (
            "iso-8859-1", "iso8859-1", "iso_8859-1", "iso88591", "latin-1", "latin1", "l1",
            "us-ascii", "ascii", "ansi_x3.4-1968", "cp819", "ibm819", "windows-1252",
            "cp1252", "x-cp1252", "csisolatin1", "iso-ir-100", "x-user-defined",
        ),
        "cp1252",
    ),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "latin5", "l5", "windows-1254"), "cp1254"),
    **dict.fromkeys(("iso-8859-11", "tis-620", "windows-874", "dos-874"), "cp874"),
    **dict.fromkeys(
        ("gb2312", "gbk", "x-gbk", "chinese", "csgb2312", "gb_2312-80", "iso-ir-58", "gb18030", "cp936"),
        "gb18030",
    ),
    **dict.fromkeys(
        ("euc-kr", "euc_kr", "euckr", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "korean",
         "windows-949", "cp949", "csksc56011987", "iso-ir-149"),
        "euc-kr",
    ),
    **dict.fromkeys(
        ("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis", "windows-31j", "cp932"),
        "shift_jis",
    ),
    **dict.fromkeys(("euc-jp", "euc_jp", "x-euc-jp", "cseucpkdfmtjapanese"), "euc-jp"),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "x-x-big5", "csbig5"), "big5"),
    **dict.fromkeys(("utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "x-unicode20utf8"), "utf-8"),
    **dict.fromkeys(("utf-16", "utf-16le", "unicode", "ucs-2", "csunicode"), "utf-16-le"),
    "utf-16be": "utf-16-be",
}  # fmt: skip

# Names returned above -> the codec that decodes them like a browser.
_DECODERS = {"euc-kr": "cp949", "shift_jis": "cp932", "big5": "big5hkscs", "euc-jp": "euc_jp"}

# Labels the standard refuses (UTF-7 is an XSS vector; the rest are not text encodings).
_REFUSED = frozenset({"utf-7", "utf7", "unicode-1-1-utf-7", "replacement", "iso-2022-kr"})

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

_HTTP_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,]+)""", re.IGNORECASE)
_META = re.compile(rb"<meta\b[^>]*?\bcharset\s*=\s*[\"']?\s*([A-Za-z0-9_\-:.()]+)", re.IGNORECASE)
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9_\-.:]+)""")
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|title|meta|script|div|p|a|table|br|h1|!--)[\s>/]",
    re.IGNORECASE | re.DOTALL,
)


def charset_label(label: str) -> str | None:
    """The charset name for an encoding label, or None if unknown or refused.

    >>> charset_label("ISO-8859-1"), charset_label("GB2312"), charset_label(" EUC-KR ")
    ('cp1252', 'gb18030', 'euc-kr')
    >>> charset_label("koi8-r"), charset_label("x-bogus"), charset_label("base64")
    ('koi8-r', None, None)
    >>> charset_label("idna"), charset_label("punycode"), charset_label("unicode-escape")
    (None, None, None)
    """
    key = label.strip().strip("\"'").lower()
    if not key or key in _REFUSED:
        return None
    if key in _ALIASES:
        return _ALIASES[key]
    try:
        name = codecs.lookup(key).name
        # HTML is read as ASCII until its charset is known, so a usable charset
        # reads ASCII as ASCII, and decodes anything with U+FFFD for bad bytes.
        # This refuses bytes-to-bytes codecs (base64, zlib), idna (no "replace"
        # handler), punycode, unicode-escape and hz (they rewrite ASCII).
        if _ASCII_PROBE.decode(name) != _ASCII_TEXT:
            return None
        _BAD_BYTES.decode(name, errors="replace")
    except (LookupError, ValueError):  # UnicodeError is a ValueError
        return None
    return _ALIASES.get(name, name)


_ASCII_TEXT = '<a href="x?a=1&b=~{2}">\\u00e9\\n \\x41 xn--a-b</a>'
_ASCII_PROBE = _ASCII_TEXT.encode("ascii")
_BAD_BYTES = bytes(range(256))


def _is_utf8(body: bytes) -> bool:
    """Valid UTF-8, allowing a multi-byte sequence cut at the end (truncated bodies)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    except UnicodeDecodeError:
        return False
    return True


def detect_charset(headers_content_type: str, body: bytes) -> str:
    """The charset to decode an HTML ``body`` with.

    >>> detect_charset("text/html; charset=Shift_JIS", b"<html>")
    'shift_jis'
    >>> detect_charset("text/html", b'<meta charset="euc-kr"><p>\\xc7\\xd1')
    'euc-kr'
    >>> detect_charset("text/html; charset=utf-8", b"\\xef\\xbb\\xbfhi")
    'utf-8'
    >>> detect_charset("text/html; charset=utf-8", b"caf\\xe9 cr\\xe8me")  # wrong header
    'cp1252'
    >>> detect_charset("", "café".encode())
    'utf-8'
    """
    return sniff_charset(headers_content_type, body)[0]


def sniff_charset(headers_content_type: str, body: bytes) -> tuple[str, bool]:
    """:func:`detect_charset`, and whether it found ``body`` valid UTF-8 on the way
    (a multi-byte sequence cut at the end allowed), which a parser of the bytes can
    then trust without checking them again; False where it did not look.

    >>> sniff_charset("text/html; charset=utf-8", "café".encode())
    ('utf-8', True)
    >>> sniff_charset("text/html", b'<meta charset="utf-8"><p>caf\\xc3\\xa9')  # declared: not checked
    ('utf-8', False)
    """
    for bom, bom_name in _BOMS:
        if body.startswith(bom):
            return bom_name, False
    match = _HTTP_CHARSET.search(headers_content_type or "")
    if match:
        declared = charset_label(match.group(1))
        if declared == "utf-8":
            if _is_utf8(body):
                return declared, True
        elif declared is not None:
            return declared, False
    head = body[:_PRESCAN_BYTES]
    for pattern in (_META, _XML_DECL):
        found = pattern.search(head)
        if found:
            name = charset_label(found.group(1).decode("ascii", "replace"))
            if name in ("utf-16-le", "utf-16-be"):
                name = "utf-8"  # a document in ASCII cannot be UTF-16 (WHATWG prescan)
            if name is not None:
                return name, False
    valid = _is_utf8(body)
    return ("utf-8" if valid else "cp1252"), valid


def decode_html(body: bytes, charset: str | None = None) -> str:
    """Decode ``body`` (detecting the charset if None); bad bytes become U+FFFD.

    >>> decode_html("안녕".encode("euc-kr"), "euc-kr")
    '안녕'
    >>> decode_html(b"\\xef\\xbb\\xbfok", None)
    'ok'
    >>> decode_html(b"\\x93quoted\\x94", "iso-8859-1")
    '“quoted”'
    """
    name = charset_label(charset) if charset else None
    if name is None:
        name = detect_charset("", body)
    for bom, bom_name in _BOMS:
        if body.startswith(bom) and bom_name == name:
            body = body[len(bom) :]
            break
    try:
        return body.decode(_DECODERS.get(name, name), errors="replace")
    except (LookupError, ValueError):  # a codec that fails even with "replace": the fallback
        return body.decode("cp1252", errors="replace")


def looks_like_html(head: bytes) -> bool:
    """Sniff the first bytes of a body without Content-Type for HTML.

    >>> looks_like_html(b"\\n  <!DOCTYPE html><html>"), looks_like_html(b"%PDF-1.4")
    (True, False)
    """
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8) :]
    return bool(_HTML_START.match(head[:1024]))
