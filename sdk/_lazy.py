"""Public names imported on first use: one ``__getattr__`` / ``__dir__`` pair for a package.

``import groundtrace.sdk`` (and ``groundtrace.sdk.instrumentation``) stays cheap: each public
name is imported from its module the first time it is looked up, then kept in the package's
namespace so later lookups do not come back here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str,
    surface: Mapping[str, tuple[str, ...]],
    namespace: dict[str, Any],
    public: Iterable[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``.

    Args:
        package: the package's ``__name__`` (relative module names resolve against it).
        surface: module -> the names it provides.
        namespace: the package's ``globals()``, where a name is kept once imported.
        public: the package's ``__all__``.
    """
    where = {name: module for module, names in surface.items() for name in names}
    shown = sorted(set(public))

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups do not come here
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *shown})

    return __getattr__, __dir__
