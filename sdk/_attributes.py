"""Defensive conversion of application values into span attribute values.

Used by the decorators and the instrumentors alike. Nothing here raises: values that cannot
be serialised (circular references, a ``__repr__`` that raises, exotic types) become a short
placeholder string, never an exception in the application.

JSON is written by ``orjson`` for JSON-native data (an order of magnitude faster on the hot
path) and by the standard encoder for everything else (objects, dataclasses, datetimes,
integers beyond 64 bits, lone surrogates, non-string keys...), so both give the same text,
except that non-finite floats become ``null`` (standard JSON has no ``NaN``) and enum
members are written as their value.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any, Final

import orjson

from ._runtime import Settings, logger
from .redaction import Redactor

__all__ = [
    "NATIVE_JSON_OPTIONS",
    "SCAN_MARGIN",
    "clip",
    "json_list",
    "json_str",
    "key_suffix",
    "mask",
    "mask_json",
    "masked_key",
    "native_json",
    "safe_json",
    "safe_str",
    "text_value",
]

_UNREPRESENTABLE: Final = "<unrepresentable>"

#: JSON string literal of a ``str`` (no ASCII escaping), exactly as ``json.dumps`` writes it.
json_str: Final[Callable[[str], str]] = encode_basestring


def safe_str(value: object) -> str:
    """``str(value)`` that never raises."""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:
        try:
            return f"<{type(value).__qualname__}>"
        except Exception:
            return _UNREPRESENTABLE


def _default(value: object) -> Any:
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    # pydantic models, named tuples, numpy arrays and scalars (numbers stay numbers)
    to_data = (
        getattr(value, "model_dump", None)
        or getattr(value, "_asdict", None)
        or getattr(value, "tolist", None)
    )
    if callable(to_data):
        try:
            return to_data()
        except Exception:
            logger.debug("model_dump/_asdict/tolist failed on %s", type(value), exc_info=True)
    if is_dataclass(value) and not isinstance(value, type):  # slotted: no __dict__
        try:
            return {f.name: getattr(value, f.name) for f in fields(value) if f.name[0] != "_"}
        except Exception:
            logger.debug("dataclass fields failed on %s", type(value), exc_info=True)
    if hasattr(value, "__dict__"):
        try:
            return {k: v for k, v in vars(value).items() if not k.startswith("_")}
        except Exception:
            logger.debug("vars() failed on %s", type(value), exc_info=True)
    return safe_str(value)


#: Built once: ``json.dumps`` with options constructs a new encoder per call.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_default)


#: Types orjson would write differently from the standard encoder go to the latter instead.
NATIVE_JSON_OPTIONS: Final = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_orjson_dumps: Final = orjson.dumps


def native_json(value: object) -> str:
    """Compact JSON of JSON-native data (as :func:`safe_json` writes it); raises otherwise."""
    return _orjson_dumps(value, None, NATIVE_JSON_OPTIONS).decode()


def safe_json(value: object) -> str:
    """Compact JSON text of ``value``; falls back to a string form, never raises.

    Circular references and unserialisable members are replaced rather than propagated.
    """
    try:
        return _orjson_dumps(value, None, NATIVE_JSON_OPTIONS).decode()
    except Exception:  # a type left to the standard encoder (and its ``default``)
        pass
    try:
        return _ENCODER.encode(value)
    except Exception:  # circular reference, a raising __repr__, a raising property...
        logger.debug("value not JSON-serialisable: %s", type(value), exc_info=True)
        return json.dumps(safe_str(value), ensure_ascii=False)


def json_list(texts: list[str]) -> str:
    """``json.dumps(texts, ensure_ascii=False)`` (default ``", "`` separator) of strings."""
    return "[" + ", ".join(map(encode_basestring, texts)) + "]"


def clip(text: str, settings: Settings, truncated: list[str] | None = None, key: str = "") -> str:
    """Cut ``text`` to the configured attribute length; note the key in ``truncated``."""
    limit = settings.max_attribute_length
    if len(text) <= limit:
        return text
    if truncated is not None:
        truncated.append(key)
    return text[:limit]


def mask(text: str, settings: Settings, fired: set[str] | None = None) -> str:
    """Apply the configured redaction to ``text``; record masker names in ``fired``."""
    redact = settings.redact
    if redact is None or not text:
        return text
    try:
        masked, names = redact(text)
    except Exception:
        # A failing masker must not leak the unmasked text: drop the value instead.
        logger.debug("redaction failed", exc_info=True)
        if fired is not None:
            fired.add("redaction_error")
        return "<redaction failed>"
    if names and fired is not None:
        fired.update(names)
    return masked


#: Characters past the attribute limit that are still scanned for secrets: a secret across the
#: limit is masked before it is cut (a PEM key block of 4096-bit RSA is about 3,300 characters).
SCAN_MARGIN: Final = 4096

#: One JSON string literal; the last one of a clipped text may be cut off by its end.
_JSON_STRING: Final = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
#: A run of string literals and the punctuation between them (``"key": "value", "next"``):
#: what the maskers scan in a JSON text. Numbers, ``true``, ``false`` and ``null`` end a run,
#: so they are never scanned (nor rewritten), and a text made only of numbers costs one search.
_JSON_STRINGS: Final = re.compile(
    _JSON_STRING + r"(?:[\s:,\[\]{}]*" + _JSON_STRING + ")*", re.DOTALL
)


#: The key of this process's mask suffixes: random, never exported, so a suffix says which
#: masked keys are the same key without saying anything about the key itself.
_KEY_SALT: Final = secrets.token_bytes(16)


def key_suffix(literal: str) -> str:
    """The suffix of a masked mapping key: ``#`` and 12 hex digits of a keyed BLAKE2b hash of
    the key's JSON literal (``"..."``); the same key gets the same suffix within the process,
    two different keys different ones (so masking never merges two entries into one)."""
    digest = hashlib.blake2b(
        literal.encode("utf-8", "surrogatepass"), digest_size=6, key=_KEY_SALT
    ).hexdigest()
    return "#" + digest


@lru_cache(maxsize=1024)
def _builtin_masked_key(redact: Redactor, key: str) -> tuple[str, tuple[str, ...]]:
    masked, names = redact(key)
    return (key if masked == key else masked + key_suffix(json_str(key))), names


def masked_key(key: str, settings: Settings, fired: set[str] | None = None) -> str:
    """A mapping key masked and clipped like a value; when that changes it, plus its
    :func:`key_suffix` (two keys never become one).

    Keys repeat (every document of a corpus has the same metadata keys): with a
    :class:`~.redaction.Redactor` (deterministic) the masked form of a short key is cached.
    """
    redact = settings.redact
    if type(redact) is Redactor and len(key) <= settings.max_attribute_length:
        try:
            shown, names = _builtin_masked_key(redact, key)
        except Exception:  # a failing custom pattern: handled (and noted) as for any text
            logger.debug("masking a key failed", exc_info=True)
        else:
            if names and fired is not None:
                fired.update(names)
            return shown
    shown = text_value(key, settings, fired=fired)
    return shown if shown == key else shown + key_suffix(json_str(key))


#: A complete JSON string literal followed by a colon: a key of an object (atomic: a literal
#: that is no key fails at once, without backtracking through its characters).
_JSON_KEY: Final = re.compile(r'"(?>[^"\\]*(?:\\.[^"\\]*)*)"(?=\s*:)')
_COLON: Final = re.compile(r"\s*:")


def _distinct_keys(original: str, masked: str) -> str:
    """``masked`` (a masked run of string literals) with a :func:`key_suffix` added inside
    every object key that masking changed, so that two keys never become one."""
    keys = _JSON_KEY.findall(original)
    found = list(_JSON_KEY.finditer(masked))
    aligned = len(keys) == len(found)  # else a masker ate a quote: suffix by position
    parts: list[str] = []
    done = 0
    for index, match in enumerate(found):
        literal = match.group()
        if aligned and literal == keys[index]:
            continue
        source = keys[index] if aligned else f"{index}:{literal}"
        close = match.end() - 1  # the closing quote
        parts.append(masked[done:close])
        parts.append(key_suffix(source))
        done = close
    if not parts:
        return masked
    parts.append(masked[done:])
    return "".join(parts)


def mask_json(text: str, settings: Settings, fired: set[str] | None = None) -> str:
    """Apply the configured redaction to the string literals of a JSON text only (object keys
    included: a key masking changed gets its :func:`key_suffix`)."""
    if settings.redact is None:
        return text
    parts: list[str] = []
    done = 0
    for found in _JSON_STRINGS.finditer(text):
        start, end = found.span()
        parts.append(text[done:start])
        run = found.group()
        masked = mask(run, settings, fired)
        if masked != run:  # (rare) keep the object keys distinct; a run's last literal is a
            colon = ":" if _COLON.match(text, end) else ""  # key when a colon follows it
            masked = _distinct_keys(run + colon, masked + colon)
            if colon:
                masked = masked[:-1]
        parts.append(masked)
        done = end
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def text_value(
    text: str,
    settings: Settings,
    *,
    key: str = "",
    truncated: list[str] | None = None,
    fired: set[str] | None = None,
    json_text: bool = False,
) -> str:
    """Mask, then clip, a captured text field (never clip a secret in half).

    Only the first ``max_attribute_length + SCAN_MARGIN`` characters are scanned, so the cost
    of masking is bounded by the attribute limit whatever the size of the value. Of a JSON
    text (``json_text``) only the string literals are scanned: its numbers are never masked.
    """
    if settings.redact is None:
        return clip(text, settings, truncated, key)
    masker = mask_json if json_text else mask
    scanned = settings.max_attribute_length + SCAN_MARGIN
    if len(text) > scanned:
        if truncated is not None:
            truncated.append(key)
        return masker(text[:scanned], settings, fired)[: settings.max_attribute_length]
    return clip(masker(text, settings, fired), settings, truncated, key)
