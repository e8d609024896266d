"""What an operator meets on a real redis-server before any crawl runs (brief b50): a
password missing or refused, and a Redis that evicts keys when full, each one line
that says what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from focuscrawl.cli import main as cli_main
from focuscrawl.frontier.redis.connection import PASSWORD_ENV, PASSWORD_FILE_ENV
from tests.redis_server import RedisServer


@pytest.mark.parametrize("given", ["none", "wrong"])
def test_a_password_missing_or_refused_is_one_line_naming_where_it_comes_from(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", password="s3cret-of-the-test")
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    monkeypatch.delenv(PASSWORD_FILE_ENV, raising=False)
    if given == "wrong":
        monkeypatch.setenv(PASSWORD_ENV, "not-the-password")
    try:
        for argv in (
            ["worker", "--frontier", server.url, "--out", str(tmp_path / "w")],
            ["crawl", "--seeds", "http://a.invalid/", "--frontier", server.url, "--workers", "1",
             "--out", str(tmp_path / "c"), "--max-pages", "5"],
        ):  # fmt: skip
            assert cli_main(argv) == 1
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1, err
            if given == "none":  # (it said "HELLO must be called with the client already
                # authenticated, otherwise the HELLO AUTH <user> <pass> option can be used...")
                assert err[0] == (f"focuscrawl: frontier {server.url}: this Redis needs a password: "
                                  f"set {PASSWORD_ENV}, or {PASSWORD_FILE_ENV} to a file holding it")  # fmt: skip
            else:
                assert err[0].startswith(
                    f"focuscrawl: frontier {server.url}: the password from {PASSWORD_ENV} was refused"
                )
                assert "not-the-password" not in err[0]
    finally:
        server.stop()


def test_a_redis_that_evicts_keys_when_full_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cache's Redis (maxmemory with allkeys-lru) would drop a crawl's URLs and queues
    when full, without a word; with volatile-lru its leases. It is refused before any
    worker starts; noeviction is taken (a full Redis refuses writes: one line)."""
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis")
    db = redis.Redis.from_url(server.url)
    try:
        db.config_set("maxmemory", 64 << 20)
        for policy in ("allkeys-lru", "volatile-lru"):
            db.config_set("maxmemory-policy", policy)
            out = tmp_path / policy
            argv = ["crawl", "--seeds", "http://a.invalid/", "--frontier", server.url,
                    "--workers", "1", "--out", str(out), "--max-pages", "5"]  # fmt: skip
            assert cli_main(argv) == 1
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1, err
            assert f"maxmemory-policy {policy}" in err[0]
            assert "set maxmemory-policy noeviction" in err[0]
            assert not out.exists()  # refused before anything was written
        db.config_set("maxmemory-policy", "noeviction")
        assert cli_main(["worker", "--frontier", server.url, "--out", str(tmp_path / "w")]) == 2
        assert "no shared crawl is published there" in capsys.readouterr().err  # (past the check)
    finally:
        db.close()
        server.stop()


def test_a_full_redis_is_one_line_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Redis past its maxmemory (noeviction) refuses writes. The crawl stops in one
    line that says Redis is full and what to do (it quoted the refused pipeline
    command, a Lua script's first line, 'caused error: command not allowed when used
    memory > maxmemory'); resumed once it has room, it goes on (checked by hand on a
    1,500-page crawl with two workers: 1,500 URLs, none twice)."""
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis")
    db = redis.Redis.from_url(server.url)
    try:
        db.config_set("maxmemory", int(db.info("memory")["used_memory"]) + (1 << 20))
        with pytest.raises(redis.exceptions.OutOfMemoryError):  # filled past maxmemory
            _fill(db)
        argv = ["crawl", "--seeds", "http://a.invalid/", "--frontier", server.url,
                "--workers", "1", "--out", str(tmp_path / "c"), "--max-pages", "5"]  # fmt: skip
        assert cli_main(argv) == 1
        err = capsys.readouterr().err.strip().splitlines()  # (its workers' own: not captured)
        assert err[-1:] == [f"focuscrawl: frontier {server.url}: Redis is full (its used memory past "
                       "maxmemory) and refuses writes: raise its maxmemory (CONFIG SET maxmemory) "
                       "or give it more memory, then resume (the crawl's files keep their last "
                       "commit)"]  # fmt: skip
    finally:
        db.close()
        server.stop()


def _fill(db: redis.Redis) -> None:
    for i in range(1000):
        db.set(f"ballast{i}", b"x" * (16 << 10))
