"""Unicode scripts of letters: the evidence for CJK languages that needs no statistics."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

# Unicode blocks, as (first, last, script), in code point order (looked up by bisection:
# a page's every non-ASCII letter is looked up). A letter outside them is "other": every
# script is a script, and a Khmer, Bengali or Georgian page has letters (before, they
# were not letters at all, and a page in them was a page in no language).
BLOCKS: tuple[tuple[int, int, str], ...] = (
    (0x00C0, 0x024F, "latin"),
    (0x0370, 0x03FF, "greek"), (0x0400, 0x052F, "cyrillic"), (0x0530, 0x058F, "armenian"),
    (0x0590, 0x05FF, "hebrew"), (0x0600, 0x06FF, "arabic"), (0x0750, 0x077F, "arabic"),
    (0x0900, 0x097F, "devanagari"), (0x0980, 0x09FF, "bengali"), (0x0A00, 0x0A7F, "gurmukhi"),
    (0x0A80, 0x0AFF, "gujarati"), (0x0B00, 0x0B7F, "oriya"), (0x0B80, 0x0BFF, "tamil"),
    (0x0C00, 0x0C7F, "telugu"), (0x0C80, 0x0CFF, "kannada"), (0x0D00, 0x0D7F, "malayalam"),
    (0x0D80, 0x0DFF, "sinhala"), (0x0E00, 0x0E7F, "thai"), (0x0E80, 0x0EFF, "lao"),
    (0x0F00, 0x0FFF, "tibetan"), (0x1000, 0x109F, "myanmar"), (0x10A0, 0x10FF, "georgian"),
    (0x1100, 0x11FF, "hangul"), (0x1200, 0x139F, "ethiopic"), (0x1780, 0x17FF, "khmer"),
    (0x1E00, 0x1EFF, "latin"), (0x1F00, 0x1FFF, "greek"),
    (0x3040, 0x309F, "kana"), (0x30A0, 0x30FA, "kana"), (0x30FC, 0x30FF, "kana"),
    (0x3130, 0x318F, "hangul"), (0x31F0, 0x31FF, "kana"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xA960, 0xA97F, "hangul"),
    (0xAC00, 0xD7FF, "hangul"), (0xF900, 0xFAFF, "han"), (0xFB50, 0xFDFF, "arabic"),
    (0xFE70, 0xFEFF, "arabic"), (0xFF66, 0xFF9F, "kana"), (0x20000, 0x2FA1F, "han"),
)  # fmt: skip
# U+30FB KATAKANA MIDDLE DOT is left out of "kana": Chinese text uses it in names.
_FIRSTS = [first for first, _, _ in BLOCKS]


def char_script(ch: str) -> str | None:
    """The script of a letter (its Unicode block's), ``"other"`` for a letter of none of
    :data:`BLOCKS`, None for what is no letter (outside the blocks).

    >>> [char_script(c) for c in ("a", "é", "中", "ខ", "ক", "ა", "𐌰", "1", "€")]
    ['latin', 'latin', 'han', 'khmer', 'bengali', 'georgian', 'other', None, None]
    """
    code = ord(ch)
    if code < 0x80:
        return "latin" if ch.isalpha() else None
    at = bisect.bisect_right(_FIRSTS, code) - 1
    if at >= 0 and code <= BLOCKS[at][1]:
        return BLOCKS[at][2]
    return "other" if ch.isalpha() else None


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


# Common characters that have two forms, traditional then simplified, each form
# used by one script only (pairs such as 后/後, 准/準, 里/裡, 台/臺 are left out:
# traditional text writes the simplified form too).
_HANT_HANS_PAIRS = (
    "這这 個个 們们 來来 時时 說说 會会 為为 國国 學学 對对 發发 開开 關关 問问 題题 與与 "
    "體体 現现 實实 點点 經经 應应 動动 種种 麼么 無无 書书 長长 見见 進进 話话 電电 門门 "
    "頁页 網网 檔档 設设 據据 庫库 資资 訊讯 連连 結结 選选 項项 組组 態态 線线 號号 碼码 "
    "錯错 誤误 請请 幫帮 區区 單单 載载 顯显 變变 數数 類类 處处 運运 執执 權权 記记 錄录 "
    "標标 認认 證证 換换 轉转 統统 計计 讀读 寫写 語语 編编 譯译 輸输 頭头 條条 務务 視视 "
    "從从 車车 東东 氣气 樣样 還还 過过 邊边 當当 萬万 義义 術术 業业 產产 專专"
)
_TRADITIONAL = frozenset(pair[0] for pair in _HANT_HANS_PAIRS.split())
_SIMPLIFIED = frozenset(pair[1] for pair in _HANT_HANS_PAIRS.split())


def chinese_script(text: str) -> str | None:
    """``"zh-Hant"`` or ``"zh-Hans"``: the Chinese script of Han text, or None if undecided.

    Counts the characters of ``text`` written in only one of the two scripts (這
    is traditional, 这 simplified; 中文 is both) and returns the script with more;
    None on a tie or when no such character is there (short anchors often have
    none). Meant for text already read as Chinese: Japanese kanji share some
    simplified forms (国, 学).

    >>> [chinese_script(t) for t in ("這個設定", "这个设定", "中文", "這个", "設定檔案说明")]
    ['zh-Hant', 'zh-Hans', None, None, 'zh-Hant']
    """
    traditional = simplified = 0
    for ch in text:
        if ch in _TRADITIONAL:
            traditional += 1
        elif ch in _SIMPLIFIED:
            simplified += 1
    if traditional == simplified:
        return None
    return "zh-Hant" if traditional > simplified else "zh-Hans"


_HANT_SUBTAGS = frozenset({"hant", "tw", "hk", "mo"})  # the script, or a region written in it
_HANS_SUBTAGS = frozenset({"hans", "cn", "sg", "my"})


def tag_chinese_script(tag: str) -> str | None:
    """The Chinese script a BCP 47 tag names (its script subtag, else its region's), or None.

    >>> [tag_chinese_script(t) for t in ("zh-Hant", "zh-TW", "zh_CN", "zh-Hans-SG", "zh", "yue", "ja")]
    ['zh-Hant', 'zh-Hant', 'zh-Hans', 'zh-Hans', None, None, None]
    """
    primary, *rest = tag.strip().lower().replace("_", "-").split("-")
    if primary != "zh":
        return None
    for subtag in rest:
        if subtag in _HANT_SUBTAGS:
            return "zh-Hant"
        if subtag in _HANS_SUBTAGS:
            return "zh-Hans"
    return None


def wanted_chinese_script(targets: Iterable[str]) -> str | None:
    """The one Chinese script a crawl's target tags ask for; None if they take any or no Chinese.

    >>> [wanted_chinese_script(t) for t in (["zh-Hant"], ["ja", "zh-TW"], ["zh"], ["zh-TW", "zh-CN"], ["ja"])]
    ['zh-Hant', 'zh-Hant', None, None, None]
    """
    chinese = {tag_chinese_script(t) for t in targets if t.strip().lower()[:2] == "zh"}
    return next(iter(chinese)) if len(chinese) == 1 else None


def other_chinese_script(text: str, wanted: str | None) -> bool:
    """True if ``text`` is written in the Chinese script ``wanted`` is not (an undecided
    text is not: :func:`chinese_script` returns None for it).

    >>> [other_chinese_script(t, "zh-Hant") for t in ("这个设定", "這個設定", "中文")]
    [True, False, False]
    """
    return wanted is not None and chinese_script(text) not in (None, wanted)
