"""Relevance models (see :mod:`focuscrawl.relevance.base`)."""

from __future__ import annotations

from focuscrawl.relevance.base import (
    MODELS,
    RelevanceModel,
    build_model,
    load_model,
    register_model,
    save_model,
)

__all__ = ["MODELS", "RelevanceModel", "build_model", "load_model", "register_model", "save_model"]
