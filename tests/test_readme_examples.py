"""The README's examples as a new user runs them (issue 41 item 6): the Python example
from where the README says to run it (and the folder it warns about named), the
Redis example's server writing in a run directory that its last line removes, and the
Redis section's seeds being those `replay --generated` prints."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from focuscrawl.replay.generated import GeneratedWeb
from tests.conftest import shared_file
from tests.redis_server import _free_port

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def _block(section: str, language: str) -> str:
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block"
    return match[1]


def _commands(block: str) -> list[str]:
    """The block's commands, continuation lines joined."""
    return [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def test_the_python_example_says_where_to_run_it() -> None:
    text = _section("In Python")
    assert "from the checkout's root" in text
    assert "cannot import name 'crawl'" in text  # the trap, named as the error says it


@pytest.mark.slow
def test_the_python_example_runs_where_the_readme_says(tmp_path: Path) -> None:
    shared_file("webkb.warc.gz")  # (skips where the shared test web is absent)
    code = _block(_section("In Python"), "python").replace('"runs/courses"', repr(str(tmp_path / "courses")))
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"\n300 URLs, harvest rate 0\.\d{3}\n$", done.stdout), done.stdout


def test_the_redis_example_keeps_its_files_in_a_run_directory_and_removes_them(tmp_path: Path) -> None:
    commands = _commands(_block(_section("Past one machine"), "bash"))
    start = next(c for c in commands if "redis-server" in c)
    stop = next(c for c in commands if "shutdown" in c)
    directory = shlex.split(start.split("&&")[-1])
    where = Path(directory[directory.index("--dir") + 1])
    assert not where.is_absolute(), where  # /tmp: left there, and reloaded by the next start
    assert where.parts[0] == "runs", where
    port = str(_free_port())
    run = [c.replace("6390", port).split("#")[0] for c in (start, stop)]
    subprocess.run(run[0], shell=True, cwd=tmp_path, check=True, timeout=60)
    client = redis.Redis(port=int(port))
    try:
        _ready(client)  # (a daemonized redis-server listens a moment after its start returns)
        client.set("a-crawl", "x" * 1000)
        assert client.config_get("dir")["dir"] == str(tmp_path / where)
        assert (tmp_path / where).is_dir()
    finally:
        client.close()
        subprocess.run(run[1], shell=True, cwd=tmp_path, check=True, timeout=60)
    assert not (tmp_path / where).exists()
    assert "rm -r runs/redis" in stop
    text = _section("Past one machine")
    assert "reloads them" in text  # what the next start does with the file, said


def _ready(client: redis.Redis) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            client.ping()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_the_redis_sections_seeds_are_those_replay_generated_prints() -> None:
    generated = next(c for c in _commands(_block(_section("Everyday use"), "bash")) if "--generated" in c)
    args = shlex.split(generated.split("&")[0])
    pages, hosts, seed = (int(args[args.index(o) + 1]) for o in ("--generated", "--hosts", "--seed"))
    printed = GeneratedWeb(pages, hosts, seed).home_urls(3)  # what replay prints as its seeds
    crawl = next(c for c in _commands(_block(_section("Past one machine"), "bash")) if "--workers" in c)
    args = shlex.split(crawl)
    seeds = args[args.index("--seeds") + 1 : args.index("--proxy")]
    assert seeds
    assert set(seeds) <= set(printed), (seeds, printed)
    port = generated.split("--port")[1].split()[0]
    assert f"--proxy http://127.0.0.1:{port}" in crawl
    why = next(c for c in _commands(_block(_section("Past one machine"), "bash")) if c.startswith("focuscrawl why"))
    assert shlex.split(why.split("#")[0])[-1] in printed


def test_the_refresh_example_runs_and_says_what_the_readme_says(tmp_path: Path) -> None:
    shared_file("webkb.warc.gz")  # (skips where the shared test web is absent)
    text = _section("Keeping a crawl fresh")
    out = str(tmp_path / "fresh")
    said = []
    for command in _commands(_block(text, "bash")):
        argv = [a.replace("runs/fresh", out) for a in shlex.split(command)]
        assert argv[0] == "focuscrawl"
        done = subprocess.run([sys.executable, "-m", "focuscrawl", *argv[1:]], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                              timeout=600, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        said.append(done.stdout.replace(out, "runs/fresh"))
    quoted = re.findall(r"`(refresh 1 of [^`]+|re-visits: [^`]+)`", text)
    assert len(quoted) == 2
    assert quoted[0] in said[1]
    assert quoted[1] in said[2]
