"""A generated web: N pages on H hosts, deterministic from (seed, N, H), served like an archive.

``focuscrawl replay --generated 200000 --hosts 2000 --seed 1`` serves it as the
replay proxy does an archive (same sockets, CONNECT tunnels, faults, log), so
that a crawl reaches it the same way; it exists for throughput benchmarks that
need a web larger than any test archive (issue 11: 50k pages of a 200k-page,
2,000-host web) without storing one.

Shape, chosen to look like a real crawl to the frontier:

* page ``i`` lives on host ``k`` (pages of a host are contiguous ids); host
  sizes follow a Zipf law of exponent 0.8 over a seeded rank order, capped at
  N/25 pages, so a few hosts are large and most small;
* host names like ``www.site0042.example.org``; page paths like
  ``/news/quiet-harbour-17.html``; the home page is ``/``;
* a page holds a title, 2-30 paragraphs of sentences (a few KB, sizes vary)
  and 25-45 out-links (before duplicates are dropped): 12 % to other hosts
  (host by size, so popular hosts get more in-links; their home page half the
  time), 30 % to nearby pages of the same host (mostly new to a crawler), the
  rest to popular pages of the same host (``n * u**3``: mostly known already);
* each host's ``/robots.txt`` allows everything, except 8 % of hosts that
  disallow ``/archive/`` (one of their sections) and 1 % that have none (404);
* 1 % of pages answer 404 and 1 % redirect (301) to their ``/dir/`` form.

Every answer is computed on request from integer hashes and one pool of
sentences built at start, so memory stays small (no page is stored) and a
response costs a few tens of microseconds of CPU.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Mapping
from itertools import repeat
from urllib.parse import urlsplit

from focuscrawl.exceptions import ConfigError
from focuscrawl.replay.answer import ArchiveWeb, ReplayAnswer, own_answer
from focuscrawl.replay.archive import ArchiveIndex
from focuscrawl.replay.wire import UNKNOWN_HOST, head_fields

__all__ = ["GeneratedWeb"]

ZIPF_EXPONENT = 0.8
CROSS_HOST = 0.12  # share of out-links to another host
NEARBY = 0.30  # share to the next pages of the same host
MISSING_PER_MILLE = 10  # pages that answer 404
REDIRECT_PER_MILLE = 10  # pages that answer 301 to their /dir/ form
ROBOTS_DISALLOW_PERCENT = 8
ROBOTS_MISSING_PERCENT = 1
ROBOTS_ALLOW = "User-agent: *\nDisallow:\n"
ROBOTS_DISALLOW = "User-agent: *\nDisallow: /archive/\n"
_MASK = (1 << 64) - 1

SECTIONS = (
    "news", "blog", "products", "docs", "about", "events", "people", "research",
    "archive", "help", "articles", "projects", "reviews", "forum", "wiki", "press",
)  # fmt: skip
_ADJ = (
    "quiet", "bright", "early", "local", "annual", "public", "small", "modern", "northern",
    "green", "open", "simple", "central", "rural", "digital", "careful", "rapid", "gentle",
    "ancient", "useful", "common", "private", "coastal", "urban", "honest", "steady", "minor",
    "formal", "free", "daily", "fresh", "solid", "clever", "remote", "native", "vivid",
    "large", "recent", "practical", "quick", "silent", "historic", "young", "warm", "shared",
)  # fmt: skip
_NOUN = (
    "harbour", "garden", "library", "council", "river", "market", "museum", "bridge", "school",
    "station", "village", "festival", "project", "report", "committee", "forest", "railway",
    "theatre", "studio", "workshop", "survey", "network", "valley", "island", "kitchen",
    "college", "hospital", "archive", "journal", "orchestra", "factory", "vineyard", "bakery",
    "clinic", "tower", "meadow", "lecture", "exhibition", "highway", "company", "mountain",
    "society", "laboratory", "school", "record", "design", "season", "harvest", "painting",
    "program", "dataset", "engine", "voyage", "treaty", "estate", "chapel", "canal", "market",
)  # fmt: skip
_VERB = (
    "opened", "reviewed", "described", "announced", "restored", "visited", "measured",
    "published", "supported", "explained", "changed", "welcomed", "organised", "studied",
    "improved", "questioned", "recorded", "planned", "replaced", "extended", "compared",
    "discussed", "celebrated", "built", "found", "shared", "moved", "closed", "tested",
)  # fmt: skip
_PREP = ("near", "after", "before", "beside", "behind", "during", "across", "within", "above")
_ADV = ("quietly", "finally", "recently", "carefully", "again", "often", "later", "already")


def _mix(x: int) -> int:
    """splitmix64's finaliser: a well-spread 64-bit hash of an integer."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def host_sizes(pages: int, hosts: int, rng: random.Random) -> list[int]:
    """Pages per host: Zipf over a seeded rank order, at least 1, at most max(1, N/25)."""
    cap = max(1, pages // 25, -(-pages // hosts))
    weights = [1.0 / (rank + 1) ** ZIPF_EXPONENT for rank in range(hosts)]
    total = sum(weights)
    by_rank = [min(cap, 1 + int((pages - hosts) * w / total)) for w in weights]
    # what flooring and the cap left over goes one page at a time to the smallest hosts
    left, rank = pages - sum(by_rank), hosts - 1
    while left > 0:
        if by_rank[rank] < cap:
            by_rank[rank] += 1
            left -= 1
        rank = rank - 1 if rank > 0 else hosts - 1
    order = list(range(hosts))
    rng.shuffle(order)
    return [by_rank[order[k]] for k in range(hosts)]


class GeneratedWeb(ArchiveWeb):
    """``pages`` pages on ``hosts`` hosts; the same arguments give the same bytes."""

    def __init__(self, pages: int, hosts: int, seed: int = 0) -> None:
        if hosts < 1 or pages < hosts:
            raise ConfigError(
                f"a generated web needs hosts >= 1 and pages >= hosts, not {pages} pages on {hosts} hosts"
            )
        super().__init__(ArchiveIndex())
        self.pages, self.host_count, self.seed = pages, hosts, seed
        rng = random.Random(f"focuscrawl-generated-web:{seed}:{pages}:{hosts}")
        self._salt = rng.getrandbits(64)
        self.sizes = host_sizes(pages, hosts, rng)
        self.starts = [0] * hosts
        for k in range(1, hosts):
            self.starts[k] = self.starts[k - 1] + self.sizes[k - 1]
        width = max(4, len(str(hosts - 1)))
        self.host_names: list[str] = []
        self._sections: list[tuple[str, ...]] = []
        self._robots: list[str | None] = []  # None: the host has no robots.txt (404)
        for k in range(hosts):
            prefix = rng.choices(("www.", "", "blog.", "shop.", "news."), (70, 15, 5, 5, 5))[0]
            tld = rng.choices(("org", "com", "net", "de", "fr"), (40, 40, 10, 5, 5))[0]
            self.host_names.append(f"{prefix}site{k:0{width}d}.example.{tld}")
            draw = rng.randrange(100)
            missing = draw < ROBOTS_MISSING_PERCENT
            disallow = not missing and draw < ROBOTS_MISSING_PERCENT + ROBOTS_DISALLOW_PERCENT
            self._robots.append(None if missing else ROBOTS_DISALLOW if disallow else ROBOTS_ALLOW)
            sections = rng.sample(SECTIONS, rng.randint(3, 8))
            if disallow and "archive" not in sections:
                sections[0] = "archive"  # so that the rule disallows pages that exist
            self._sections.append(tuple(sections))
        self._host_index = {name: k for k, name in enumerate(self.host_names)}
        self.hosts = set(self.host_names)
        self._sentences = [self._sentence(rng) for _ in range(2048)]
        self._precompute()

    @staticmethod
    def _sentence(rng: random.Random) -> str:
        words = [
            rng.choice(("The", "One", "Our", "This", "Every")),
            rng.choice(_ADJ),
            rng.choice(_NOUN),
        ]
        words += [rng.choice(_VERB), "the", rng.choice(_NOUN)]
        if rng.random() < 0.6:
            words += [rng.choice(_PREP), "the", rng.choice(_ADJ), rng.choice(_NOUN)]
        if rng.random() < 0.3:
            words += [
                "and",
                rng.choice(_ADV),
                rng.choice(_VERB),
                "a",
                rng.choice(_ADJ),
                rng.choice(_NOUN),
            ]
        return " ".join(words) + rng.choice((".", ".", ".", "!", "?"))

    # ---- the graph -------------------------------------------------------------

    def _precompute(self) -> None:
        """Host and path words of every page in two arrays (8 bytes a page): a page names
        ~30 others, and hashing each of them on every request cost a third of the answer."""
        self._page_host = array("I")
        self._page_words = array("I")
        salt, n_adj, n_noun = self._salt, len(_ADJ), len(_NOUN)
        for k, (start, size) in enumerate(zip(self.starts, self.sizes, strict=True)):
            self._page_host.extend(repeat(k, size))
            n_sec = len(self._sections[k])
            for page in range(start, start + size):
                h = _mix(page ^ salt)
                self._page_words.append(
                    h % n_sec | ((h >> 8) % n_adj) << 8 | ((h >> 16) % n_noun) << 16
                )

    def host_of(self, page: int) -> int:
        return self._page_host[page]

    def _words(self, page: int) -> tuple[int, int, str, str, str]:
        """(host, local index, section, adjective, noun) of a page."""
        k, w = self._page_host[page], self._page_words[page]
        return (
            k,
            page - self.starts[k],
            self._sections[k][w & 255],
            _ADJ[(w >> 8) & 255],
            _NOUN[w >> 16],
        )

    def path_of(self, page: int) -> str:
        _, j, section, adj, noun = self._words(page)
        return "/" if j == 0 else f"/{section}/{adj}-{noun}-{j}.html"

    def url_of(self, page: int) -> str:
        return f"http://{self.host_names[self.host_of(page)]}{self.path_of(page)}"

    def status_of(self, page: int) -> int:
        """200, 404 or 301 (home pages always 200)."""
        if page == self.starts[self.host_of(page)]:
            return 200
        draw = (_mix(page ^ self._salt ^ 0x5151) >> 12) % 1000
        return (
            404
            if draw < MISSING_PER_MILLE
            else 301
            if draw < MISSING_PER_MILLE + REDIRECT_PER_MILLE
            else 200
        )

    def robots_of(self, host: int) -> str | None:
        """The robots.txt of a host, None when it has none."""
        return self._robots[host]

    def links_of(self, page: int) -> list[int]:
        """The pages a page links to, in document order, without duplicates."""
        k = self.host_of(page)
        start, n = self.starts[k], self.sizes[k]
        j = page - start
        rnd = random.Random(page ^ self._salt)
        out = [start] if j else []  # every page but the home page links home
        total = self.pages
        for _ in range(rnd.randint(25, 45)):
            u = rnd.random()
            if u < CROSS_HOST:
                other = self.host_of(int(rnd.random() * total))  # a host by its size
                base, size = self.starts[other], self.sizes[other]
                out.append(base if rnd.random() < 0.5 else base + int(size * rnd.random() ** 3))
            elif u < CROSS_HOST + NEARBY:
                out.append(start + (j + 1 + int(rnd.random() * 40)) % n)
            else:
                out.append(start + int(n * rnd.random() ** 3))
        return list(dict.fromkeys(out))

    def page_of(self, url: str) -> tuple[int, bool] | None:
        """(page, whether the URL is its redirect target ``/dir/`` form) or None."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
            port = parts.port
        except ValueError:
            return None
        k = self._host_index.get(host)
        if k is None or parts.query or port not in (None, 80, 443):
            return None
        path = parts.path or "/"
        if path == "/":
            return self.starts[k], False
        moved = path.endswith("/")
        stem = path[:-1] if moved else path.removesuffix(".html")
        number = stem.rpartition("-")[2]
        if not number.isdigit() or (not moved and not path.endswith(".html")):
            return None
        j = int(number)
        if not 0 < j < self.sizes[k]:
            return None
        page = self.starts[k] + j
        if self.path_of(page) != (f"{stem}.html" if moved else path):
            return None
        return page, moved

    # ---- the pages --------------------------------------------------------------

    def html_of(self, page: int) -> bytes:
        k, j, section, adj, noun = self._words(page)
        site = self.host_names[k]
        rnd = random.Random(page ^ self._salt ^ 0xABCDEF)
        pool, count = self._sentences, len(self._sentences)
        title = f"{adj.capitalize()} {noun} ({section}) | Site {k}" if j else f"Site {k}: home"
        anchors = []
        for target in self.links_of(page):
            tk, tj, tsec, tadj, tnoun = self._words(target)
            path = "/" if tj == 0 else f"/{tsec}/{tadj}-{tnoun}-{tj}.html"
            href = path if tk == k else f"http://{self.host_names[tk]}{path}"
            anchors.append(
                f'<a href="{href}">{tadj} {tnoun}</a>' if tj else f'<a href="{href}">Site {tk}</a>'
            )
        nav, rest = anchors[:5], anchors[5:]
        paragraphs = min(30, 2 + int(rnd.expovariate(0.2)))
        inline = len(rest) // 3
        out = [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n<title>', title,
            '</title>\n<meta name="description" content="', pool[page % count],
            f'">\n</head><body>\n<header><a class="logo" href="/">Site {k}</a> <nav><ul>',
        ]  # fmt: skip
        out += [f"<li>{a}</li>" for a in nav]
        out += ["</ul></nav></header>\n<main><article>\n<h1>", title, "</h1>\n"]
        for p in range(paragraphs):
            first = int(rnd.random() * (count - 8))
            out += ["<p>", " ".join(pool[first : first + 2 + int(rnd.random() * 6)])]
            if p < inline:
                out += [" See ", rest[p], "."]
            out.append("</p>\n")
        out.append('</article>\n<aside><h2>Related</h2><ul class="related">')
        out += [f"<li>{a}</li>" for a in rest[min(inline, paragraphs) :]]
        out.append(
            f"</ul></aside></main>\n<footer><p>&copy; 2024 {site}</p></footer>\n</body></html>\n"
        )
        return "".join(out).encode("utf-8")

    def home_urls(self, count: int) -> list[str]:
        """The home pages of the ``count`` largest hosts (good seeds), largest first."""
        ranked = sorted(range(self.host_count), key=lambda k: (-self.sizes[k], k))
        return [f"http://{self.host_names[k]}/" for k in ranked[:count]]

    # ---- the replay web's interface ---------------------------------------------

    def __len__(self) -> int:
        return self.pages

    def find(self, url: str) -> str | None:
        found = self.page_of(url)
        if found is None:
            return None
        page, moved = found
        status = self.status_of(page)
        return url if (status == 200 and not moved) or status == 301 else None

    def knows_host(self, host: str) -> bool:
        return host.lower() in self._host_index

    async def answer(
        self, url: str, *, method: str = "GET", keep: bool = True, in_thread: bool = True,
        conditional: Mapping[str, str] | None = None,  # a generated page has no validators
    ) -> ReplayAnswer:
        head = method == "HEAD"
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
        except ValueError:
            host, parts = "", urlsplit("")
        k = self._host_index.get(host)
        if k is None:
            return own_answer(502, f"unknown host {host}", keep=keep, head=head, extra=(UNKNOWN_HOST,))
        if parts.path == "/robots.txt" and not parts.query:
            robots = self.robots_of(k)
            if robots is None:
                return own_answer(404, "no robots.txt", keep=keep, head=head)
            return self._answer(200, "text/plain; charset=utf-8", robots.encode(), keep, head)
        found = self.page_of(url)
        if found is None:
            return own_answer(404, "not in the generated web", keep=keep, head=head)
        page, moved = found
        status = self.status_of(page)
        if status == 404 or (moved and status != 301):
            return own_answer(404, "gone", keep=keep, head=head)
        if status == 301 and not moved:
            location = self.path_of(page).removesuffix(".html") + "/"
            return self._answer(
                301, "text/html; charset=utf-8", b"<p>moved</p>\n", keep, head, location
            )
        return self._answer(200, "text/html; charset=utf-8", self.html_of(page), keep, head)

    @staticmethod
    def _answer(
        status: int, ctype: str, body: bytes, keep: bool, head: bool, location: str = ""
    ) -> ReplayAnswer:
        fields = [("Content-Type", ctype)] + ([("Location", location)] if location else [])
        return ReplayAnswer(
            status,
            "",
            tuple(head_fields(fields, len(body), keep)),
            b"" if head else body,
            archived=True,
        )
