"""P4's metric: the target-language share of a focused crawl against the control crawl.

For each target language (ja, ko, zh) the crawl starts from the same seeds, the
target language's manual pages of multilingual-dev, served by the project's
replay server (https through its CONNECT proxy), once breadth-first (P4's
control group: Nutch's default) and once per ``language`` policy (``rule`` is
P4's experimental group; ``hard``, ``soft``, ``server``, ``directory`` are
Tamura's). A page's language is the archive's label (``lang_detected``,
py3langid on the page text, ``yue`` read as ``zh``), not the crawler's model;
``share`` is over the fetched pages the archive holds (a link to a page the
archive lacks is a 404), ``of all`` over every fetched URL (404s use the budget too).

    python benchmarks/bench_language_share.py [--pages 300] [--targets ja,ko,zh]
        [--policies rule,hard,soft,server,directory] [--rules tld-or-anchor,off] [--out DIR]

``--rules`` runs every policy but ``rule`` also with P4's link rule switched off
(``rule = "off"``), i.e. Tamura's policies on their own.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from focuscrawl.api import crawl
from focuscrawl.relevance.language import normalise_lang
from focuscrawl.replay.archive import load_labels
from focuscrawl.replay.process import ReplayProcess

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"
APACHE = "https://httpd.apache.org/docs/2.4/"
DEBIAN = "https://www.debian.org/doc/manuals/debian-reference/"
SEEDS = {
    "ja": [APACHE + "ja/index.html", DEBIAN + "index.ja.html"],
    "ko": [APACHE + "ko/index.html"],
    "zh": [APACHE + "zh-cn/index.html", DEBIAN + "index.zh-cn.html", DEBIAN + "index.zh-tw.html"],
}


def share(run: Path, labels: dict[str, dict[str, object]], target: str) -> tuple[int, int, int]:
    """(pages in the target language, fetched pages the archive holds, other fetched URLs)."""
    hits = held = other = 0
    for line in (run / "pages.jsonl").read_text(encoding="utf-8").splitlines():
        url = json.loads(line)["url"]
        label = labels.get(url)
        if label is None:
            other += 1
            continue
        held += 1
        hits += normalise_lang(str(label["lang_detected"])) == target
    return hits, held, other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, default=TESTWEB / "multilingual-dev.warc.gz")
    parser.add_argument("--labels", type=Path, default=TESTWEB / "multilingual-dev.labels.jsonl")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--targets", default="ja,ko,zh")
    parser.add_argument("--policies", default="rule,hard,soft,server,directory")
    parser.add_argument("--rules", default="tld-or-anchor")
    parser.add_argument("--out", type=Path, help="keep the run directories here")
    args = parser.parse_args()
    labels = load_labels(args.labels)
    out = args.out or Path(tempfile.mkdtemp(prefix="lang-share-"))
    print(f"runs in {out}; share = target pages / fetched pages the archive holds, of all = / fetched")
    print(f"{'target':6} {'crawl':18} {'share':>6} {'of all':>6} {'target':>6} {'held':>5} {'404':>4} {'fetched':>7}")
    with ReplayProcess([args.archive]) as replay:
        for target in args.targets.split(","):
            runs: list[tuple[str, str, dict[str, object]]] = [("bfs", "bfs", {})]
            runs += [
                (f"{policy}" + ("" if rule == "tld-or-anchor" else f"/{rule}"), "language",
                 {"target": [target], "policy": policy, "rule": rule})
                for rule in args.rules.split(",")
                for policy in args.policies.split(",")
                if not (policy == "rule" and rule == "off")  # that is bfs
            ]  # fmt: skip
            for label, strategy, params in runs:
                run = out / f"{target}-{label.replace('/', '-')}"
                stats = crawl(
                    SEEDS[target], run, strategy=strategy, strategy_params=params,
                    max_pages=args.pages, delay=0.0, proxy=replay.proxy_url,
                    proxy_ca=replay.ca_cert_path,
                )  # fmt: skip
                hits, held, other = share(run, labels, target)
                rate = hits / held if held else 0.0
                overall = hits / stats.fetched if stats.fetched else 0.0
                print(f"{target:6} {label:18} {rate:6.3f} {overall:6.3f} {hits:6d} {held:5d} {other:4d}"
                      f" {stats.fetched:7d}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
