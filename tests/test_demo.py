"""The README's demo, in the form it takes on a machine without ../shared/testweb."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl import demo


def test_demo_on_the_generated_web(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "TESTWEB", tmp_path / "no-testweb")
    assert demo.run_demo(tmp_path / "demo", max_pages=25) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("demo web: generated sample web")
    rates = {}
    for line in out[1:]:
        strategy, rest = line.split(":", 1)
        rates[strategy.strip()] = float(rest.split("harvest rate ")[1].split()[0])
    assert set(rates) == {"best-first", "bfs"}
    assert all(0.0 <= r <= 1.0 for r in rates.values())
    assert (tmp_path / "demo" / "best-first" / "corpus.warc.gz").exists()
