"""Benchmark of the P2 n-gram language model on ../shared/testweb/de-wiki-small.jsonl.

Trains a 5-gram interpolated modified Kneser–Ney model on 80 % of the articles
(every fifth article held out), then reports training time, peak memory
(ru_maxrss), ARPA size, held-out perplexity with and without OOV words, and the
time to score a 1,000-word document with the Python and the KenLM backends.

    python benchmarks/bench_ngram_lm.py [--order 5] [--repeat 200]
    python benchmarks/bench_ngram_lm.py --quality

``--quality`` judges pages instead: the model trained on the same 80 % (its
default: every 10th of those texts held out for the cut-off, discard bound and
buckets), then every page of multilingual-dev judged "German" (py3langid label
``lang_detected=de``: 33 of 2,759 pages, the real ratio) by PP < cut-off, with
accuracy, precision, recall, F1 and AUC (score = −PP); German vs. Japanese AUC;
and the share of the 20 % held-out de-wiki articles under the cut-off.
Neither set is used to set anything.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from focuscrawl.metrics import auc, binary_scores
from focuscrawl.relevance.examples import iter_archive_pages
from focuscrawl.relevance.lm_text import read_texts
from focuscrawl.relevance.ngram_lm import PerplexityModel
from focuscrawl.relevance.ngram_model import NgramLM

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _ms_per_call(fn: object, repeat: int) -> str:
    """Wall-clock and CPU milliseconds per call (CPU time is what a loaded machine distorts least)."""
    assert callable(fn)
    fn()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        fn()
    wall_ms = (time.perf_counter() - wall) / repeat * 1000
    cpu_ms = (time.process_time() - cpu) / repeat * 1000
    return f"{wall_ms:.2f} ms wall, {cpu_ms:.2f} ms CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--order", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--quality", action="store_true", help="judge pages (see above)")
    args = parser.parse_args()
    texts = list(read_texts(TESTWEB / "de-wiki-small.jsonl"))
    train = [t for i, t in enumerate(texts) if i % 5]
    test = [t for i, t in enumerate(texts) if not i % 5]
    if args.quality:
        quality(train, test, args.order)
        return
    rss0 = _rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    model = PerplexityModel.train(train, order=args.order, held_out_every=0)
    train_s, train_cpu = time.perf_counter() - start, time.process_time() - cpu
    rss1 = _rss_mb()
    lm = model.lm
    assert lm is not None
    print(
        f"training texts: {len(train)} articles, {model.info['sentences']} sentences, "
        f"{model.info['tokens']} tokens; n-grams per order: {lm.size}"
    )
    print(
        f"training time: {train_s:.2f} s wall, {train_cpu:.2f} s CPU; peak RSS {rss1:.0f} MB (before training {rss0:.0f} MB)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("model.arpa", "model.arpa.gz"):
            arpa = Path(tmp) / name
            start = time.perf_counter()
            lm.write_arpa(arpa)
            write_s = time.perf_counter() - start
            print(f"{name}: {arpa.stat().st_size / 1e6:.1f} MB, written in {write_s:.2f} s")
        start, cpu = time.perf_counter(), time.process_time()
        again = NgramLM.read_arpa(arpa)
        print(
            f"read back (python) in {time.perf_counter() - start:.2f} s wall, "
            f"{time.process_time() - cpu:.2f} s CPU; identical: {again.probs == lm.probs}"
        )
        del again
        kenlm_model = PerplexityModel.from_arpa(arpa, backend="kenlm")
        held_out = [s for t in test for s in model.sentences(t)]
        for label, m in (("python", model), ("kenlm", kenlm_model)):
            st = m._stats(held_out)
            print(
                f"held-out ({label}): {st.tokens} tokens, {st.oovs} OOV; "
                f"PP {st.perplexity(True):.1f} with OOV, {st.perplexity(False):.1f} without"
            )
        words = " ".join(test).split()[:1000]
        doc = " ".join(words)
        sentences = model.sentences(doc)
        n_words = sum(len(s) for s in sentences)
        print(
            f"1,000-word document: {n_words} words after normalisation, {len(sentences)} sentences"
        )
        print(f"  normalisation: {_ms_per_call(lambda: model.sentences(doc), args.repeat)}")
        for label, m in (("python", model), ("kenlm", kenlm_model)):
            ms = _ms_per_call(lambda m=m: m._stats(sentences), args.repeat)
            print(f"  scoring ({label} backend): {ms}")
        print(
            f"  score_text end to end (python): "
            f"{_ms_per_call(lambda: model.score_text(doc), args.repeat)}"
        )
    print(f"peak RSS at the end: {_rss_mb():.0f} MB")


def quality(train: list[str], test: list[str], order: int) -> None:
    model = PerplexityModel.train(train, order=order)
    held = model.info["held_out"]
    lo, hi = model.bucket_perplexities
    print(
        f"trained on {len(train) - held['texts']} articles, bounds from {held['texts']} held out: "
        f"cut-off PP {model.max_perplexity:.0f} (q{model.cutoff_quantile:g}), discard "
        f"{model.discard_perplexity:.0f}, buckets high <= {lo:.0f} < medium <= {hi:.0f}; "
        f"ceiling 1/p(unk) {model.reference_perplexity:.0f}"
    )
    under = sum(model.perplexity(t) < model.max_perplexity for t in test)
    print(f"unseen de-wiki articles under the cut-off: {under}/{len(test)}")
    import json

    labels_path = TESTWEB / "multilingual-dev.labels.jsonl"
    labels = {r["url"]: r for r in map(json.loads, labels_path.read_text().splitlines())}
    pps: list[float] = []
    langs: list[str] = []
    for page in iter_archive_pages(TESTWEB / "multilingual-dev.warc.gz"):
        if page.url in labels:
            pps.append(model.perplexity(page))
            langs.append(str(labels[page.url].get("lang_detected")))
    truth = [lang == "de" for lang in langs]
    for name, cut in (("cut-off", model.max_perplexity), ("P2 1e5", 1e5)):
        q = binary_scores([pp < cut for pp in pps], truth)
        print(
            f"multilingual-dev, de vs rest at PP < {cut:.0f} ({name}): n={q.n} de={sum(truth)} "
            f"accuracy {q.accuracy:.4f} precision {q.precision:.3f} recall {q.recall:.3f} "
            f"F1 {q.f1:.3f}; AUC {auc([-p for p in pps], truth):.4f}; "
            f"always-no accuracy {1 - sum(truth) / len(truth):.4f}"
        )
    pairs = [(p, lang == "de") for p, lang in zip(pps, langs, strict=True) if lang in ("de", "ja")]
    print(f"de vs ja AUC {auc([-p for p, _ in pairs], [d for _, d in pairs]):.4f}")
    for lang in sorted(set(langs)):
        mine = sorted(p for p, x in zip(pps, langs, strict=True) if x == lang)
        print(
            f"  {lang}: {len(mine)} pages, median PP {mine[len(mine) // 2]:.0f}, "
            f"{model.bucket(mine[len(mine) // 2])}"
        )


if __name__ == "__main__":
    main()
