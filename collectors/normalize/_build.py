"""Rebuild the trace model τ from the spans of one trace."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import isfinite
from typing import Any

from groundtrace.collectors.model import (
    MODEL_VERSION,
    Evidence,
    Finding,
    FindingKind,
    LLMCall,
    PromptEvidence,
    ReplayEntrypoint,
    ReplayLink,
    Request,
    Step,
    ToolCall,
    Trace,
    Usage,
)
from groundtrace.collectors.spans import AttributeValue, SpanRecord
from groundtrace.sdk import semconv as sc

from . import _ext_groundtrace as gt
from . import _ext_others as other
from ._convention import Convention, action_of, detect_convention
from ._structure import check_structure
from ._values import SpanView

__all__ = ["build_trace"]

_ACTIONS = frozenset(a.value for a in sc.Action)
# plain-str copies of the enum members (enum attribute access is slow on the hot path)
_REQUEST = sc.Action.REQUEST.value
_RETRIEVE = sc.Action.RETRIEVE.value
_RERANK = sc.Action.RERANK.value
_SELECT = sc.Action.SELECT.value
_ANSWER = sc.Action.ANSWER.value
_TOOL = sc.Action.TOOL.value
_LLM = sc.Action.LLM.value
_GROUNDTRACE = Convention.GROUNDTRACE
_SCHEMA_MAJOR = sc.SCHEMA_VERSION.split(".", 1)[0]
#: strings longer than this are left out of Step.attributes (content has typed fields).
_MAX_STEP_STRING = 256
_MAX_STEP_LIST = 32
# findings that name no span and carry a fixed message are shared (Finding is frozen)
_NO_QUERY = Finding(FindingKind.NO_QUERY, "the trace records no request query")
_NO_ANSWER = Finding(FindingKind.NO_ANSWER, "the trace records no answer")
_NO_ANSWER_TEXT = Finding(FindingKind.NO_ANSWER, "the ANSWER step records no answer text")
_NO_CONFIDENCE = Finding(FindingKind.NO_CONFIDENCE, "the trace records no valid confidence")
_NO_RETRIEVAL = Finding(FindingKind.NO_RETRIEVAL, "the trace has no retrieval step")

Extractor = Callable[[SpanView], dict[str, Any]]


def _head(key: str, parts: int = 1) -> str:
    """The first ``parts`` dotted segments of ``key`` and the dot after them."""
    return ".".join(key.split(".")[:parts]) + "."


#: For each LLM extractor, in merge order: the key prefixes and exact keys it reads. An
#: extractor none of whose keys is on a span contributes nothing (and reports nothing), so
#: it is not run; span events also feed the GenAI extractor.
_LLM_KEYS: tuple[tuple[Extractor, tuple[str, ...], frozenset[str], bool], ...] = (
    (gt.llm_fields, (_head(sc.GT_LLM_REQUEST, 2),), frozenset(), False),
    (other.oi_llm, (_head(sc.OI_LLM_MODEL_NAME),), frozenset({sc.OI_INPUT_VALUE}), False),
    (other.genai_llm, (_head(sc.GENAI_SYSTEM),), frozenset(), True),
    (
        other.traceloop_llm,
        (sc.GENAI_LEGACY_PROMPT + ".", sc.GENAI_LEGACY_COMPLETION + "."),
        frozenset(other.TRACELOOP_LLM_KEYS),
        False,
    ),
)
_LLM_PLANS: dict[tuple[tuple[str, ...], bool], tuple[Extractor, ...]] = {}
_MAX_PLANS = 512


def _llm_extractors(attrs: dict[str, AttributeValue], events: bool) -> tuple[Extractor, ...]:
    """The LLM extractors with something to read on a span with these keys (cached)."""
    shape = (tuple(attrs), events)
    plan = _LLM_PLANS.get(shape)
    if plan is None:
        keys = shape[0]
        plan = tuple(
            extract
            for extract, heads, exact, by_events in _LLM_KEYS
            if (by_events and events) or any(k.startswith(heads) or k in exact for k in keys)
        )
        if len(_LLM_PLANS) >= _MAX_PLANS:
            _LLM_PLANS.clear()
        _LLM_PLANS[shape] = plan
    return plan


_TOOL_EXTRACTORS: dict[Convention, tuple[Extractor, ...]] = {
    Convention.GROUNDTRACE: (gt.tool_call, other.oi_tool, other.genai_tool),
    Convention.OPENINFERENCE: (other.oi_tool, other.genai_tool),
    Convention.GENAI: (other.genai_tool,),
    Convention.TRACELOOP: (other.traceloop_tool, other.genai_tool),
}
_EVIDENCE_EXTRACTORS = (gt.evidence, other.oi_evidence, other.genai_evidence)
_EMPTY: tuple[Any, ...] = ((), {})


def _merge(extractors: Sequence[Extractor], view: SpanView) -> dict[str, Any]:
    """Field-wise merge: the first extractor with a non-empty value wins."""
    merged: dict[str, Any] = {}
    for extract in extractors:
        for key, value in extract(view).items():
            # skip None, () and {}; only falsy values need the (slower) comparisons
            if value is None or (not value and value in _EMPTY):
                continue
            if key not in merged:
                merged[key] = value
    return merged


def _small_list(value: list[Any]) -> bool:
    """At most 32 items, each a number, a boolean or a string of at most 256 characters."""
    if len(value) > _MAX_STEP_LIST:
        return False
    for x in value:
        if type(x) is str:
            if len(x) > _MAX_STEP_STRING:
                return False
        elif not (
            isinstance(x, bool | int | float) or (isinstance(x, str) and len(x) <= _MAX_STEP_STRING)
        ):
            return False
    return True


#: OTLP/JSON's spelling of the doubles JSON has no number for.
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _json_number(value: float) -> float | str:
    """``value``, or OTLP/JSON's spelling of it when it is not finite."""
    return value if isfinite(value) else _NON_FINITE[repr(value)]


def _step_attributes(attrs: dict[str, AttributeValue]) -> dict[str, Any]:
    """Scalars, short strings and short lists of them (``None`` values are left out).

    The values are JSON values, so a step reads back from τ JSON as it was written: a
    non-finite double becomes ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` as in OTLP/JSON.
    """
    out: dict[str, Any] = attrs.copy()  # most attributes stay: copy, then drop the few
    for key, value in attrs.items():
        if type(value) is str:
            if len(value) > _MAX_STEP_STRING:
                del out[key]
        elif type(value) is float:
            if not isfinite(value):
                out[key] = _json_number(value)
        elif value is None or (isinstance(value, list) and not _small_list(value)):
            del out[key]
        elif isinstance(value, list) and any(type(x) is float and not isfinite(x) for x in value):
            out[key] = [_json_number(x) if type(x) is float else x for x in value]
    return out


class _Builder:
    """Mutable accumulator of one trace (one instance per trace)."""

    def __init__(self, trace_id: str) -> None:
        self.trace_id = trace_id
        self.findings: list[Finding] = []
        self.steps: list[Step] = []
        self.request: dict[str, Any] = {}
        self.request_seen = False
        self.evidence: list[Evidence] = []
        self.selected: list[str] | None = None
        self.answers: list[dict[str, Any]] = []
        self.tools: list[ToolCall] = []
        self.llms: list[LLMCall] = []
        self.replay: ReplayLink | None = None
        self.entrypoint: ReplayEntrypoint | None = None
        self.prompts: list[PromptEvidence] = []
        self.conventions: set[str] = set()
        self.retrieval_steps = 0
        self.content_off: list[str] = []

    # -- per span ------------------------------------------------------------------------------

    def add_span(self, span: SpanRecord, is_root: bool) -> None:
        view = SpanView(span, self.findings)
        attrs = span.attributes
        convention = detect_convention(attrs)
        convention_name: str = convention._value_  # plain str (``.value`` is a slow property)
        self.conventions.add(convention_name)
        action: str | None
        if convention is _GROUNDTRACE:
            raw = attrs.get(sc.GT_ACTION)
            action = raw if isinstance(raw, str) and raw in _ACTIONS else None
            if action is None:
                view.finding(
                    FindingKind.UNKNOWN_ACTION,
                    f"span {span.span_id} has unknown action {raw!r}",
                    sc.GT_ACTION,
                )
        else:
            found = action_of(convention, attrs, is_root)
            action = None if found is None else found.value
        self.steps.append(
            Step(
                span.span_id,
                span.parent_span_id or None,
                action,
                span.name,
                span.start_time_unix_nano,
                span.end_time_unix_nano,
                span.status.code,
                span.status.message,
                convention_name,
                view.text(sc.GT_STEP_NAME),
                _step_attributes(attrs),
                view.location,
            )
        )
        self._common(view)
        if action is not None:
            self._by_action(view, action, convention)

    def _common(self, view: SpanView) -> None:
        attrs = view.attrs
        if sc.GT_TRUNCATED in attrs:
            for key in view.strings(sc.GT_TRUNCATED) or ():
                view.finding(
                    FindingKind.TRUNCATED_ATTRIBUTE,
                    f"attribute {key} was truncated by the SDK's size limit",
                    key,
                )
        if attrs.get(sc.GT_CONTENT_CAPTURED) is False:
            self.content_off.append(view.span.span_id)
        if sc.GT_PROMPT_EVIDENCE_BLOCK in attrs:
            prompt = gt.prompt_evidence(view)
            if prompt is not None:
                self.prompts.append(prompt)
        if sc.GT_REPLAY_OF in attrs and self.replay is None:
            self.replay = gt.replay_link(view)

    def _by_action(self, view: SpanView, action: str, convention: Convention) -> None:
        span = view.span
        if action == _REQUEST:
            if self.request_seen:
                return
            self.request_seen = True
            if convention is Convention.GROUNDTRACE:
                self.request = gt.request_fields(view)
                version = self.request.get("schema_version")
                if isinstance(version, str) and version.split(".", 1)[0] != _SCHEMA_MAJOR:
                    view.finding(
                        FindingKind.SCHEMA_VERSION_MISMATCH,
                        f"schema version {version} (this reader follows {sc.SCHEMA_VERSION})",
                        sc.GT_SCHEMA_VERSION,
                    )
            elif convention is Convention.OPENINFERENCE:
                self._foreign_request(other.oi_request(view))
            elif convention is Convention.TRACELOOP:
                self._foreign_request(other.traceloop_request(view))
        elif action in (_RETRIEVE, _RERANK):
            self.retrieval_steps += 1
            for extract in _EVIDENCE_EXTRACTORS:
                items = extract(view, action)
                if items is not None:
                    self.evidence.extend(items)
                    break
        elif action == _SELECT:
            ids = view.strings(sc.GT_SELECTED_IDS)
            if ids is not None:
                self.selected = [*(self.selected or []), *ids]
        elif action == _ANSWER:
            self.answers.append({"span_id": span.span_id, **gt.answer_fields(view)})
            if self.entrypoint is None:
                self.entrypoint = gt.replay_entrypoint(view)
        elif action == _TOOL:
            fields = _merge(_TOOL_EXTRACTORS.get(convention, ()), view)
            if "status" not in fields:
                fields["status"] = (
                    sc.ToolStatus.ERROR.value
                    if span.status.code == "ERROR"
                    else sc.ToolStatus.OK.value
                )
            self.tools.append(gt.make_tool_call(span.span_id, fields))
        elif action == _LLM:
            self.llms.append(self._llm(view, convention))

    def _foreign_request(self, fields: dict[str, Any]) -> None:
        answer = fields.pop("answer", None)
        self.request = fields
        if answer is not None:
            self.answers.append({"span_id": "", "answer": answer})

    @staticmethod
    def _llm(view: SpanView, convention: Convention) -> LLMCall:
        f = _merge(_llm_extractors(view.attrs, bool(view.span.events)), view)
        span = view.span
        get = f.get
        return LLMCall(
            span.span_id,
            get("model"),
            get("response_model"),
            get("provider"),
            get("api"),
            get("base_url"),
            get("stream"),
            get("params") or {},
            get("messages") or (),
            get("output_messages") or (),
            get("output_text"),
            get("tool_calls") or (),
            tuple(get("finish_reasons") or ()),
            Usage(get("input_tokens"), get("output_tokens"), get("total_tokens")),
            span.end_time_unix_nano - span.start_time_unix_nano,
            get("request_json"),
            convention._value_,
        )

    # -- per trace -----------------------------------------------------------------------------

    def finish(self, root: SpanRecord | None) -> Trace:
        findings = self.findings
        add = findings.append
        request_span = root
        service = None
        if request_span is not None:
            name = request_span.resource.get(sc.SERVICE_NAME)
            service = name if isinstance(name, str) else None
        get = self.request.get
        req = Request(
            self.trace_id,
            get("query"),
            get("case_id"),
            get("app_name"),
            get("app_version"),
            get("session_id"),
            get("user_id"),
            get("source_id"),
            service,  # service_name
            get("schema_version"),
        )
        if not req.query:
            add(_NO_QUERY)
        answer: dict[str, Any] = {}
        if not self.answers:
            add(_NO_ANSWER)
        else:
            if len(self.answers) > 1:
                spans = ", ".join(a["span_id"] for a in self.answers)
                add(
                    Finding(
                        FindingKind.MULTIPLE_ANSWERS,
                        f"{len(self.answers)} answers recorded (spans {spans}); "
                        "the last one is the trace's answer",
                    )
                )
            answer = self.answers[-1]
            if answer.get("answer") is None:
                add(_NO_ANSWER_TEXT)
        if answer.get("confidence") is None:
            add(_NO_CONFIDENCE)
        if self.retrieval_steps == 0:
            add(_NO_RETRIEVAL)
        missing = [e for e in self.evidence if e.content is None]
        if missing or self.content_off:
            parts = [f"{len(missing)} evidence item(s) without content"] if missing else []
            if self.content_off:
                parts.append(f"capture off on span(s) {', '.join(self.content_off)}")
            add(Finding(FindingKind.CONTENT_NOT_CAPTURED, "; ".join(parts)))
        return Trace(
            req,  # request
            tuple(self.steps),
            tuple(self.evidence),
            None if self.selected is None else tuple(self.selected),  # selected_ids
            answer.get("answer"),
            answer.get("confidence"),
            answer.get("cited_ids") or (),
            answer.get("quotes") or (),
            tuple(self.tools),
            tuple(self.llms),
            self.replay,
            self.entrypoint,
            tuple(self.prompts),
            tuple(sorted(self.conventions)),
            tuple(findings),
            MODEL_VERSION,
        )


def build_trace(records: Sequence[SpanRecord], extra: Sequence[Finding] = ()) -> Trace:
    """Build τ from all spans of one trace (they must share one trace id).

    Args:
        records: the spans, in any order.
        extra: findings established outside the spans (e.g. by the grouping stage).

    Raises:
        ValueError: ``records`` is empty or mixes trace ids (a programming error).
    """
    if not records:
        raise ValueError("build_trace needs at least one span")
    trace_id = records[0].trace_id
    for record in records:  # a loop, not any(<genexpr>): this runs once per trace
        if record.trace_id != trace_id:
            raise ValueError("build_trace got spans of more than one trace")
    builder = _Builder(trace_id)
    builder.findings.extend(extra)
    spans = records if type(records) is list else list(records)  # read, never changed
    structure = check_structure(spans, builder.findings)
    root = structure.root
    for span in structure.spans:
        builder.add_span(span, span is root)
    return builder.finish(root)
