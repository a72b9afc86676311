"""Where a record decoded by msgspec is wrong: the one reading of its validation message.

``Object contains unknown field `y` - at `$.rule[0]``` -> (``Object contains unknown field
`y```, ``rule[0].y``): the message without its `` - at `$...``` tail, and the dotted field,
the path the tail names followed by the key an unknown or missing field's message names.
Every file loader names the field of a refused value this way (a profile, a rules file, a
case).
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

__all__ = ["located"]

_AT: Final = re.compile(r" - at `\$\.?(?P<path>[^`]*)`$")
_KEY: Final = re.compile(r"(?:unknown|required) field `(?P<key>[^`]*)`")


def located(exc: msgspec.ValidationError) -> tuple[str, str]:
    """msgspec's message without its location, and the dotted field it names (``""``: the
    record itself)."""
    message = str(exc)
    at = _AT.search(message)
    reason = message[: at.start()] if at else message
    parts = [at.group("path")] if at and at.group("path") else []
    if (key := _KEY.search(reason)) is not None:
        parts.append(key.group("key"))
    return reason, ".".join(parts)
