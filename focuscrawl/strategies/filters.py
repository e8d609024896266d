"""Link filters: composable rules that drop out-links before a strategy scores them.

The engine runs the scope rules, then every filter named in the crawl's
``[[filters]]`` tables, in order, on the out-links of each fetched page, and
only then calls the strategy's ``on_page``: a strategy that splits a page's cash
over its links (OPIC, OTIE, OPIC+COMMD) therefore splits it over the links that
will really enter the frontier, and nothing leaks. Any filter combines with any
strategy (e.g. ``otie`` with the Japanese link rule of P4).

.. code-block:: toml

    [[filters]]
    name = "language"        # P4: keep a link if its TLD or else its anchor is Japanese
    target = "ja"
    [[filters]]
    name = "host-blacklist"  # P0: large portals that are never on topic
    hosts = ["facebook.com", "*.google.com"]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic

from typing_extensions import TypeVar

from focuscrawl.exceptions import ConfigError
from focuscrawl.params import NoParams, base_params, build_params
from focuscrawl.registry import Registry
from focuscrawl.relevance.language import (
    LanguageModel,
    checked_language,
    normalise_lang,
)
from focuscrawl.relevance.language_links import tld_language, url_language_for
from focuscrawl.types import Link, Page
from focuscrawl.urls import host_matches, read_url_lines


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the crawl's relevance model said of the page whose links are filtered."""

    relevance: float | None = None
    relevant: bool | None = None


#: a filter's parameters (a frozen dataclass); ``LinkFilter`` alone is a filter of any
P = TypeVar("P", default=Any)


class LinkFilter(ABC, Generic[P]):
    """Base of the link filters: ``keep`` returns the links that may pass.

    As a strategy, a filter names its parameters' dataclass as the type argument
    (``class HostBlacklistFilter(LinkFilter[HostBlacklistParams])``): ``self.p``.
    """

    name: ClassVar[str] = ""
    Params: ClassVar[type[Any]] = NoParams
    #: ``keep`` reads the page's text or the links' anchors or contexts (as Strategy.needs_text)
    needs_text: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.Params = base_params(cls, LinkFilter) or cls.Params

    @classmethod
    def make_params(cls, values: Mapping[str, Any]) -> Any:
        """The filter's ``Params`` from ``values``, or a one-line ConfigError naming the filter."""
        return build_params(f"filter {cls.name!r}", cls.Params, values)

    def __init__(self, base_dir: Path | None = None, **params: Any) -> None:
        self.base_dir = base_dir or Path(".")
        self.p: P = self.make_params(params)

    @abstractmethod
    def keep(self, page: Page, links: Sequence[Link], verdict: Verdict) -> list[Link]:
        """The links of ``page`` that pass this filter, in their order."""


FILTERS: Registry[type[LinkFilter]] = Registry(
    "filter", "focuscrawl.filters", builtin_modules=("focuscrawl.strategies.filters",)
)
register_filter = FILTERS.register


@dataclass(frozen=True)
class HostBlacklistParams:
    hosts: tuple[str, ...] = ()  # host names; a name covers its subdomains; "*.x" too
    file: str = ""  # one host per line (# comments), relative to the config file


@register_filter("host-blacklist")
class HostBlacklistFilter(LinkFilter[HostBlacklistParams]):
    """P0's URL filter: links to blacklisted hosts (and their subdomains) are dropped."""

    name: ClassVar[str] = "host-blacklist"
    needs_text: ClassVar[bool] = False  # link URLs only

    def __init__(self, base_dir: Path | None = None, **params: Any) -> None:
        super().__init__(base_dir, **params)
        hosts = list(self.p.hosts)
        if self.p.file:
            path = Path(self.p.file)
            path = path if path.is_absolute() else self.base_dir / path
            try:
                hosts += list(read_url_lines(path))
            except OSError as exc:
                raise ConfigError(f"filter 'host-blacklist': cannot read {path}: {exc.strerror}") from None
        if not hosts:
            raise ConfigError("filter 'host-blacklist': give hosts = [...] or file = ...")
        self.hosts = tuple(h.strip().lower() for h in hosts if h.strip())

    def keep(self, page: Page, links: Sequence[Link], verdict: Verdict) -> list[Link]:
        return [link for link in links if not host_matches(link.url, self.hosts)]


@dataclass(frozen=True)
class RelevanceGateParams:
    # None: the model's own decision (judge); a number: relevance >= min_relevance
    min_relevance: float | None = None


@register_filter("relevance-gate")
class RelevanceGateFilter(LinkFilter[RelevanceGateParams]):
    """Follow the links of relevant pages only (Tamura's hard focus, any model).

    A page the model could not judge (no model, or an error) keeps its links.
    """

    name: ClassVar[str] = "relevance-gate"
    needs_text: ClassVar[bool] = False  # the verdict only

    def keep(self, page: Page, links: Sequence[Link], verdict: Verdict) -> list[Link]:
        if self.p.min_relevance is not None:
            if verdict.relevance is None:
                return list(links)
            return list(links) if verdict.relevance >= self.p.min_relevance else []
        return list(links) if verdict.relevant is not False else []


# tld-or-anchor: P4's rule; any: also a link whose URL names a target (/ja/, index.ja.html)
LANGUAGE_RULES = ("tld-or-anchor", "tld", "anchor", "any")


@dataclass(frozen=True)
class LanguageFilterParams:
    target: tuple[str, ...] = ()  # language codes, e.g. ["ja"]
    rule: str = "tld-or-anchor"  # "tld-or-anchor" (P4), "tld", "anchor", "any" (+ the URL's tag)

    def __post_init__(self) -> None:
        if not self.target:
            raise ValueError("target must name at least one language, e.g. target = ['ja']")
        for code in self.target:
            checked_language(code)
        if self.rule not in LANGUAGE_RULES:
            raise ValueError(f"rule must be one of {', '.join(LANGUAGE_RULES)}, not {self.rule!r}")


@register_filter("language")
class LanguageLinkFilter(LinkFilter[LanguageFilterParams]):
    """P4's link rule: keep a link if its host's ccTLD is a target language's,
    otherwise only if its anchor text is in a target language.

    The anchor is read as every link's language is (:meth:`LanguageModel.score_text`:
    its hreflang, a language its anchor names in its own script, Han-only text by the
    page's script). The rule "any" keeps a link whose URL names a target language too."""

    name: ClassVar[str] = "language"

    def __init__(self, base_dir: Path | None = None, **params: Any) -> None:
        super().__init__(base_dir, **params)
        self.targets = frozenset(normalise_lang(t) for t in self.p.target)
        self._anchors = LanguageModel(list(self.p.target))  # as given: zh-Hant keeps its script

    def keep(self, page: Page, links: Sequence[Link], verdict: Verdict) -> list[Link]:
        rule = self.p.rule
        kept: list[Link] = []
        # an anchor is read as eq. 9's link-context score reads it: hreflang, a language
        # named in its own script, Han-only text by the page's script
        context = self._anchors.page_context(page) if rule != "tld" else None
        for link in links:
            if (
                (rule != "anchor" and tld_language(link.url) in self.targets)
                or (rule == "any" and url_language_for(link.url, self._anchors.chinese) in self.targets)
                or (rule != "tld" and self._anchors.score_text(link.anchor, context, hreflang=link.hreflang) >= 1.0)
            ):
                kept.append(link)
        return kept


def filter_spec(spec: Mapping[str, Any]) -> tuple[type[LinkFilter], dict[str, Any]]:
    """The filter a ``[[filters]]`` table names and the rest of its values, its parameters."""
    params = dict(spec)
    name = params.pop("name", None)
    if not isinstance(name, str):
        raise ConfigError("config: every [[filters]] table needs name = \"...\"")
    return FILTERS.get(name), params


def build_filters(specs: Sequence[Mapping[str, Any]], base_dir: Path | None = None) -> list[LinkFilter]:
    """The filters of ``[[filters]]`` tables, in order (``name`` picks the filter)."""
    out: list[LinkFilter] = []
    for spec in specs:
        kind, params = filter_spec(spec)
        out.append(kind(base_dir, **params))
    return out
