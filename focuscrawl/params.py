"""Typed parameters: a frozen dataclass built from TOML, environment or command-line values.

One helper for everything configurable: the settings' sections
(:mod:`focuscrawl.settings`), the strategies' and link filters' ``Params``
(:mod:`focuscrawl.strategies`) and the models' ``Params``
(:mod:`focuscrawl.relevance`). A value arrives as TOML gives it (``3``,
``[\"a\"]``, ``true``), or as text from an environment variable or a
``KEY=VALUE`` option (``\"3\"``, ``\"a,b\"``, ``\"yes\"``); it becomes the field's
declared type by one set of rules (:func:`coerce`). An unknown name, a value of
the wrong type and a value the dataclass's ``__post_init__`` refuses (it raises
ValueError) are each one line: a :class:`~focuscrawl.exceptions.ConfigError`
naming the owner (``strategy 'otie'``, ``keyword model``, ``config``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tomllib
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from focuscrawl.exceptions import ConfigError

P = TypeVar("P")

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclasses.dataclass(frozen=True)
class NoParams:
    """No parameters (a strategy, filter or model that takes none)."""


def base_params(cls: type, root: type) -> type | None:
    """The parameters' class that ``cls`` names as the type argument of its base, ``root``
    or a generic subclass of it (``class OpicStrategy(Strategy[OpicParams])``: OpicParams),
    or None (no type argument, or a type variable: ``class FCrawl(Strategy[FP])``). A class
    that also sets ``Params`` itself must name that class: else TypeError.
    """
    for base in cls.__dict__.get("__orig_bases__", ()):
        origin, args = get_origin(base), get_args(base)
        if isinstance(origin, type) and issubclass(origin, root) and args and isinstance(args[0], type):
            own = cls.__dict__.get("Params")
            if own is not None and own is not args[0]:
                raise TypeError(f"{cls.__name__}: Params {own.__name__} is not its base's "
                                f"type argument {args[0].__name__}")  # fmt: skip
            return args[0]
    return None


def type_text(hint: Any) -> str:
    """A field type as a reader writes it: ``float | None``, ``tuple[str, ...]``.

    >>> type_text(tuple[str, ...]), type_text(float | None), type_text(int)
    ('tuple[str, ...]', 'float | None', 'int')
    """
    if isinstance(hint, type) and not get_args(hint):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("collections.abc.", "").replace("pathlib.", "")


def coerce(name: str, value: Any, hint: Any) -> Any:
    """``value`` as the type ``hint``, or ValueError saying what ``name`` must be.

    Text is read as the type it stands for: ``"1"``/``"yes"``/``"on"`` is true,
    ``"a, b"`` the tuple ``("a", "b")``, ``""`` or ``"none"`` is None where None is
    allowed. Numbers are not strings, nor strings numbers' lists: no silent guesses.

    >>> coerce("n", "3", int), coerce("x", 2, float), coerce("v", "no", bool)
    (3, 2.0, False)
    >>> coerce("t", "ja, en", tuple[str, ...]), coerce("b", "none", float | None)
    (('ja', 'en'), None)
    >>> coerce("n", 2.5, int)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer, not 2.5
    """
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        empty = value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))
        if empty and len(options) < len(args):
            return None
        if len(options) == 1:
            return coerce(name, value, options[0])
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in (*_TRUE, *_FALSE):
            return value.strip().lower() in _TRUE
        raise ValueError(f"{name} must be true or false, not {value!r}")
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"{name} must be an integer, not {value!r}")
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{name} must be an integer, not {value!r}") from None
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"{name} must be a number, not {value!r}")
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{name} must be a number, not {value!r}") from None
    if hint is str:
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, not {value!r}")
        return value
    if hint is Path:
        if not isinstance(value, str | os.PathLike):
            raise ValueError(f"{name} must be a path, not {value!r}")
        return Path(value)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or any(isinstance(v, list | tuple | Mapping) for v in items):
            raise ValueError(f"{name} must be a list ({type_text(hint)}), not {value!r}")
        if args[0] is str:
            if not all(isinstance(v, str) for v in items):
                raise ValueError(f"{name} must be a list of strings, not {value!r}")
            return tuple(s for v in items if (s := v.strip()))
        return tuple(coerce(name, v, args[0]) for v in items)
    if is_table(hint):
        if isinstance(value, str):
            return parse_table(name, value)
        if not isinstance(value, Mapping):
            raise ValueError(f"{name} must be a table, not {value!r}")
        return dict(value)
    return value


def is_table(hint: Any) -> bool:
    """Whether a field of type ``hint`` holds a table (``Mapping[str, Any]``, ``dict``)."""
    return get_origin(hint) in (Mapping, dict) or hint in (Mapping, dict)


def parse_table(name: str, text: str) -> dict[str, Any]:
    """A table given as text (an environment variable's): a JSON object or a TOML inline
    table, or ValueError saying what ``name`` must be.

    >>> parse_table("p", '{"a": 0.85}'), parse_table("p", '{ a = 0.85, b = "x" }'), parse_table("p", " ")
    ({'a': 0.85}, {'a': 0.85, 'b': 'x'}, {})
    >>> parse_table("p", "a=0.85")
    Traceback (most recent call last):
    ...
    ValueError: p must be a table, a JSON object or a TOML inline table ({"a": 0.85} or { a = 0.85 }), not 'a=0.85'
    """
    stripped = text.strip()
    if not stripped:
        return {}
    table: Any = None
    try:
        table = json.loads(stripped)
    except ValueError:
        if "\n" not in stripped:  # one line, so that the TOML document is the one value
            with contextlib.suppress(tomllib.TOMLDecodeError):
                table = tomllib.loads(f"table = {stripped}")["table"]
    if not isinstance(table, dict):
        raise ValueError(f"{name} must be a table, a JSON object or a TOML inline table "
                         f'({{"a": 0.85}} or {{ a = 0.85 }}), not {text!r}')  # fmt: skip
    return table


def build_params(owner: str, cls: type[P], values: Mapping[str, Any], *, prefix: str = "") -> P:
    """An instance of the dataclass ``cls`` from ``values``, or a one-line ConfigError.

    ``owner`` starts the message (``strategy 'otie'``); ``prefix`` qualifies the
    names in it (``fetch.`` for a settings section).
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - set(fields))
    if unknown:
        known = ", ".join(sorted(fields)) or "none"
        raise ConfigError(f"{owner}: unknown parameter {prefix + unknown[0]!r} (known: {known})")
    hints = get_type_hints(cls)
    try:
        kwargs = {k: coerce(prefix + k, v, hints.get(k, Any)) for k, v in values.items()}
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{owner}: {exc}") from None


def check_values(owner: str, cls: type[Any], values: Mapping[str, Any], *, prefix: str = "") -> None:
    """What :func:`build_params` would refuse in ``values`` one by one (an unknown name, a
    value of the wrong type), without building: for a layer of values that a later one
    may override (a config file under the command line's options)."""
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ConfigError(f"{owner}: unknown parameter {prefix + unknown[0]!r} (known: {', '.join(sorted(fields)) or 'none'})")
    hints = get_type_hints(cls)
    try:
        for k, v in values.items():
            coerce(prefix + k, v, hints.get(k, Any))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{owner}: {exc}") from None


def environment_values(environ: Mapping[str, str], sections: Mapping[str, type[Any]]) -> dict[str, dict[str, Any]]:
    """The ``FOCUSCRAWL_<SECTION>__<KEY>`` variables of ``environ`` by section (of
    ``sections``: name -> its dataclass), each checked as :func:`check_values` does; a
    table-valued one (``crawl.strategy_params``) read from its JSON object or TOML inline
    table, so that it merges key by key with the file's and the command line's. A bad
    one is a one-line ConfigError naming the variable."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in environ.items():
        if not key.startswith("FOCUSCRAWL_") or "__" not in key:
            continue
        section, _, name = key[len("FOCUSCRAWL_") :].lower().partition("__")
        if section not in sections:  # a typo (FOCUSCRAWL_FECTH__DELAY) was silently ignored
            raise ConfigError(f"config: environment variable {key}: no section {section!r} "
                              f"(FOCUSCRAWL_<SECTION>__<KEY>, the sections: {', '.join(sections)})")  # fmt: skip
        cls = sections[section]
        try:
            check_values("config", cls, {name: value}, prefix=f"{section}.")
        except ConfigError as exc:
            raise ConfigError(f"config: environment variable {key}: {str(exc).removeprefix('config: ')}") from None
        table = is_table(get_type_hints(cls)[name])
        out.setdefault(section, {})[name] = parse_table(f"{section}.{name}", value) if table else value
    return out


def params_table(params_or_cls: Any) -> dict[str, Any]:
    """Parameter name -> value of a Params instance, or -> default of a Params class."""
    if isinstance(params_or_cls, type):
        return {f.name: _default(f) for f in dataclasses.fields(params_or_cls)}
    return {f.name: getattr(params_or_cls, f.name) for f in dataclasses.fields(params_or_cls)}


def describe(cls: type[Any]) -> list[tuple[str, str, Any]]:
    """(name, type, default) of each parameter of a Params class, for listings and ``--help``."""
    hints = get_type_hints(cls)
    return [(f.name, type_text(hints.get(f.name, Any)), _default(f)) for f in dataclasses.fields(cls)]


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None  # required
