"""The package's public names: each the object its module defines, loaded on first use."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

import focuscrawl


def test_every_public_name_is_its_modules_object() -> None:
    from focuscrawl import api, settings, types
    from focuscrawl.crawler import engine

    assert focuscrawl.crawl is api.crawl
    assert focuscrawl.Crawler is engine.Crawler
    assert focuscrawl.load_settings is settings.load_settings
    assert focuscrawl.Page is types.Page
    for name in set(focuscrawl.__all__) - {"__version__"}:
        obj = getattr(focuscrawl, name)
        assert obj.__module__.startswith("focuscrawl."), name  # defined here, not a dependency's
        assert getattr(sys.modules[obj.__module__], name) is obj, name  # the module's own object
    assert focuscrawl.__version__ == importlib.metadata.version("focuscrawl")
    assert set(focuscrawl.__all__) <= set(dir(focuscrawl))
    # every name listed is one the package can load, and none is loadable unlisted
    assert set(focuscrawl.__all__) == {*focuscrawl._MODULE_OF, "__version__"}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Crawlr'"):
        _ = focuscrawl.Crawlr  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from focuscrawl import Crawlr", {})


def test_star_import_and_a_light_submodule_import() -> None:
    code = (
        "import sys; import focuscrawl.types; heavy = 'focuscrawl.crawler.engine' in sys.modules; "
        "from focuscrawl import *; print(heavy, Crawler.__module__, callable(crawl))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "focuscrawl.crawler.engine", "True"]
