"""Build "docweb-holdout": a second multilingual documentation web, held out from docweb-dev.

    python experiments/build_docweb_holdout.py [--work DIR] [--out DIR]

Issue 38 judges the language crawl "on a hidden web of this kind". docweb-dev is the only
web of that kind we have, and the language strategy's scores were chosen on it, so a
figure measured there says nothing about a web not tuned on. This builds a second one,
of the same kind but from **Debian 12 packages disjoint from docweb-dev's** (the list in
``../shared/testweb/docweb-dev.md``), pinned by version:

- GNOME application help (Mallard sources of 31 applications and games, every language
  they ship) on ``http://help.gnome.org/users/<app>/stable/<page>.html.<lang>``, rendered
  with ``yelp-build``; docweb-dev has only GNOME Help and the System Administration Guide;
- the Debian installation guide (``installation-guide-amd64``, 19 languages) on
  ``http://www.debian.org/releases/bookworm/amd64/<lang>/<file>.html`` (the package's
  ``<lang>/`` directories; the real site serves ``<file>.<lang>.html``);
- the GIMP 2.10 user manual (``gimp-help-*``, HTML as shipped) in English, Japanese,
  Korean, Simplified Chinese and five European languages on
  ``http://docs.gimp.org/2.10/<lang>/<file>.html`` (the real site's layout);
- the Debian Administrator's Handbook (``debian-handbook``, HTML as shipped, 26
  languages) on ``http://debian-handbook.info/browse/<lang>/stable/<file>.html`` (the
  real site's layout);
- the LibreOffice 7.4 help (``libreoffice-help-*``, HTML as shipped) in English, Japanese,
  Korean, both Chinese scripts and three European languages on
  ``http://help.libreoffice.org/7.4/<lang>/text/...`` (the real site's layout); its table
  of contents, which the site builds by script from ``<lang>/contents.js``, is written out
  as the page ``7.4/<lang>/contents.html`` (links without their ``?DbPAR=`` query), else
  a crawler would see nine pages of each language;
- man pages of programs not in docweb-dev (apt-utils, debhelper, dpkg-dev, dselect,
  vim-common, devscripts) on ``http://manpages.debian.org/bookworm/<package>/...``;
- synthetic pages: the portal ``http://docs-portal.example/`` (the English seed), host
  root pages (per manual its index in each language), and on help.gnome.org one
  language chooser per application (the real site picks the language by content
  negotiation; its pages have no language links).

45,648 pages in 47 languages on seven hosts; 2,143 Japanese, 1,696 Korean and 3,037
Chinese pages by their text, 7,480 untranslated pages in CJK directories. What differs
from docweb-dev, on purpose: other manuals and applications, Korean and Chinese more
plentiful, a language chooser per GNOME application instead of one for the whole site,
region tags in paths (``ja-JP``, ``zh-TW``, ``en-US``), no man pages in Chinese.

A first build without the LibreOffice help (25,160 pages; 730 Japanese, 494 Korean, 300
Chinese) was run once (README, P4): every language crawl exhausted it by 2,000 URLs, so
the goal could not be judged on it; the LibreOffice help was added for that, nothing
else changed.

It imports ``../shared/testweb/docweb-dev-build.py`` by path and reuses its machinery:
``apt-get download`` + ``dpkg-deb -x`` of pinned packages, ``mandoc`` and the man-page
wrapper with cross-reference and other-language links, the WARC writer (fixed dates,
record ids from the URL), the visible-text parse and ``script_label`` for the labels
(``target``: ja / ko / zh / other by the measured script share, never by the URL).
Nothing under ``../shared`` is edited. Deterministic: the same packages and tools give
the same bytes (two builds: the same sha256). Output (never committed): ``OUT/docweb-holdout.warc.gz``,
``OUT/docweb-holdout.labels.jsonl`` and the manifest ``OUT/docweb-holdout.md``.
Default OUT ``/work/webs/docweb-holdout`` (or ``$FOCUSCRAWL_HOLDOUT``). Needs Debian 12,
``yelp-tools`` and ``mandoc``, warcio and lxml; about 10 minutes on two loaded cores from scratch (about 600 MB of .debs), 1.5 minutes
with the work folder kept.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import html
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from warcio.warcwriter import WARCWriter

ROOT = Path(__file__).resolve().parents[1]
TESTWEB = Path(os.environ.get("FOCUSCRAWL_TESTWEB") or ROOT.parent / "shared" / "testweb")
DEFAULT_OUT = Path(os.environ.get("FOCUSCRAWL_HOLDOUT") or "/work/webs/docweb-holdout")
NAME = "docweb-holdout"
SEED = "http://docs-portal.example/"
SUITE = "bookworm"
GNOME_HOST = "http://help.gnome.org/"
MAN_HOST = "http://manpages.debian.org/"
DEB_HOST = "http://www.debian.org/"
INSTALL_DIR = "releases/bookworm/amd64/"

# Debian 12 bookworm, main: none of these is among docweb-dev's packages
GNOME_PACKAGES = {
    "baobab": "43.0-1",
    "cheese-common": "43.0-1",
    "eog": "43.2-1+deb12u1",
    "evince-common": "43.1-2+deb12u1",
    "file-roller": "43.0-1",
    "five-or-more": "1:3.32.3-1",
    "four-in-a-row": "1:3.38.1-1+b1",
    "gedit-common": "44.2-1",
    "gnome-boxes": "43.2-1",
    "gnome-calculator": "1:43.0.1-2",
    "gnome-chess": "1:43.1-1",
    "gnome-clocks": "43.0-1",
    "gnome-logs": "43.0-1",
    "gnome-mahjongg": "1:3.38.3-2",
    "gnome-mines": "1:40.1-1",
    "gnome-nibbles": "1:3.38.2-2+b1",
    "gnome-robots": "1:40.0-2",
    "gnome-sudoku": "1:43.1-1",
    "gnome-system-monitor": "42.0-2",
    "gnome-taquin": "3.38.1-2+b1",
    "gnome-terminal-data": "3.46.8-1",
    "gnome-tetravex": "1:3.38.2-3",
    "hitori": "3.38.4-2",
    "iagno": "1:3.38.1-2",
    "lightsoff": "1:40.0.1-1",
    "quadrapassel": "1:40.2-1",
    "seahorse": "43.0-1",
    "shotwell-common": "0.30.17-1",
    "simple-scan": "42.5-2",
    "swell-foop": "1:41.1-1",
    "totem-common": "43.0-2",
}
INSTALL_PACKAGE = {"installation-guide-amd64": "20230508+deb12u1"}
GIMP_LANGS = ["en", "ja", "ko", "zh-cn", "de", "fr", "es", "it", "ru"]  # of the 27 translations: the CJK three and five large
GIMP_PACKAGES = {f"gimp-help-{lang}": "2.10.34-2" for lang in GIMP_LANGS}
HANDBOOK_PACKAGE = {"debian-handbook": "11.20220922"}
LIBREOFFICE_LANGS = ["en-us", "ja", "ko", "zh-cn", "zh-tw", "de", "fr", "es"]  # of 35
LIBREOFFICE_PACKAGES = {f"libreoffice-help-{lang}": "4:7.4.7-1+deb12u14" for lang in LIBREOFFICE_LANGS}
MAN_PACKAGES = {
    "apt-utils": "2.6.2",
    "debhelper": "13.11.4",
    "dpkg-dev": "1.21.23",
    "dselect": "1.21.23",
    "vim-common": "2:9.0.1378-2+deb12u2",
    "devscripts": "2.23.4+deb12u2",
}
PACKAGES = {**GNOME_PACKAGES, **INSTALL_PACKAGE, **GIMP_PACKAGES, **HANDBOOK_PACKAGE, **LIBREOFFICE_PACKAGES,
            **MAN_PACKAGES}
SETS = ["gnome-apps", "installation-guide", "gimp", "debian-handbook", "libreoffice", "manpages"]
LIBREOFFICE_HOST = "http://help.libreoffice.org/"
LIBREOFFICE_HOME = "text/shared/05/new_help.html"  # the page every page's logo links
CONTENTS_RE = re.compile(r"innerHTML='(.*)';", re.S)
QUERY_RE = re.compile(r'(href="[^"?]*)\?[^"]*"')
GIMP_HOST = "http://docs.gimp.org/"
HANDBOOK_HOST = "http://debian-handbook.info/"
MAN_MAX_FRAGMENT = 36_000  # as docweb-dev: man pages whose mandoc HTML is larger are left out


def load_dev_builder() -> ModuleType:
    """docweb-dev's build script, imported by path (its globals set to this web's packages)."""
    path = TESTWEB / "docweb-dev-build.py"
    if not path.exists():
        sys.exit(f"{path} not found: set FOCUSCRAWL_TESTWEB to the folder holding docweb-dev-build.py")
    spec = importlib.util.spec_from_file_location("docweb_dev_build", path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.PACKAGES = PACKAGES
    mod.MAN_PACKAGES = list(MAN_PACKAGES)
    mod.MAN_PRIORITY = list(MAN_PACKAGES)
    return mod


# ------------------------------------------------------------------ GNOME application help
def gnome_apps(work: Path) -> list[tuple[str, str, str]]:
    """(package, app, language directory) of every Mallard guide the packages ship."""
    out = []
    for pkg in GNOME_PACKAGES:
        base = work / "root" / pkg / "usr/share/help"
        for lang_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            for app in sorted(p for p in lang_dir.iterdir() if p.is_dir()):
                if any(app.glob("*.page")):
                    out.append((pkg, app.name, lang_dir.name))
    return out


def gnome_render(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    out = work / "gnome-html"
    (out / "xsl").mkdir(parents=True, exist_ok=True)
    pages = []
    for pkg, app, lang in gnome_apps(work):
        u = "en" if lang == "C" else lang
        d = out / app / u
        if not (d / ".done").exists():
            d.mkdir(parents=True, exist_ok=True)
            for f in d.iterdir():
                if f.is_file():
                    f.unlink()
            xsl = out / "xsl" / f"{u}.xsl"
            xsl.write_text('<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0">\n'
                           f'<xsl:param name="html.extension" select="\'.html.{u}\'"/>\n</xsl:stylesheet>\n')
            print(f"  yelp-build {app} {lang}", file=sys.stderr, flush=True)
            dev.run(["nice", "-n", "19", "yelp-build", "html", "-i", "-x", str(xsl), "-o", str(d) + "/",
                     str(work / "root" / pkg / "usr/share/help" / lang / app) + "/"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            (d / ".done").write_text("ok\n")
        for f in sorted(d.glob(f"*.html.{u}")):
            pid = f.name[: -len(f".html.{u}")]
            pages.append({"url": f"{GNOME_HOST}users/{app}/stable/{dev.url_path(f.name)}", "body": f.read_bytes(),
                              "set": "gnome-apps", "lang_dir": u, "module": app, "section": pid.split("-")[0], "pkg": pkg,
                              "render": "yelp-build", "src": f"usr/share/help/{lang}/{app}/{pid}.page"})
    return pages


# ------------------------------------------------------------------ manuals shipped as HTML, one folder per language
def shipped_pages(dev: ModuleType, work: Path, pkg: str, sub: str, set_: str, url: str) -> list[dict[str, Any]]:
    """The HTML pages of ``pkg`` under ``sub/<lang>/`` as shipped (symlinks left out); ``url`` is the page's
    URL with ``{lang}`` (the folder's name) and ``{file}`` (the file's name) to fill in."""
    base = work / "root" / pkg / sub
    pages = []
    for lang_dir in sorted(p for p in base.iterdir() if p.is_dir()):
        for f in sorted(lang_dir.glob("*.html")):
            if f.is_symlink():
                continue
            pages.append({"url": url.format(lang=lang_dir.name, file=dev.url_path(f.name)), "body": f.read_bytes(),
                          "set": set_, "lang_dir": lang_dir.name, "module": None if f.stem == "index" else f.stem,
                          "section": None, "pkg": pkg, "render": "package-html",
                          "src": f.relative_to(work / "root" / pkg).as_posix()})
    return pages


def install_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    pkg = "installation-guide-amd64"
    return shipped_pages(dev, work, pkg, f"usr/share/doc/{pkg}", "installation-guide",
                         f"{DEB_HOST}{INSTALL_DIR}{{lang}}/{{file}}")


def gimp_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    return [p for pkg in GIMP_PACKAGES
            for p in shipped_pages(dev, work, pkg, "usr/share/gimp/2.0/help", "gimp", f"{GIMP_HOST}2.10/{{lang}}/{{file}}")]


def handbook_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    return shipped_pages(dev, work, "debian-handbook", "usr/share/doc/debian-handbook/html", "debian-handbook",
                         f"{HANDBOOK_HOST}browse/{{lang}}/stable/{{file}}")


def libreoffice_pages(dev: ModuleType, work: Path) -> list[dict[str, Any]]:
    """The LibreOffice 7.4 help as shipped: ``<lang>/text/<module>/.../<file>.html``, each page with
    ``<base href>`` at the version's root, as on help.libreoffice.org; its contents and language
    menus are scripts, so a crawler sees only the links in the pages."""
    pages = []
    for pkg in LIBREOFFICE_PACKAGES:
        base = work / "root" / pkg / "usr/share/libreoffice/help"
        for lang_dir in sorted(p for p in base.iterdir() if p.is_dir() and (p / "text").is_dir()):
            for f in sorted((lang_dir / "text").rglob("*.html")):
                if f.is_symlink():
                    continue
                rel = f.relative_to(base).as_posix()
                parts = rel.split("/")
                pages.append({"url": f"{LIBREOFFICE_HOST}7.4/{dev.url_path(rel)}", "body": f.read_bytes(),
                                  "set": "libreoffice", "lang_dir": lang_dir.name,
                                  "module": None if rel.endswith(LIBREOFFICE_HOME) else parts[2], "section": None,
                                  "pkg": pkg, "render": "package-html", "src": f.relative_to(work / "root" / pkg).as_posix()})
        # the contents the site builds by script (<lang>/contents.js), as the page a crawler can read:
        # the package's own table of contents, its links without their ?DbPAR= query
        for js in sorted(base.glob("*/contents.js")):
            lang = js.parent.name
            m = CONTENTS_RE.search(js.read_text(encoding="utf-8"))
            if m is None:
                continue
            toc = QUERY_RE.sub(r'\1"', m.group(1).replace("\\\n", "\n"))
            body = (f'<!DOCTYPE html>\n<html lang="{html.escape(lang)}">\n<head>\n<meta charset="utf-8">\n'
                    f"<title>LibreOffice 7.4 Help: contents ({html.escape(lang)})</title>\n"
                    f'<base href="../">\n</head>\n<body>\n<nav id="Contents">\n{toc}\n</nav>\n</body>\n</html>\n')
            pages.append({"url": f"{LIBREOFFICE_HOST}7.4/{lang}/contents.html", "body": body.encode("utf-8"),
                              "set": "libreoffice", "lang_dir": lang, "module": None, "section": None, "pkg": pkg,
                              "render": "contents-js", "src": js.relative_to(work / "root" / pkg).as_posix()})
    return pages


# ------------------------------------------------------------------ synthetic pages
def page_html(title: str, body: str) -> bytes:
    return ("<!DOCTYPE html>\n<!-- synthetic page of the docweb-holdout test web: not part of any documentation -->\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="generator" content="build_docweb_holdout.py (synthetic)">\n'
            f"<title>{html.escape(title)}</title>\n</head>\n<body>\n{body}</body>\n</html>\n").encode()


def synthetic_pages(dev: ModuleType, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def order(lang: str) -> tuple[bool, str]:
        return lang != "en", lang

    out = []
    apps: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for p in pages:
        if p["set"] == "gnome-apps" and p["url"].endswith(f"/index.html.{p['lang_dir']}"):
            apps[p["module"]][p["lang_dir"]] = p["url"]
    # help.gnome.org: the applications; per application a language chooser
    items = []
    for app in sorted(apps):
        chooser = f"{GNOME_HOST}users/{app}/"
        links = [f'<a href="{u}" hreflang="{dev.norm_lang(lang)}">{html.escape(dev.native(lang))}</a>'
                 for lang, u in sorted(apps[app].items(), key=lambda kv: order(kv[0]))]
        out.append({"url": chooser, "set": "synthetic", "module": "chooser",
                        "body": page_html(f"{app} help: choose a language",
                                       f"<h1>{html.escape(app)}</h1>\n<p>{' &middot; '.join(links)}</p>\n")})
        items.append(f'<li><a href="{apps[app]["en"]}">{html.escape(app)}</a> '
                     f'(<a href="{chooser}">{len(apps[app])} languages</a>)</li>\n')
    out.insert(0, {"url": GNOME_HOST, "set": "synthetic", "module": "root",
                       "body": page_html("GNOME application help", f"<h1>Applications</h1>\n<ul>\n{''.join(items)}</ul>\n")})
    # www.debian.org: the installation guide in each language
    idx = sorted((p for p in pages if p["set"] == "installation-guide" and p["module"] is None),
                 key=lambda p: order(p["lang_dir"]))
    li = [f'<a href="{p["url"]}" hreflang="{dev.norm_lang(p["lang_dir"])}">{html.escape(dev.native(p["lang_dir"]))}</a>'
          for p in idx]
    out.append({"url": DEB_HOST, "set": "synthetic", "module": "root",
                    "body": page_html("Debian: installation guide for bookworm",
                                   "<h1>Debian GNU/Linux Installation Guide (amd64)</h1>\n"
                                   f"<p>{' &middot; '.join(li)}</p>\n")})
    # docs.gimp.org and debian-handbook.info: each manual's index in each language
    for host, s, title in ((GIMP_HOST, "gimp", "GIMP 2.10 user manual"),
                           (HANDBOOK_HOST, "debian-handbook", "The Debian Administrator's Handbook"),
                           (LIBREOFFICE_HOST, "libreoffice", "LibreOffice 7.4 Help")):
        idx = sorted((p for p in pages if p["set"] == s and p["module"] is None),
                     key=lambda p: order(dev.norm_lang(p["lang_dir"])))
        li = [f'<a href="{p["url"]}" hreflang="{dev.norm_lang(p["lang_dir"])}">'
              f'{html.escape(dev.native(p["lang_dir"]))}</a>' for p in idx]
        out.append({"url": host, "set": "synthetic", "module": "root",
                    "body": page_html(f"{title}: languages", f"<h1>{title}</h1>\n<p>{' &middot; '.join(li)}</p>\n")})
    # manpages.debian.org: the packages of this web with their languages
    items = []
    for p in sorted((p for p in pages if p["render"] == "index"), key=lambda p: p["pkg"]):
        ls = ", ".join(f'<span lang="{dev.norm_lang(lang)}">{html.escape(dev.native(lang))}</span>'
                       for lang in p["index_langs"])
        items.append(f'<li><a href="{p["url"]}">{html.escape(p["pkg"])}</a>: {ls}</li>\n')
    out.append({"url": MAN_HOST, "set": "synthetic", "module": "root",
                    "body": page_html(f"Debian manpages: packages in {SUITE}",
                                   f"<h1>Debian manpages ({SUITE})</h1>\n<ul>\n{''.join(items)}</ul>\n")})
    # the portal (seed): each set's English index and its host's root page
    en_install = f"{DEB_HOST}{INSTALL_DIR}en/index.html"
    li = [f'<li>GNOME application help: <a href="{GNOME_HOST}">help.gnome.org</a>; '
          + ", ".join(f'<a href="{apps[a]["en"]}">{html.escape(a)}</a>' for a in sorted(apps)[:6]) + "</li>\n",
          f'<li>Debian installation guide: <a href="{en_install}">English</a> &middot; all languages: '
          f'<a href="{DEB_HOST}">www.debian.org</a></li>\n',
          f'<li>GIMP user manual: <a href="{GIMP_HOST}2.10/en/index.html">English</a> &middot; all languages: '
          f'<a href="{GIMP_HOST}">docs.gimp.org</a></li>\n',
          f'<li>The Debian Administrator\'s Handbook: <a href="{HANDBOOK_HOST}browse/en-US/stable/index.html">'
          f'English</a> &middot; all languages: <a href="{HANDBOOK_HOST}">debian-handbook.info</a></li>\n',
          f'<li>LibreOffice Help: <a href="{LIBREOFFICE_HOST}7.4/en-US/contents.html">English</a> &middot; '
          f'all languages: <a href="{LIBREOFFICE_HOST}">help.libreoffice.org</a></li>\n',
          f'<li>Manual pages of Debian tools: <a href="{MAN_HOST}{SUITE}/dpkg-dev/index.html">dpkg-dev</a> &middot; '
          f'all packages: <a href="{MAN_HOST}">manpages.debian.org</a></li>\n']
    out.insert(0, {"url": SEED, "set": "synthetic", "module": "portal",
                       "body": page_html("Documentation portal", "<h1>Documentation portal</h1>\n<p>Help and manuals "
                                      "of free software, as published on their own sites.</p>\n<ul>\n"
                                      + "".join(li) + "</ul>\n")})
    for p in out:
        p.update(lang_dir=None, section=None, pkg=None, render="synthetic", src=None)
    return out


# ------------------------------------------------------------------ the build
def build(work: Path, out: Path) -> dict[str, Any]:
    dev = load_dev_builder()
    pkg_info = dev.ensure_packages(work)
    tools = dev.tool_versions()
    pages = gnome_render(dev, work) + install_pages(dev, work) + gimp_pages(dev, work) + handbook_pages(dev, work)
    pages += libreoffice_pages(dev, work)
    man, man_stats = dev.man_pages(work, pkg_info, tools, None, MAN_MAX_FRAGMENT)
    pages += man
    for p in pages:
        p["lang"] = dev.norm_lang(p["lang_dir"]) if p["lang_dir"] else None
    allp = synthetic_pages(dev, pages) + pages
    urls = [p["url"] for p in allp]
    assert len(set(urls)) == len(urls), "duplicate URL"
    assert all(dev.canon(u) == u for u in urls), "a URL not in canonical form"
    hosts = sorted({urlsplit(u).hostname or "" for u in urls})
    info = (f"software: build_docweb_holdout.py (warcio)\r\nformat: WARC File Format 1.1\r\n"
            f"description: docweb-holdout test web: multilingual documentation from Debian 12 packages "
            f"disjoint from docweb-dev's; synthetic portal {SEED}, host root pages, language choosers\r\n"
            f"packages: {', '.join(f'{n}={v}' for n, v in PACKAGES.items())}\r\n"
            f"tools: {', '.join(f'{n}={v}' for n, v in tools.items())}\r\n")
    warc_path, labels_path, labels = write_web(dev, allp, out, NAME, SEED, hosts, info)
    return {"packages": pkg_info, "tools": tools, "hosts": hosts, "labels": labels, "man": man_stats,
                "warc": warc_path, "labels_path": labels_path}


def write_web(dev: ModuleType, allp: list[dict[str, Any]], out: Path, name: str, seed: str, hosts: list[str],
              info: str) -> tuple[Path, Path, list[dict[str, Any]]]:
    """Write a docweb's pages as ``<name>.warc.gz`` (a warcinfo record with ``info``, an empty robots.txt
    per host, one response per page; atomically) and ``<name>.labels.jsonl`` (docweb-dev's labels, with
    each page's link depth from ``seed``). Shared by this builder and build_docweb_third.py."""
    urls = [p["url"] for p in allp]
    out.mkdir(parents=True, exist_ok=True)
    warc_path, labels_path = out / f"{name}.warc.gz", out / f"{name}.labels.jsonl"
    tmp = warc_path.with_name(warc_path.name + ".tmp")
    labels, graph = [], {}
    stored = set(urls)
    with open(tmp, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.1")
        payload = info.encode()
        writer.write_record(writer.create_warc_record(
            "", "warcinfo", payload=io.BytesIO(payload), length=len(payload),
            warc_content_type="application/warc-fields",
            warc_headers_dict={"WARC-Date": dev.WARC_DATE, "WARC-Filename": warc_path.name,
                               "WARC-Record-ID": dev.rec_id(name, "warcinfo")}))
        for h in hosts:
            dev.write_response(writer, f"http://{h}/robots.txt", b"", "text/plain")
        for p in allp:
            body = p["body"]
            cs = dev.charset_of(body)
            dev.write_response(writer, p["url"], body, "text/html" + (f"; charset={cs}" if cs else ""))
            text, base, hrefs = dev.analyse(body, p["url"], cs)
            targets = {dev.canon(t) for t in (dev.resolve(h, base) for h in hrefs) if t}
            graph[p["url"]] = sorted(t for t in targets if t in stored)
            target, shares, letters, kana = dev.script_label(text)
            labels.append({"url": p["url"], "set": p["set"], "lang_dir": p["lang_dir"], "lang": p.get("lang"),
                           "module": p["module"], "section": p["section"], "target": target, "script_share": shares,
                           "letters": letters, "kana_share": kana, "package": p["pkg"], "render": p["render"],
                           "synthetic": p["set"] == "synthetic"})
    os.replace(tmp, warc_path)
    depth = {seed: 0}
    queue = collections.deque([seed])
    while queue:
        u = queue.popleft()
        for v in graph.get(u, ()):
            if v not in depth:
                depth[v] = depth[u] + 1
                queue.append(v)
    with open(labels_path, "w", encoding="utf-8") as fh:
        for row in labels:
            row["depth"] = depth.get(row["url"])
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return warc_path, labels_path, labels


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def set_table(real: list[dict[str, Any]], sets: list[str]) -> list[str]:
    """The manifest's table of pages per set and language directory, with the reachable and target counts."""
    lines = ["", "## Pages per set × language directory, targets by measured script share", "",
             "| set | lang_dir | pages | reachable from seed | ja | ko | zh | other |", "|---|---|---|---|---|---|---|---|"]
    rows: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in real:
        key = (row["set"], row["lang_dir"] or "(index)")
        rows[key][row["target"]] += 1
        rows[key]["_reach"] += row["depth"] is not None
    for (s, ld), cnt in sorted(rows.items(), key=lambda kv: (sets.index(kv[0][0]), kv[0][1] != "en", kv[0][1])):
        n = sum(v for k, v in cnt.items() if k != "_reach")
        lines.append(f"| {s} | {ld} | {n:,} | {cnt['_reach']:,} | {cnt['ja']:,} | {cnt['ko']:,} | {cnt['zh']:,} | "
                     f"{cnt['other']:,} |")
    tot = collections.Counter(row["target"] for row in real)
    reach = collections.Counter(row["target"] for row in real if row["depth"] is not None)
    lines.append(f"| **all** | | **{len(real):,}** | **{sum(reach.values()):,}** | **{tot['ja']:,}** | "
                 f"**{tot['ko']:,}** | **{tot['zh']:,}** | **{tot['other']:,}** |")
    return lines


def targets(tot: collections.Counter[str], judged: str) -> list[str]:
    """The manifest's goal paragraph with the ceilings the web's target counts allow."""
    return ["## Targets", "",
            f"The goal of issue 38, {judged}: from the English seed at 2,000 URLs, Japanese share >= 0.80, Korean "
            "and Chinese >= 0.75, each beside its ceiling min(1, pages of the language / HTML pages fetched). "
            "With every URL an HTML page the ceilings are: "
            + "; ".join(f"{k} " + " / ".join(f"{min(1.0, tot[k] / n):.3f}" for n in (500, 1000, 2000))
                        for k in ("ja", "ko", "zh")) + " at 500 / 1,000 / 2,000 URLs.", ""]


def summary(labels: list[dict[str, Any]], traps_are: str) -> list[str]:
    """The manifest's lines on the languages, the reachable target pages and the traps
    (pages in a CJK language directory whose text is not in its language: ``traps_are``)."""
    real = [row for row in labels if not row["synthetic"]]
    tot = collections.Counter(row["target"] for row in real)
    reach = collections.Counter(row["target"] for row in real if row["depth"] is not None)
    langs = sorted({row["lang"] for row in real if row["lang"]})
    cjk = [row for row in real if (row["lang"] or "").split("-")[0] in ("ja", "ko", "zh")]
    traps = [row for row in cjk if row["target"] == "other"]
    return [f"{len(langs)} languages ({' '.join(langs)}); synthetic pages: "
            f"{sum(row['synthetic'] for row in labels)}. Reachable target pages: "
            + ", ".join(f"{k} {reach[k]:,} of {tot[k]:,}" for k in ("ja", "ko", "zh")) + ".",
            f"**Traps**: {len(traps):,} of the {len(cjk):,} pages in CJK language directories are `other` by their "
            f"text ({traps_are})."]


def main_of(build: Callable[[Path, Path], dict[str, Any]], manifest: Callable[[dict[str, Any]], str], name: str,
            doc: str, work: Path, out: Path) -> None:
    """A docweb builder's command line: build into ``--out`` from the packages in ``--work``, then the manifest."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--work", type=Path, default=work)
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    stats = build(args.work, args.out)
    (args.out / f"{name}.md").write_text(manifest(stats), encoding="utf-8")
    print(f"{stats['warc']}: {stats['warc'].stat().st_size:,} bytes, {len(stats['labels']):,} pages", file=sys.stderr)


def manifest(stats: dict[str, Any]) -> str:
    labels = stats["labels"]
    real = [row for row in labels if not row["synthetic"]]
    lines = [f"# {NAME}: a held-out multilingual documentation web from Debian packages", "",
             "Built by `experiments/build_docweb_holdout.py` (focuscrawl), from Debian 12 packages disjoint from "
             "docweb-dev's, with docweb-dev-build.py's machinery. Held out: the language crawl's defaults and "
             "candidates were chosen on docweb-dev and the Apache manual, never on this web.", "",
             f"- Seed: `{SEED}`; hosts: {', '.join(stats['hosts'])}.",
             f"- `{stats['warc'].name}`: {stats['warc'].stat().st_size:,} bytes, sha256 `{sha256(stats['warc'])}`.",
             f"- `{stats['labels_path'].name}`: {len(labels):,} pages, sha256 `{sha256(stats['labels_path'])}`.",
             "- Labels as docweb-dev's (`target` by the measured script share of the visible text).",
             f"- Tools: {', '.join(f'{k} {v}' for k, v in stats['tools'].items())}.",
             f"- Man pages left out for size (mandoc HTML over {MAN_MAX_FRAGMENT:,} bytes): "
             f"{stats['man'].get('left_out_large', 0)}.", "",
             "## Packages (Debian 12 bookworm, main)", "", "| package | version | .deb bytes |", "|---|---|---|"]
    lines += [f"| {n} | {v['version']} | {v['size']:,} |" for n, v in stats["packages"].items()]
    lines += set_table(real, SETS)
    tot = collections.Counter(row["target"] for row in real)
    lines += ["", *summary(labels, "untranslated pages under translated navigation"), "", *targets(tot, "judged here")]
    return "\n".join(lines) + "\n"


def main() -> None:
    assert __doc__ is not None
    main_of(build, manifest, NAME, __doc__, Path("/work/webs/docweb-holdout-work"), DEFAULT_OUT)

if __name__ == "__main__":
    main()
