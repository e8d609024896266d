"""One parameter system: settings, strategies, filters and models read TOML / env / CLI values
by the same rules, and a bad key or value is the same one-line error wherever it is."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.cli import main
from focuscrawl.exceptions import ConfigError
from focuscrawl.params import build_params, coerce
from focuscrawl.relevance.base import RelevanceModel, build_model, load_model, register_model
from focuscrawl.settings import load_settings
from focuscrawl.strategies.base import STRATEGIES, Strategy
from focuscrawl.strategies.filters import FILTERS, HostBlacklistParams, build_filters
from focuscrawl.strategies.genre import GenreParams, GenreSvmParams
from focuscrawl.strategies.opic import OpicParams
from focuscrawl.types import Decision, Page, QueuedURL


@pytest.mark.parametrize(
    ("value", "hint", "expected"),
    [
        pytest.param("yes", bool, True, id="bool-text"),
        pytest.param("off", bool, False, id="bool-off"),
        pytest.param("12", int, 12, id="int-text"),
        pytest.param(3.0, int, 3, id="int-from-whole-float"),
        pytest.param(2, float, 2.0, id="float-from-int"),
        pytest.param("ja, en,", tuple[str, ...], ("ja", "en"), id="tuple-from-text"),
        pytest.param(["a b", " c "], tuple[str, ...], ("a b", "c"), id="tuple-from-list"),
        pytest.param("none", float | None, None, id="none-text"),
        pytest.param("", str | None, None, id="empty-text"),
        pytest.param("0.5", float | None, 0.5, id="optional-float"),
        pytest.param(["1", 2], tuple[float, ...], (1.0, 2.0), id="tuple-of-floats"),
        pytest.param("a.txt", Path, Path("a.txt"), id="path"),
    ],
)
def test_values_become_the_declared_type(value: Any, hint: Any, expected: Any) -> None:
    assert coerce("x", value, hint) == expected


@pytest.mark.parametrize(
    ("value", "hint", "message"),
    [
        pytest.param(2.5, int, "x must be an integer, not 2.5", id="fraction"),
        pytest.param(True, int, "x must be an integer, not True", id="bool-as-int"),
        pytest.param("many", float, "x must be a number, not 'many'", id="word-as-number"),
        pytest.param("maybe", bool, "x must be true or false, not 'maybe'", id="maybe"),
        pytest.param(5, str, "x must be a string, not 5", id="number-as-string"),
        pytest.param([1, 2], tuple[str, ...], "x must be a list of strings, not [1, 2]", id="numbers-as-words"),
        pytest.param({"a": 1}, tuple[str, ...], "x must be a list", id="table-as-list"),
    ],
)
def test_mistyped_values_say_what_they_must_be(value: Any, hint: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        coerce("x", value, hint)


def _settings(tmp_path: Path, toml: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml, encoding="utf-8")
    load_settings(path, environ={})


def _strategy(tmp_path: Path, toml: str) -> None:
    del tmp_path
    STRATEGIES.get("otie")(None, **dict(item.split("=") for item in toml.split()))


def _filter(tmp_path: Path, toml: str) -> None:
    build_filters([{"name": "relevance-gate", **dict(item.split("=") for item in toml.split())}], tmp_path)


def _model(tmp_path: Path, toml: str) -> None:
    build_model({"name": "keyword", "keywords": ["cat"], **dict(item.split("=") for item in toml.split())}, tmp_path)


@pytest.mark.parametrize(
    ("build", "given", "message"),
    [
        pytest.param(_settings, "[fetch]\ndelai = 1\n", "config: unknown parameter 'fetch.delai' (known: ", id="settings-key"),
        pytest.param(_settings, "[fetch]\ndelay = 'soon'\n", "config: fetch.delay must be a number, not 'soon'", id="settings-value"),
        pytest.param(_strategy, "b=0.5", "strategy 'otie': unknown parameter 'b' (known: a, beta, d, ", id="strategy-key"),
        pytest.param(_strategy, "a=lots", "strategy 'otie': a must be a number, not 'lots'", id="strategy-value"),
        pytest.param(_filter, "min_relevanse=0.2", "filter 'relevance-gate': unknown parameter 'min_relevanse' (known: min_relevance)", id="filter-key"),
        pytest.param(_filter, "min_relevance=high", "filter 'relevance-gate': min_relevance must be a number, not 'high'", id="filter-value"),
        pytest.param(_model, "treshold=0.5", "keyword model: unknown parameter 'treshold' (known: keywords, threshold)", id="model-key"),
        pytest.param(_model, "threshold=half", "keyword model: threshold must be a number, not 'half'", id="model-value"),
    ],
)  # fmt: skip
def test_a_bad_key_or_value_is_the_same_one_line_everywhere(
    build: Any, given: str, message: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as info:
        build(tmp_path, given)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_a_refused_value_names_its_owner() -> None:
    @dataclass(frozen=True)
    class P:
        n: int = 1

        def __post_init__(self) -> None:
            if self.n < 1:
                raise ValueError(f"n = {self.n} must be >= 1")

    assert build_params("thing", P, {"n": "3"}) == P(3)
    with pytest.raises(ConfigError, match=r"^thing: n = 0 must be >= 1$"):
        build_params("thing", P, {"n": 0})


def test_a_topic_file_gives_the_parameters_the_table_does_not(tmp_path: Path) -> None:
    topics = tmp_path / "topics"
    topics.mkdir()
    (topics / "cats.txt").write_text("the cat sat on the mat with another cat\n" * 20, encoding="utf-8")
    (topics / "cats.toml").write_text(
        '[model]\nname = "perplexity"\ntexts = ["cats.txt"]\norder = 2\nmin_words = 1\nthreshold = 0.2\n',
        encoding="utf-8",
    )
    # texts is read next to the topic file; the table's own threshold wins over the topic's
    model = build_model({"name": "perplexity", "topic": "topics/cats.toml", "threshold": 0.3}, tmp_path)
    assert model.threshold == 0.3
    assert model.score_text("the cat sat") > model.score_text("quantum chromodynamics")
    with pytest.raises(ConfigError, match="not 'keyword'"):
        build_model({"name": "keyword", "topic": "topics/cats.toml"}, tmp_path)


def test_strategies_lists_the_parameters_of_filters_and_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["strategies", "--json"]) == 0
    rows = {(r["kind"], r["name"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows["model", "keyword"]["params"] == {"keywords": [], "threshold": 1e-9}
    assert rows["model", "keyword"]["types"] == {"keywords": "tuple[str, ...]", "threshold": "float"}
    assert rows["filter", "relevance-gate"]["params"] == {"min_relevance": None}
    assert rows["model", "perplexity"]["types"]["texts"] == "tuple[Path, ...]"
    assert main(["strategies"]) == 0
    listing = capsys.readouterr().out
    assert "keywords: tuple[str, ...] = (), threshold: float = 1e-09" in listing


@dataclass(frozen=True)
class _ShareParams:
    share: float = 0.5
    threshold: float = 0.5


class _ShareModel:
    """A third party's model: every page scores ``share``."""

    name = "test-share"
    Params = _ShareParams

    def __init__(self, share: float, threshold: float) -> None:
        self.share, self.threshold = share, threshold

    def score(self, page: Page) -> float:
        return self.share

    def score_text(self, text: str) -> float:
        return self.share

    def save(self, directory: Path) -> None:
        (directory / "share.json").write_text(json.dumps([self.share, self.threshold]), "utf-8")

    @classmethod
    def from_params(cls, p: _ShareParams) -> _ShareModel:
        return cls(p.share, p.threshold)

    @classmethod
    def load(cls, directory: Path) -> _ShareModel:
        return cls(*json.loads((directory / "share.json").read_text("utf-8")))


register_model("test-share")(_ShareModel)


def test_a_third_partys_model_is_trained_from_its_params(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m"
    assert main(["model", "train", "test-share", "--param", "share=0.25", "--out", str(out)]) == 0
    model = load_model(out)
    assert isinstance(model, RelevanceModel)
    assert model.score(Page(url="http://a.test/")) == 0.25
    capsys.readouterr()
    assert main(["model", "train", "test-share", "--param", "shar=0.25", "--out", str(tmp_path / "x")]) == 2
    assert "test-share model: unknown parameter 'shar' (known: share, threshold)" in capsys.readouterr().err


def test_a_strategys_params_are_the_type_argument_of_its_base() -> None:
    """``class OpicStrategy(Strategy[OpicParams])`` declares them once: ``Params`` follows."""
    assert STRATEGIES.get("opic").Params is OpicParams
    assert STRATEGIES.get("genre").Params is GenreParams  # through FCrawl[GenreParams]
    assert STRATEGIES.get("genre-svm").Params is GenreSvmParams
    assert type(STRATEGIES.get("opic")(virtual_page=False).p) is OpicParams
    assert FILTERS.get("host-blacklist").Params is HostBlacklistParams  # filters alike


def test_a_strategy_naming_two_params_classes_is_refused() -> None:
    @dataclass(frozen=True)
    class Mine:
        n: int = 1

    @dataclass(frozen=True)
    class Other:
        n: int = 1

    with pytest.raises(TypeError, match="Params Other is not its base's type argument Mine"):

        class _Both(Strategy[Mine]):
            Params = Other

            def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
                return Decision()


@pytest.mark.parametrize(
    ("file", "env", "said"),
    [
        pytest.param('[crawl]\nmax_pages = "many"\n', {}, "config: crawl.max_pages must be an integer, not 'many'", id="file-under-an-option"),
        pytest.param('[fetch]\ndelay = "slow"\n', {}, "config: fetch.delay must be a number, not 'slow'", id="file-under-an-option-2"),
        pytest.param("", {"FOCUSCRAWL_CRAWL__MAX_PAGES": "lots"}, "config: environment variable FOCUSCRAWL_CRAWL__MAX_PAGES: crawl.max_pages must be an integer, not 'lots'", id="environment-under-an-option"),
        pytest.param('[crawl]\nmax_pages = "many"\n', {"FOCUSCRAWL_CRAWL__MAX_PAGES": "10"}, "config: crawl.max_pages must be an integer, not 'many'", id="file-under-the-environment"),
    ],
)  # fmt: skip
def test_a_wrong_value_is_reported_where_a_later_layer_overrides_it(
    file: str, env: dict[str, str], said: str, tmp_path: Path
) -> None:
    # before (b44): `--config bad.toml --max-pages 10 --delay 0` crawled, the file's
    # max_pages = "many" and delay = "slow" never read, never reported
    config = tmp_path / "c.toml"
    config.write_text(file)
    with pytest.raises(ConfigError) as caught:
        load_settings(config, {"crawl": {"max_pages": 10}, "fetch": {"delay": 0.0}}, environ=env)
    assert str(caught.value) == said


def test_command_line_params_merge_with_the_files_key_by_key(tmp_path: Path) -> None:
    # before (b47): `--strategy-param beta=0.5` replaced the file's whole strategy_params
    # table, so its alpha was lost; the [model] table already merged key by key
    config = tmp_path / "c.toml"
    config.write_text(
        "[crawl]\nstrategy_params = { alpha = 0.3, beta = 0.1 }\n"
        '[model]\nname = "keyword"\nkeywords = ["cat"]\nthreshold = 0.2\n'
    )
    cli = {"crawl": {"strategy_params": {"beta": 0.5}}, "model": {"threshold": 0.4}}
    settings = load_settings(config, cli, environ={})
    assert dict(settings.crawl.strategy_params) == {"alpha": 0.3, "beta": 0.5}
    assert dict(settings.model) == {"name": "keyword", "keywords": ["cat"], "threshold": 0.4}
    alone = load_settings(None, cli, environ={})
    assert dict(alone.crawl.strategy_params) == {"beta": 0.5}


@pytest.mark.parametrize(
    "env",
    [
        pytest.param('{"beta": 0.5, "gamma": "x"}', id="json-object"),
        pytest.param('{ beta = 0.5, gamma = "x" }', id="toml-inline-table"),
    ],
)  # fmt: skip
def test_an_environment_table_merges_with_the_files_key_by_key(env: str, tmp_path: Path) -> None:
    # before (c49): FOCUSCRAWL_CRAWL__STRATEGY_PARAMS arrived as a string, refused as
    # "must be a table": the file's table could not be changed by one key from the environment
    config = tmp_path / "c.toml"
    config.write_text("[crawl]\nstrategy_params = { alpha = 0.3, beta = 0.1 }\n")
    environ = {"FOCUSCRAWL_CRAWL__STRATEGY_PARAMS": env}
    settings = load_settings(config, environ=environ)
    assert dict(settings.crawl.strategy_params) == {"alpha": 0.3, "beta": 0.5, "gamma": "x"}
    cli = load_settings(config, {"crawl": {"strategy_params": {"gamma": "y"}}}, environ=environ)
    assert dict(cli.crawl.strategy_params) == {"alpha": 0.3, "beta": 0.5, "gamma": "y"}


@pytest.mark.parametrize(
    "env",
    [
        pytest.param("beta=0.5", id="key-value"),
        pytest.param("{ beta = }", id="torn-table"),
        pytest.param("[1, 2]", id="a-list"),
        pytest.param('{ beta = 0.5 }\nalpha = 1', id="two-lines"),
    ],
)  # fmt: skip
def test_a_malformed_environment_table_is_one_line_naming_the_variable(env: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, environ={"FOCUSCRAWL_CRAWL__STRATEGY_PARAMS": env})
    said = str(caught.value)
    assert said.startswith("config: environment variable FOCUSCRAWL_CRAWL__STRATEGY_PARAMS: "
                           "crawl.strategy_params must be a table, a JSON object or a TOML inline table"), said
    assert "\n" not in said
