"""One typed, frozen configuration object: TOML file < environment < command line.

Every part of the crawler receives the section it needs (``settings.fetch``,
``settings.scope``...) when it is built; nothing reads settings by string key later.
Environment variables are ``FOCUSCRAWL_<SECTION>__<FIELD>`` (e.g.
``FOCUSCRAWL_FETCH__DELAY=0.5``); a table as a JSON object or a TOML inline table
(``FOCUSCRAWL_CRAWL__STRATEGY_PARAMS='{ a = 0.85 }'``), merged key by key with the file's.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.exceptions import ConfigError
from focuscrawl.params import build_params, check_values, environment_values

DEFAULT_USER_AGENT = "focuscrawl/0.1 (+https://github.com/focuscrawl/focuscrawl; research crawler)"


# what sitemaps and feeds are served as (fetched besides fetch.content_types when
# fetch.read_sitemaps or read_feeds; read only from a URL entered as one, or a feed's type)
FEED_CONTENT_TYPES = ("application/rss+xml", "application/atom+xml")
DISCOVERY_CONTENT_TYPES = ("application/xml", "text/xml", "application/gzip", "application/x-gzip",
                           *FEED_CONTENT_TYPES)  # fmt: skip


@dataclass(frozen=True)
class FetchSettings:
    user_agent: str = DEFAULT_USER_AGENT
    # requests in flight, all hosts together: a broad crawl's default (Scrapy advises 100+
    # for broad crawls); what waits for its host's delay holds no connection and no body.
    # A request under way past a straggler's time gives its place back (issue 24), so the
    # bodies in memory are bounded by the window (crawl.window) x max_body_size
    concurrency: int = 256
    per_host: int = 1  # connections per host
    delay: float = 1.0  # seconds between two requests to one host
    respect_robots: bool = True
    # a page's own manners (docs/standards.md, "Page manners"): noindex / nofollow of its
    # <meta name="robots|focuscrawl"> and X-Robots-Tag; links with rel nofollow, ugc, sponsored
    obey_noindex: bool = True  # a noindex page is archived, marked, left out of relevance counts
    obey_nofollow: bool = True  # a nofollow page's links are not followed
    follow_nofollow_links: bool = False  # follow rel="nofollow|ugc|sponsored" links all the same
    # discovery (docs/standards.md, "Sitemaps"): the sitemaps of robots.txt's Sitemap lines
    # (and /sitemap.xml when guess_sitemap) are fetched and read, their URLs become links
    read_sitemaps: bool = True
    guess_sitemap: bool = False
    sitemap_urls_per_host: int = 50_000  # URLs taken from a host's sitemaps at most (0: no cap)
    read_feeds: bool = True  # RSS and Atom feeds a page names: fetched, their entries links
    # freshness (docs/standards.md, "Conditional re-fetching"): a re-fetch (a re-crawl, a
    # resumed crawl's, `focuscrawl refresh`) sends the ETag / Last-Modified of the URL's last answer
    conditional_refetch: bool = True
    # a page's <link rel="canonical"> URL, not fetched yet, is taken for fetched (the page is it)
    skip_fetched_canonical: bool = True
    obey_crawl_delay: bool = True  # robots.txt Crawl-delay raises ``delay`` for that host
    max_crawl_delay: float = 30.0  # cap on what a robots.txt may ask for
    max_redirects: int = 5
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    fetch_timeout: float = 120.0  # seconds of network time per fetch, all hops and retries (0: none)
    max_body_size: int = 5 * 1024 * 1024  # bytes; longer bodies are cut and counted
    content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml", "application/pdf")  # pdf: parse.pdf
    retries: int = 2  # extra attempts for 429/503/timeouts/resets
    retry_backoff: float = 1.0  # seconds, doubled at each attempt (Retry-After wins)
    proxy: str | None = None
    tls_ca_file: str | None = None  # extra CA to trust (the replay server's own CA)
    allow_private: tuple[str, ...] = ()  # CIDRs/hosts allowed despite being private/loopback
    robots_cache_size: int = 10_000
    # pages built by scripts rendered by a headless Chromium (focuscrawl.fetch.render):
    # "never", "auto" (HTML that looks like a script shell) or "always"
    render: str = "never"
    # the system's headless Chromium (never downloaded): a path, or "auto": the first of
    # chromium-headless-shell (the lighter old headless mode) and chromium on the PATH
    browser: str = "auto"
    render_timeout: float = 15.0  # wall-clock seconds a page may take to render
    render_contexts: int = 8  # browser contexts rendering at once (8: docs/content.md, what is reachable)


@dataclass(frozen=True)
class ScopeSettings:
    allow_hosts: tuple[str, ...] = ()  # host or *.domain; empty = any host
    deny_hosts: tuple[str, ...] = ()
    allow_regex: tuple[str, ...] = ()  # a URL must match one of these (if any)
    deny_regex: tuple[str, ...] = ()
    max_depth: int = -1  # links from a seed; -1 = unlimited
    # Spider-trap defences on by default (as Heritrix's TooManyPathSegments and
    # PathologicalPath rules, Nutch's repeated-segment URL filter): no URL deeper
    # than this many path segments in its site, and no block of 1-3 segments
    # repeated more than this many times in a row (/a/a/a, /x/y/x/y/x/y); 0 = off
    max_path_segments: int = 20
    max_segment_repeats: int = 2
    max_pages_per_host: int = 10_000  # URLs known per host (queued or fetched); 0 = unlimited
    max_url_length: int = 2048
    max_links_per_page: int = 0  # 0 = all
    same_site_only: bool = False  # stay on the registered domains of the seeds
    deny_extensions: tuple[str, ...] = (
        "7z", "apk", "avi", "bin", "bmp", "bz2", "css", "csv", "deb", "dmg", "doc", "docx",
        "eps", "exe", "flac", "flv", "gif", "gz", "ico", "iso", "jar", "jpeg", "jpg", "js",
        "json", "m4a", "m4v", "mkv", "mov", "mp3", "mp4", "mpeg", "mpg", "msi", "ogg",
        "png", "ppt", "pptx", "ps", "rar", "rpm", "svg", "tar", "tgz", "tif", "tiff", "ttf",
        "wav", "webm", "webp", "wmv", "woff", "woff2", "xls", "xlsx", "xml", "xz", "z", "zip",
    )  # fmt: skip


@dataclass(frozen=True)
class ParseSettings:
    context_words: int = 20  # T of P1: words of link context, anchor included
    # duplicates and near-duplicates of pages already seen, by their visible text
    # (focuscrawl.parse.duplicates): pages.jsonl's duplicate_of; judged where the text
    # is parsed (a model, or a strategy or filter that reads text)
    dedup: bool = True
    dedup_similarity: float = 0.8  # estimated Jaccard similarity of word 3-shingles
    dedup_min_words: int = 20  # shorter pages are never duplicates
    dedup_max_pages: int = 1_000_000  # pages remembered (memory bound); later ones still checked
    follow_duplicates: bool = False  # a duplicate's links go to the strategy (False: none)
    session_params_after: int = 2  # duplicate pairs that teach a host's session parameter (0: off)
    # PDF documents fetched and read (focuscrawl.parse.pdf); off: application/pdf leaves
    # fetch.content_types and "pdf" joins scope.deny_extensions
    pdf: bool = True
    pdf_max_pages: int = 50  # PDF pages read per document (0: all)
    pdf_max_seconds: float = 10.0  # wall-clock time to read one document (0: no cap)


SCHEDULES = ("auto", "as-completed", "ordered")
ORDERED_WINDOW = 32  # the reproducible schedule's default window


@dataclass(frozen=True)
class CrawlSettings:
    strategy: str = "bfs"
    strategy_params: Mapping[str, Any] = field(default_factory=dict)
    max_pages: int = 1000  # pages fetched (HTML or not) before stopping; 0 = no limit
    # How many URLs are taken at a time is one idea with one knob per fetch-list policy,
    # each with its own default: ``window`` (the continuous schedules, below),
    # ``fetch_list_size`` (best-N-first; > 0 also chooses that policy) and ``top_n``
    # (a layered strategy's layer). They stay three: one experiment gives them different
    # values for strategies of different policies (experiments/p0.toml: top_n = 100 for
    # its layered strategies beside BFS's and the oracle's default window of 32), so one
    # field would change what those crawls fetch.
    fetch_list_size: int = 0  # best-N-first batch size (0 = continuous, refilled as slots free)
    top_n: int = 1000  # layered mode: URLs generated per layer
    depth: int = 10  # layered mode: number of layers
    # results per durable commit (and commit_seconds bounds the time between two): each
    # commit stops the recording for its fsyncs, so a fast crawl committing every 50
    # (70 commits a second on the WebKB loopback benchmark) lost ~5 % of its speed to them
    commit_every: int = 500
    frontier: str = "indexed"  # crawl DB store: "indexed" (numpy + SQLite journal) or "redis"
    frontier_url: str = ""  # the server of a shared store: "redis://HOST:PORT/DB" for "redis"
    seed: int = 0  # random seed for ties and sampling
    commit_seconds: float = 2.0  # and at least this often (a slow host never holds commits back)
    # "as-completed": a result is recorded when it arrives and its slot refilled at once
    # (a straggler costs its own slot, never the crawl); "ordered": results recorded in
    # the order their URLs were taken, the reproducible schedule (same settings, seed and
    # web: same pages in the same order); "auto": ordered for a simulation, as-completed live
    schedule: str = "auto"
    # URLs taken and not yet recorded (0: auto, 32 ordered, 4 x fetch.concurrency as-completed).
    # In the ordered schedule it is part of the order (the order depends on it, not on
    # fetch.concurrency); as-completed it only bounds the URLs waiting for their host
    window: int = 0
    # while URLs are in flight, one scoring below patience x the best score in flight waits
    # in the queue until they are recorded (their links may score higher): a focused crawl
    # whose good URLs are found one by one does not fill its window with poor ones. 0: off
    # (fill the window at once); 1: never take a worse URL while a better one is in flight.
    # The continuous schedules only (fetch_list_size = 0); ordered, part of the order.
    patience: float = 0.0
    # best-N-first lists, as-completed: once 90 % of a list is recorded, the next list is
    # generated after at most this many seconds more, its stragglers recorded when they come
    straggler_seconds: float = 10.0
    provenance: bool = True  # write decisions.jsonl: why every URL got its priority
    # build the WARC records in a child process, on another core (focuscrawl.output.warc_builder),
    # once this many results are recorded (a short crawl needs none); never on a 1-core machine
    warc_builder: bool = True
    warc_builder_after: int = 100


def fetch_settings(settings: Settings) -> FetchSettings:
    """``settings.fetch`` as the fetcher uses it: PDFs refused when ``parse.pdf`` is off."""
    fetch = settings.fetch
    if not settings.parse.pdf and "application/pdf" in fetch.content_types:
        return dataclasses.replace(fetch, content_types=tuple(t for t in fetch.content_types if t != "application/pdf"))
    return fetch


def scope_settings(settings: Settings) -> ScopeSettings:
    """``settings.scope`` as the scope rules use it: .pdf links refused when ``parse.pdf`` is off."""
    scope = settings.scope
    if not settings.parse.pdf and "pdf" not in scope.deny_extensions:
        return dataclasses.replace(scope, deny_extensions=(*scope.deny_extensions, "pdf"))
    return scope


def ordered_schedule(crawl: CrawlSettings, simulated: bool) -> bool:
    """Whether a crawl records its results in the order taken (see ``crawl.schedule``)."""
    return crawl.schedule == "ordered" or (crawl.schedule == "auto" and simulated)


def window_size(settings: Settings, ordered: bool) -> int:
    """URLs taken and not yet recorded at most (``crawl.window``, 0: the schedule's default)."""
    if settings.crawl.window > 0:
        return settings.crawl.window
    return ORDERED_WINDOW if ordered else 4 * settings.fetch.concurrency


@dataclass(frozen=True)
class Settings:
    fetch: FetchSettings = field(default_factory=FetchSettings)
    scope: ScopeSettings = field(default_factory=ScopeSettings)
    parse: ParseSettings = field(default_factory=ParseSettings)
    crawl: CrawlSettings = field(default_factory=CrawlSettings)
    model: Mapping[str, Any] = field(default_factory=dict)  # [model] table, see relevance.base
    filters: tuple[Mapping[str, Any], ...] = ()  # [[filters]] tables, see strategies.filters
    base_dir: Path = Path(".")  # where relative paths of the config file point from

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["base_dir"] = str(self.base_dir)
        result: dict[str, Any] = _jsonable(out)
        return result


SECTIONS: dict[str, type[Any]] = {
    "fetch": FetchSettings,
    "scope": ScopeSettings,
    "parse": ParseSettings,
    "crawl": CrawlSettings,
}


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _build_section(section: str, cls: type[Any], values: Mapping[str, Any]) -> Any:
    obj = build_params("config", cls, values, prefix=f"{section}.")
    _validate(section, obj)
    return obj


def _holds_password(url: str) -> bool:
    try:
        return urlsplit(url).password is not None
    except ValueError:  # (a URL the store refuses when it opens it)
        return False


def is_proxy_url(url: str) -> bool:
    """http(s)://host[:port], the port 1-65535: a port out of range ended a crawl at 0 URLs
    with "robots.txt disallows it", an unclosed ``[`` with the transport's traceback."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # .port: not a number, or out of range
        return False


def _validate(section: str, obj: Any) -> None:
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"config: {section}.{f.name} = {value} must be a finite number")
        if isinstance(value, int | float) and not isinstance(value, bool):
            lowest = -1 if f.name == "max_depth" else 0
            if value < lowest:
                raise ConfigError(f"config: {section}.{f.name} = {value} must be >= {lowest}")
    if section == "crawl" and not 0.0 <= obj.patience <= 1.0:
        raise ConfigError(f"config: crawl.patience = {obj.patience} must be between 0 and 1")
    if section == "crawl" and _holds_password(obj.frontier_url):
        raise ConfigError(
            "config: crawl.frontier_url holds a password (process lists, run.json and the "
            "published run would show it): give it in FOCUSCRAWL_REDIS_PASSWORD instead"
        )
    if section == "crawl" and obj.schedule not in SCHEDULES:
        raise ConfigError(
            f"config: crawl.schedule = {obj.schedule!r} is not one of {', '.join(SCHEDULES)}"
        )
    if section == "parse" and not 0.0 < obj.dedup_similarity <= 1.0:
        raise ConfigError(f"config: parse.dedup_similarity = {obj.dedup_similarity} must be in (0, 1]")
    if section == "fetch" and obj.render not in ("never", "auto", "always"):
        raise ConfigError(f"config: fetch.render = {obj.render!r} is not one of never, auto, always")
    if section == "fetch" and obj.proxy and not is_proxy_url(obj.proxy):
        raise ConfigError(f"config: fetch.proxy {obj.proxy!r} is not an http(s)://host:port URL")
    if section == "fetch" and (obj.concurrency < 1 or obj.per_host < 1):
        raise ConfigError("config: fetch.concurrency and fetch.per_host must be >= 1")
    if section == "scope":
        for name in ("allow_regex", "deny_regex"):
            for pattern in getattr(obj, name):
                check_regex(f"scope.{name}", pattern)


def check_regex(where: str, pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled, or a one-line ConfigError naming the setting."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"config: {where} {pattern!r} is not a valid regular expression ({exc})") from None


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config: {path}: no such file") from None
    except OSError as exc:  # a directory, no permission...
        raise ConfigError(f"config: {path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:  # tomllib decodes UTF-8 itself: a binary file ends here
        raise ConfigError(f"config: {path}: not a TOML file (not UTF-8 text)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config: {path}: bad TOML ({exc})") from None


def config_seeds(path: Path) -> list[str]:
    """The ``seeds = [...]`` of a TOML config file (none: an empty list).

    A string is not read letter by letter as seeds 'h', 't', ... (a one-line error instead)."""
    seeds = read_toml(path).get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(seed, str) for seed in seeds):
        raise ConfigError(f'config: {path}: seeds must be a list of URLs (seeds = ["https://..."]), not {seeds!r}')
    return seeds


def read_run_json(path: Path) -> dict[str, Any]:
    """A run directory's ``run.json`` (what ``--resume`` starts from), checked for its shape."""
    try:
        run = json.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ConfigError(f"{path}: corrupt ({exc}); cannot resume from it") from None
    if (
        not isinstance(run, dict)
        or not isinstance(run.get("settings"), dict)
        or not isinstance(run.get("seeds"), list)
        or not all(isinstance(seed, str) for seed in run["seeds"])
    ):
        raise ConfigError(f"{path}: corrupt (no settings or seeds); cannot resume from it")
    return run


def load_settings(
    config: Path | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Build the one Settings object: TOML file < environment < ``overrides`` (the CLI)."""
    raw: dict[str, Any] = read_toml(config) if config else {}
    unknown = sorted(set(raw) - set(SECTIONS) - {"model", "seeds", "topic", "filters"})
    if unknown:
        raise ConfigError(f"config: unknown section [{unknown[0]}]")
    layers = [raw, environment_values(os.environ if environ is None else environ, SECTIONS), overrides or {}]
    kwargs: dict[str, Any] = {}
    for section, cls in SECTIONS.items():
        merged: dict[str, Any] = {}
        for layer in layers:
            table = layer.get(section) or {}
            if not isinstance(table, Mapping):
                raise ConfigError(f"config: [{section}] must be a table")
            given = {k: v for k, v in table.items() if v is not None}
            check_values("config", cls, given, prefix=f"{section}.")  # even if overridden
            for key, value in given.items():  # a table (strategy_params) merges key by key
                both = isinstance(value, Mapping) and isinstance(merged.get(key), Mapping)
                merged[key] = {**merged[key], **value} if both else value
        kwargs[section] = _build_section(section, cls, merged)
    model = dict(raw.get("model") or {}) | dict((overrides or {}).get("model") or {})
    filters = (overrides or {}).get("filters", raw.get("filters", ()))
    if not isinstance(filters, list | tuple) or not all(isinstance(f, Mapping) for f in filters):
        raise ConfigError("config: filters must be [[filters]] tables, each with a name")
    return Settings(
        model=model,
        filters=tuple(dict(f) for f in filters),
        base_dir=(config.parent if config else Path(".")).resolve(),
        **kwargs,
    )
