"""Accuracy and speed of page and anchor language identification on multilingual-dev.

Pages: both backends against ``lang_detected`` (py3langid's own output, so biased
towards py3langid) and against ``lang_dir`` on the real translations only (no
``alias_of``, and ``<html lang>`` equal to the folder language).

Anchors: the anchors of the real translations, target = the page's language,
kept only where the anchor is evidence of that language: for ja / zh / ko / ru
anchors with letters of the language's script (Han or kana / Han / Hangul /
Cyrillic); for the other Latin-script languages anchors that never occur as an
anchor of an English page (i.e. translated ones, not directive or module names);
for English anchors of at least two alphabetic words. Counted per occurrence
and per distinct (anchor, language) pair.

Crawl judgements at the real ratio: for each target language, every page of
multilingual-dev (English fallbacks included) judged by ``LanguageModel``, truth =
a real translation into the target (no ``alias_of``, ``<html lang>``, else the
file's language suffix, = target);
the old rule (best language only, ``decide="top"``) against the default share rule
(target share of the text >= 0.25). And anchors as a crawl meets them: for each
target, its anchors (recall) against English anchors (false positives), with the
model's default anchor rule (py3langid among the target and English, Han read
in the page's language).

    python benchmarks/bench_language.py [--archive A --labels L]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from focuscrawl.metrics import binary_scores
from focuscrawl.parse.html import page_from_bytes
from focuscrawl.relevance.language import (
    BACKENDS,
    LanguageModel,
    anchor_language,
    cld2_languages,
    normalise_lang,
    page_language,
    py3langid_languages,
    script_counts,
)
from focuscrawl.relevance.language_links import TLD_LANGUAGES
from focuscrawl.replay.archive import iter_responses, load_labels
from focuscrawl.types import Page

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"
_SCRIPTS = {"ja": ("kana", "han"), "zh": ("han",), "ko": ("hangul",), "ru": ("cyrillic",)}


def is_real_translation(page: Page, label: dict[str, object]) -> bool:
    return "alias_of" not in label and normalise_lang(page.lang) == normalise_lang(
        str(label["lang_dir"])
    )


def anchor_items(real: list[Page]) -> list[tuple[str, str]]:
    """(anchor, language) pairs that are evidence of the page's language (see module doc)."""
    english = {
        link.anchor.strip().lower()
        for p in real
        if normalise_lang(p.lang) == "en"
        for link in p.links
    }
    items: list[tuple[str, str]] = []
    for page in real:
        lang = normalise_lang(page.lang)
        for link in page.links:
            anchor = link.anchor.strip()
            counts = script_counts(anchor)
            if lang in _SCRIPTS:
                keep = any(s in counts for s in _SCRIPTS[lang])
            elif lang == "en":
                keep = sum(1 for w in anchor.split() if w.isalpha()) >= 2
            else:
                keep = "latin" in counts and anchor.lower() not in english
            if keep:
                items.append((anchor, lang))
    return items


def accuracy(
    pairs: list[tuple[str, str]], guess: Callable[[str, str], str | None]
) -> tuple[float, float, dict[str, float]]:
    hits = [guess(a, lang) == lang for a, lang in pairs]
    distinct: dict[tuple[str, str], bool] = dict(zip(pairs, hits, strict=True))
    per: dict[str, list[bool]] = {}
    for (_, lang), hit in distinct.items():
        per.setdefault(lang, []).append(hit)
    return (
        sum(hits) / len(hits),
        sum(distinct.values()) / len(distinct),
        {k: sum(v) / len(v) for k, v in sorted(per.items())},
    )


def judge_pages(pages: list[Page], labels: dict[str, dict[str, object]]) -> None:
    # truth: a page that is not a fallback copy, in its <html lang> (the Debian pages have
    # none: their file suffix, lang_dir)
    real_lang = {
        p.url: normalise_lang(p.lang or str(labels[p.url]["lang_dir"]))
        for p in pages
        if "alias_of" not in labels[p.url]
    }
    print("\n| target | pages (positive) | rule | accuracy | precision | recall | F1 |")
    print("|---|---|---|---|---|---|---|")
    for target in ("ja", "zh", "ko", "de", "fr", "es", "ru", "tr", "pt"):
        truth = [real_lang.get(p.url) == target for p in pages]
        for rule in ("top", "share"):
            model = LanguageModel([target], decide=rule)
            q = binary_scores([model.score(p) >= (model.threshold or 0.5) for p in pages], truth)
            print(
                f"| {target} | {q.n} ({sum(truth)}) | {rule} | {q.accuracy:.4f} | "
                f"{q.precision:.3f} | {q.recall:.3f} | {q.f1:.3f} |"
            )


def judge_anchors(items: list[tuple[str, str]]) -> None:
    english = sorted({a for a, lang in items if lang == "en"})
    print("\n| target | its anchors (distinct) | recall | English anchors | false positives |")
    print("|---|---|---|---|---|")
    for target in sorted({lang for _, lang in items} - {"en"}):
        mine = sorted({a for a, lang in items if lang == target})
        model = LanguageModel([target])
        hits = sum(model.score_text(a, target) for a in mine)  # Han read in the page's language
        fps = sum(model.score_text(a, "en") for a in english)
        print(
            f"| {target} | {len(mine)} | {hits / len(mine):.3f} | {len(english)} | "
            f"{fps / len(english):.3f} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=str(TESTWEB / "multilingual-dev.warc.gz"))
    parser.add_argument("--labels", default=str(TESTWEB / "multilingual-dev.labels.jsonl"))
    args = parser.parse_args()
    labels = load_labels(args.labels)
    pages = [page_from_bytes(r.url, r.body, r.content_type) for r in iter_responses(args.archive)]
    real = [p for p in pages if is_real_translation(p, labels[p.url])]
    print(f"multilingual-dev: {len(pages)} pages, {len(real)} real translations\n")
    print(
        "| backend | acc. vs lang_detected (all) | acc. vs lang_dir (real translations) | pages/s |"
    )
    print("|---|---|---|---|")
    for backend in BACKENDS:
        page_language(pages[0], backend)  # load the model outside the timing
        start = time.perf_counter()
        found = {p.url: page_language(p, backend)[0] for p in pages}
        rate = len(pages) / (time.perf_counter() - start)
        det = sum(found[p.url] == normalise_lang(labels[p.url]["lang_detected"]) for p in pages)
        real_ok = sum(found[p.url] == normalise_lang(labels[p.url]["lang_dir"]) for p in real)
        print(f"| {backend} | {det / len(pages):.4f} | {real_ok / len(real):.4f} | {rate:.0f} |")

    items = anchor_items(real)
    candidates = sorted({lang for _, lang in items})
    print(
        f"\nanchors: {len(items)} occurrences, {len(set(items))} distinct; candidates {','.join(candidates)}\n"
    )
    methods: list[tuple[str, Callable[[str, str], str | None]]] = [
        ("cld2 alone", lambda a, _: (cld2_languages(a) or [("und", 0.0)])[0][0]),
        ("py3langid alone", lambda a, _: py3langid_languages(a, None)[0][0]),
        ("script + py3langid", lambda a, _: anchor_language(a)),
        (
            "script + py3langid over candidates",
            lambda a, _: anchor_language(a, candidates=candidates),
        ),
        (
            "... + page language as Han context",
            lambda a, lang: anchor_language(a, context=lang, candidates=candidates),
        ),
    ]
    print("| method | acc. (occurrences) | acc. (distinct) | ja | zh | ko | en | fr | de |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, guess in methods:
        occ, dist, per = accuracy(items, guess)
        cols = " | ".join(f"{per.get(k, 0.0):.3f}" for k in ("ja", "zh", "ko", "en", "fr", "de"))
        print(f"| {name} | {occ:.4f} | {dist:.4f} | {cols} |")
    judge_pages(pages, labels)
    judge_anchors(items)
    print(f"\nTLD table: {len(TLD_LANGUAGES)} ccTLDs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
