"""``fetch.render = "auto"``'s rule: which fetched pages look like a script shell."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

_ROOT_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "svelte", "main-app", "react-root"})
_SHELL_WORDS = 50  # visible words below which a page with scripts may be a shell


def looks_like_shell(body: bytes) -> bool:
    """``auto``'s rule: little visible text (under 50 words) and a script, with a known
    framework root (``<div id="root">``, ``#app``, ``#__next``...) or scripts making up
    most of the bytes, or at most one link to follow.

    >>> looks_like_shell(b'<html><body><div id="root"></div><script src="/app.js"></script></body></html>')
    True
    >>> looks_like_shell(b'<html><body><p>' + b'word ' * 80 + b'</p><script>x()</script></body></html>')
    False
    >>> looks_like_shell(b'<html><body><p>Hello</p><a href="/a">a</a><a href="/b">b</a></body></html>')
    False
    """
    tree = LexborHTMLParser(body)
    scripts = tree.css("script")
    if not scripts:
        return False
    script_bytes = sum(len(node.text() or "") for node in scripts)
    for node in tree.css("script, style, noscript, template"):
        node.decompose()
    root = tree.body
    words = len((root.text(separator=" ") if root is not None else "").split())
    if words >= _SHELL_WORDS:
        return False
    framework = any((node.attributes.get("id") or "") in _ROOT_IDS for node in tree.css("[id]"))
    links = len(tree.css("a[href]"))
    # a shell often keeps a "home" link in its HTML: one link is still no page to follow
    return framework or links <= 1 or script_bytes > len(body) // 2
