"""Charset detection and decoding of HTML bodies, the way browsers do it.

Order (HTML's "encoding sniffing algorithm"): byte-order mark, the HTTP
``charset`` parameter, the ``<meta>`` prescan of the first 1024 bytes (the
standard's algorithm, step by step), then focuscrawl's own last steps: an XML
declaration, a ``<meta>`` further on (up to 64 KiB: where a browser would change
the encoding while parsing), "valid UTF-8" and finally windows-1252.

Labels are the WHATWG Encoding Standard's (its table, as ``webencodings``
carries it): ``iso-8859-1``, ``latin1`` and ``us-ascii`` mean windows-1252,
``gb2312`` and ``gbk`` gb18030, ``utf-16`` UTF-16LE, ``iso-8859-8-i`` ISO-8859-8;
a label outside the table (``cp437``, ``utf-7``, ``ucs-2``) is unknown. The names
returned are Python codec names (``"cp1252"``, ``"iso8859-2"``), except
``"euc-kr"``, ``"shift_jis"``, ``"big5"`` and ``"euc-jp"``, which
:func:`decode_html` decodes with what the standard's decoders really are (cp949,
cp932, big5hkscs). docs/standards.md lists where this departs from the standard.
"""

from __future__ import annotations

import codecs
import re

from webencodings import LABELS
from webencodings import lookup as whatwg_lookup

__all__ = ["charset_label", "decode_html", "detect_charset", "looks_like_html", "sniff_charset"]

_PRESCAN_BYTES = 1024  # HTML: the prescan reads the first 1024 bytes

# WHATWG encoding name -> the name returned here (others: their Python codec's name)
_OWN_NAMES = {
    "gbk": "gb18030",  # the gbk decoder is the gb18030 decoder (Encoding Standard)
    "euc-kr": "euc-kr",
    "shift_jis": "shift_jis",
    "big5": "big5",
    "euc-jp": "euc-jp",
    "utf-16le": "utf-16-le",
    "utf-16be": "utf-16-be",
    "x-user-defined": "x-user-defined",
}
# A name returned here -> the codec that decodes it like a browser.
_DECODERS = {"euc-kr": "cp949", "shift_jis": "cp932", "big5": "big5hkscs", "euc-jp": "euc_jp"}


def _name_of(encoding: str) -> str | None:
    """The name returned for the WHATWG encoding ``encoding`` (None: "replacement",
    which decodes a whole page as one U+FFFD: the label is ignored instead)."""
    if encoding == "replacement":
        return None
    own = _OWN_NAMES.get(encoding)
    if own is not None:
        return own
    return codecs.lookup(whatwg_lookup(encoding).codec_info.name).name


_NAMES: dict[str, str | None] = {label: _name_of(encoding) for label, encoding in LABELS.items()}
# every name returned here, and the WHATWG encoding it stands for
_WHATWG = {name: LABELS[label] for label, name in _NAMES.items() if name is not None}
_WHATWG["gb18030"] = "gb18030"

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)

_HTTP_CHARSET = re.compile(r"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"';,]+))""", re.IGNORECASE)
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9_\-.:]+)""")
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|title|meta|script|div|p|a|table|br|h1|!--)[\s>/]",
    re.IGNORECASE | re.DOTALL,
)
_ASCII_WHITESPACE = "\t\n\f\r "


def charset_label(label: str) -> str | None:
    """The charset name for an encoding label (WHATWG "get an encoding"), or None if
    the label is not in the standard's table.

    >>> charset_label("ISO-8859-1"), charset_label("GB2312"), charset_label(" EUC-KR ")
    ('cp1252', 'gb18030', 'euc-kr')
    >>> charset_label("koi8"), charset_label("iso-8859-8-i"), charset_label("utf-16")
    ('koi8-r', 'iso8859-8', 'utf-16-le')
    >>> charset_label("x-bogus"), charset_label("cp437"), charset_label("utf-7"), charset_label("\\xa0utf-8")
    (None, None, None, None)
    """
    key = label.strip(_ASCII_WHITESPACE)
    if not key.isascii():
        return None
    return _NAMES.get(key.lower())


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
    >>> sniff_charset("text/html; charset=utf-16le", "<a href=x>".encode("utf-16-le"))
    ('utf-16-le', False)
    """
    for bom, bom_name in _BOMS:
        if body.startswith(bom):
            return bom_name, False
    match = _HTTP_CHARSET.search(headers_content_type or "")
    if match:
        declared = charset_label(next(g for g in match.groups() if g is not None))
        if declared == "utf-8":
            if _is_utf8(body):
                return declared, True
        elif declared is not None:
            return declared, False
    name = prescan(body[:_PRESCAN_BYTES])
    if name is None and len(body) > _PRESCAN_BYTES:
        name = _late_meta(body)
    if name is None:
        found = _XML_DECL.search(body[:_PRESCAN_BYTES])
        if found:
            name = charset_label(found.group(1).decode("ascii"))
            if name in ("utf-16-le", "utf-16-be"):
                name = "utf-8"  # a declaration read as ASCII is not in UTF-16
    if name is not None:
        return name, False
    valid = _is_utf8(body)
    return ("utf-8" if valid else "cp1252"), valid


def _late_meta(body: bytes) -> str | None:
    """The charset of a ``<meta>`` after the prescan's 1024 bytes (up to 64 KiB) and
    outside comments: a browser's tokenizer meets it and changes the encoding (HTML
    "changing the encoding while parsing"); found with a regex, read by the prescan."""
    for match in _META_TAG.finditer(body, _PRESCAN_BYTES - 5, _LATE_META_BYTES):
        start = match.start()
        if body.rfind(b"<!--", 0, start) > body.rfind(b"-->", 0, start):
            continue  # inside a comment
        name = prescan(body[start : start + _PRESCAN_BYTES])
        if name is not None:
            return name
    return None


_LATE_META_BYTES = 64 * 1024
_META_TAG = re.compile(rb"<meta[\t\n\f\r /]", re.IGNORECASE)


# --- the prescan (HTML "prescan a byte stream to determine its encoding") ----------

_SPACE = frozenset(b"\t\n\f\r ")
_SPACE_OR_SLASH = frozenset(b"\t\n\f\r /")
_LETTER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_TAG_NAME_END = re.compile(rb"[\t\n\f\r >]")


class _End(Exception):
    """The prescan ran out of bytes: it gives up (the standard's "abort")."""


def prescan(head: bytes) -> str | None:
    """The charset a ``<meta>`` in ``head`` declares, as the HTML standard's prescan
    finds it (comments skipped, attributes read one by one, ``http-equiv`` needed
    for ``content``, a bad label skipped for the next ``<meta>``), or None.

    >>> prescan(b'<!-- <meta charset="iso-8859-2"> --><meta charset="utf-8">')
    'utf-8'
    >>> prescan(b'<meta content="text/html; charset=koi8-r">'), prescan(b'<meta charset=x><meta charset=koi8-r>')
    (None, 'koi8-r')
    """
    try:
        return _prescan(head)
    except _End:
        return None


def _prescan(head: bytes) -> str | None:
    if _META_TAG.search(head) is None:
        return None  # the prescan answers at a "<meta" only
    pos, size = 0, len(head)
    while pos < size:
        if head.startswith(b"<!--", pos):
            end = head.find(b"-->", pos + 2)  # "<!-->" is a whole comment
            if end < 0:
                return None
            pos = end + 3
        elif head[pos : pos + 5].lower() == b"<meta" and pos + 5 < size and head[pos + 5] in _SPACE_OR_SLASH:
            pos += 5
            name, pos = _meta(head, pos)
            if name is not None:
                return name
        elif head[pos : pos + 1] == b"<" and pos + 1 < size and (
            head[pos + 1] in _LETTER or (head[pos + 1] == 0x2F and pos + 2 < size and head[pos + 2] in _LETTER)
        ):
            name_end = _TAG_NAME_END.search(head, pos + 2)
            if name_end is None:
                return None
            pos = name_end.start()
            while True:  # the tag's attributes, read only to be skipped
                attribute, pos = _attribute(head, pos)
                if attribute is None:
                    break
            pos += 1
        elif head.startswith((b"<!", b"</", b"<?"), pos):
            end = head.find(b">", pos + 2)
            if end < 0:
                return None
            pos = end + 1
        else:
            next_tag = head.find(b"<", pos + 1)
            if next_tag < 0:
                return None
            pos = next_tag
    return None


def _meta(head: bytes, pos: int) -> tuple[str | None, int]:
    """The charset one ``<meta>``'s attributes declare (None if none), and where its tag ends."""
    seen: set[bytes] = set()
    got_pragma = False
    need_pragma: bool | None = None
    charset: str | None = None
    failed = False  # a label was found but is not an encoding ("failure")
    while True:
        attribute, pos = _attribute(head, pos)
        if attribute is None:
            break
        key, value = attribute
        if key in seen:
            continue
        seen.add(key)
        if key == b"http-equiv":
            got_pragma = got_pragma or value == b"content-type"
        elif key == b"content":
            if charset is None and not failed:
                label = _charset_in_content(value)
                found = charset_label(label) if label is not None else None
                if found is not None:  # a label that is not an encoding counts for nothing here
                    charset, need_pragma = found, True
        elif key == b"charset" and charset is None and not failed:
            charset = charset_label(value.decode("latin-1"))
            failed = charset is None
            need_pragma = False
    pos += 1
    if need_pragma is None or (need_pragma and not got_pragma) or charset is None:
        return None, pos
    if charset in ("utf-16-le", "utf-16-be"):
        return "utf-8", pos  # a <meta> read as ASCII is not in UTF-16
    if charset == "x-user-defined":
        return "cp1252", pos
    return charset, pos


def _attribute(head: bytes, pos: int) -> tuple[tuple[bytes, bytes] | None, int]:
    """HTML "get an attribute": (name, value) lower-cased, or None at the tag's '>'
    (where the position is left); _End where the algorithm would read past the bytes."""
    match = _ATTRIBUTE.match(head, pos)
    if match is None or match.group(5) is not None:
        raise _End  # nothing but spaces left, or an unclosed quote
    if match.group(1) is not None:
        return None, match.start(1)
    name, quoted, single, bare = match.group(2, 3, 4, 6)
    if match.end() >= len(head) and quoted is None and single is None:
        raise _End  # the bytes end inside the name or value
    if bare is None and quoted is None and single is None:  # a name alone: spaces may follow
        end = match.end()
        while head[end] in _SPACE:  # what comes after them says the name is done
            end += 1
            if end >= len(head):
                raise _End
        return (name.lower(), b""), end
    value = quoted if quoted is not None else single if single is not None else bare or b""
    return (name.lower(), value.lower()), match.end()


# "get an attribute" as one regex: spaces and '/' skipped; '>' ends the tag; a name
# (its first byte may be '='); '=' and a value, quoted ("..." or '...') or bare.
_ATTRIBUTE = re.compile(
    rb"""[\t\n\f\r /]*(?:(>)|([^\t\n\f\r />][^\t\n\f\r />=]*)"""
    rb"""(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)"|'([^']*)'|(["'])|([^\t\n\f\r >]*)))?)""",
)


def _charset_in_content(value: bytes) -> str | None:
    """HTML "extracting a character encoding from a meta element": the label after
    ``charset=`` in a ``content`` value, or None.

    >>> _charset_in_content(b"text/html; charset=euc-jp"), _charset_in_content(b"charset='x y'; z")
    ('euc-jp', 'x y')
    >>> _charset_in_content(b'charset="unclosed'), _charset_in_content(b"charsetx charset = a;b")
    (None, 'a')
    """
    pos = 0
    while True:
        found = value.find(b"charset", pos)
        if found < 0:
            return None
        pos = found + 7
        while pos < len(value) and value[pos] in _SPACE:
            pos += 1
        if pos < len(value) and value[pos] == 0x3D:
            break
    pos += 1
    while pos < len(value) and value[pos] in _SPACE:
        pos += 1
    if pos >= len(value):
        return None
    if value[pos] in (0x22, 0x27):
        end = value.find(value[pos : pos + 1], pos + 1)
        return value[pos + 1 : end].decode("latin-1") if end >= 0 else None
    end = pos
    while end < len(value) and value[end] not in _SPACE and value[end] != 0x3B:
        end += 1
    return value[pos:end].decode("latin-1")


def decode_html(body: bytes, charset: str | None = None) -> str:
    """Decode ``body`` (detecting the charset if None); bad bytes become U+FFFD.
    ``charset`` is a name returned here or a label.

    >>> decode_html("안녕".encode("euc-kr"), "euc-kr")
    '안녕'
    >>> decode_html(b"\\xef\\xbb\\xbfok", None)
    'ok'
    >>> decode_html(b"\\x93quoted\\x94", "iso-8859-1")
    '“quoted”'
    >>> decode_html("<p>עברית".encode("iso-8859-8"), "iso-8859-8-i")
    '<p>עברית'
    """
    name = charset if charset in _WHATWG else charset_label(charset) if charset else None
    if name is None:
        name = detect_charset("", body)
    for bom, bom_name in _BOMS:
        if body.startswith(bom) and bom_name == name:
            body = body[len(bom) :]
            break
    if name == "x-user-defined":
        text: str = whatwg_lookup(name).codec_info.decode(body, "replace")[0]
        return text
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
