"""A faster ``__init__`` for the frozen, slotted dataclasses of the trace model.

The readers build tens of thousands of model objects per second. A frozen dataclass's
generated ``__init__`` assigns every field through ``object.__setattr__`` (a generic
attribute lookup per field); :func:`fast_init` replaces it with an ``__init__`` of the same
signature, defaults and default factories that fills the slots with plain attribute stores:
the instance is briefly given the class of a *twin* -- a class with exactly the same slots
and no frozen ``__setattr__`` -- while its fields are stored, then its own class back.
Behaviour is unchanged: same parameters, same values stored, and instances stay frozen
(assignment after construction still raises ``dataclasses.FrozenInstanceError``).
Instances of subclasses (another slot layout) are filled through the slot descriptors.

:func:`construct` is ``cls(*values)`` for a call that gives every field: where the
collectors' C extension is built it fills the new instance's slots directly (the hot paths of
the normalisers build tens of thousands of steps and evidence items this way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import _native

__all__ = ["construct", "fast_init"]

T = TypeVar("T")


class _Factory:
    """Default of a parameter whose field has a default factory (shown as ``<factory>``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _Factory()


def fast_init(cls: T) -> T:
    """Give frozen slotted dataclass ``cls`` a slot-storing ``__init__`` (returns ``cls``).

    Raises:
        TypeError: ``cls`` is not a frozen dataclass with slots, has fields that are not
            plain ``__init__`` parameters (``init=False``, keyword-only, ``InitVar``), or has
            a ``__post_init__`` (the fast ``__init__`` and :func:`construct` only store fields).
    """
    target: Any = cls
    params = getattr(target, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in vars(target):
        raise TypeError(f"{target!r} is not a frozen dataclass with slots")
    if hasattr(target, "__post_init__"):  # neither __init__ here nor construct() would call it
        raise TypeError(f"{target.__name__} has __post_init__, which fast_init does not run")
    slots = tuple(vars(target)["__slots__"])
    twin = type(f"_{target.__name__}Fill", (), {"__slots__": slots})
    namespace: dict[str, Any] = {
        "_HAS_FACTORY": _HAS_FACTORY,
        "_CLS": target,
        "_TWIN": twin,
        "_set_class": object.__setattr__,
    }
    args: list[str] = []
    fill: list[str] = []
    slow: list[str] = []
    for f in dataclasses.fields(target):
        if not f.init or f.kw_only:
            raise TypeError(f"{target.__name__}.{f.name}: only plain init fields are supported")
        name = f.name
        namespace[f"_set_{name}"] = vars(target)[name].__set__
        value = name
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = f.default
            args.append(f"{name}=_default_{name}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
            args.append(f"{name}=_HAS_FACTORY")
            value = f"_factory_{name}() if {name} is _HAS_FACTORY else {name}"
        else:
            args.append(name)
        fill.append(f"        self.{name} = {value}")
        slow.append(f"        _set_{name}(self, {value})")
    body = [
        "    if type(self) is _CLS:",
        "        _set_class(self, '__class__', _TWIN)",
        *fill,
        "        self.__class__ = _CLS",
        "    else:",
        *(slow or ["        pass"]),
    ]
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # generated from the dataclass's own field names, like dataclasses does
    init = namespace["__init__"]
    original = target.__init__
    init.__qualname__ = original.__qualname__
    init.__module__ = original.__module__
    init.__annotations__ = original.__annotations__
    init.__doc__ = original.__doc__
    target.__init__ = init
    if _native.speedups is not None:
        _native.speedups.register_model(target, tuple(f.name for f in dataclasses.fields(target)))
    return cls


def _construct(cls: Callable[..., T], *values: Any) -> T:
    """``cls(*values)`` (the reference of the C ``construct``)."""
    return cls(*values)


if TYPE_CHECKING:

    def construct(cls: Callable[..., T], *values: Any) -> T:
        """``cls(*values)``; with every field given, a model class is filled directly in C."""

else:
    construct = _construct if _native.speedups is None else _native.speedups.construct
