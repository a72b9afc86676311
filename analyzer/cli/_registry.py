"""Registers every command group on the root app (imported lazily by ``main``)."""

from __future__ import annotations

import importlib

from ._app import app

__all__ = ["COMMAND_MODULES", "register_all"]

#: Private modules of this package that each expose ``register(app)``.
COMMAND_MODULES: tuple[str, ...] = (
    "_gate",
    "_collect",
    "_judge",
    "_demo",
    "_traces",
    "_paths",
    "_interventions",
)

_registered = False


def register_all() -> None:
    """Import each command module and let it add its commands (idempotent)."""
    global _registered
    if _registered:
        return
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        module.register(app)
    _registered = True
