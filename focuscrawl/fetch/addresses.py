"""Refuse private, loopback, link-local and other non-public addresses.

A crawler following links from the open web must not be steered into the
machine's own network (SSRF). The check runs *inside* the resolver aiohttp
connects with (:class:`FilteringResolver`), so the addresses checked are the
addresses connected to: a DNS answer cannot change between check and connect
(DNS rebinding). IP literals never reach a resolver, and through a proxy the
proxy resolves the name, so the fetcher checks every request's target with
:meth:`AddressPolicy.check_target` first: IP literals in any spelling an OS
resolver accepts (``127.1``, ``2130706433``, ``0x7f.0.0.1``) and loopback
names (``localhost``, ``ip6-localhost``...) are refused unless allowed. Through a
proxy, a host name is also resolved here before the proxy is asked for it
(:meth:`AddressPolicy.name_refused`): a name whose answers here include a refused
address (the hosts file's ``intranet 10.0.0.1``, ``10.0.0.1.nip.io``) is not sent.
A name that does not resolve here is left to the proxy: the replay server's
hosts (``www.cs.cornell.edu`` on a machine without DNS) resolve nowhere but in it.
The lookups run in threads (:mod:`focuscrawl.fetch.lookups`), a query unanswered
for a few times this machine's usual answer time is asked again, and the fetches of
one host share its lookup. (Starting a host's lookup when a link to it is queued, as browsers
do, was tried: on the WebKB replay it made the crawl slower, 1.8-2.0 s against
1.2-1.4 s, and it looks up hosts a focused crawl mostly never fetches; a fetch
waiting for its lookup holds no global slot, only its place in the window.)
Where lookups hang instead of failing (a sandbox whose DNS server forwards to a
network it cannot reach), two lookups that time out end the checks of names, and
where they are lost (a DNS server that drops a burst of queries: one asked again for
every four answered) they end at once (logged with -v): a crawl through the replay
server is not slowed by a lookup's second a host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
from collections.abc import Awaitable, Callable, Iterable

from aiohttp.abc import AbstractResolver, ResolveResult

from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.lookups import LocalResolver, LookupsLost

__all__ = ["AddressPolicy", "BlockedAddressError", "FilteringResolver", "parse_ip"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# inet_aton's forms: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x)
_LOOSE_IPV4 = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}\.?")
_LOOPBACK = ipaddress.IPv4Address("127.0.0.1")
log = logging.getLogger(__name__)
# names the usual hosts files give loopback addresses (Debian, Red Hat, systemd)
_LOOPBACK_NAMES = frozenset({
    "localhost", "localhost.localdomain", "localhost4", "localhost4.localdomain4",
    "localhost6", "localhost6.localdomain6", "ip6-localhost", "ip6-loopback",
})  # fmt: skip
_RESOLVE_SECONDS = 1.0  # a name not resolved here in this time is left to the proxy
_RESOLVE_TIMEOUTS = 2  # after this many lookups timed out, DNS is taken as absent here

Resolve = Callable[[str], Awaitable[list[str]]]  # host name -> its addresses


class BlockedAddressError(OSError):
    """The host resolves only to addresses the policy refuses."""


def parse_ip(host: str) -> IPAddress | None:
    """The address if ``host`` is an IP literal (brackets allowed), else None.

    >>> parse_ip("[::1]"), parse_ip("example.org")
    (IPv6Address('::1'), None)
    """
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def parse_ip_loose(host: str) -> IPAddress | None:
    """The address a resolver would make of ``host`` if it is an IP literal in any form.

    getaddrinfo (and so a proxy) reads ``127.1``, ``2130706433`` or ``0177.0.0.1``
    as IPv4 addresses; names are never all-numeric, so these are literals.

    >>> [str(parse_ip_loose(h)) for h in ("127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1")]
    ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1']
    >>> parse_ip_loose("[fe80::1]"), parse_ip_loose("cafe.org"), parse_ip_loose("1.2.3.4.5")
    (IPv6Address('fe80::1'), None, None)
    """
    low = host.lower()
    bare = low.strip("[]")
    if ":" not in bare and not _LOOSE_IPV4.fullmatch(bare):
        return None  # a name (an IPv6 address has a colon): two ValueErrors saved
    ip = parse_ip(host)
    if ip is not None:
        return ip
    if not _LOOSE_IPV4.fullmatch(low):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(low.rstrip(".")))
    except (OSError, ValueError):
        return None


def is_local_name(host: str) -> bool:
    """``localhost`` and its subdomains (RFC 6761 section 6.3), and the other names
    hosts files give loopback (``ip6-localhost``, ``localhost.localdomain``...).

    >>> is_local_name("LOCALHOST."), is_local_name("a.localhost"), is_local_name("localhost.org")
    (True, True, False)
    >>> is_local_name("ip6-localhost"), is_local_name("localhost.localdomain")
    (True, True)
    """
    low = host.lower().rstrip(".")
    return low in _LOOPBACK_NAMES or low.endswith(".localhost")


def is_public(ip: IPAddress) -> bool:
    """True for globally routable unicast addresses.

    >>> [is_public(ipaddress.ip_address(a)) for a in ("8.8.8.8", "10.1.2.3", "::ffff:127.0.0.1", "224.0.0.1")]
    [True, False, False, False]
    """
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:10.0.0.1 reaches 10.0.0.1
    return ip.is_global and not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


class AddressPolicy:
    """Which non-public hosts/addresses may still be contacted.

    ``allow`` entries: an IP (``"127.0.0.1"``), a network (``"127.0.0.0/8"``), a
    host name (``"localhost"``), or ``"*"`` for everything.

    >>> policy = AddressPolicy(("127.0.0.0/8", "intranet.test"))
    >>> policy.allows_ip(ipaddress.ip_address("127.0.0.9")), policy.allows_ip(ipaddress.ip_address("10.0.0.1"))
    (True, False)
    >>> policy.allows_host("INTRANET.test"), policy.allows_host("other.test")
    (True, False)

    ``hosts`` are host names (or IP literals) allowed as such, unparsed (the
    hosts of the archives a simulation reads). ``resolve`` is how :meth:`name_refused`
    resolves a name (default: this machine's resolver).
    """

    def __init__(
        self, allow: tuple[str, ...] = (), *, hosts: Iterable[str] = (), resolve: Resolve | None = None
    ) -> None:
        self.allow_all = False
        self._resolve: Resolve = resolve if resolve is not None else LocalResolver()
        self._timeouts = 0  # lookups of name_refused that timed out
        self._names_left = False  # DNS here absent or losing queries: names left to the proxy
        self._hosts: set[str] = {h.lower().strip("[]").rstrip(".") for h in hosts}
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allow:
            item = entry.strip().lower()
            if not item:
                continue
            if item == "*":
                self.allow_all = True
                continue
            try:
                self._networks.append(ipaddress.ip_network(item.strip("[]"), strict=False))
            except ValueError:
                if any(c in item for c in "/ :"):
                    raise ConfigError(
                        f"config: fetch.allow_private entry {entry!r} is not an IP, network or host"
                    ) from None
                self._hosts.add(item.rstrip("."))

    def allows_host(self, hostname: str) -> bool:
        """The host name itself is allowed (whatever it resolves to)."""
        return self.allow_all or hostname.lower().strip("[]").rstrip(".") in self._hosts

    def allows_ip(self, ip: IPAddress) -> bool:
        """The address may be connected to."""
        if self.allow_all or is_public(ip):
            return True
        plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        return any(ip in net or (plain is not None and plain in net) for net in self._networks)

    def check_target(self, hostname: str) -> bool:
        """May a request for a URL on ``hostname`` be sent at all (directly or to a proxy)?

        False for IP literals in any form and ``localhost`` names whose address
        is refused; other names are checked where they are resolved.

        >>> policy = AddressPolicy()
        >>> [policy.check_target(h) for h in ("example.org", "127.1", "localhost", "[::1]", "8.8.8.8")]
        [True, False, False, False, True]
        >>> AddressPolicy(("127.0.0.1",)).check_target("localhost")
        True
        """
        if self.allows_host(hostname):
            return True
        ip = _LOOPBACK if is_local_name(hostname) else parse_ip_loose(hostname)
        return ip is None or self.allows_ip(ip)

    def needs_resolving(self, hostname: str) -> bool:
        """``hostname`` is a name that :meth:`check_target` passed without knowing its
        addresses (not an IP literal, a loopback name or an allowed host)."""
        return not (
            self.allow_all
            or self.allows_host(hostname)
            or is_local_name(hostname)
            or parse_ip_loose(hostname) is not None
        )

    async def name_refused(self, hostname: str) -> bool:
        """Does ``hostname`` resolve here to an address the policy refuses? Any one of
        its answers counts: a proxy given the name may connect to any of them. A name
        that does not resolve here (an error, or no answer within 1 s) is not refused.

        >>> async def hosts_file(name: str) -> list[str]:
        ...     return {"intranet": ["10.0.0.1"], "cdn": ["8.8.8.8", "fe80::1%eth0"]}[name]
        >>> policy = AddressPolicy(resolve=hosts_file)
        >>> [asyncio.run(policy.name_refused(h)) for h in ("intranet", "cdn", "unknown.test")]
        [True, True, False]
        """
        if not self.needs_resolving(hostname) or self._names_left:
            return False
        try:
            async with asyncio.timeout(_RESOLVE_SECONDS):
                found = await self._resolve(hostname.strip("[]").rstrip("."))
        except TimeoutError:
            self._timeouts += 1
            if self._timeouts >= _RESOLVE_TIMEOUTS:
                self._leave_names("DNS lookups here time out")
            return False
        except LookupsLost:
            self._leave_names("DNS here loses queries")
            return False
        except (OSError, UnicodeError, KeyError, ValueError):
            return False
        for address in found:
            ip = parse_ip(address.split("%", 1)[0])  # fe80::1%eth0: the scope is no part of it
            if ip is not None and not self.allows_ip(ip):
                return True
        return False

    def _leave_names(self, why: str) -> None:
        if not self._names_left:
            self._names_left = True
            log.info("%s: host names are left to the proxy from now on", why)


class FilteringResolver(AbstractResolver):
    """Wraps a resolver and drops the addresses the policy refuses.

    Raises :class:`BlockedAddressError` when nothing is left; aiohttp reports it
    as a ``ClientConnectorDNSError`` whose ``os_error`` is that exception.
    """

    def __init__(
        self, inner: AbstractResolver, policy: AddressPolicy, *, close_inner: bool = True
    ) -> None:
        self._inner = inner
        self._policy = policy
        self._close_inner = close_inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        if self._policy.allows_host(host):
            return found
        kept = [
            r
            for r in found
            if (ip := parse_ip(r["host"])) is not None and self._policy.allows_ip(ip)
        ]
        if not kept:
            raise BlockedAddressError(f"{host} resolves only to refused addresses")
        return kept

    async def close(self) -> None:
        if self._close_inner:
            await self._inner.close()
