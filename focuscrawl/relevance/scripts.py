"""Unicode scripts of letters: the evidence for CJK languages that needs no statistics."""

from __future__ import annotations

# Unicode blocks, as (first, last, script); the table is short and anchors are
# short, so a linear scan per non-ASCII character is fast enough.
_BLOCKS: tuple[tuple[int, int, str], ...] = (
    (0x00C0, 0x024F, "latin"), (0x1E00, 0x1EFF, "latin"),
    (0x0370, 0x03FF, "greek"), (0x0400, 0x052F, "cyrillic"),
    (0x0590, 0x05FF, "hebrew"), (0x0600, 0x06FF, "arabic"), (0x0750, 0x077F, "arabic"),
    (0x0900, 0x097F, "devanagari"), (0x0E00, 0x0E7F, "thai"),
    (0x1100, 0x11FF, "hangul"), (0x3130, 0x318F, "hangul"), (0xA960, 0xA97F, "hangul"),
    (0xAC00, 0xD7FF, "hangul"),
    (0x3040, 0x309F, "kana"), (0x30A0, 0x30FA, "kana"), (0x30FC, 0x30FF, "kana"),
    (0x31F0, 0x31FF, "kana"), (0xFF66, 0xFF9F, "kana"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xF900, 0xFAFF, "han"),
    (0x20000, 0x2FA1F, "han"),
)  # fmt: skip
# U+30FB KATAKANA MIDDLE DOT is left out of "kana": Chinese text uses it in names.


def char_script(ch: str) -> str | None:
    code = ord(ch)
    if code < 0x80:
        return "latin" if ch.isalpha() else None
    for first, last, script in _BLOCKS:
        if first <= code <= last:
            return script
    return None


def script_counts(text: str) -> dict[str, int]:
    """Number of letters of each script in ``text``.

    >>> script_counts("mod_rewrite モジュール")
    {'latin': 10, 'kana': 5}
    """
    counts: dict[str, int] = {}
    for ch in text:
        script = char_script(ch)
        if script is not None:
            counts[script] = counts.get(script, 0) + 1
    return counts


def script_of(text: str) -> str | None:
    """The script that decides the language of ``text``: ``"ko"``, ``"ja"``, ``"han"``, or another script.

    Hangul -> ``"ko"`` and any kana -> ``"ja"`` win even in mixed text (Korean
    may carry Hanja, Japanese carries kanji and Latin words); Han characters with
    neither -> ``"han"`` (Chinese, or Japanese written in kanji only); otherwise
    the script with the most letters (``"latin"``, ``"cyrillic"``, ...); None if
    ``text`` has no letters.

    >>> [script_of(t) for t in ("한국어", "ひらがな", "中文", "設定 file", "Привет", "42 !")]
    ['ko', 'ja', 'han', 'han', 'cyrillic', None]
    """
    counts = script_counts(text)
    if not counts:
        return None
    if "hangul" in counts:
        return "ko"
    if "kana" in counts:
        return "ja"
    if "han" in counts:
        return "han"
    return max(counts.items(), key=lambda item: item[1])[0]
