"""``focuscrawl export``'s formats: the corpus as Parquet or JSON lines, the WARC's
CDXJ index (pywb's format) and a WACZ package (ReplayWeb.page's).

Parquet and JSONL are streamed from :func:`focuscrawl.output.corpus.corpus_rows`:
a row group per window of batches, never the whole corpus in memory. The CDXJ
index is made by webrecorder's ``cdxj-indexer`` (what pywb's ``wb-manager`` and
py-wacz use), sorted, with file names relative to the run directory; the WACZ by
py-wacz, then checked with its validator. Those three packages are optional (the
``export`` extra): a missing one is named in a one-line error.

Every format reads a run as a resume would keep it: the pages and WARC records its
crawl DB's last commit accounts for. What a killed (or still running) crawl wrote
after that commit is left out, since a resume cuts it and fetches those URLs again.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import secrets
import tempfile
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.output.committed import committed_offsets
from focuscrawl.output.corpus import COLUMNS, WARC_NAME, corpus_rows, in_corpus, run_pages
from focuscrawl.output.layout import WORKERS_DIR, run_files
from focuscrawl.output.writers import json_line

FORMATS = ("parquet", "jsonl", "cdxj", "wacz")
#: the file each format writes in the run directory when no --out is given
DEFAULT_NAMES = {
    "parquet": "corpus.parquet", "jsonl": "corpus.jsonl", "cdxj": "corpus.cdxj",
    "wacz": "corpus.wacz",
}  # fmt: skip
_ROW_GROUP = 4096  # rows per Parquet row group


def _need(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(
            f"export: needs the {package} package (pip install 'focuscrawl[export]')"
        ) from None


def parquet_schema() -> Any:
    """The Arrow schema of the corpus (:data:`COLUMNS`, in order)."""
    pa = _need("pyarrow", "pyarrow")
    types = {
        "status": pa.int32(), "fetched_at": pa.timestamp("us", tz="UTC"),
        "relevance": pa.float64(), "score": pa.float64(), "depth": pa.int32(),
        "warc_offset": pa.int64(),
    }  # fmt: skip
    return pa.schema([(name, types.get(name, pa.string())) for name in COLUMNS])


def _atomic(out: Path) -> Path:
    """A new empty file beside ``out``, under a temporary name: a failed export leaves no
    half file under ``out``. Made as any file is (mode 0666 less the umask), so the
    corpus is as readable as the run's other files (``mkstemp`` makes it 0600)."""
    for _ in range(100):
        tmp = out.parent / f".{out.name}.{secrets.token_hex(6)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"export: no free temporary name beside {out}")


def write_parquet(rows: Iterator[list[dict[str, Any]]], out: Path) -> int:
    """Stream the batches of rows into a Parquet file; the number of rows."""
    pa = _need("pyarrow", "pyarrow")
    pq = _need("pyarrow.parquet", "pyarrow")
    schema = parquet_schema()
    tmp = _atomic(out)
    n = 0
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            group: list[dict[str, Any]] = []
            for batch in rows:
                for row in batch:
                    row["fetched_at"] = _timestamp(row["fetched_at"])
                group.extend(batch)
                if len(group) >= _ROW_GROUP:
                    writer.write_table(pa.Table.from_pylist(group, schema=schema))
                    n += len(group)
                    group = []
            if group or n == 0:
                writer.write_table(pa.Table.from_pylist(group, schema=schema))
                n += len(group)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def _timestamp(iso: str | None) -> Any:
    return None if iso is None else datetime.fromisoformat(iso)


def write_jsonl(rows: Iterator[list[dict[str, Any]]], out: Path) -> int:
    """Stream the batches of rows into a JSON-lines file; the number of rows."""
    tmp = _atomic(out)
    n = 0
    try:
        with open(tmp, "wb") as fh:
            for batch in rows:
                fh.writelines(json_line(row) for row in batch)
                n += len(batch)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return n


# the records a CDXJ index lists: cdxj-indexer's defaults, named here because py-wacz, once
# imported, adds "warcinfo" to them for the whole process (a WACZ export, then a CDXJ one
# in one session, e.g. a notebook's, got one more line, a warcinfo record's, than alone)
CDXJ_RECORDS = "response,revisit,resource,metadata"


def write_cdxj(run_dir: Path, out: Path) -> int:
    """The CDXJ index of the run's WARC files (pywb's format, sorted); the number of lines."""
    indexer = _need("cdxj_indexer.main", "cdxj-indexer")
    warcs = run_files(run_dir, WARC_NAME)
    if not warcs:
        raise ConfigError(f"export: {run_dir}: no {WARC_NAME}")
    buffer = io.StringIO()
    with contextlib.chdir(run_dir):  # file names in the index are relative to the run
        indexer.write_cdx_index(buffer, [str(w.relative_to(run_dir)) for w in warcs],
                                {"sort": True, "records": CDXJ_RECORDS})
    text = _committed_lines(run_dir, buffer.getvalue())
    tmp = _atomic(out)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return text.count("\n")


def _committed_ends(run_dir: Path) -> dict[str, int]:
    """WARC file (relative to the run directory) -> the length its crawl's last commit
    accounts for, where a crawl DB says (past it: what a resume cuts and fetches again)."""
    ends = {}
    for warc in run_files(run_dir, WARC_NAME):
        committed = committed_offsets(warc.parent)
        if committed is not None:
            ends[str(warc.relative_to(run_dir))] = committed[1]
    return ends


def _committed_lines(run_dir: Path, text: str) -> str:
    """The lines of a CDXJ index whose records the crawls' last commits account for."""
    ends = _committed_ends(run_dir)
    kept = []
    for line in text.splitlines(keepends=True):
        try:
            fields = json.loads(line.split(" ", 2)[2])
            end, offset = ends.get(fields["filename"]), int(fields["offset"])
        except (IndexError, ValueError, KeyError, TypeError):
            end = offset = None  # (not a record's line: kept)
        if end is None or offset is None or offset < end:
            kept.append(line)
    return "".join(kept)


def write_wacz(run_dir: Path, out: Path, *, title: str | None = None) -> int:
    """A WACZ package of the run's WARC files (py-wacz), checked by its validator; the
    number of pages it lists."""
    wacz = _need("wacz.main", "wacz")
    found = run_files(run_dir, WARC_NAME)
    if not found:
        raise ConfigError(f"export: {run_dir}: no {WARC_NAME}")
    tmp = _atomic(out)
    listed = _atomic(out.with_name(out.name + ".pages.jsonl"))
    links = tempfile.TemporaryDirectory(prefix=".wacz-", dir=out.parent)
    # the package names its archives by their base names: a shared crawl's workers'
    # files, all corpus.warc.gz, are linked under names of their own
    warcs = []
    ends = _committed_ends(run_dir)
    for warc in found:
        link = Path(links.name) / "-".join(warc.relative_to(run_dir).parts)
        end = ends.get(str(warc.relative_to(run_dir)))
        if end is not None and end < warc.stat().st_size:  # a killed or running crawl's
            _copy_head(warc, link, end)  # (its records past the last commit left out)
        else:
            link.symlink_to(warc.resolve())
        warcs.append(str(link))
    try:
        _write_wacz_pages(run_dir, listed)
        argv = ["create", "-o", str(tmp), "-p", str(listed), "--title", title or run_dir.name, *warcs]
        code, said = _wacz_main(wacz, argv)
        if code:
            raise ConfigError(f"export: py-wacz failed: {said}")
        code, said = _wacz_main(wacz, ["validate", "-f", str(tmp)])
        if code:
            raise ConfigError(f"export: the WACZ does not validate: {said}")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
        listed.unlink(missing_ok=True)
        links.cleanup()
    return wacz_pages(out)


def _copy_head(source: Path, target: Path, length: int) -> None:
    with open(source, "rb") as src, open(target, "wb") as dst:
        while length > 0 and (chunk := src.read(min(length, 1 << 20))):
            dst.write(chunk)
            length -= len(chunk)


def _wacz_main(wacz: Any, argv: list[str]) -> tuple[int, str]:
    """py-wacz's exit code and last line said; what it raised, as a failure: its validator
    raised EOFError on a WARC torn at its end (a crawl killed while writing a record),
    a traceback out of the export."""
    with contextlib.redirect_stdout(io.StringIO()) as said:
        try:
            code = wacz.main(argv)
        except Exception as exc:  # a third party's reading of the run's files
            return 1, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return code, _last_line(said.getvalue())


def _write_wacz_pages(run_dir: Path, path: Path) -> None:
    """The pages py-wacz lists for ReplayWeb.page: the run's HTML pages fetched with a
    200, by their final URL and title (py-wacz adds each one's timestamp from the WARC)."""
    header = {"format": "json-pages-1.0", "id": "pages", "title": "Pages"}
    seen: set[str] = set()
    with open(path, "wb") as fh:
        fh.write(json_line(header))
        for page in run_pages(run_dir):
            url = page.get("final_url") or page["url"]
            if (page.get("status") != 200 or "html" not in (page.get("content_type") or "") or url in seen
                    or not in_corpus(page)):
                continue
            seen.add(url)
            fh.write(json_line({"url": url, "title": page.get("title") or url}))


def wacz_pages(path: Path) -> int:
    """How many pages ``pages/pages.jsonl`` of a WACZ lists (its header line aside); py-wacz
    leaves the file out when it would list none (a run of 404s only)."""
    with zipfile.ZipFile(path) as archive:
        if "pages/pages.jsonl" not in archive.namelist():
            return 0
        with archive.open("pages/pages.jsonl") as fh:
            return max(0, sum(1 for _ in fh) - 1)


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def _run_file(run_dir: Path, out: Path) -> Path | None:
    """The file of the run (its WARC, pages.jsonl, crawl DB...) that ``out`` is, if any:
    an export replaced it with the corpus (``--out RUN/corpus.warc.gz`` lost the crawl's
    WARC). An earlier export's file (``corpus.parquet``...) is no file of the run."""
    if not out.is_file():
        return None
    for directory in (run_dir, *sorted(run_dir.glob(f"{WORKERS_DIR}/*"))):
        for path in directory.iterdir() if directory.is_dir() else ():
            if path.name not in DEFAULT_NAMES.values() and path.is_file() and os.path.samefile(path, out):
                return path
    return None


def export(run_dir: Path, fmt: str, out: Path | None = None, *, jobs: int | None = None) -> tuple[Path, int]:
    """Export a run in ``fmt`` (one of :data:`FORMATS`); (the file written, rows or lines)."""
    if fmt not in FORMATS:
        raise ConfigError(f"export: --format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if not run_dir.is_dir():
        raise ConfigError(f"export: {run_dir}: no such run directory")
    out = out or run_dir / DEFAULT_NAMES[fmt]
    if (own := _run_file(run_dir, out)) is not None:
        raise ConfigError(f"export: --out {out}: is the run's own {own.name} (give another file)")
    if fmt == "cdxj":
        return out, write_cdxj(run_dir, out)
    if fmt == "wacz":
        return out, write_wacz(run_dir, out)
    if fmt == "parquet":
        parquet_schema()  # the missing package is said before any work
        return out, write_parquet(corpus_rows(run_dir, jobs=jobs), out)
    return out, write_jsonl(corpus_rows(run_dir, jobs=jobs), out)
