"""``focuscrawl export``: a crawl of the sample web as Parquet / JSONL rows (read back by
pyarrow, pandas and Hugging Face ``datasets``), its CDXJ index (checked against
warcio's reading of the offsets, and replayed by pywb where a pywb is at hand) and a
WACZ package (checked by py-wacz's validator)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.api import crawl
from focuscrawl.output.corpus import COLUMNS, corpus_rows, in_corpus, main_text, page_row
from focuscrawl.output.export import export
from focuscrawl.parse.html import page_from_bytes
from focuscrawl.replay.archive import read_response_at
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from tests.stopping import killed_uncommitted, resume

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run_dir(sample_replay: ReplayProcess, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("export") / "run"
    crawl(
        list(SAMPLE_SEEDS), run, strategy="best-first", max_pages=30,
        model={"name": "keyword", "keywords": ["cat", "cats", "kitten"]},
        proxy=sample_replay.proxy_url, delay=0.0,
    )  # fmt: skip
    return run


def _pages(run: Path) -> list[dict[str, Any]]:
    with open(run / "pages.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "focuscrawl", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)  # fmt: skip


def _check_rows(run: Path, rows: list[dict[str, Any]]) -> None:
    """Rows in pages.jsonl's order with its fields, and the text of the record at the offset."""
    pages = _pages(run)
    assert [r["url"] for r in rows] == [p["url"] for p in pages]
    with_text = 0
    for row, page in zip(rows, pages, strict=True):
        assert (row["status"], row["depth"], row["parent"]) == (page["status"], page["depth"], page["parent"])
        assert (row["relevance"], row["score"], row["language"]) == (page["relevance"], page["score"], page["lang"])
        if row["warc_offset"] is None:
            continue
        record = read_response_at(run / row["warc_file"], row["warc_offset"])
        assert record.url == (page.get("final_url") or page["url"])
        if row["status"] == 200 and "html" in page["content_type"]:
            expected = main_text(page_from_bytes(record.url, record.body, record.content_type))
            assert row["text"] == expected
            assert expected
            with_text += 1
    assert with_text >= 20


def test_parquet_loads_in_pyarrow_pandas_and_datasets(run_dir: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    result = _cli("export", str(run_dir), "--format", "parquet", "-o", str(tmp_path / "c.parquet"))
    assert result.returncode == 0, result.stderr
    assert "30 pages" in result.stdout
    assert "peak RSS" in result.stdout
    table = pq.read_table(tmp_path / "c.parquet")
    assert table.column_names == list(COLUMNS)
    rows = table.to_pylist()
    for row in rows:
        row["fetched_at"] = row["fetched_at"].timestamp()
    _check_rows(run_dir, rows)
    pages = _pages(run_dir)
    assert [round(r["fetched_at"], 6) for r in rows] == [round(p["fetched_at"], 6) for p in pages]
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(tmp_path / "c.parquet")
    assert len(frame) == 30
    assert frame["text"].notna().sum() >= 20
    assert str(frame["fetched_at"].dtype).startswith("datetime64")
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "c.parquet"), split="train",
        cache_dir=str(tmp_path / "hf-cache"),
    )  # fmt: skip
    assert loaded.num_rows == 30
    assert loaded[0]["url"] == rows[0]["url"]
    assert loaded[0]["text"] == rows[0]["text"]


def test_jsonl_rows_are_the_parquet_rows(run_dir: Path, tmp_path: Path) -> None:
    out, n = export(run_dir, "jsonl", tmp_path / "c.jsonl", jobs=2)
    assert n == 30
    with open(out, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    assert all(list(row) == list(COLUMNS) for row in rows)
    _check_rows(run_dir, rows)
    # the same rows with and without a pool of processes
    alone = [row for batch in corpus_rows(run_dir, jobs=1) for row in batch]
    assert alone == rows


def _cdxj_lines(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        key, ts, data = line.split(" ", 2)
        lines.append((key, ts, json.loads(data)))
    return lines


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "cdxj", "wacz"])
def test_an_export_is_made_as_any_file_is(run_dir: Path, tmp_path: Path, fmt: str) -> None:
    """The corpus gets the mode the user's umask gives new files (0644 under the usual
    022), as the run's other files do: a temporary file's 0600 would keep it from the
    group, another user or a web server that is to serve it."""
    umask = os.umask(0o022)
    try:
        out, _ = export(run_dir, fmt, tmp_path / f"corpus.{fmt}", jobs=1)
    finally:
        os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o644
    assert (run_dir / "pages.jsonl").stat().st_mode & 0o777 == 0o644


def test_a_cdxj_index_is_the_same_after_a_wacz_export_in_one_session(run_dir: Path, tmp_path: Path) -> None:
    """py-wacz, once imported, indexes warcinfo records too, for the whole process: a
    CDXJ export after a WACZ one in the same session (a notebook) is the same as alone."""
    pytest.importorskip("cdxj_indexer")
    pytest.importorskip("wacz")
    before, _ = export(run_dir, "cdxj", tmp_path / "before.cdxj")
    export(run_dir, "wacz", tmp_path / "between.wacz")
    after, n = export(run_dir, "cdxj", tmp_path / "after.cdxj")
    assert after.read_bytes() == before.read_bytes()
    assert n == 30


def test_cdxj_lines_point_at_the_records_warcio_reads(run_dir: Path, tmp_path: Path) -> None:
    surt = pytest.importorskip("surt").surt
    out, n = export(run_dir, "cdxj", tmp_path / "corpus.cdxj")
    lines = _cdxj_lines(out)
    assert n == len(lines) == 30  # one response per page (no redirects on the sample web)
    assert [(k, t) for k, t, _ in lines] == sorted((k, t) for k, t, _ in lines)  # pywb's order
    by_offset: dict[int, tuple[str, int, str]] = {}
    with open(run_dir / "corpus.warc.gz", "rb") as fh:
        iterator = ArchiveIterator(fh)
        for record in iterator:
            if record.rec_type == "response":
                url = record.rec_headers.get_header("WARC-Target-URI")
                record.content_stream().read()
                by_offset[iterator.get_record_offset()] = (url, iterator.get_record_length(),
                                                           record.rec_headers.get_header("WARC-Date"))  # fmt: skip
    assert sorted(int(d["offset"]) for _, _, d in lines) == sorted(by_offset)
    for key, ts, data in lines:
        url, length, date = by_offset[int(data["offset"])]
        assert (data["url"], int(data["length"]), data["filename"]) == (url, length, "corpus.warc.gz")
        assert ts == "".join(ch for ch in date if ch.isdigit())[:14]
        assert key == surt(url)  # the key pywb looks a URL up by


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wayback() -> str:
    """pywb's ``wayback`` (FOCUSCRAWL_PYWB: a virtualenv holding pywb; it pins an old
    redis client, so it is not installed beside focuscrawl), or a skip."""
    venv = os.environ.get("FOCUSCRAWL_PYWB")
    found = str(Path(venv) / "bin" / "wayback") if venv else shutil.which("wayback")
    if not found or not Path(found).exists():
        pytest.skip("pywb is not at hand (FOCUSCRAWL_PYWB=<virtualenv with pywb>)")
    return found


def test_pywb_replays_a_crawled_page_from_the_cdxj(run_dir: Path, tmp_path: Path) -> None:
    wayback = _wayback()
    collection = tmp_path / "collections" / "focus"
    (collection / "indexes").mkdir(parents=True)
    (collection / "archive").symlink_to(run_dir)  # the index names files relative to the run
    export(run_dir, "cdxj", collection / "indexes" / "index.cdxj")
    _key, ts, data = _cdxj_lines(collection / "indexes" / "index.cdxj")[0]
    port = _free_port()
    server = subprocess.Popen([wayback, "-p", str(port), "-b", "127.0.0.1"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/focus/{ts}id_/{data['url']}"
        body = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=10) as answer:
                    body = answer.read()
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail("wayback exited")
                time.sleep(0.2)
        archived = read_response_at(run_dir / "corpus.warc.gz", int(data["offset"]))
        assert body == archived.body
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_wacz_validates_and_lists_the_html_pages(run_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("wacz")
    result = _cli("export", str(run_dir), "--format", "wacz", "-o", str(tmp_path / "c.wacz"))
    assert result.returncode == 0, result.stderr
    html = {p.get("final_url") or p["url"] for p in _pages(run_dir)
            if p["status"] == 200 and "html" in p["content_type"]}  # fmt: skip
    with zipfile.ZipFile(tmp_path / "c.wacz") as archive:
        names = archive.namelist()
        listed = [json.loads(line) for line in archive.read("pages/pages.jsonl").splitlines()[1:]]
    assert "archive/corpus.warc.gz" in names
    assert "indexes/index.cdx.gz" in names
    assert {page["url"] for page in listed} == html
    check = subprocess.run([sys.executable, "-m", "wacz", "validate", "-f", str(tmp_path / "c.wacz")],
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert "is valid" in check.stdout
    assert not list(tmp_path.glob(".c.wacz*")), "temporary files left"


def test_wacz_of_a_run_with_no_html_page(sample_replay: ReplayProcess, tmp_path: Path) -> None:
    # a run whose every URL was a 404 exported to a WACZ ended in a KeyError traceback
    pytest.importorskip("wacz")
    run = tmp_path / "run"
    crawl([SAMPLE_SEEDS[0] + "no-such-page"], run, max_pages=1, proxy=sample_replay.proxy_url, delay=0.0)
    assert [p["status"] for p in _pages(run)] == [404]
    result = _cli("export", str(run), "--format", "wacz")
    assert result.returncode == 0, result.stderr
    assert "corpus.wacz: 0 pages" in result.stdout
    check = subprocess.run([sys.executable, "-m", "wacz", "validate", "-f", str(run / "corpus.wacz")],
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--format", "xml"], "choose one of parquet, jsonl, cdxj, wacz"),
        (["--jobs", "0"], "--jobs 0: must be 1 or more"),
        # these two named a hidden temporary file beside the output and exited 1
        (["--format", "jsonl", "--out", "/no-such-dir/corpus.jsonl"],
         "--out /no-such-dir/corpus.jsonl: no such directory /no-such-dir"),
        (["--format", "cdxj", "--out", "."], "--out .: is a directory (give a file name)"),
    ],
    ids=["format", "jobs", "out-in-no-directory", "out-a-directory"],
)
def test_bad_export_arguments_are_one_line(run_dir: Path, args: list[str], said: str) -> None:
    result = _cli("export", str(run_dir), *args)
    assert result.returncode == 2
    assert said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_export_of_a_directory_that_is_no_run(tmp_path: Path) -> None:
    for fmt in ("jsonl", "cdxj", "wacz"):
        result = _cli("export", str(tmp_path), "--format", fmt)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert "no " in result.stderr
    result = _cli("export", str(tmp_path / "absent"))
    assert result.returncode == 2
    assert "no such run directory" in result.stderr


def test_out_onto_a_file_of_the_run_is_refused(run_dir: Path, tmp_path: Path) -> None:
    """``--out RUN/corpus.warc.gz`` replaced the crawl's WARC with the WACZ (exit 0), and
    ``--format jsonl --out RUN/pages.jsonl`` its pages with the corpus: the run was lost."""
    run = shutil.copytree(run_dir, tmp_path / "run")
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    for fmt, name in [("wacz", "corpus.warc.gz"), ("jsonl", "pages.jsonl"), ("cdxj", "crawl.db"),
                      ("parquet", "run.json")]:  # fmt: skip
        result = _cli("export", str(run), "--format", fmt, "--out", str(run / name), "--jobs", "1")
        assert result.returncode == 2, result.stdout + result.stderr
        assert f"is the run's own {name} (give another file)" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    # an earlier export's file is replaced as before
    (run / "corpus.jsonl").write_text("old\n")
    assert _cli("export", str(run), "--format", "jsonl", "--out", str(run / "corpus.jsonl"), "--jobs", "1").returncode == 0
    assert (run / "corpus.jsonl").read_text() != "old\n"


def test_wacz_of_a_run_whose_warc_is_torn_at_its_end(run_dir: Path, tmp_path: Path) -> None:
    """A WARC torn at its end (a crawl killed while writing a record): py-wacz's validator
    raised EOFError through the export, a traceback and exit 1."""
    run = shutil.copytree(run_dir, tmp_path / "run")
    warc = run / "corpus.warc.gz"
    os.truncate(warc, warc.stat().st_size - 300)
    result = _cli("export", str(run), "--format", "wacz", "--out", str(tmp_path / "c.wacz"))
    assert result.returncode == 2, result.stderr
    assert "export: the WACZ does not validate: EOFError: Compressed file ended" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no WACZ, no temporary file left


async def test_a_pdfs_row_has_the_documents_text_and_title(tmp_path: Path) -> None:
    # before (b48): the export read the text of HTML records only, so a PDF the crawl read
    # and judged (parse.pdf) had no text in the corpus (text null; 20 of 20 on the content web)
    from focuscrawl.api import crawl_async
    from focuscrawl.replay import pdf_build
    from tests.sites import html, respond, serve

    document = pdf_build.pdf_document(["annual report on kittens", "second page: kitten food"], title="Kitten report")
    routes = {"/": html('<a href="/r.pdf">report</a>'), "/r.pdf": respond(document, content_type="application/pdf")}
    async with serve(routes) as site:  # type: ignore[arg-type]
        await crawl_async(tmp_path / "run", [site.url("/")], overrides={
            "crawl": {"max_pages": 5}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}},
            model={"name": "keyword", "keywords": ["kitten"]})  # fmt: skip
    rows = {row["url"].rsplit("/", 1)[1]: row for batch in corpus_rows(tmp_path / "run", jobs=1) for row in batch}
    assert rows["r.pdf"]["content_type"] == "application/pdf"
    assert rows["r.pdf"]["text"] == "annual report on kittens second page: kitten food"
    assert rows["r.pdf"]["title"] == "Kitten report"


def test_a_rendered_pages_row_holds_the_corpus_columns_only() -> None:
    # before (c49): the offset of the DOM a browser built rode in the row as a private
    # ``_dom`` key, taken out only if the row went through with_text
    page = {"url": "http://a.example/", "status": 200, "content_type": "text/html", "title": "A"}
    row = page_row(page, ("corpus.warc.gz", 120, 480), "kept text")
    assert list(row) == list(COLUMNS)
    assert (row["warc_file"], row["warc_offset"], row["text"]) == ("corpus.warc.gz", 120, "kept text")


def test_a_killed_crawls_export_holds_what_a_resume_keeps(sample_replay: ReplayProcess, tmp_path: Path) -> None:
    # before (c49): the export read pages.jsonl and the WARC to their ends, so a crawl
    # killed after its start's commit and before any other exported the pages it had
    # not committed, which its resume cuts and fetches again
    pytest.importorskip("cdxj_indexer")
    run = tmp_path / "killed"
    env = killed_uncommitted(run, sample_replay.proxy_url, list(SAMPLE_SEEDS))
    assert len(_pages(run)) >= 5
    _, rows = export(run, "jsonl", tmp_path / "killed.jsonl", jobs=1)
    _, lines = export(run, "cdxj", tmp_path / "killed.cdxj")
    assert (rows, lines) == (0, 0)  # nothing past the start was committed
    resume(run, env)
    out, rows = export(run, "jsonl", tmp_path / "resumed.jsonl", jobs=1)
    pages = [p["url"] for p in _pages(run) if in_corpus(p)]
    with open(out, encoding="utf-8") as fh:
        assert [json.loads(line)["url"] for line in fh] == pages
    assert rows == len(pages) >= 20
