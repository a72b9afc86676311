"""The identity a judge's validation record is bound to."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["fingerprint", "fingerprint_digest"]


def fingerprint(
    *,
    endpoint: str,
    model: str,
    rubric_version: str,
    rubric_digest: str,
    schema_digest: str,
    threshold: float | None,
    temperature: float | None,
    seed: int | None,
) -> dict[str, Any]:
    """The fields of a judge fingerprint plus their ``digest`` (SPEC §4.4).

    Any change of endpoint, model id, rubric text or version, output schema, working
    threshold, temperature or seed changes the digest and so invalidates a validation record.
    A categorical judge (one that picks a label, not a score) has no threshold: ``None``.
    """
    fields: dict[str, Any] = {
        "endpoint": endpoint.rstrip("/"),
        "model": model,
        "rubric_version": rubric_version,
        "rubric_sha256": rubric_digest,
        "schema_sha256": schema_digest,
        "threshold": None if threshold is None else float(threshold),
        "temperature": temperature,
        "seed": seed,
    }
    return {**fields, "digest": fingerprint_digest(fields)}


def fingerprint_digest(fields: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the fingerprint fields (``digest`` excluded)."""
    body = {k: v for k, v in fields.items() if k != "digest"}
    payload = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
