"""Plug-ins by short name: built-ins register themselves, third parties use entry points."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from focuscrawl.exceptions import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A name -> class table with lazy loading of the ``group`` entry points."""

    def __init__(self, kind: str, group: str, builtin_modules: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.group = group
        self.builtin_modules = builtin_modules
        self._items: dict[str, T] = {}
        self._loaded_entry_points = False

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(item: T) -> T:
            if name in self._items and self._items[name] is not item:
                raise ConfigError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = item
            return item

        return decorator

    def _load_entry_points(self) -> None:
        if self._loaded_entry_points:
            return
        self._loaded_entry_points = True
        for module in self.builtin_modules:
            try:
                import_module(module)  # registers its classes
            except ModuleNotFoundError as exc:
                if exc.name != module:  # a missing dependency is a real error
                    raise
        for ep in entry_points(group=self.group):
            if ep.name not in self._items:
                self._items[ep.name] = ep.load()

    def get(self, name: str) -> T:
        if name not in self._items:
            self._load_entry_points()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(self.names())
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def names(self) -> list[str]:
        self._load_entry_points()
        return sorted(self._items)
