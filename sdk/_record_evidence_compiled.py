"""Evidence recording compiled per dict shape: the hottest path, for the most common input.

A retriever usually returns dicts that all have the same keys, in the same order, holding
values of the expected types (string id/title/content, float score...). For such a *shape*
(the tuple of a dict's keys) plus the two switches that change the output (content capture,
``gen_ai.retrieval.documents``), this module generates -- once, like ``dataclasses``
generates ``__init__`` -- a function whose loop body is straight-line code for exactly the
keys present: one read of each value (an unpacking of ``dict.values()`` when the order of the
keys matters), one type check per value, the document and
its metadata built as dict displays, and every evidence attribute written straight into the
span's attribute dict (no intermediate dict, tuple or further call).

The generated code embeds no application data: dict keys from the application are passed in
as module constants, never spelled into the source. A builder returns ``None`` as soon as
anything is unusual (another shape, ``None`` or an unexpected type, a non-finite score, a
value over the size limit...); the caller then takes the general plain-dict path, which
handles everything and writes exactly the same output (tests check that it does).

A builder that declines may already have written the flattened keys of the documents before
the one it declined (each document's keys are written only once all of its checks passed).
That leaves nothing behind: every other path writes those same keys, for those documents,
with the same values, in the same order, so they are overwritten in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import isfinite
from typing import Any, Final

import orjson

from . import semconv as sc
from ._attributes import NATIVE_JSON_OPTIONS
from ._record import AttributeValue, content_hash, content_id
from ._runtime import logger

__all__ = ["Builder", "builder_for"]

#: ``builder(attrs, items, table, limit, count)`` writes the evidence attributes of ``items``
#: into ``attrs`` and returns True, or returns False when an item needs the general path
#: (see the module docstring for what it may have written then). ``table`` holds, per
#: document, its four flattened OpenInference keys (id, score, content, metadata) and its
#: default rank; ``count`` is the value of ``groundtrace.evidence.count``.
Builder = Callable[
    [
        dict[str, AttributeValue],
        Sequence[Any],
        Sequence[tuple[str, str, str, str, int]],
        int,
        int,
    ],
    bool,
]

#: The fields in the order of ``_record_evidence_keys.SLOT_KEYS``.
_SLOTS: Final = ("id", "title", "source", "rank", "score", "version", "content")
_TYPE_OF_SLOT: Final = ("str", "str", "str", "int", "float", "str", "str")
_SCALAR_TYPES: Final = frozenset({str, int, float, bool, type(None)})
#: The builders made so far by ``(shape, capture, genai)``; None for a shape not compiled.
_BUILDERS: dict[tuple[Any, ...], Builder | None] = {}
_MAX_BUILDERS: Final = 256
_UNSEEN: Final[Any] = object()


def builder_for(
    shape: tuple[Any, ...], capture: bool, genai: bool, plan_of: Callable[[tuple[Any, ...]], Any]
) -> Builder | None:
    """The (cached) builder of dicts with these keys, or None for shapes it does not take.

    Args:
        shape: the keys of the first item, in order.
        capture: whether evidence content is captured.
        genai: whether ``gen_ai.retrieval.documents`` entries are built.
        plan_of: the plain-dict reader's plan of a shape (``_record_evidence_plain.plan_of``).
    """
    key = (shape, capture, genai)
    builder: Builder | None = _BUILDERS.get(key, _UNSEEN)
    if builder is _UNSEEN:
        try:
            builder = _compile(shape, plan_of(shape), capture, genai)
        except Exception:  # never retried for this shape: the plain-dict loop takes it
            logger.debug("compiling an evidence builder failed", exc_info=True)
            builder = None
        if len(_BUILDERS) >= _MAX_BUILDERS:
            _BUILDERS.clear()
        _BUILDERS[key] = builder
    return builder


def _compile(shape: tuple[Any, ...], plan: Any, capture: bool, genai: bool) -> Builder | None:
    if not shape or plan is None or plan[0] is None or "content_hash" in plan[2]:
        return None  # nested metadata, two names for one field, or a hash of its own
    single: tuple[Any, ...] = plan[0]
    # a field's key (a str, or a str subclass equal to a field name); None-like for absent
    present = {key: slot for slot, key in enumerate(single) if isinstance(key, str)}
    extras: tuple[str, ...] = plan[2]
    namespace: dict[str, Any] = {
        "SHAPE": shape,
        "isfinite": isfinite,
        "content_id": content_id,
        "content_hash": content_hash,
        "SCALARS": _SCALAR_TYPES,
    }
    targets: list[str] = []
    extra_items: list[str] = []
    for index, key in enumerate(shape):
        if key in present:
            targets.append("v_" + _SLOTS[present[key]])
        elif key in extras:
            targets.append(f"x{index}")
            namespace[f"K{index}"] = key
            extra_items.append(f"K{index}: x{index}")
        else:
            targets.append("_")  # a key that is not a string: not recorded
    has = [isinstance(key, str) for key in single]
    has_id, has_title, has_source, has_rank, has_score, has_version, has_content = has
    checks = [f"type(v_{_SLOTS[s]}) is not {_TYPE_OF_SLOT[s]}" for s in range(7) if has[s]]
    checks += [f"type(x{i}) not in SCALARS" for i, k in enumerate(shape) if k in extras]
    if has_title:
        checks.append("len(v_title) > limit")
    if has_score:
        checks.append("not isfinite(v_score)")
    if has_content and capture:
        checks.append("len(v_content) > limit")
    rank = "v_rank" if has_rank else "position"
    ev_id = "v_id" if has_id else "ev_id"
    doc = [f'"id": {ev_id}', f'"rank": {rank}']
    meta = []
    if has_title:
        doc.append('"title": v_title')
        meta.append('"title": v_title')
    if has_source:
        doc.append('"source": v_source')
        meta.append('"source": v_source')
    if has_score:
        doc.append('"score": v_score')
    if has_version:
        doc.append('"version": v_version')
        meta.append('"version": v_version')
    meta.append(f'"rank": {rank}')
    if has_content:
        doc.append('"length": len(v_content)')
        if capture:
            doc.append('"content": v_content')
        else:
            doc.append('"content_hash": hashed')
            meta.append('"content_hash": hashed')
    if extra_items:
        doc.append('"metadata": extra')
        meta.extend(extra_items)
    if extras or "_" in targets or not all(type(key) is str for key in shape):
        # the order of the keys matters (extra metadata follows it) or is needed to skip a
        # key that is not a string: the same keys in the same order
        body = [
            "if type(item) is not dict or tuple(item) != SHAPE:",
            "    return False",
            f"({', '.join(targets)},) = item.values()",
        ]
    else:
        # only field keys: the same number of keys, each found, is the same set of keys (the
        # output does not depend on their order)
        for index, key in enumerate(shape):
            namespace[f"K{index}"] = key
        body = [
            f"if type(item) is not dict or len(item) != {len(shape)}:",
            "    return False",
            "try:",
            *(f"    {target} = item[K{index}]" for index, target in enumerate(targets)),
            "except KeyError:",
            "    return False",
        ]
    if checks:
        body += [f"if {' or '.join(checks)}:", "    return False"]
    if not has_id:
        id_value = "content_id(v_content) if v_content else None" if has_content else "None"
        body.append(f"ev_id = {id_value}")
    if has_content and not capture:
        body.append("hashed = content_hash(v_content)")
    if extra_items:
        body.append(f"extra = {{{', '.join(extra_items)}}}")
    # everything that can still raise comes before the first write of this document
    body.append(f"meta = dumps({{{', '.join(meta)}}}, None, OPTIONS).decode()")
    body.append(f"docs.append({{{', '.join(doc)}}})")
    if has_id:
        body.append("attrs[k_id] = v_id")
    else:
        body += ["if ev_id is not None:", "    attrs[k_id] = ev_id"]
    if has_score:
        body.append("attrs[k_score] = v_score")
    if has_content and capture:
        body.append("attrs[k_content] = v_content")
    body.append("attrs[k_meta] = meta")
    if genai:
        score = "v_score" if has_score else "None"
        body.append(f'gen.append({{"id": {ev_id}, "score": {score}}})')
    tail = [
        "evidence = dumps(docs, None, OPTIONS).decode()",
        "if len(evidence) > limit:",
        "    return False",
        "attrs[EVIDENCE] = evidence",
        "attrs[EVIDENCE_COUNT] = count",
    ]
    if genai:
        tail.append("attrs[GENAI_DOCUMENTS] = dumps(gen, None, OPTIONS).decode()")
    source = "\n".join(
        [
            "def build(attrs, items, table, limit, count, dumps=dumps, OPTIONS=OPTIONS,"
            " SHAPE=SHAPE, EVIDENCE=EVIDENCE, EVIDENCE_COUNT=EVIDENCE_COUNT,"
            " GENAI_DOCUMENTS=GENAI_DOCUMENTS):",
            "    docs = []",
            *(["    gen = []"] if genai else []),
            "    for item, (k_id, k_score, k_content, k_meta, position) in zip(items, table):",
            *("        " + line for line in body),
            *("    " + line for line in tail),
            "    return True",
        ]
    )
    namespace["dumps"] = orjson.dumps
    namespace["OPTIONS"] = NATIVE_JSON_OPTIONS
    namespace["EVIDENCE"] = sc.GT_EVIDENCE
    namespace["EVIDENCE_COUNT"] = sc.GT_EVIDENCE_COUNT
    namespace["GENAI_DOCUMENTS"] = sc.GENAI_RETRIEVAL_DOCUMENTS
    exec(compile(source, f"<groundtrace evidence builder {len(_BUILDERS)}>", "exec"), namespace)
    builder: Builder = namespace["build"]
    return builder
