"""What a worker takes from Redis, and what it does not: whoever can write a shared
crawl's keys chooses its settings, seeds and budget, but no file a worker loads.

A model that reads files (a saved model's pickle, a topic file, an idf table...) is
built only if its table and every byte of those files match the digest on the
worker's own command line (``--model-digest``, which ``focuscrawl crawl --workers``
gives its local workers and prints for others): a ``model.path`` forged in Redis
names files of another digest, and the worker refuses it before reading a byte of
them as a model."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.base import model_files

__all__ = ["check_model_source", "model_digest"]


def model_digest(settings: Mapping[str, Any]) -> str | None:
    """The digest of the model of a run's ``settings`` (as run.json and Redis hold
    them): its table, its base directory and the contents of the files it reads
    (None: no model)."""
    table = settings.get("model") or {}
    if not table:
        return None
    base = Path(str(settings.get("base_dir") or "."))
    canonical = json.dumps({"model": table, "base_dir": str(base)}, sort_keys=True, default=str)
    digest = hashlib.sha256(canonical.encode("utf-8"))
    for root in sorted(set(model_files(table, base))):
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            digest.update(b"\0" + str(path).encode("utf-8", "surrogateescape") + b"\0")
            try:
                digest.update(hashlib.sha256(path.read_bytes()).digest())
            except OSError:
                digest.update(b"(unreadable)")
    return digest.hexdigest()


def check_model_source(settings: Mapping[str, Any], given: str | None) -> None:
    """Refuse (one line) to build the published model unless it reads no file or the
    digest ``given`` on the worker's command line is that of the published table."""
    table = settings.get("model") or {}
    if given is None:
        if "path" in table or "topic" in table or model_files(table, Path(".")):
            raise ConfigError(
                "the crawl's model reads files (as its settings in Redis name them): a worker "
                "loads them only with the --model-digest that `focuscrawl crawl --workers` "
                "prints (Redis never chooses a file to load)"
            )
        return
    if model_digest(settings) != given.strip().lower():
        raise ConfigError(
            "the crawl's model as published in Redis (its table or its files) is not the one "
            "--model-digest names: refusing to load it"
        )
