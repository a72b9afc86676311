"""The public modules of the three packages and the names each declares, for the surface tests.

Public modules are ``groundtrace.sdk``, ``groundtrace.collectors``, ``groundtrace.analyzer`` and
all their submodules whose dotted path has no component starting with ``_``.

Usage::

    from tests.support.surface import render_surface

    print(render_surface())
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["ROOTS", "public_modules", "render_surface"]

ROOTS = ("groundtrace.sdk", "groundtrace.collectors", "groundtrace.analyzer")


def public_modules(import_errors: list[str] | None = None) -> list[str]:
    """Sorted dotted names of the public modules; packages that fail to import go to the list."""
    errors = [] if import_errors is None else import_errors
    names: list[str] = []
    for root in ROOTS:
        names.append(root)
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(
            package.__path__, prefix=root + ".", onerror=errors.append
        ):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names)


def render_surface() -> str:
    """Each public module and the sorted names of its ``__all__``, one name a line."""
    lines: list[str] = []
    for name in public_modules():
        exported = getattr(importlib.import_module(name), "__all__", None)
        lines.append(name if exported is not None else f"{name}  (no __all__)")
        lines += [f"    {attr}" for attr in sorted(exported or ())]
    return "\n".join(lines) + "\n"
