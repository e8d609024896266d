"""Build "docweb-third": a third multilingual documentation web, disjoint from docweb-dev and docweb-holdout.

    python experiments/build_docweb_third.py [--work DIR] [--out DIR]

Issue 38 judges the language crawl "on a hidden web of this kind". docweb-dev chose the
defaults and docweb-holdout has been looked at (a fault was found and fixed on it), so
neither can judge anything any more. This builds a third web of the same kind, which
nobody has crawled with a language strategy, from **Debian 12 packages disjoint from
docweb-dev's and docweb-holdout's** (the lists in ``../shared/testweb/docweb-dev.md`` and
``experiments/build_docweb_holdout.py``), pinned by version:

- the LilyPond 2.24 manuals (``lilypond-doc-html`` and its eleven translations, HTML as
  shipped) on ``http://lilypond.org/doc/v2.24/Documentation/<manual>/<page>[.<lang>].html``
  (the real site's layout: English unsuffixed, translations ``.<lang>.html``; every page
  has the manual's own *other languages* line; untranslated pages have no ``.<lang>.html``
  and their language links 404, as a crawler meets them); the one-page manuals
  (``*-big-page``) left out for size;
- the Scilab 6.1.1 help (``scilab-doc``, ``-fr``, ``-ja``, ``-pt-br``: the HTML pages of each
  language's JavaHelp jar, as shipped) on ``http://help.scilab.org/docs/6.1.1/<lang>/<page>.html``
  (the real site's layout: ``en_US``, ``fr_FR``, ``ja_JP``, ``pt_BR``); 60 % of its Japanese
  pages are untranslated English;
- the MATE user guide and the help of nine MATE applications (Mallard and DocBook
  sources rendered with ``yelp-build``) on ``http://mate-desktop.org/docs/<lang>/<app>/<page>.html``
  (**layout synthetic**: MATE publishes no per-page help site), with one synthetic page
  per language listing its guides and a root page listing the languages;
- the help of 22 GNOME applications not in docweb-holdout (Mallard, ``yelp-build``) on
  ``http://help.gnome.org/users/<app>/stable/<page>.html.<lang>`` with a language chooser
  per application, and the GNOME developer guides (``gnome-devel-docs``) on
  ``http://developer.gnome.org/<guide>/stable/<page>.html.<lang>`` (help.gnome.org's and
  developer.gnome.org's layouts);
- the GnuCash 4.13 tutorial and help (``gnucash-docs``, HTML as shipped) on
  ``http://www.gnucash.org/docs/v4/<lang>/<manual>/<file>.html`` (the real site's layout,
  ``C`` for English) with a language chooser on ``http://www.gnucash.org/docs/v4/``;
- synthetic pages: the portal ``http://docs-index.example/`` (the English seed) and the
  host root pages named above.

The yelp-rendered help is limited to the languages in ``HELP_LANGS`` (16 of the 80-120
the packages ship) to bound the build time.

33,009 pages on seven hosts: 2,044 Japanese, 497 Korean and 394 Chinese pages by their
text, 3,891 untranslated pages among the 6,826 in CJK directories. Korean and Chinese are
thin: Debian 12 ships little Korean or Chinese documentation, and docweb-dev and
docweb-holdout already took most of it (GNOME Help, the GIMP and LibreOffice help, the
Debian FAQ, manpages-zh); the MATE and GNOME help left is most of what there is, so a
patient crawl can find every Korean and Chinese page within 2,000 URLs. About 11 minutes
from scratch (about 270 MB of .debs), 3 minutes with the work folder kept.

It imports ``../shared/testweb/docweb-dev-build.py`` by path and reuses its machinery
(``apt-get download`` + ``dpkg-deb -x`` of pinned packages, the WARC writer with fixed
dates and record ids from the URL, the visible-text parse, ``script_label`` for the
labels: ``target`` ja / ko / zh / other by the measured script share, never by the URL),
as ``build_docweb_holdout.py`` does. Nothing under ``../shared`` is edited. Deterministic: the same packages and tools give the same bytes. Output (never
committed): ``OUT/docweb-third.warc.gz``, ``OUT/docweb-third.labels.jsonl`` and the
manifest ``OUT/docweb-third.md``. Default OUT ``/work/webs/docweb-third`` (or
``$FOCUSCRAWL_THIRD``). Needs Debian 12, ``yelp-tools``, warcio and lxml.
"""

from __future__ import annotations

import collections
import html
import importlib.util
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
TESTWEB = Path(os.environ.get("FOCUSCRAWL_TESTWEB") or ROOT.parent / "shared" / "testweb")
DEFAULT_OUT = Path(os.environ.get("FOCUSCRAWL_THIRD") or "/work/webs/docweb-third")
NAME = "docweb-third"
SEED = "http://docs-index.example/"
LILY_HOST = "http://lilypond.org/"
LILY_DIR = "doc/v2.24/Documentation/"
MATE_HOST = "http://mate-desktop.org/"
GNOME_HOST = "http://help.gnome.org/"
DEVEL_HOST = "http://developer.gnome.org/"
GNUCASH_HOST = "http://www.gnucash.org/"
GNUCASH_DIR = "docs/v4/"

# Debian 12 bookworm, main: none of these is among docweb-dev's or docweb-holdout's packages
LILY_LANGS = ["ca", "cs", "de", "es", "fr", "hu", "it", "ja", "nl", "pt", "zh"]
LILY_PACKAGES = {"lilypond-doc-html": "2.24.1-2", **{f"lilypond-doc-html-{x}": "2.24.1-2" for x in LILY_LANGS}}
MATE_PACKAGES = {
    "mate-user-guide": "1.26.0-1",
    "atril-common": "1.26.0-2+deb12u4",
    "mate-calc-common": "1.26.0-1",
    "mate-control-center-common": "1.26.0-2+deb12u1",
    "mate-utils-common": "1.26.0-1+deb12u1",
    "engrampa-common": "1.26.0-1+deb12u2",
    "eom-common": "1.26.0-2",
    "mate-system-monitor-common": "1.26.0-1",
    "mate-terminal-common": "1.26.0-2",
    "mate-power-manager-common": "1.26.0-2+deb12u1",
}
GNOME_PACKAGES = {
    "aisleriot": "1:3.22.23-1",
    "epiphany-browser-data": "43.1-1",
    "gnome-dictionary": "40.0-3",
    "gnome-music": "42.1-1",
    "gnome-photos": "43.0-2",
    "brasero-common": "3.12.3-2",
    "zenity-common": "3.44.0-1",
    "ghex": "43.1-1",
    "evolution-common": "3.46.4-2+deb12u1",
    "gthumb-data": "3:3.12.2-3",
    "accerciser": "3.40.0-2",
    "vinagre": "3.22.0-8.1",
    "orca": "43.1-1",
    "polari": "43.0-1",
    "glade": "3.40.0-3+b1",
    "bijiben": "40.1-6",
    "gnome-color-manager": "3.36.0-1+b1",
    "gnome-nettool": "42.0-1",
    "gucharmap": "1:15.0.2-1",
    "deja-dup": "44.0-2",
    "gnote": "43.1-1",
    "sound-juicer": "3.38.0-2.1",
}
DEVEL_PACKAGES = {"gnome-devel-docs": "40.3-1"}
GNUCASH_PACKAGES = {"gnucash-docs": "4.13-1"}
SCILAB_LANGS = {"scilab-doc": "en_US", "scilab-doc-fr": "fr_FR", "scilab-doc-ja": "ja_JP", "scilab-doc-pt-br": "pt_BR"}
SCILAB_PACKAGES = dict.fromkeys(SCILAB_LANGS, "6.1.1+dfsg2-6")
PACKAGES = {**LILY_PACKAGES, **MATE_PACKAGES, **GNOME_PACKAGES, **DEVEL_PACKAGES, **GNUCASH_PACKAGES, **SCILAB_PACKAGES}
SETS = ["lilypond", "scilab", "mate", "gnome-apps", "gnome-devel", "gnucash"]
SCILAB_HOST = "http://help.scilab.org/"
SCILAB_DIR = "docs/6.1.1/"
# the languages rendered from the Mallard / DocBook help (C is English): the CJK five and eleven large
HELP_LANGS = ["C", "ja", "ko", "zh_CN", "zh_TW", "zh_HK", "de", "fr", "es", "it", "pt_BR", "ru", "pl", "cs", "nl", "sv"]
LICENCE = {  # as stated in /usr/share/doc/<package>/copyright
    "lilypond": "GFDL-1.3+ (the manuals), GPL-3+ (LilyPond and its examples)",
    "mate": "GFDL-1.1+ / GPL-2+ (the help; as in each package's copyright file)",
    "gnome-apps": "GFDL-1.1+ / CC-BY-SA-3.0 / GPL-2+ or later (the help; as in each package's copyright file)",
    "gnome-devel": "CC-BY-SA-3.0 / CC-BY-SA-4.0 / GFDL-1.1+",
    "gnucash": "GFDL-1.1+ (no invariant sections) or GPL-2+",
    "scilab": "GPL-2+",
}


def load_module(path: Path, name: str) -> ModuleType:
    if not path.exists():
        sys.exit(f"{path} not found: set FOCUSCRAWL_TESTWEB to the folder holding docweb-dev-build.py")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_holdout_builder() -> ModuleType:
    """build_docweb_holdout.py, imported by path: its package list, and the writer and manifest parts
    the two builders share."""
    return load_module(Path(__file__).resolve().with_name("build_docweb_holdout.py"), "build_docweb_holdout")


def load_dev_builder() -> ModuleType:
    """docweb-dev's build script, imported by path (its package list set to this web's), after checking
    that no package of this web is one of docweb-dev's or docweb-holdout's."""
    dev = load_module(TESTWEB / "docweb-dev-build.py", "docweb_dev_build")
    holdout = load_holdout_builder()
    shared = sorted(set(PACKAGES) & (set(dev.PACKAGES) | set(holdout.PACKAGES)))
    if shared:
        sys.exit(f"packages of docweb-dev or docweb-holdout: {', '.join(shared)}")
    dev.PACKAGES = PACKAGES
    dev.MAN_PACKAGES = []
    dev.MAN_PRIORITY = []
    dev.TOOLS = ["yelp-tools", "yelp-xsl", "xsltproc"]
    return dev


def page(url: str, body: bytes, set_: str, lang_dir: str | None, module: str | None, pkg: str | None,
         render: str, src: str | None) -> dict[str, Any]:
    return {"url": url, "body": body, "set": set_, "lang_dir": lang_dir, "module": module, "section": None,
            "pkg": pkg, "render": render, "src": src}


# ------------------------------------------------------------------ the LilyPond manuals
LILY_LANG_RE = re.compile(r"\.([a-z]{2})\.html$")


def lilypond_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    pages = []
    for pkg in LILY_PACKAGES:
        base = work / "root" / pkg / "usr/share/doc/lilypond/html/Documentation"
        for f in sorted(base.rglob("*.html")):
            rel = f.relative_to(base).as_posix()
            if f.is_symlink() or "big-page" in rel or "/" not in rel:
                continue
            m = LILY_LANG_RE.search(f.name)
            lang = m.group(1) if m else "en"
            manual = rel.split("/")[0]
            stem = f.name[: m.start()] if m else f.name[: -len(".html")]
            pages.append(page(f"{LILY_HOST}{LILY_DIR}{dev.url_path(rel)}", f.read_bytes(), "lilypond", lang,
                              None if stem == "index" else manual, pkg, "package-html",
                              f.relative_to(work / "root" / pkg).as_posix()))
    return pages


# ------------------------------------------------------------------ the Scilab help
def scilab_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    """The Scilab 6.1.1 help as shipped, the HTML pages of each language's JavaHelp jar
    (``usr/share/scilab/modules/helptools/jar/scilab_<lang>_help.jar``), on help.scilab.org's layout."""
    pages = []
    for pkg, lang in SCILAB_LANGS.items():
        jar = work / "root" / pkg / f"usr/share/scilab/modules/helptools/jar/scilab_{lang}_help.jar"
        with zipfile.ZipFile(jar) as z:
            for name in sorted(n for n in z.namelist() if n.endswith(".html")):
                file = name.split("/", 1)[1]
                pages.append(page(f"{SCILAB_HOST}{SCILAB_DIR}{lang}/{dev.url_path(file)}", z.read(name), "scilab", lang,
                                  None if file == "index.html" else "help", pkg, "package-html",
                                  f"{jar.relative_to(work / 'root' / pkg).as_posix()}!{name}"))
    return pages


# ------------------------------------------------------------------ MATE and GNOME help (yelp-build)
def help_guides(work: Path, packages: dict[str, str]) -> list[tuple[str, str, str, Path]]:
    """(package, guide, language directory, source) of every Mallard or DocBook guide in HELP_LANGS."""
    out = []
    for pkg in packages:
        base = work / "root" / pkg / "usr/share/help"
        for lang in HELP_LANGS:
            if not (base / lang).is_dir():
                continue
            for guide in sorted(p for p in (base / lang).iterdir() if p.is_dir()):
                if (guide / "index.docbook").exists():
                    out.append((pkg, guide.name, lang, guide / "index.docbook"))
                elif any(guide.glob("*.page")):
                    out.append((pkg, guide.name, lang, guide))
    return out


def help_render(dev: ModuleType, work: Path, packages: dict[str, str], ext: str) -> list[tuple[str, str, str, Path]]:
    """Render each guide once into ``work/help-html/<guide>/<lang>/`` (``ext``: ``html`` or ``lang``, the
    suffix ``.html`` or ``.html.<lang>``); (package, guide, language, folder) of each."""
    out = work / "help-html"
    (out / "xsl").mkdir(parents=True, exist_ok=True)
    done = []
    for pkg, guide, lang, src in help_guides(work, packages):
        u = "en" if lang == "C" else lang
        suffix = ".html" if ext == "html" else f".html.{u}"
        d = out / ext / guide / u
        if not (d / ".done").exists():
            d.mkdir(parents=True, exist_ok=True)
            for f in d.iterdir():
                if f.is_file():
                    f.unlink()
            xsl = out / "xsl" / f"{ext}-{u}.xsl"
            xsl.write_text('<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0">\n'
                           f'<xsl:param name="html.extension" select="\'{suffix}\'"/>\n</xsl:stylesheet>\n')
            print(f"  yelp-build {guide} {lang}", file=sys.stderr, flush=True)
            target = str(src) if src.is_file() else str(src) + "/"
            subprocess.run(["nice", "-n", "15", "yelp-build", "html", "-i", "-x", str(xsl), "-o", str(d) + "/", target],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            (d / ".done").write_text("ok\n")
        done.append((pkg, guide, u, d))
    return done


def mate_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    pages = []
    for pkg, guide, u, d in help_render(dev, work, MATE_PACKAGES, "html"):
        for f in sorted(d.glob("*.html")):
            pages.append(page(f"{MATE_HOST}docs/{u}/{guide}/{dev.url_path(f.name)}", f.read_bytes(), "mate", u,
                              None if f.name == "index.html" else guide, pkg, "yelp-build",
                              f"usr/share/help/{'C' if u == 'en' else u}/{guide}/"))
    return pages


def gnome_pages(dev: ModuleType, work: Path, packages: dict[str, str], set_: str) -> list[dict[str, Any]]:
    pages = []
    for pkg, guide, u, d in help_render(dev, work, packages, "lang"):
        prefix = f"{GNOME_HOST}users/{guide}/stable/" if set_ == "gnome-apps" else f"{DEVEL_HOST}{guide}/stable/"
        for f in sorted(d.glob(f"*.html.{u}")):
            pid = f.name[: -len(f".html.{u}")]
            pages.append(page(prefix + dev.url_path(f.name), f.read_bytes(), set_, u,
                              None if pid == "index" else guide, pkg, "yelp-build",
                              f"usr/share/help/{'C' if u == 'en' else u}/{guide}/"))
    return pages


# ------------------------------------------------------------------ the GnuCash manuals
def gnucash_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    pkg = "gnucash-docs"
    base = work / "root" / pkg / "usr/share/doc/gnucash-docs"
    pages = []
    for d in sorted(p for p in base.iterdir() if p.is_dir() and p.name.startswith("gnucash-")):
        manual, lang = d.name.rsplit("-", 1)
        site_lang = "C" if lang == "en" else lang
        for f in sorted(d.glob("*.html")):
            if f.is_symlink():
                continue
            pages.append(page(f"{GNUCASH_HOST}{GNUCASH_DIR}{site_lang}/{manual}/{dev.url_path(f.name)}", f.read_bytes(),
                              "gnucash", lang, None if f.name == "index.html" else manual, pkg, "package-html",
                              f.relative_to(work / "root" / pkg).as_posix()))
    return pages


# ------------------------------------------------------------------ synthetic pages
def page_html(title: str, body: str, lang: str = "en") -> bytes:
    return ("<!DOCTYPE html>\n<!-- synthetic page of the docweb-third test web: not part of any documentation -->\n"
            f'<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="generator" content="build_docweb_third.py (synthetic)">\n'
            f"<title>{html.escape(title)}</title>\n</head>\n<body>\n{body}</body>\n</html>\n").encode()


def lang_order(lang: str) -> tuple[bool, str]:
    return lang != "en", lang


def synthetic_pages(dev: ModuleType, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def link(url: str, lang: str) -> str:
        return f'<a href="{url}" hreflang="{dev.norm_lang(lang)}">{html.escape(dev.native(lang))}</a>'

    out = []
    # mate-desktop.org: the languages; per language its guides (in that language's own name)
    mate: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for p in pages:
        if p["set"] == "mate" and p["module"] is None:
            mate[p["lang_dir"]][p["url"].split("/")[-2]] = p["url"]
    for lang in sorted(mate, key=lang_order):
        items = "".join(f'<li><a href="{u}">{html.escape(g)}</a></li>\n' for g, u in sorted(mate[lang].items()))
        out.append({"url": f"{MATE_HOST}docs/{lang}/", "set": "synthetic", "module": "chooser",
                    "body": page_html(f"MATE documentation ({dev.native(lang)})",
                                      f"<h1>MATE {html.escape(dev.native(lang))}</h1>\n<ul>\n{items}</ul>\n"
                                      f'<p><a href="/docs/">Other languages</a></p>\n', dev.norm_lang(lang))})
    li = " &middot; ".join(link(f"{MATE_HOST}docs/{lang}/", lang) for lang in sorted(mate, key=lang_order))
    out.append({"url": f"{MATE_HOST}docs/", "set": "synthetic", "module": "root",
                "body": page_html("MATE documentation: languages", f"<h1>MATE documentation</h1>\n<p>{li}</p>\n")})
    out.append({"url": MATE_HOST, "set": "synthetic", "module": "root",
                "body": page_html("MATE Desktop", '<h1>MATE Desktop</h1>\n<p><a href="/docs/">Documentation</a> '
                                  '(<a href="/docs/en/">English</a>)</p>\n')})
    # help.gnome.org and developer.gnome.org: the guides; per guide a language chooser
    for host, s, path, title in ((GNOME_HOST, "gnome-apps", "users/", "GNOME application help"),
                                 (DEVEL_HOST, "gnome-devel", "", "GNOME developer guides")):
        guides: dict[str, dict[str, str]] = collections.defaultdict(dict)
        for p in pages:
            if p["set"] == s and p["url"].endswith(f"/index.html.{p['lang_dir']}"):
                guides[p["url"][len(host):].split("/")[len(path.split("/")) - 1]][p["lang_dir"]] = p["url"]
        items = []
        for g in sorted(guides):
            chooser = f"{host}{path}{g}/"
            links = [link(u, lang) for lang, u in sorted(guides[g].items(), key=lambda kv: lang_order(kv[0]))]
            out.append({"url": chooser, "set": "synthetic", "module": "chooser",
                        "body": page_html(f"{g}: choose a language",
                                          f"<h1>{html.escape(g)}</h1>\n<p>{' &middot; '.join(links)}</p>\n")})
            first = guides[g].get("en") or guides[g][min(guides[g], key=lang_order)]
            items.append(f'<li><a href="{first}">{html.escape(g)}</a> '
                         f'(<a href="{chooser}">{len(guides[g])} languages</a>)</li>\n')
        out.append({"url": host, "set": "synthetic", "module": "root",
                    "body": page_html(title, f"<h1>{title}</h1>\n<ul>\n{''.join(items)}</ul>\n")})
    # www.gnucash.org: each manual's index in each language
    rows = []
    for manual in ("gnucash-guide", "gnucash-help"):
        idx = sorted((p for p in pages if p["set"] == "gnucash" and p["module"] is None
                      and f"/{manual}/" in p["url"]), key=lambda p: lang_order(p["lang_dir"]))
        rows.append(f"<h2>{manual}</h2>\n<p>{' &middot; '.join(link(p['url'], p['lang_dir']) for p in idx)}</p>\n")
    out.append({"url": f"{GNUCASH_HOST}{GNUCASH_DIR}", "set": "synthetic", "module": "root",
                "body": page_html("GnuCash documentation (v4)", "<h1>GnuCash documentation</h1>\n" + "".join(rows))})
    out.append({"url": GNUCASH_HOST, "set": "synthetic", "module": "root",
                "body": page_html("GnuCash", f'<h1>GnuCash</h1>\n<p><a href="/{GNUCASH_DIR}">Documentation</a></p>\n')})
    # help.scilab.org: the help's index in each language
    idx = sorted((p for p in pages if p["set"] == "scilab" and p["module"] is None), key=lambda p: p["lang_dir"])
    out.append({"url": f"{SCILAB_HOST}{SCILAB_DIR}", "set": "synthetic", "module": "root",
                "body": page_html("Scilab 6.1.1 help", "<h1>Scilab 6.1.1 help</h1>\n<p>"
                                  + " &middot; ".join(link(p["url"], p["lang_dir"]) for p in idx) + "</p>\n")})
    out.append({"url": SCILAB_HOST, "set": "synthetic", "module": "root",
                "body": page_html("Scilab help", f'<h1>Scilab help</h1>\n<p><a href="/{SCILAB_DIR}">Scilab 6.1.1</a></p>\n')})
    # lilypond.org: the manuals page of the site (English), its own pages carry the language links
    out.append({"url": LILY_HOST, "set": "synthetic", "module": "root",
                "body": page_html("LilyPond", f'<h1>LilyPond</h1>\n<p><a href="/{LILY_DIR}web/manuals.html">Manuals</a> '
                                  f'&middot; <a href="/{LILY_DIR}web/index.html">Home</a></p>\n')})
    # the portal (seed): each set's English index and its host's root page
    mate_en = mate.get("en", {})
    li_ = [f'<li>LilyPond manuals: <a href="{LILY_HOST}{LILY_DIR}learning/index.html">Learning manual</a>, '
           f'<a href="{LILY_HOST}{LILY_DIR}notation/index.html">Notation reference</a> &middot; '
           f'<a href="{LILY_HOST}">lilypond.org</a></li>\n',
           f'<li>Scilab 6.1.1 help: <a href="{SCILAB_HOST}{SCILAB_DIR}en_US/index.html">English</a> &middot; '
           f'all languages: <a href="{SCILAB_HOST}">help.scilab.org</a></li>\n',
           '<li>MATE desktop help: ' + ", ".join(f'<a href="{u}">{html.escape(g)}</a>'
                                                 for g, u in sorted(mate_en.items())[:4])
           + f' &middot; all languages: <a href="{MATE_HOST}docs/">mate-desktop.org</a></li>\n',
           f'<li>GNOME application help: <a href="{GNOME_HOST}">help.gnome.org</a></li>\n',
           f'<li>GNOME developer guides: <a href="{DEVEL_HOST}hig/stable/index.html.en">Human Interface Guidelines</a>'
           f' &middot; <a href="{DEVEL_HOST}">developer.gnome.org</a></li>\n',
           f'<li>GnuCash: <a href="{GNUCASH_HOST}{GNUCASH_DIR}C/gnucash-guide/index.html">Tutorial and concepts guide</a> '
           f'&middot; all languages: <a href="{GNUCASH_HOST}{GNUCASH_DIR}">www.gnucash.org</a></li>\n']
    out.insert(0, {"url": SEED, "set": "synthetic", "module": "portal",
                   "body": page_html("Documentation index", "<h1>Documentation index</h1>\n<p>Manuals and help of "
                                     "free software, as published on their own sites.</p>\n<ul>\n"
                                     + "".join(li_) + "</ul>\n")})
    for p in out:
        p.update(lang_dir=None, section=None, pkg=None, render="synthetic", src=None)
    return out


# ------------------------------------------------------------------ the build
def build(work: Path, out: Path) -> dict[str, Any]:
    dev = load_dev_builder()
    pkg_info = dev.ensure_packages(work)
    tools = dev.tool_versions()
    pages = lilypond_pages(dev, work) + scilab_pages(dev, work) + mate_pages(dev, work) + gnome_pages(dev, work, GNOME_PACKAGES, "gnome-apps")
    pages += gnome_pages(dev, work, DEVEL_PACKAGES, "gnome-devel") + gnucash_pages(dev, work)
    for p in pages:
        p["lang"] = dev.norm_lang(p["lang_dir"]) if p["lang_dir"] else None
    allp = synthetic_pages(dev, pages) + pages
    urls = [p["url"] for p in allp]
    assert len(set(urls)) == len(urls), "duplicate URL"
    assert all(dev.canon(u) == u for u in urls), "a URL not in canonical form"
    hosts = sorted({urlsplit(u).hostname or "" for u in urls} | {urlsplit(SEED).hostname or ""})
    info = (f"software: build_docweb_third.py (warcio)\r\nformat: WARC File Format 1.1\r\n"
            f"description: docweb-third test web: multilingual documentation from Debian 12 packages "
            f"disjoint from docweb-dev's and docweb-holdout's; synthetic portal {SEED}, host root pages, "
            f"language choosers\r\n"
            f"packages: {', '.join(f'{n}={v}' for n, v in PACKAGES.items())}\r\n"
            f"tools: {', '.join(f'{n}={v}' for n, v in tools.items())}\r\n")
    warc_path, labels_path, labels = load_holdout_builder().write_web(dev, allp, out, NAME, SEED, hosts, info)
    return {"packages": pkg_info, "tools": tools, "hosts": hosts, "labels": labels,
            "warc": warc_path, "labels_path": labels_path}


def manifest(stats: dict[str, Any]) -> str:
    holdout = load_holdout_builder()
    sha256 = holdout.sha256
    labels = stats["labels"]
    real = [row for row in labels if not row["synthetic"]]
    lines = [f"# {NAME}: a third multilingual documentation web from Debian packages", "",
             "Built by `experiments/build_docweb_third.py` (focuscrawl), from Debian 12 packages disjoint from "
             "docweb-dev's and docweb-holdout's, with docweb-dev-build.py's machinery. Not crawled with any language "
             "strategy or model before the candidates were frozen.", "",
             f"- Seed: `{SEED}`; hosts: {', '.join(stats['hosts'])}.",
             f"- `{stats['warc'].name}`: {stats['warc'].stat().st_size:,} bytes, sha256 `{sha256(stats['warc'])}`.",
             f"- `{stats['labels_path'].name}`: {len(labels):,} pages, sha256 `{sha256(stats['labels_path'])}`.",
             "- Labels as docweb-dev's (`target` by the measured script share of the visible text).",
             f"- Tools: {', '.join(f'{k} {v}' for k, v in stats['tools'].items())}.",
             f"- Help rendered by yelp-build in {len(HELP_LANGS)} language directories: {' '.join(HELP_LANGS)}.",
             "", "## Packages (Debian 12 bookworm, main)", "", "| package | version | .deb bytes | set | licence |",
             "|---|---|---|---|---|"]
    set_of = {**dict.fromkeys(LILY_PACKAGES, "lilypond"), **dict.fromkeys(MATE_PACKAGES, "mate"),
              **dict.fromkeys(GNOME_PACKAGES, "gnome-apps"), **dict.fromkeys(DEVEL_PACKAGES, "gnome-devel"),
              **dict.fromkeys(GNUCASH_PACKAGES, "gnucash"), **dict.fromkeys(SCILAB_PACKAGES, "scilab")}
    lines += [f"| {n} | {v['version']} | {v['size']:,} | {set_of[n]} | {LICENCE[set_of[n]]} |"
              for n, v in stats["packages"].items()]
    lines += ["", "Licences as stated in each package's `/usr/share/doc/<package>/copyright`; all allow "
              "redistribution with their notices: keep this manifest with the archive.", *holdout.set_table(real, SETS)]
    tot = collections.Counter(row["target"] for row in real)
    depths = collections.Counter(row["depth"] for row in labels if row["depth"] is not None)
    by_lang_depth = {k: collections.Counter(row["depth"] for row in real if row["target"] == k and row["depth"] is not None)
                     for k in ("ja", "ko", "zh")}
    lines += ["", *holdout.summary(labels, "untranslated or partly translated pages under translated navigation"), "",
              "Depth from the seed (all pages): " + ", ".join(f"{d}: {n:,}" for d, n in sorted(depths.items())) + ".",
              ""] + [f"Depth of the reachable {k} pages: " + ", ".join(f"{d}: {n:,}" for d, n in sorted(c.items())) + "."
                     for k, c in by_lang_depth.items()]
    lines += ["", *holdout.targets(tot, "judged here once")]
    return "\n".join(lines) + "\n"


def main() -> None:
    assert __doc__ is not None
    load_holdout_builder().main_of(build, manifest, NAME, __doc__, Path("/work/webs/docweb-third-work"), DEFAULT_OUT)

if __name__ == "__main__":
    main()
