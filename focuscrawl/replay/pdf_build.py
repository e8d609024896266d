"""Small PDF documents written by hand, for test webs: text pages with link
annotations, and the hostile kinds a crawler meets (encrypted, broken, a
decompression bomb, thousands of pages, deep nesting).

The files are plain PDF 1.4 (one Helvetica font, one content stream a page, a
cross-reference table), so what a reader extracts from them is known.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _assemble(objects: list[bytes]) -> bytes:
    """Objects 1..n (object 1 the catalog) into a file with its xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R /Info 2 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def _stream(data: bytes, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def pdf_document(
    pages: Sequence[str], *, title: str = "", links: Sequence[Sequence[str]] = (), raw_streams: Sequence[bytes] = ()
) -> bytes:
    """A PDF with one page per text of ``pages`` (lines of about 90 characters), the
    URIs of ``links[i]`` as link annotations on page i; ``raw_streams`` replace the
    pages' content streams (already encoded, FlateDecode)."""
    # 1 catalog, 2 info, 3 pages, 4 font, then per page: page, content, annotations
    objects: list[bytes] = [b"", b"<< /Title (%s) >>" % _escape(title).encode("latin-1", "replace"), b"", b""]
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    kids: list[int] = []
    for i, text in enumerate(pages):
        page_no = len(objects) + 1
        kids.append(page_no)
        words, lines, line = text.split(), [], ""
        for word in words:
            if len(line) + len(word) > 90:
                lines.append(line)
                line = ""
            line = f"{line} {word}" if line else word
        lines.append(line)
        ops = ["BT /F1 10 Tf 12 TL 40 800 Td"] + [f"({_escape(ln)}) Tj T*" for ln in lines] + ["ET"]
        content = "\n".join(ops).encode("latin-1", "replace")
        uris = links[i] if i < len(links) else ()
        annots = [page_no + 2 + j for j in range(len(uris))]  # after the page and its content
        page = (
            b"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >>"
            b" /Contents %d 0 R" % (page_no + 1)
        )
        if annots:
            page += b" /Annots [" + b" ".join(b"%d 0 R" % a for a in annots) + b"]"
        objects.append(page + b" >>")
        raw = raw_streams[i] if i < len(raw_streams) else None
        objects.append(
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(raw) + raw + b"\nendstream"
            if raw is not None else _stream(content)
        )  # fmt: skip
        for j, uri in enumerate(uris):
            objects.append(
                b"<< /Type /Annot /Subtype /Link /Rect [40 %d 300 %d] /Border [0 0 0]"
                b" /A << /S /URI /URI (%s) >> >>" % (700 - 20 * j, 712 - 20 * j, _escape(uri).encode())
            )
    objects[0] = b"<< /Type /Catalog /Pages 3 0 R >>"
    objects[2] = b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids) + b"] /Count %d >>" % len(kids)
    return _assemble(objects)


def encrypted(document: bytes, password: str = "secret") -> bytes:
    """``document`` encrypted with a user password (AES-128; RC4 without cryptography)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(document)))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def broken(document: bytes) -> bytes:
    """Not a PDF any more: the header kept, the rest scrambled."""
    return document[:16] + bytes(b ^ 0x5A for b in document[16:])


def bomb(megabytes: int = 400) -> bytes:
    """One page whose content stream inflates to ``megabytes`` MB of spaces."""
    squeezer = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    raw = b"".join(squeezer.compress(chunk) for _ in range(megabytes)) + squeezer.flush()
    return pdf_document(["x"], title="bomb", raw_streams=[raw])


def many_pages(count: int = 5000) -> bytes:
    """A document of ``count`` short pages (the page cap is what stops a reader)."""
    return pdf_document([f"page {i} of a long report" for i in range(count)], title="long")


def deeply_nested(depth: int = 50_000) -> bytes:
    """A page dictionary holding an array nested ``depth`` deep (a recursive reader's end)."""
    document = pdf_document(["nested"], title="nested")
    return document.replace(b"/MediaBox [0 0 595 842]", b"/MediaBox [0 0 595 842] /X " + b"[" * depth + b"]" * depth, 1)
