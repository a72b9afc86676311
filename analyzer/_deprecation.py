"""Old public names kept working for a release, with a warning that names the new way.

A package that renames a public name keeps the old one in a table and serves it from its
module ``__getattr__``::

    __getattr__ = renamed(__name__, {"write_reports": "write_report"}, since="0.2.0")

``from package import write_reports`` then still works, warns once per call site with a
:class:`DeprecationWarning` naming the replacement and the release that deprecated it (and,
given ``remove_in``, the release that removes it), and returns the new object; the old name
is not in ``__all__``. A name that moved to another module is given with its module,
``{"EvidenceChunk": "groundtrace.analyzer.replay.ReplayChunk"}``.

A public function that stays for a release beside its replacement is wrapped instead::

    @deprecated(since="0.3.0", remove_in="0.4.0", use="groundtrace.analyzer.run_analysis")
    def run_interventions(...): ...

and warns on each call (the warning names the caller's line).

A package whose public names need heavy imports (numpy, the collectors) serves them from their
modules on first use, so that importing it for one light name (a config record) stays cheap::

    __getattr__ = renamed(__name__, OLD, since="0.2.0", fallback=imported_on_use(__name__, {
        "._run": ("run",), "._report": ("write_report",),
    }))
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

__all__ = ["deprecated", "imported_on_use", "renamed"]

P = ParamSpec("P")
R = TypeVar("R")


def _removal(remove_in: str | None) -> str:
    return "" if remove_in is None else f" and is removed in {remove_in}"


def renamed(
    module: str,
    names: Mapping[str, str],
    *,
    since: str,
    remove_in: str | None = None,
    fallback: Callable[[str], Any] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving each old name of ``names`` (old -> new) as the new one.

    Args:
        module: the module's ``__name__``.
        names: old public name -> its new name in the same module (or ``module.name`` when
            it moved to another module).
        since: the release that deprecated the old names.
        remove_in: the release that removes them (``None``: not decided yet).
        fallback: the module's own ``__getattr__`` for every other name (its lazy imports);
            ``None``: every other name is an ``AttributeError``.
    """
    table = dict(names)

    def __getattr__(name: str) -> Any:
        new = table.get(name)
        if new is None and fallback is not None:
            return fallback(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        home, _, attr = new.rpartition(".")
        home = home or module
        warnings.warn(
            f"{module}.{name} is deprecated since groundtrace {since}{_removal(remove_in)}: "
            f"use {home}.{attr}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), attr)

    return __getattr__


def imported_on_use(package: str, surface: Mapping[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """A package ``__getattr__`` importing each name of ``surface`` from its module when first
    looked up; every other name is an ``AttributeError``.

    Args:
        package: the package's ``__name__`` (relative module names resolve against it).
        surface: module (``"._run"``) -> the names it provides.
    """
    where = {name: module for module, names in surface.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__


def deprecated(
    *, since: str, use: str, remove_in: str | None = None, name: str | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Wrap a public function so each call warns that it is deprecated in favour of ``use``.

    Args:
        since: the release that deprecated it.
        use: what to call instead (a dotted name, or a short phrase).
        remove_in: the release that removes it (``None``: not decided yet).
        name: its public name (default: the function's own).
    """

    def wrap(func: Callable[P, R]) -> Callable[P, R]:
        message = (
            f"{func.__module__.rsplit('._', 1)[0]}.{name or func.__name__} is deprecated "
            f"since groundtrace {since}{_removal(remove_in)}: use {use}"
        )

        @functools.wraps(func)
        def warned(*args: P.args, **kwargs: P.kwargs) -> R:
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        return warned

    return wrap
