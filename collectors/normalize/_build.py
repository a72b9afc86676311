"""Rebuild the trace model τ from the spans of one trace."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from groundtrace.collectors.model import (
    MODEL_VERSION,
    Evaluation,
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

from . import _ext_genai as genai
from . import _ext_groundtrace as gt
from . import _ext_openinference as oi
from . import _ext_traceloop as tl
from ._convention import Convention, action_of, detect_convention, unknown_kind
from ._fields import AnswerFields, LLMFields, RequestFields, ToolFields, merge
from ._step import step_attributes
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
_TOOL_OK = sc.ToolStatus.OK.value
_EVALUATION = sc.GENAI_EVENT_EVALUATION_RESULT
_GROUNDTRACE = Convention.GROUNDTRACE
_SCHEMA_MAJOR = sc.SCHEMA_VERSION.split(".", 1)[0]
# findings that name no span and carry a fixed message are shared (Finding is frozen)
_NO_QUERY = Finding(FindingKind.NO_QUERY, "the trace records no request query")
_NO_ANSWER = Finding(FindingKind.NO_ANSWER, "the trace records no answer")
_NO_ANSWER_TEXT = Finding(FindingKind.NO_ANSWER, "the ANSWER step records no answer text")
_NO_CONFIDENCE = Finding(FindingKind.NO_CONFIDENCE, "the trace records no valid confidence")
_NO_RETRIEVAL = Finding(FindingKind.NO_RETRIEVAL, "the trace has no retrieval step")

LLMExtractor = Callable[[SpanView], LLMFields]
ToolExtractor = Callable[[SpanView], ToolFields]
_NO_REQUEST = RequestFields()
_NO_ANSWER_FIELDS = AnswerFields("")


def _head(key: str, parts: int = 1) -> str:
    """The first ``parts`` dotted segments of ``key`` and the dot after them."""
    return ".".join(key.split(".")[:parts]) + "."


#: For each LLM extractor, in merge order: the key prefixes and exact keys it reads. An
#: extractor none of whose keys is on a span contributes nothing (and reports nothing), so
#: it is not run; span events also feed the GenAI extractor.
_LLM_KEYS: tuple[tuple[LLMExtractor, tuple[str, ...], frozenset[str], bool], ...] = (
    (gt.llm_fields, (_head(sc.GT_LLM_REQUEST, 2),), frozenset(), False),
    (oi.oi_llm, (_head(sc.OI_LLM_MODEL_NAME),), frozenset({sc.OI_INPUT_VALUE}), False),
    (genai.genai_llm, (_head(sc.GENAI_SYSTEM),), frozenset(), True),
    (
        tl.traceloop_llm,
        (sc.GENAI_LEGACY_PROMPT + ".", sc.GENAI_LEGACY_COMPLETION + "."),
        frozenset(tl.TRACELOOP_LLM_KEYS),
        False,
    ),
)
_LLM_PLANS: dict[tuple[tuple[str, ...], bool], tuple[LLMExtractor, ...]] = {}
_MAX_PLANS = 512


def _llm_extractors(attrs: dict[str, AttributeValue], events: bool) -> tuple[LLMExtractor, ...]:
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


_TOOL_EXTRACTORS: dict[Convention, tuple[ToolExtractor, ...]] = {
    Convention.GROUNDTRACE: (gt.tool_call, oi.oi_tool, genai.genai_tool),
    Convention.OPENINFERENCE: (oi.oi_tool, genai.genai_tool),
    Convention.GENAI: (genai.genai_tool,),
    Convention.TRACELOOP: (tl.traceloop_tool, genai.genai_tool),
}
_EVIDENCE_EXTRACTORS = (gt.evidence, oi.oi_evidence, genai.genai_evidence, tl.traceloop_evidence)


class _Builder:
    """Mutable accumulator of one trace (one instance per trace)."""

    def __init__(self, trace_id: str) -> None:
        self.trace_id = trace_id
        self.findings: list[Finding] = []
        self.steps: list[Step] = []
        self.request = _NO_REQUEST
        self.request_seen = False
        self.evidence: list[Evidence] = []
        self.selected: list[str] | None = None
        self.answers: list[AnswerFields] = []
        self.tools: list[ToolCall] = []
        self.llms: list[LLMCall] = []
        self.replay: ReplayLink | None = None
        self.entrypoint: ReplayEntrypoint | None = None
        self.prompts: list[PromptEvidence] = []
        self.conventions: set[str] = set()
        self.retrieval_steps = 0
        self.content_off: list[str] = []
        self.evaluations: list[Evaluation] = []

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
            kind_key = unknown_kind(convention, attrs)
            if kind_key is not None:
                view.finding(
                    FindingKind.UNKNOWN_SPAN_KIND,
                    f"span {span.span_id} has {kind_key} {attrs[kind_key]!r}, which the "
                    f"{convention_name} convention does not define; the span is not interpreted",
                    kind_key,
                )
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
                step_attributes(attrs),
                view.location,
            )
        )
        self._common(view)
        if action is not None:
            self._by_action(view, action, convention)
        if span.events:
            for event in span.events:
                if event.name == _EVALUATION:
                    evaluation = genai.genai_evaluation(view, event)
                    if evaluation is not None:
                        self.evaluations.append(evaluation)

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
        if action == _REQUEST:
            if self.request_seen:
                return
            self.request_seen = True
            if convention is Convention.GROUNDTRACE:
                self.request = gt.request_fields(view)
                version = self.request.schema_version
                if isinstance(version, str) and version.split(".", 1)[0] != _SCHEMA_MAJOR:
                    view.finding(
                        FindingKind.SCHEMA_VERSION_MISMATCH,
                        f"schema version {version} (this reader follows {sc.SCHEMA_VERSION})",
                        sc.GT_SCHEMA_VERSION,
                    )
            elif convention is Convention.OPENINFERENCE:
                self._foreign_request(oi.oi_request(view))
            elif convention is Convention.TRACELOOP:
                self._foreign_request(tl.traceloop_request(view))
            elif convention is Convention.GENAI:
                self._foreign_request(genai.genai_request(view))
        elif action in (_RETRIEVE, _RERANK):
            self.retrieval_steps += 1
            for extract in _EVIDENCE_EXTRACTORS:
                items = extract(view, action)
                if items is not None:
                    self.evidence.extend(items)
                    break
            else:
                view.finding(
                    FindingKind.CONTENT_NOT_CAPTURED,
                    f"{action} span {view.span.span_id} records no readable documents",
                )
        elif action == _SELECT:
            ids = view.strings(sc.GT_SELECTED_IDS)
            if ids is not None:
                self.selected = [*(self.selected or []), *ids]
        elif action == _ANSWER:
            self.answers.append(gt.answer_fields(view))
            if self.entrypoint is None:
                self.entrypoint = gt.replay_entrypoint(view)
        elif action == _TOOL:
            self.tools.append(self._tool(view, convention))
        elif action == _LLM:
            self.llms.append(self._llm(view, convention))

    def _foreign_request(self, fields: RequestFields) -> None:
        self.request = fields
        if fields.answer is not None:
            self.answers.append(AnswerFields("", fields.answer))

    @staticmethod
    def _tool(view: SpanView, convention: Convention) -> ToolCall:
        extractors = _TOOL_EXTRACTORS.get(convention, ())
        f = merge(ToolFields, [extract(view) for extract in extractors])
        span = view.span
        status = f.status
        if status is None:
            error = span.status.code == "ERROR"
            status = sc.ToolStatus.ERROR.value if error else sc.ToolStatus.OK.value
        if (
            status == _TOOL_OK
            and f.result_content is None
            and f.result_hash is None
            and f.result_size is None
        ):
            view.finding(
                FindingKind.NO_TOOL_RESULT,
                f"TOOL span {span.span_id} succeeded but records no result "
                "(content capture may be off)",
            )
        return ToolCall(
            span.span_id,
            f.name,
            f.call_id,
            f.arguments,
            f.arguments_raw,
            status,
            f.error_type,
            f.paths_read or (),
            f.result_content,
            f.result_hash,
            f.result_size,
        )

    @staticmethod
    def _llm(view: SpanView, convention: Convention) -> LLMCall:
        extractors = _llm_extractors(view.attrs, bool(view.span.events))
        f = merge(LLMFields, [extract(view) for extract in extractors])
        span = view.span
        if not f.messages and not f.output_messages and f.output_text is None:
            view.finding(
                FindingKind.CONTENT_NOT_CAPTURED,
                f"LLM span {span.span_id} records no message content (content capture may be "
                "off, or the content was sent as log records that were not read with it)",
            )
        return LLMCall(
            span.span_id,
            f.model,
            f.response_model,
            f.provider,
            f.api,
            f.base_url,
            f.stream,
            f.params or {},
            f.messages or (),
            f.output_messages or (),
            f.output_text,
            f.tool_calls or (),
            f.finish_reasons or (),
            Usage(f.input_tokens, f.output_tokens, f.total_tokens),
            span.end_time_unix_nano - span.start_time_unix_nano,
            f.request_json,
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
        r = self.request
        req = Request(
            self.trace_id,
            r.query,
            r.case_id,
            r.app_name,
            r.app_version,
            r.session_id,
            r.user_id,
            r.source_id,
            service,  # service_name
            r.schema_version,
        )
        if not req.query:
            add(_NO_QUERY)
        answer = _NO_ANSWER_FIELDS
        if not self.answers:
            add(_NO_ANSWER)
        else:
            if len(self.answers) > 1:
                spans = ", ".join(a.span_id for a in self.answers)
                add(
                    Finding(
                        FindingKind.MULTIPLE_ANSWERS,
                        f"{len(self.answers)} answers recorded (spans {spans}); "
                        "the last one is the trace's answer",
                    )
                )
            answer = self.answers[-1]
            if answer.answer is None:
                add(_NO_ANSWER_TEXT)
        if answer.confidence is None:
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
            answer.answer,
            answer.confidence,
            answer.cited_ids or (),
            answer.quotes or (),
            tuple(self.tools),
            tuple(self.llms),
            self.replay,
            self.entrypoint,
            tuple(self.prompts),
            tuple(sorted(self.conventions)),
            tuple(findings),
            MODEL_VERSION,
            tuple(self.evaluations),
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
