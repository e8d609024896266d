"""robots.txt rules per origin (scheme, host, port), read as RFC 9309 says.

What an answer means (RFC 9309 section 2.3.1):

* 2xx: the file's rules apply.
* 4xx (401/403 included), or more than 5 redirects: "unavailable", everything
  is allowed.
* 5xx, 429 after retries, or a network error: the file is "unreachable" and the
  RFC says to assume a complete disallow; it is asked again after
  ``RobotsCache.retry_unreachable`` seconds (10 minutes), not kept for the crawl.

Rules are kept at most 24 hours (RFC 9309 2.4), then downloaded again. Each
origin is fetched once at a time; concurrent lookups of one origin wait for the
same download. At most ``size`` origins are kept (least recently used dropped).

The parser is this module's own, not protego's: protego matches user agents by
prefix (the group ``focus`` caught ``focuscrawl``), lost the first group of a file
starting with a byte-order mark, and closed a group at unknown lines. What it
did well (longest match, ``*`` and ``$``, Crawl-delay) is done here the same way.
docs/standards.md lists where this departs from RFC 9309 and Google's tests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from focuscrawl.urls import normalize_escapes

__all__ = ["RobotsCache", "RobotsRules", "RobotsTxt", "robots_url", "user_agent_token"]

# (status, body, error): status 0 and an error code when no HTTP response came back.
Download = Callable[[str], Awaitable[tuple[int, bytes, str | None]]]

_MAX_ROBOTS_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB
MAX_AGE = 24 * 3600.0  # RFC 9309 2.4: a cached robots.txt is used 24 hours at most
RETRY_UNREACHABLE = 600.0  # an unreachable robots.txt (complete disallow) is asked again


def user_agent_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against (RFC 9309 2.2.1:
    letters, ``_`` and ``-``): the first product's name, or the crawler named in a
    browser-style ``(compatible; Name/1.0)`` comment.

    >>> user_agent_token("focuscrawl/0.1 (+https://x.org; research crawler)")
    'focuscrawl'
    >>> user_agent_token("Mozilla/5.0 (compatible; FooBot/1.0; +http://foo.example/bot)")
    'FooBot'
    >>> user_agent_token(""), user_agent_token("My Bot")
    ('*', 'My')
    """
    compatible = _COMPATIBLE.search(user_agent)
    if compatible is not None:
        return compatible.group(1)
    first = _PRODUCT.match(user_agent.strip())
    return first.group(0) if first is not None else "*"


_PRODUCT = re.compile(r"[A-Za-z_\-]+")
_COMPATIBLE = re.compile(r"^\s*Mozilla/[^(]*\(\s*compatible\s*;\s*([A-Za-z_\-]+)")


def robots_url(url: str) -> str:
    """The robots.txt URL of the origin of ``url``.

    >>> robots_url("https://Example.org:8443/a/b?c")
    'https://example.org:8443/robots.txt'
    """
    match = _PLAIN_ORIGIN.match(url)  # asked on every fetch: urlsplit only for the rest
    if match is not None:
        return f"{match.group(1).lower()}://{match.group(2).lower()}/robots.txt"
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1].lower()
    return f"{parts.scheme.lower()}://{netloc}/robots.txt"


# scheme and netloc of an http(s) URL whose netloc urlsplit would take as it is
_PLAIN_ORIGIN = re.compile(r"(https?)://([A-Za-z0-9.\-:]+)(?=[/?#]|\Z)", re.IGNORECASE)


# --- the file ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    allow: bool
    length: int  # the pattern's length in octets once escaped: longest match wins
    prefix: str | None  # a pattern without '*' or '$' is a prefix
    regex: re.Pattern[str] | None

    def matches(self, path: str) -> bool:
        if self.prefix is not None:
            return path.startswith(self.prefix)
        assert self.regex is not None
        return self.regex.match(path) is not None


@dataclass(frozen=True, slots=True)
class _Group:
    rules: tuple[_Rule, ...]  # longest first, Allow before Disallow at one length
    crawl_delay: float | None


_NO_GROUP = _Group((), None)


@dataclass
class RobotsTxt:
    """One robots.txt parsed: its groups by lower-cased product token (``*`` too),
    each group's lines in file order (groups of one token merged, RFC 9309 2.2.1).

    >>> robots = RobotsTxt.parse(b"\\xef\\xbb\\xbfUser-agent: focus\\nDisallow: /\\n")
    >>> robots.allowed("http://h.org/x", "focuscrawl"), robots.allowed("http://h.org/x", "focus")
    (True, False)
    """

    lines: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    sitemaps: list[str] = field(default_factory=list)  # its Sitemap lines' URLs, in file order
    _groups: dict[str, _Group] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, body: bytes) -> RobotsTxt:
        body = body[:_MAX_ROBOTS_BYTES]
        for bom in (b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"):  # a byte-order mark, or what is left of one
            if body.startswith(bom):
                body = body[len(bom) :]
                break
        robots = cls()
        agents: list[str] = []  # the user-agent lines of the group being read
        in_rules = False  # a rule was read since the last user-agent line
        for raw in _LINE_END.split(body.decode("utf-8", "replace")):
            line = raw.split("#", 1)[0].strip()
            key, sep, value = line.partition(":")
            if not sep:  # Google's "user-agent foo": a known key, whitespace, a value
                key, _, value = line.partition(" ")
                if key.lower() not in _KEYS:
                    continue
            key, value = key.strip().lower(), value.strip()
            if key == "user-agent":
                if in_rules:
                    agents, in_rules = [], False
                agent = "*" if value.startswith("*") else _PRODUCT.match(value)
                if agent is not None:
                    name = agent if isinstance(agent, str) else agent.group(0).lower()
                    agents.append(name)
                    robots.lines.setdefault(name, [])
            elif key in ("allow", "disallow", "crawl-delay"):
                in_rules = True
                for name in dict.fromkeys(agents):
                    robots.lines[name].append((key, value))
            elif key == "sitemap" and value and len(robots.sitemaps) < _MAX_SITEMAP_LINES:
                robots.sitemaps.append(value)
            # other lines (sitemap, unknown ones) neither end a group nor belong to it
        return robots

    def group(self, token: str) -> _Group:
        """The rules that apply to the product token ``token``: its groups', else those of ``*``."""
        key = token.lower()
        group = self._groups.get(key)
        if group is None:
            lines = self.lines.get(key) if key != "*" else None
            if lines is None:
                lines = self.lines.get("*")
            group = self._groups[key] = _build(lines) if lines is not None else _NO_GROUP
        return group

    def allowed(self, url: str, token: str) -> bool:
        """Whether ``token`` may fetch ``url``: the longest matching rule decides, Allow
        over Disallow when they are as long (RFC 9309 2.2.2); no rule, allowed."""
        rules = self.group(token).rules
        if not rules:
            return True
        path = _path_of(url)
        for rule in rules:
            if rule.matches(path):
                return rule.allow
        return True

    def crawl_delay(self, token: str) -> float | None:
        return self.group(token).crawl_delay


_LINE_END = re.compile(r"\r\n|\r|\n")
_KEYS = frozenset({"user-agent", "allow", "disallow", "crawl-delay", "sitemap"})
_MAX_SITEMAP_LINES = 1000  # Sitemap lines kept per robots.txt


def _build(lines: list[tuple[str, str]]) -> _Group:
    rules: list[_Rule] = []
    delay: float | None = None
    for key, value in lines:
        if key == "crawl-delay":
            if delay is None:
                try:
                    delay = float(value)
                except ValueError:
                    continue
                if not 0 <= delay < float("inf"):
                    delay = None
            continue
        if not value:
            continue  # "Disallow:" with no path is no rule (RFC 9309 2.2.2)
        pattern = _escapes(value)
        if key == "allow" and pattern.endswith(("/index.html", "/index.htm")):
            # Google's reading (and protego's): the page allowed is its directory's too
            directory = pattern[: pattern.rfind("/") + 1] + "$"
            rules.append(_Rule(True, len(directory), None, _pattern_regex(directory)))
        if "*" in pattern or pattern.endswith("$"):
            rules.append(_Rule(key == "allow", len(pattern), None, _pattern_regex(pattern)))
        else:
            rules.append(_Rule(key == "allow", len(pattern), pattern, None))
    rules.sort(key=lambda rule: (-rule.length, not rule.allow))
    return _Group(tuple(rules), delay)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A rule's pattern as a regex matched at the path's start: ``*`` any characters,
    a final ``$`` the path's end."""
    end = pattern.endswith("$")
    body = pattern[:-1] if end else pattern
    return re.compile(".*".join(map(re.escape, body.split("*"))) + (r"\Z" if end else ""), re.DOTALL)


def _escapes(text: str) -> str:
    """A path or pattern as it is compared (RFC 9309 2.2.2): non-ASCII characters
    percent-encoded as UTF-8, escapes upper-cased, unreserved characters decoded.

    >>> _escapes("/foo/bar/ツ"), _escapes("/%62%61%7a/%2f")
    ('/foo/bar/%E3%83%84', '/baz/%2F')
    """
    if not text.isascii():
        text = "".join(c if c.isascii() else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in text)
    return normalize_escapes(text)




def _path_of(url: str) -> str:
    """Path and query of ``url`` as robots.txt rules see them ('/' if empty); a
    non-ASCII character (never in a normalised URL) is left as it is, so it
    matches no escaped pattern.

    >>> _path_of("http://h.org/a%7e/b?q=1#f"), _path_of("http://h.org"), _path_of("")
    ('/a~/b?q=1', '/', '/')
    """
    rest = url.split("#", 1)[0]
    if "://" in rest:
        rest = rest.split("://", 1)[1]
        cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        rest = rest[cut:]
    if not rest.startswith("/"):
        rest = "/" + rest
    return normalize_escapes(rest)


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules of one origin. ``error`` says why everything is disallowed, if so;
    ``fetched_at`` is the ``time.monotonic()`` they were read at."""

    robots: RobotsTxt | None = None
    allow_all: bool = False
    error: str | None = None
    fetched_at: float = 0.0

    def allowed(self, url: str, token: str) -> bool:
        if self.allow_all:
            return True
        if self.robots is None:
            return False
        return self.robots.allowed(url, token)

    def crawl_delay(self, token: str) -> float | None:
        if self.robots is None:
            return None
        return self.robots.crawl_delay(token)


ALLOW_ALL = RobotsRules(allow_all=True)


def rules_from_response(status: int, body: bytes, error: str | None) -> RobotsRules:
    """Turn one robots.txt download into rules (see the module docstring).

    >>> rules_from_response(404, b"", None).allowed("http://a.org/x", "bot")
    True
    >>> rules_from_response(503, b"", None).allowed("http://a.org/x", "bot")
    False
    >>> rules = rules_from_response(200, b"User-agent: *\\nDisallow: /private", None)
    >>> rules.allowed("http://a.org/private/1", "bot"), rules.allowed("http://a.org/pub", "bot")
    (False, True)
    """
    if error == "too-many-redirects":  # RFC 9309 2.3.1.2: may be taken as unavailable (4xx)
        return ALLOW_ALL
    if error is not None or status == 0:
        return RobotsRules(error=error or "robots")
    if 200 <= status < 300:
        return RobotsRules(robots=RobotsTxt.parse(body))
    if 400 <= status < 500 and status != 429:
        return ALLOW_ALL
    return RobotsRules(error="robots")


class RobotsCache:
    """Rules per origin, downloaded with ``download(robots_url)`` once, and again when
    they are ``max_age`` seconds old (``retry_unreachable`` for an unreachable file).
    ``clock`` is ``time.monotonic`` (a test's clock in tests)."""

    def __init__(
        self,
        download: Download,
        size: int = 10_000,
        *,
        max_age: float = MAX_AGE,
        retry_unreachable: float = RETRY_UNREACHABLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._download = download
        self._size = max(1, size)
        self._max_age = max_age
        self._retry_unreachable = min(retry_unreachable, max_age)
        self._clock = clock
        self._rules: OrderedDict[str, RobotsRules] = OrderedDict()
        self._pending: dict[str, asyncio.Future[RobotsRules]] = {}
        self.downloads = 0

    def __len__(self) -> int:
        return len(self._rules)

    def _fresh(self, key: str) -> RobotsRules | None:
        rules = self._rules.get(key)
        if rules is None:
            return None
        age = self._clock() - rules.fetched_at
        if age >= (self._retry_unreachable if rules.error is not None else self._max_age):
            del self._rules[key]  # too old: the next lookup downloads it again
            return None
        self._rules.move_to_end(key)
        return rules

    def cached(self, url: str) -> RobotsRules | None:
        """The rules of the origin of ``url`` if they are here now and fresh (no
        download), as :meth:`rules_for` would return them (and marked as used, as it
        marks them)."""
        return self._fresh(robots_url(url))

    async def rules_for(self, url: str) -> RobotsRules:
        """The rules of the origin of ``url`` (downloading them if not here or too old)."""
        key = robots_url(url)
        while True:
            rules = self._fresh(key)
            if rules is not None:
                return rules
            pending = self._pending.get(key)
            if pending is None:
                break
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # we were cancelled ourselves
                # the task downloading it was cancelled: download it here
        future: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            self.downloads += 1
            rules = rules_from_response(*await self._download(key))
        except BaseException as exc:
            del self._pending[key]
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # mark retrieved: there may be no waiter
            raise
        del self._pending[key]
        rules = dataclasses.replace(rules, fetched_at=self._clock())
        self._rules[key] = rules
        while len(self._rules) > self._size:
            self._rules.popitem(last=False)
        future.set_result(rules)
        return rules
