"""Every public module declares ``__all__`` and every name in it resolves.

Public modules are ``groundtrace.sdk``, ``groundtrace.collectors``, ``groundtrace.analyzer`` and
all their submodules whose dotted path has no component starting with ``_``
(:mod:`tests.support.surface`); the names themselves are pinned by ``test_public_surface.py``.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from types import ModuleType

import pytest

from tests.support.surface import ROOTS, public_modules

IMPORT_ERRORS: list[str] = []
PUBLIC_MODULES = public_modules(IMPORT_ERRORS)


def test_the_three_packages_are_found() -> None:
    for root in ROOTS:
        assert root in PUBLIC_MODULES
    assert "groundtrace.sdk.semconv" in PUBLIC_MODULES
    assert not [m for m in PUBLIC_MODULES if "._" in m]


def test_every_subpackage_imports() -> None:
    assert not IMPORT_ERRORS, f"packages that failed to import while walking: {IMPORT_ERRORS}"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_declared_and_resolves(name: str) -> None:
    module: ModuleType = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert isinstance(exported, list | tuple)
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    missing = [attr for attr in exported if not hasattr(module, attr)]
    assert not missing, f"{name}.__all__ names that do not resolve: {missing}"


def test_the_sdk_surface_is_all_lazy_but_the_conventions() -> None:
    import groundtrace.sdk as sdk

    lazy = {name for names in sdk._SURFACE.values() for name in names}
    assert lazy | {"Action", "ToolStatus", "__version__", "semconv"} == set(sdk.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sdk.nope


def test_the_collectors_do_not_load_the_opentelemetry_sdk() -> None:
    script = (
        "import sys, groundtrace.collectors, groundtrace.sdk.semconv\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry.sdk')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]", done.stdout
