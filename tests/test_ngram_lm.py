"""The P2 n-gram language model: training, ARPA, perplexity, the ``perplexity`` relevance model."""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

import pytest

from focuscrawl.commands.model.perplexity import CLI_COMMANDS
from focuscrawl.commands.model.train import trainer
from focuscrawl.exceptions import FocuscrawlError, ModelError
from focuscrawl.relevance.base import build_model, load_model, save_model
from focuscrawl.relevance.kneser_ney import train_kneser_ney
from focuscrawl.relevance.lm_text import lm_sentences, read_texts, sentence_words
from focuscrawl.relevance.ngram_lm import PerplexityModel
from focuscrawl.relevance.ngram_model import BOS, EOS, NgramLM
from focuscrawl.types import Page
from tests.conftest import shared_file

TOY = [["a", "b"], ["a", "b"], ["b", "a"]]


@pytest.fixture(scope="module")
def cat_sentences() -> list[list[str]]:
    text = shared_file("cat-en.txt").read_text(encoding="utf-8")
    return lm_sentences(text, min_words=5, dedup=True)


# -- text preparation -----------------------------------------------------------
@pytest.mark.parametrize(
    ("sentence", "words"),
    [
        ("Hello, World!", ["hello", "world"]),
        ("In 1998 the B52 flew 3.5 km.", ["in", "the", "flew", "km"]),
        ("E-Mail-Adresse: don't use_this", ["e-mail-adresse", "don't", "use", "this"]),
        ("Größe „Über“ — ÄRGER", ["größe", "über", "ärger"]),
        (
            "Apacheの設定ファイル httpd.conf",
            ["apache", "の", "設", "定", "フ", "ァ", "イ", "ル", "httpd", "conf"],
        ),
        ("한국어 문서", ["한", "국", "어", "문", "서"]),
        ("中文zh", ["中", "文", "zh"]),
    ],
    ids=[
        "punctuation",
        "numbers",
        "inner-hyphen-apostrophe",
        "german",
        "japanese",
        "korean",
        "chinese",
    ],
)
def test_sentence_words(sentence: str, words: list[str]) -> None:
    assert sentence_words(sentence) == words


def test_training_sentences_filter_and_dedup() -> None:
    text = "One two three four five. Too short here.\nOne two three four five! Six seven eight nine ten"
    assert lm_sentences(text, min_words=5, dedup=True) == [
        ["one", "two", "three", "four", "five"],
        ["six", "seven", "eight", "nine", "ten"],
    ]
    assert len(lm_sentences(text, min_words=1)) == 4


def test_chinese_and_japanese_sentences_end_at_their_full_stop() -> None:
    """。！？ end a sentence with no space after them: a Japanese paragraph was one
    sentence, so P2's training kept its repeated sentences (no de-duplication) and a
    page's perplexity counted one </s> for the paragraph."""
    text = "今日は晴れです。今日は晴れです。明日は雨です！「本当？」はい、本当です"
    assert lm_sentences(text, min_words=5, dedup=True) == [
        list("今日は晴れです"),
        list("明日は雨です"),
        list("はい本当です"),
    ]
    assert lm_sentences(text, min_words=1) == [list("今日は晴れです")] * 2 + [
        list("明日は雨です"), list("本当"), list("はい本当です")]  # fmt: skip
    model = PerplexityModel.train(
        ["这是一个测试。这是一个测试。那是另一个测试。"], order=2, held_out_every=0
    )
    assert model.info["sentences"] == 2
    assert model.info["tokens"] == 6 + 1 + 7 + 1  # the words of each and its </s>


def test_read_texts_jsonl_skips_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "eins"}\nnot json\n{"other": 1}\n[1]\n{"text": "zwei"}\n', "utf-8")
    assert list(read_texts(path)) == ["eins", "zwei"]
    with pytest.raises(ModelError, match="no such text file"):
        list(read_texts(tmp_path / "missing.txt"))


# -- the estimator against hand computations --------------------------------------
def test_toy_bigram_probabilities_by_hand() -> None:
    """Corpus <s> a b </s> (twice), <s> b a </s>; all count-of-counts need the fallback D = 0.5, 1, 1.5.

    Unigram continuation counts a = b = </s> = 2, so u = (2 − 1)/6 = 1/6, γ(ε) = 3·1/6 = 1/2,
    |V| = 4 (<unk>, </s>, a, b): p(a) = 1/6 + 1/8 = 7/24, p(<unk>) = 1/8.
    Context <s>: counts a 2, b 1 → u(a) = 1/3, u(b) = 0.5/3, γ = 1.5/3:
    p(a|<s>) = 1/3 + 7/48 = 23/48, p(b|<s>) = 15/48, p(</s>|<s>) = 7/48, p(<unk>|<s>) = 3/48.
    """
    lm = train_kneser_ney(TOY, order=2)
    expected = {
        ("a", ()): 7 / 24,
        ("</s>", ()): 7 / 24,
        ("<unk>", ()): 1 / 8,
        ("a", (BOS,)): 23 / 48,
        ("b", (BOS,)): 15 / 48,
        ("</s>", (BOS,)): 7 / 48,
        ("zzz", (BOS,)): 3 / 48,
        ("b", ("a",)): 23 / 48,
        ("</s>", ("b",)): 23 / 48,
    }
    for (word, context), p in expected.items():
        assert 10 ** lm.log10_prob(word, context) == pytest.approx(p, rel=1e-6), (word, context)


def test_modified_discounts_by_hand_on_a_bigram_corpus() -> None:
    """The production path (Chen & Goodman discounts from count-of-counts, no fallback).

    Sentences [a b] x3, [a c], [d] x2. Bigram counts: <s>a 4, ab 3, b</s> 3, <s>d 2,
    d</s> 2, ac 1, c</s> 1: t1 = t2 = t3 = 2, t4 = 1, Y = 2/(2 + 4) = 1/3,
    D1 = 1 − 2·(1/3)·2/2 = 1/3, D2 = 2 − 3·(1/3)·2/2 = 1, D3+ = 3 − 4·(1/3)·1/2 = 7/3.
    Unigrams (continuation counts): a b c d 1 each, </s> 3 (after b, c, d); t2 = 0 so
    the fallback D = 0.5, 1, 1.5 there: Σ = 7, γ(ε) = (4·0.5 + 1.5)/7 = 1/2, V = 6
    (<unk>, </s>, a, b, c, d): p(a) = 0.5/7 + 1/12 = 13/84, p(</s>) = 1.5/7 + 1/12 = 25/84,
    p(<unk>) = 7/84.
    Context a (ab 3, ac 1; Σ 4): u(b|a) = (3 − 7/3)/4 = 1/6, u(c|a) = (1 − 1/3)/4 = 1/6,
    γ(a) = (7/3 + 1/3)/4 = 2/3: p(b|a) = 1/6 + 2/3·13/84 = 17/63, p(d|a) = 13/126,
    p(</s>|a) = 25/126. Context <s> (<s>a 4, <s>d 2; Σ 6): u(a|<s>) = (4 − 7/3)/6 = 5/18,
    u(d|<s>) = (2 − 1)/6 = 1/6, γ(<s>) = (7/3 + 1)/6 = 5/9: p(a|<s>) = 5/18 + 5/9·13/84
    = 275/756, p(d|<s>) = 191/756.
    """
    lm = train_kneser_ney([["a", "b"]] * 3 + [["a", "c"]] + [["d"]] * 2, order=2)
    expected = {
        ("a", ()): 13 / 84,
        (EOS, ()): 25 / 84,
        ("zzz", ()): 7 / 84,
        ("b", ("a",)): 17 / 63,
        ("c", ("a",)): 17 / 63,
        ("d", ("a",)): 13 / 126,
        (EOS, ("a",)): 25 / 126,
        ("a", (BOS,)): 275 / 756,
        ("d", (BOS,)): 191 / 756,
    }
    for (word, context), p in expected.items():
        assert 10 ** lm.log10_prob(word, context) == pytest.approx(p, rel=1e-5), (word, context)


def test_exclude_every_leaves_texts_out_of_training_and_bounds(tmp_path: Path) -> None:
    # 20 texts; exclude_every = 5 drops texts 5, 10, 15, 20 (the evaluation's held-out share);
    # of the 16 left, the 10th (text 12) is held out for the bounds, 15 are trained on
    names = "ant bee cat dog eel fox gnu hen ibis jay kiwi lark mole newt owl pig quail rat seal toad"
    lines = [f"{name} common words here" for name in names.split()]
    (tmp_path / "t.txt").write_text("\n".join(lines) + "\n", "utf-8")
    cfg = {"texts": ["t.txt"], "order": 2, "min_words": 1, "dedup": False, "exclude_every": 5}
    model = _built(cfg, tmp_path)
    assert model.info["sentences"] == 15
    assert model.info["held_out"]["texts"] == 1
    assert model.lm is not None
    known = set(model.lm.words)
    assert {"eel", "jay", "owl", "toad", "lark"}.isdisjoint(known)  # texts 5, 10, 15, 20 and 12
    assert {"ant", "kiwi", "seal"} <= known


def test_toy_perplexity_with_and_without_oov() -> None:
    """p(a|<s>) = 23/48, p(<unk>|a) = γ(a)·1/8 = 1/16, p(</s>|<unk>) = p(</s>) = 7/24."""
    lm = train_kneser_ney(TOY, order=2)
    assert lm.perplexity([["a", "b"]]) == pytest.approx(48 / 23, rel=1e-6)
    st = lm.stats([["a", "zzz"]])
    assert (st.tokens, st.oovs) == (3, 1)
    with_oov = (23 / 48 * 1 / 16 * 7 / 24) ** (-1 / 3)
    without = (23 / 48 * 7 / 24) ** (-1 / 2)
    assert st.perplexity(True) == pytest.approx(with_oov, rel=1e-6)
    assert st.perplexity(False) == pytest.approx(without, rel=1e-6)
    assert lm.perplexity([]) == math.inf


@pytest.mark.parametrize("order", [2, 3, 5], ids=["bigram", "trigram", "5-gram"])
def test_each_context_sums_to_one(order: int, cat_sentences: list[list[str]]) -> None:
    """Σ_w p(w|h) over V (every word but <s>) = 1 for seen and unseen contexts of every length."""
    lm = train_kneser_ney(cat_sentences[:40], order=order)
    vocab = [w for w in lm.words if w != BOS]
    rng = random.Random(order)
    contexts: list[tuple[str, ...]] = [(), ("never-seen",), (BOS, "never-seen")]
    for n in range(1, order):
        keys = sorted(lm.probs[n - 1])
        contexts += [tuple(lm.ngram_words(k, n)) for k in rng.sample(keys, min(15, len(keys)))]
    for context in contexts:
        total = math.fsum(10 ** lm.log10_prob(w, context) for w in vocab)
        assert total == pytest.approx(1.0, abs=1e-6), context


def test_fast_and_plain_queries_agree(cat_sentences: list[list[str]]) -> None:
    lm = train_kneser_ney(cat_sentences[:100], order=4)
    sentences = [*cat_sentences[100:110], ["the", "cat", "unknownword", "sat", "on", "a", "mat"]]
    for words in sentences:
        ids = [lm.ids.get(w, 0) for w in words] + [2]
        plain = [lm.log10_prob(w, [BOS, *words[:i]]) for i, w in enumerate([*words, EOS])]
        assert lm.log10_probs(ids) == plain


# -- independent implementations ----------------------------------------------------
@pytest.mark.parametrize(("order", "discount"), [(3, 0.1), (4, 0.75)], ids=["3-gram", "4-gram"])
def test_matches_nltk_kneser_ney(
    order: int, discount: float, cat_sentences: list[list[str]]
) -> None:
    """Independent check of the training against NLTK's ``KneserNeyInterpolated``.

    NLTK implements plain interpolated KN with one discount and its own conventions
    (order−1 pads at both ends, continuation counts for every lower order, γ from
    raw type counts, unigrams undiscounted). Trained with ``discount="single",
    nltk=True`` our estimator must give the same conditional probabilities — this
    exercises counting, continuation counts, interpolation, the conversion to
    back-off weights and the ARPA back-off query. The test sentences reorder
    training words, so most tokens go through back-off; perplexities agree within 1 %
    (in fact to the 7-decimal rounding of our log values).
    """
    nltk_lm = pytest.importorskip("nltk.lm")
    from nltk.lm.preprocessing import padded_everygram_pipeline

    train = cat_sentences[:60]
    ours = train_kneser_ney(train, order, discount="single", fixed_discount=discount, nltk=True)
    ngrams, vocab = padded_everygram_pipeline(order, train)
    theirs = nltk_lm.KneserNeyInterpolated(order, discount=discount)
    theirs.fit(ngrams, vocab)
    rng = random.Random(7)
    tests = [train[3], train[20], rng.sample(train[5] + train[7], 12), rng.sample(train[30], 6)]
    log_ours: list[float] = []
    log_theirs: list[float] = []
    for words in tests:
        padded = [BOS] * (order - 1) + words + [EOS]
        for i in range(order - 1, len(padded)):
            context = padded[i - order + 1 : i]
            log_ours.append(ours.log10_prob(padded[i], context))
            log_theirs.append(math.log10(theirs.score(padded[i], context)))
    assert max(abs(a - b) for a, b in zip(log_ours, log_theirs, strict=True)) < 1e-6
    pp_ours = 10 ** (-sum(log_ours) / len(log_ours))
    pp_theirs = 10 ** (-sum(log_theirs) / len(log_theirs))
    assert pp_ours == pytest.approx(pp_theirs, rel=0.01)


def test_kenlm_reads_our_arpa_and_agrees(tmp_path: Path, cat_sentences: list[list[str]]) -> None:
    """KenLM loads our ARPA file and gives the same per-token scores and perplexities."""
    kenlm = pytest.importorskip("kenlm")
    model = PerplexityModel.train(
        [" ".join(" ".join(s) + "." for s in cat_sentences[:300])], order=5
    )
    assert model.lm is not None
    arpa = tmp_path / "m.arpa"
    model.lm.write_arpa(arpa)
    k = kenlm.Model(str(arpa))
    held_out = [*cat_sentences[300:360], ["zebras", "and", "cats", "like", "quantum", "physics"]]
    for words in held_out:
        ids = [model.lm.ids.get(w, 0) for w in words] + [2]
        ours = model.lm.log10_probs(ids)
        theirs = [score for score, _, _ in k.full_scores(" ".join(words))]
        assert ours == pytest.approx(theirs, abs=1e-5)
    via_kenlm = PerplexityModel.from_arpa(arpa, backend="kenlm")
    a, b = model.lm.stats(held_out), via_kenlm._stats(held_out)
    assert (a.tokens, a.oovs) == (b.tokens, b.oovs)
    assert a.oovs > 0
    for include_oov in (True, False):
        assert a.perplexity(include_oov) == pytest.approx(b.perplexity(include_oov), rel=1e-5)


# -- ARPA -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["m.arpa", "m.arpa.gz"], ids=["plain", "gzip"])
def test_arpa_round_trip(tmp_path: Path, name: str, cat_sentences: list[list[str]]) -> None:
    lm = train_kneser_ney(cat_sentences[:80], order=3)
    lm.write_arpa(tmp_path / name)
    again = NgramLM.read_arpa(tmp_path / name)
    assert again.words == lm.words
    assert again.probs == lm.probs
    assert again.bows == lm.bows
    sentences = cat_sentences[80:90]
    assert again.stats(sentences) == lm.stats(sentences)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello\n", "no \\\\data"),
        ("\\data\\\nngram 1=3\n\n\\1-grams:\n-99\t<s>\n-1\t</s>\n", "counts do not match"),
        ("\\data\\\nngram 1=2\n\n\\1-grams:\n-1\t<s>\nxyz\t</s>\n\\end\\\n", "bad ARPA line"),
        ("\\data\\\nngram 1=1\n\n\\1-grams:\n-1\t<s>\n\\end\\\n", "must hold <s> and </s>"),
        (
            "\\data\\\nngram 1=2\nngram 2=1\n\n\\1-grams:\n-99\t<s>\n-1\t</s>\n\n\\2-grams:\n-1\t<s> x\n\\end\\\n",
            "missing from the 1-grams",
        ),
    ],
    ids=["no-data", "count-mismatch", "bad-number", "no-boundaries", "unknown-word"],
)
def test_bad_arpa_is_a_model_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.arpa"
    path.write_text(text, "utf-8")
    with pytest.raises(ModelError, match=message):
        NgramLM.read_arpa(path)


def test_arpa_without_unk_gets_kenlm_default(tmp_path: Path) -> None:
    path = tmp_path / "small.arpa"
    path.write_text(
        "\\data\\\nngram 1=3\n\n\\1-grams:\n-99\t<s>\t-0.5\n-0.5\t</s>\n-0.3\tx\n\\end\\\n"
    )
    lm = NgramLM.read_arpa(path)
    assert lm.log10_prob("y") == -100.0
    assert lm.log10_prob("x", [BOS]) == -0.3  # a unigram model ignores the context


# -- the relevance model ------------------------------------------------------------------
def _toy_model(**options: object) -> PerplexityModel:
    """The toy corpus of ``test_toy_bigram_probabilities_by_hand`` (kept without de-duplication)."""
    return PerplexityModel.train(["A b. A b. B a."], order=2, min_words=1, dedup=False, **options)  # type: ignore[arg-type]


def test_model_perplexity_and_score_by_hand() -> None:
    model = _toy_model()
    assert model.reference_perplexity == pytest.approx(8.0, rel=1e-6)  # 1/p(<unk>) = 8
    assert model.perplexity("A, b!") == pytest.approx(48 / 23, rel=1e-6)
    assert model.perplexity("a zzz") == pytest.approx((23 / 48 / 16 * 7 / 24) ** (-1 / 3), rel=1e-6)
    assert model.perplexity("a zzz", include_oov=False) == pytest.approx(
        (23 / 48 * 7 / 24) ** (-1 / 2), rel=1e-6
    )
    # score = 1 − ln PP / ln 8
    assert model.score_text("a b") == pytest.approx(1 - math.log(48 / 23) / math.log(8), rel=1e-6)
    assert model.pp_to_score(1.0) == 1.0
    assert model.pp_to_score(8.0) == pytest.approx(0.0, abs=1e-6)
    assert model.pp_to_score(1e9) == 0.0
    assert model.pp_to_score(math.inf) == 0.0
    assert model.score_text("") == 0.0  # no words: PP = inf
    assert model.score_text("a b") > model.score_text("b b b b") > model.score_text("x y z")


def test_threshold_in_perplexity_terms() -> None:
    model = _toy_model(max_perplexity=4.0)
    assert model.threshold == pytest.approx(1 - math.log(4) / math.log(8), rel=1e-6)  # = 1/3
    assert model.score_text("a b") >= model.threshold  # PP 2.09 < 4
    assert _toy_model(threshold=0.9).threshold == 0.9


def test_bounds_from_held_out_texts_by_hand() -> None:
    model = _toy_model()  # one text: nothing held out, P2's fixed values
    assert model.info.get("held_out") is None
    # but its ceiling is below P2's cut-off 10^5: the cut-off at P2's place below it
    cut = model.reference_perplexity ** (5 / 7)
    assert (model.max_perplexity, model.discard_perplexity) == (pytest.approx(cut), 1e5)
    assert model.bucket_perplexities == pytest.approx((cut, cut))
    pp1, pp2 = model.perplexity("a b"), model.perplexity("a zzz")  # 48/23 = 2.09 and 4.86
    model.calibrate(["a b", "a zzz", "1 2 3"])  # the last has no words: skipped
    assert model.info["held_out"]["texts"] == 2
    # numpy's linear quantiles of two values: q = pp1 + q·(pp2 − pp1)
    assert model.max_perplexity == pytest.approx(pp1 + 0.95 * (pp2 - pp1), rel=1e-4)
    assert model.discard_perplexity == pytest.approx(2 * pp2, rel=1e-4)
    assert model.bucket_perplexities[0] == pytest.approx((pp1 + pp2) / 2, rel=1e-4)
    assert model.bucket_perplexities[1] == model.max_perplexity
    assert model.threshold == pytest.approx(model.pp_to_score(model.max_perplexity))
    assert [model.bucket(x) for x in (2.0, 4.0, 6.0, 10.0)] == [
        "high",
        "medium",
        "normal",
        "discard",
    ]
    # values set by hand stay; the rest follows the held-out texts
    fixed = _toy_model(max_perplexity=4.0, cutoff_quantile=0.5).calibrate(["a b", "a zzz"])
    assert fixed.max_perplexity == 4.0
    assert fixed.discard_perplexity == pytest.approx(2 * pp2, rel=1e-4)
    with pytest.raises(ModelError, match="no held-out text"):
        _toy_model().calibrate(["", "42"])
    with pytest.raises(ModelError, match="cutoff_quantile"):
        _toy_model(cutoff_quantile=0.0)


def test_training_holds_out_every_tenth_text(tmp_path: Path) -> None:
    texts = [f"a b a b. text {i} here now" for i in range(19)] + ["b a b a b a"]
    model = PerplexityModel.train(texts, order=2, min_words=1, dedup=False)
    assert model.info["held_out"]["texts"] == 2  # texts 10 and 20
    plain = PerplexityModel.train(texts, order=2, min_words=1, dedup=False, held_out_every=0)
    assert plain.info["sentences"] - model.info["sentences"] == 2 + 1  # text 10: 2, text 20: 1
    assert "held_out" not in plain.info
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, PerplexityModel)
    assert (loaded.max_perplexity, loaded.discard_perplexity, loaded.bucket_perplexities) == (
        model.max_perplexity,
        model.discard_perplexity,
        model.bucket_perplexities,
    )
    assert loaded.threshold == model.threshold
    (tmp_path / "more.txt").write_text("a b a b\nb b b b\n", "utf-8")
    cfg = {"arpa": "m/model.arpa.gz", "held_out": "more.txt"}
    built = _built(cfg, tmp_path)
    assert built.info["held_out"]["texts"] == 2
    assert built.discard_perplexity == pytest.approx(2 * built.perplexity("b b b b"), rel=1e-4)


def test_page_boilerplate_removed_with_fallback() -> None:
    model = _toy_model()
    page = Page(url="http://x.test/", html="", text="a b")
    assert model.page_text(page) == "a b"  # no HTML: the parser's text
    assert model.perplexity(page) == pytest.approx(48 / 23, rel=1e-6)
    assert _toy_model(boilerplate=False).page_text(Page(url="u", html="<p>z</p>", text="t")) == "t"


def test_save_load_and_registry(tmp_path: Path) -> None:
    model = _toy_model(max_perplexity=4.0)
    save_model(model, tmp_path / "m")
    assert (tmp_path / "m" / "model.arpa.gz").is_file()
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, PerplexityModel)
    assert loaded.perplexity("a zzz") == model.perplexity("a zzz")
    assert loaded.threshold == model.threshold
    assert loaded.info["sentences"] == 3
    assert PerplexityModel.train(["A b. A b. B a."], min_words=1).info["sentences"] == 2  # dedup
    # an existing ARPA model through the topic file's [model] table, both backends
    for backend in ("python", "kenlm"):
        if backend == "kenlm":
            pytest.importorskip("kenlm")
        cfg = {"name": "perplexity", "arpa": "m/model.arpa.gz", "backend": backend}
        built = build_model(cfg, tmp_path)
        assert isinstance(built, PerplexityModel)
        assert built.perplexity("a b") == pytest.approx(48 / 23, rel=1e-5)


def _built(cfg: dict[str, object], base_dir: Path) -> PerplexityModel:
    model = build_model({"name": "perplexity", **cfg}, base_dir)
    assert isinstance(model, PerplexityModel)
    return model


def test_from_config_trains_on_texts(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"body": "A b. A b. B a."}\n', "utf-8")
    cfg = {"texts": ["d.jsonl"], "field": "body", "order": 2, "min_words": 1, "dedup": False}
    model = _built(cfg, tmp_path)
    assert model.perplexity("a b") == pytest.approx(48 / 23, rel=1e-6)


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({}, "give 'arpa'"),
        ({"texts": ["a.txt"], "ordre": 3}, "perplexity model: unknown parameter 'ordre' \\(known: arpa, "),
        ({"texts": ["missing.txt"]}, "no such text file"),
        ({"arpa": "missing.arpa"}, "cannot read ARPA"),
        ({"arpa": "missing.arpa", "backend": "gpu"}, "unknown backend"),
    ],
    ids=["nothing", "typo", "missing-texts", "missing-arpa", "bad-backend"],
)
def test_bad_config_is_one_line(tmp_path: Path, cfg: dict[str, object], message: str) -> None:
    with pytest.raises(FocuscrawlError, match=message):
        _built(cfg, tmp_path)


def test_cli_train_and_perplexity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    texts = tmp_path / "t.txt"
    texts.write_text("A b. A b. B a.\n", "utf-8")
    parser = argparse.ArgumentParser()
    trainer("perplexity").add_arguments(parser)
    args = parser.parse_args(
        ["--texts", str(texts), "--order", "2", "--min-words", "1", "--no-dedup"]
    )
    save_model(trainer("perplexity").train(args), tmp_path / "m")
    doc = tmp_path / "doc.txt"
    doc.write_text("a zzz\n", "utf-8")
    add_arguments, run = CLI_COMMANDS["perplexity"]
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run(parser.parse_args([str(tmp_path / "m"), str(doc)])) == 0
    header, line = capsys.readouterr().out.strip().splitlines()
    assert header.split("\t") == ["file", "pp", "pp_without_oov", "tokens", "oov"]
    with_oov = (23 / 48 / 16 * 7 / 24) ** (-1 / 3)
    without = (23 / 48 * 7 / 24) ** (-1 / 2)
    assert line.split("\t") == [str(doc), f"{with_oov:.2f}", f"{without:.2f}", "3", "1"]


# -- real pages of the shared test web -------------------------------------------------------
def test_real_pages_cat_model(cat_sentences: list[list[str]]) -> None:
    """An English model of the 'Cat' article: the Cat page beats Dog, which beats a German text."""
    from focuscrawl.parse.html import page_from_bytes
    from focuscrawl.replay.archive import iter_responses

    model = PerplexityModel.train([shared_file("cat-en.txt").read_text("utf-8")], order=5)
    wanted = {
        "http://schools-wikipedia.org/wp/c/Cat.htm",
        "http://schools-wikipedia.org/wp/d/Dog.htm",
    }
    pages: dict[str, Page] = {}
    for rec in iter_responses(shared_file("wikispeedia.warc.gz")):
        if rec.url in wanted:
            pages[rec.url.rsplit("/", 1)[1]] = page_from_bytes(rec.url, rec.body, rec.content_type)
            if len(pages) == len(wanted):
                break
    cat, dog = pages["Cat.htm"], pages["Dog.htm"]
    assert "subject index" in cat.text
    assert "subject index" not in model.page_text(cat)  # navigation removed by trafilatura
    german = next(iter(read_texts(shared_file("de-wiki-small.jsonl"))))
    pp_cat, pp_dog, pp_de = model.perplexity(cat), model.perplexity(dog), model.perplexity(german)
    assert pp_cat < 20 < pp_dog < pp_de  # the Cat page is (nearly) the training text
    assert model.score(cat) > model.score(dog) > model.score_text(german)
    assert model.perplexity(dog, include_oov=False) < pp_dog


def test_a_model_of_one_article_does_not_judge_every_page_relevant() -> None:
    """Trained on one text, no text is held out for the bounds and P2's fixed cut-off,
    PP 10^5, was the relevance cut-off: above this model's ceiling (8,744, the PP of a
    page of unknown words), so its threshold was 0 and a German page was relevant to an
    English model of the Cat article (every crawl with it: harvest rate 1.000)."""
    model = PerplexityModel.train([shared_file("cat-en.txt").read_text("utf-8")], order=5)
    ceiling = model.reference_perplexity
    assert not model.calibrated
    assert ceiling < 1e5
    # P2's cut-off at its place below P2's ceiling: 10^5 of 10^7 -> PP = ceiling^(5/7), score 2/7
    assert model.max_perplexity == pytest.approx(ceiling ** (5 / 7))
    assert model.threshold == pytest.approx(2 / 7)
    german = next(iter(read_texts(shared_file("de-wiki-small.jsonl"))))
    assert model.score_text(german) < model.threshold
    assert model.score_text(shared_file("cat-en.txt").read_text("utf-8")) >= model.threshold


def test_real_german_model_on_held_out_articles() -> None:
    """German model on 100 de-wiki articles: held-out German text beats the English Cat text."""
    texts = list(read_texts(shared_file("de-wiki-small.jsonl")))
    model = PerplexityModel.train(texts[:100], order=5)
    held_out = "\n".join(texts[500:510])
    english = shared_file("cat-en.txt").read_text("utf-8")
    pp_de, pp_en = model.perplexity(held_out), model.perplexity(english)
    assert pp_de < pp_en
    assert model.score_text(held_out) > model.score_text(english)
    st = model.stats(held_out)
    assert 0 < st.oovs < st.tokens
    assert st.perplexity(False) < st.perplexity(True)
    # a Japanese paragraph with Latin names, as on the translated manuals, is far above
    # the German cut-off: per character, the unknown script weighs its length
    model.calibrate(texts[100:120])
    japanese = (
        "Apache HTTP サーバのドキュメントです。httpd.conf の設定ファイルを編集して、"
        "DocumentRoot と ServerName を変更します。詳細はモジュールの説明を参照してください。"
    )
    assert model.perplexity(japanese) > model.discard_perplexity > model.max_perplexity
    assert model.bucket(model.perplexity(japanese)) == "discard"
    assert model.perplexity(held_out) < model.max_perplexity
