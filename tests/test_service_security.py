"""``focuscrawl serve``'s guard: loopback unless a token is given, the token compared in
constant time, Host and Origin checks (DNS rebinding, CSRF), escaped pages, no path
out of the runs directory, and no crawl of private addresses off loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.service_client import ROOT, Server

pytest.importorskip("jinja2")
pytest.importorskip("prometheus_client")

TOKEN = "s3cret-token-for-tests-0123456789"


def _serve_fails(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "focuscrawl", "serve", str(tmp_path / "runs"), *args],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr


def test_another_address_needs_a_token(tmp_path: Path) -> None:
    env = {"FOCUSCRAWL_TOKEN": ""}
    assert "give a token" in _serve_fails(tmp_path, "--host", "0.0.0.0", "--port", "1", env=env)
    assert "16 characters" in _serve_fails(tmp_path, "--host", "0.0.0.0", "--token", "short", env=env)


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> Any:
    runs = tmp_path_factory.mktemp("public") / "runs"
    srv = Server(runs, host="0.0.0.0", env={"FOCUSCRAWL_TOKEN": TOKEN})
    srv.args += ["--allow-host", f"crawler.example:{srv.port}"]
    with srv:
        yield srv


def _auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_token_is_required_off_loopback(public: Server) -> None:
    status, answer = public.call("GET", "/api/crawls")
    assert (status, answer["error"]) == (401, "a token is needed (Authorization: Bearer TOKEN)")
    assert public.call("GET", "/api/crawls", headers=_auth(TOKEN[:-1] + "x"))[0] == 401
    assert public.call("GET", "/metrics")[0] == 401
    assert public.call("GET", "/api/crawls", headers=_auth())[0] == 200
    assert public.call("GET", "/api/crawls", headers={**_auth(), "Host": f"crawler.example:{public.port}"})[0] == 200


def test_the_login_form_sets_the_token_cookie(public: Server) -> None:
    import http.cookiejar
    import urllib.request

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(public.base + "/", timeout=30) as page:  # sent to the form
        assert page.url.endswith("/login")
    data = urllib.parse.urlencode({"token": TOKEN}).encode()
    with opener.open(public.base + "/login", data=data, timeout=30) as page:
        assert page.url == public.base + "/"
        assert "Start a crawl" in page.read().decode()
    cookie = next(c for c in jar if c.name == "focuscrawl_token")
    assert cookie.has_nonstandard_attr("HttpOnly")
    bad = urllib.parse.urlencode({"token": "wrong-token-of-enough-length"}).encode()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(public.base + "/login", data=bad, timeout=30)
    assert refused.value.code == 401


def test_off_loopback_crawls_reach_public_addresses_only(public: Server) -> None:
    for seed in ("http://127.0.0.1:8080/", "http://10.1.2.3/", "http://localhost/", "http://[::1]/"):
        status, answer = public.call("POST", "/api/crawls", {"name": "p", "seeds": [seed]}, headers=_auth())
        assert (status, answer["field"]) == (403, "seeds[0]"), answer
    for key, value in (("proxy", "http://127.0.0.1:3128"), ("allow_private", ["10.0.0.0/8"])):
        body = {"name": "p", "seeds": ["http://example.org/"], "settings": {"fetch": {key: value}}}
        status, answer = public.call("POST", "/api/crawls", body, headers=_auth())
        assert (status, answer["field"]) == (403, f"settings.fetch.{key}")
    assert not (public.runs / "p").exists()


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with Server(tmp_path_factory.mktemp("local") / "runs") as srv:
        status, answer = srv.call("POST", "/api/crawls", {"name": "x", "seeds": ["http://a.invalid/"]})
        assert status == 201, answer
        yield srv


def test_host_header_of_another_name_is_refused(local: Server) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: refused."""
    status, answer = local.call("GET", "/api/crawls", headers={"Host": f"evil.example:{local.port}"})
    assert status == 421
    assert "Host" in answer["error"]
    assert local.call("GET", "/api/crawls", headers={"Host": f"localhost:{local.port}"})[0] == 200


def test_changes_from_another_origin_or_as_a_form_are_refused(local: Server) -> None:
    body = {"name": "csrf", "seeds": ["http://example.org/"]}
    status, answer = local.call("POST", "/api/crawls", body, headers={"Origin": "http://evil.example"})
    assert (status, answer["error"]) == (403, "cross-origin request refused")
    form = urllib.parse.urlencode({"name": "csrf"}).encode()
    status, answer = local.call("POST", "/api/crawls", raw=form,
                                headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert status == 415
    assert not (local.runs / "csrf").exists()
    status, _ = local.call("POST", "/api/crawls/x/stop", {}, headers={"Origin": local.base})
    assert status in (200, 409)


def test_pages_escape_what_they_show(local: Server) -> None:
    script = "<script>alert(1)</script>"
    status, page = local.call("GET", "/crawls/x/search?q=" + urllib.parse.quote(script))
    assert status == 400  # not FTS syntax
    assert script not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    status, page = local.call("GET", "/")
    assert status == 200
    assert "Content-Security-Policy" not in page  # a header, not in the body


@pytest.mark.parametrize(
    "path",
    ["/crawls/..%2F..%2Fetc%2Fpasswd", "/crawls/%2e%2e", "/api/crawls/..%2Fx/pages",
     "/crawls/x%2F..%2F..%2Fsecret/search?q=a", "/api/crawls/.service/numbers"],
    ids=["dotdot-slash", "dotdot", "api-dotdot", "inner-dotdot", "service-dir"],
)  # fmt: skip
def test_no_path_leaves_the_runs_directory(local: Server, path: str) -> None:
    status, answer = local.call("GET", path)
    assert status in (400, 404)
    assert isinstance(answer, dict), answer
    assert "error" in answer
