"""The Dockerfile and compose file: parsed (the Dockerfile by the official Go parser, via
the ``dockerfile`` package), and held to the project's install steps and commands."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _dockerfile() -> Any:
    dockerfile = pytest.importorskip("dockerfile")
    return dockerfile.parse_file(str(ROOT / "Dockerfile"))


def _ci_packages() -> set[str]:
    """The Debian packages .ci/run installs."""
    return set(re.findall(r"need\+=\((\S+)\)", (ROOT / ".ci" / "run").read_text()))


def test_dockerfile_parses_and_follows_the_projects_install() -> None:
    commands = _dockerfile()
    assert commands[0].cmd == "FROM"
    assert re.fullmatch(r"python:3\.1[1-9]-slim", commands[0].value[0])
    runs = [" ".join(c.value) for c in commands if c.cmd == "RUN"]
    apt = next(r for r in runs if "apt-get install" in r)
    assert "--no-install-recommends" in apt
    assert "rm -rf /var/lib/apt/lists/*" in apt
    words = shlex.split(apt.split("apt-get install", 1)[1].split("&&")[0])
    assert {w for w in words if not w.startswith("-")} == _ci_packages()
    # the extras it installs are the project's
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pip = next(r for r in runs if "pip install" in r)
    wanted = re.search(r'"\.\[([^\]]+)\]"', pip)
    assert wanted is not None
    assert set(wanted.group(1).split(",")) <= set(extras)
    for copy in (c for c in commands if c.cmd == "COPY"):
        for source in copy.value[:-1]:
            assert (ROOT / source).exists(), source
    # a user of its own, not root, from before the command runs
    users = [i for i, c in enumerate(commands) if c.cmd == "USER"]
    assert users
    assert commands[users[-1]].value[0] not in ("root", "0")
    assert users[-1] > max(i for i, c in enumerate(commands) if c.cmd == "RUN")
    entry = next(c for c in commands if c.cmd == "ENTRYPOINT")
    cmd = next(c for c in commands if c.cmd == "CMD")
    assert entry.json
    assert cmd.json
    assert list(entry.value) == ["focuscrawl"]
    build_parser().parse_args(list(cmd.value))  # a command focuscrawl knows


def test_compose_file_runs_a_server_redis_and_workers() -> None:
    yaml = pytest.importorskip("yaml")
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"server", "redis", "worker"}
    for service in services.values():
        assert service["build"] == "."
        for mount in service.get("volumes", ()):
            assert mount.split(":")[0] in compose["volumes"]
    server = services["server"]
    args = build_parser().parse_args(server["command"])
    assert (args.command, args.host, args.redis) == ("serve", "0.0.0.0", "redis://redis:6379/0")
    assert "FOCUSCRAWL_TOKEN" in server["environment"]  # off loopback: a token
    assert all(port.startswith("127.0.0.1:") for port in server["ports"])
    worker = services["worker"]
    worker_args = build_parser().parse_args(worker["command"])
    assert (worker_args.command, worker_args.frontier) == ("worker", "redis://redis:6379/0")
    assert services["redis"]["entrypoint"] == ["redis-server"]


def test_compose_workers_write_where_the_server_reads_a_shared_crawl() -> None:
    """The server counts, searches and exports a shared crawl from RUNS/NAME/workers/*;
    before (b46) the compose workers wrote /runs/HOSTNAME on a volume of their own
    (worker-runs), so none of their pages reached the server."""
    yaml = pytest.importorskip("yaml")
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    server, worker = services["server"], services["worker"]
    runs = build_parser().parse_args(server["command"]).runs_dir
    mounted = {m.split(":")[1]: m.split(":")[0] for m in server["volumes"]}
    args = build_parser().parse_args(worker["command"])
    assert args.out is None
    assert args.wait  # a standby worker: no crawl yet, or several, is no exit 2 and restart
    assert str(args.runs) == str(runs)  # the worker's --runs is the server's RUNS...
    assert f"{mounted[str(runs)]}:{runs}" in worker["volumes"]  # ...the same volume, same path


def _interpolated(value: str, env: dict[str, str]) -> str:
    """Compose's ${NAME} / ${NAME:?message} of ``value`` from ``env`` (a missing one: KeyError)."""
    return re.sub(r"\$\{(\w+)(?::\?[^}]*)?\}", lambda m: env[m.group(1)], value)


def test_compose_workers_and_server_have_the_redis_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Redis is another machine to the server and the workers ("redis" is no loopback
    name), so a crawl refuses it without a password: compose ran it with none and gave
    none, and every worker and shared crawl stopped with 'a Redis on another machine
    needs a password'."""
    yaml = pytest.importorskip("yaml")
    from focuscrawl.frontier.redis.connection import PASSWORD_ENV, redis_password

    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    env = {"FOCUSCRAWL_TOKEN": "t" * 32, PASSWORD_ENV: "p" * 32}
    redis_args = [_interpolated(a, env) for a in services["redis"]["command"]]
    required = redis_args[redis_args.index("--requirepass") + 1]
    for name in ("server", "worker"):
        monkeypatch.delenv(PASSWORD_ENV, raising=False)
        for key, value in services[name].get("environment", {}).items():
            monkeypatch.setenv(key, _interpolated(value, env))
        assert redis_password() == required == "p" * 32, name
