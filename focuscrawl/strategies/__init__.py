"""Crawl strategies: hooks that return scores (see :mod:`focuscrawl.strategies.base`)."""

from __future__ import annotations

from focuscrawl.strategies.base import STRATEGIES, Strategy, register_strategy

__all__ = ["STRATEGIES", "Strategy", "register_strategy"]
