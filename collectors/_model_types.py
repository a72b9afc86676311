"""Structs of the trace model τ (re-exported by :mod:`groundtrace.collectors.model`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

import msgspec
from msgspec import Struct, field

from .errors import InputError

__all__ = [
    "MODEL_VERSION",
    "Evaluation",
    "Evidence",
    "Finding",
    "FindingKind",
    "LLMCall",
    "Message",
    "PromptEvidence",
    "ReplayEntrypoint",
    "ReplayLink",
    "Request",
    "RequestedToolCall",
    "Step",
    "ToolCall",
    "Trace",
    "Usage",
]

#: Version of the serialised trace model. Bumped on any change to the JSON layout: the minor
#: version when fields are added (older layouts of the same major version still load), the
#: major version otherwise. 1.1 added ``Trace.evaluations``, 1.2 the document an evaluation
#: concerns (``Evaluation.evidence_id`` and ``.document_position``).
MODEL_VERSION: Final = "1.2"
#: Versions whose serialised traces load (a 1.0 trace has no evaluations).
_READABLE_VERSIONS: Final = frozenset({"1.0", "1.1", MODEL_VERSION})

#: A JSON-compatible value (what attribute subsets, metadata and parameters hold).
JSON = Any


class _Model(Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Base of the model's structs: immutable (each repeats ``frozen=True`` for type checkers),
    not tracked by the cyclic garbage collector (they hold no reference cycles), and decoded
    strictly (an unknown field is an error)."""


class FindingKind(StrEnum):
    """What a :class:`Finding` reports: something missing or inconsistent in a trace."""

    NO_ROOT = "no_root"
    MULTIPLE_ROOTS = "multiple_roots"
    ORPHAN_SPAN = "orphan_span"
    DUPLICATE_SPAN_ID = "duplicate_span_id"
    CLOCK_SKEW = "clock_skew"
    SPLIT_TRACE = "split_trace"
    NO_QUERY = "no_query"
    NO_ANSWER = "no_answer"
    MULTIPLE_ANSWERS = "multiple_answers"
    NO_CONFIDENCE = "no_confidence"
    CONFIDENCE_OUT_OF_RANGE = "confidence_out_of_range"
    NO_RETRIEVAL = "no_retrieval"
    TRUNCATED_ATTRIBUTE = "truncated_attribute"
    UNKNOWN_ACTION = "unknown_action"
    BAD_ATTRIBUTE_TYPE = "bad_attribute_type"
    CONTENT_NOT_CAPTURED = "content_not_captured"
    UNKNOWN_CONVENTION = "unknown_convention"
    SCHEMA_VERSION_MISMATCH = "schema_version_mismatch"
    NO_TIMING = "no_timing"
    NO_TOOL_RESULT = "no_tool_result"
    UNKNOWN_SPAN_KIND = "unknown_span_kind"
    MALFORMED_FIELD = "malformed_field"
    ORPHAN_LOG = "orphan_log"
    #: spans of the trace were on input that could not be read (see ``Trace.incomplete``)
    LOST_SPANS = "lost_spans"


#: The finding kinds that make a trace incomplete (see :attr:`Trace.incomplete`).
INCOMPLETE_KINDS: Final = frozenset(
    {
        FindingKind.LOST_SPANS,
        FindingKind.ORPHAN_SPAN,
        FindingKind.NO_ROOT,
        FindingKind.SPLIT_TRACE,
    }
)


class Finding(_Model, frozen=True):
    """Something missing or inconsistent in a trace, reported instead of guessed.

    Attributes:
        kind: a :class:`FindingKind` value.
        message: human-readable explanation naming the field concerned.
        span_id: the span it concerns, if any.
        location: where the span was read from (``file:line``), if known.
        field: the attribute key or JSON field concerned, if any.
    """

    kind: str
    message: str
    span_id: str | None = None
    location: str | None = None
    field: str | None = None


class Request(_Model, frozen=True):
    """The user request (root span) of a trace.

    Attributes:
        trace_id: hex trace id of the trace.
        query: the user query (``groundtrace.request.query`` or the convention's input).
        case_id: the case id when the request ran from a dataset; joins traces to case files.
        app_name: the application name (what the release gate compares). "hotpot-rag"
        app_version: the application version. "2026.11.1"
        session_id: the session (conversation) id, when the app gives one.
        user_id: the user id, when the app gives one.
        source_id: the source the request was answered from (the multi-source audit).
        service_name: ``service.name`` of the resource that emitted the root span.
        schema_version: ``groundtrace.schema_version`` of the root span, if any. "1.0.0"
    """

    trace_id: str
    query: str | None = None
    case_id: str | None = None
    app_name: str | None = None
    app_version: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    source_id: str | None = None
    service_name: str | None = None
    schema_version: str | None = None


class Step(_Model, frozen=True):
    """One span of the trace, in start-time order.

    Attributes:
        span_id: hex span id.
        parent_span_id: hex id of the parent, ``None`` for a root.
        action: an ``Action`` value from the semantic conventions, or ``None`` when the span
            has no action in our vocabulary (e.g. an HTTP span of another instrumentation).
        name: the span name.
        start_ns: start time, Unix nanoseconds.
        end_ns: end time, Unix nanoseconds.
        status: ``"UNSET"``, ``"OK"`` or ``"ERROR"``.
        status_message: the status description.
        convention: the convention detected on the span (``groundtrace``, ``openinference``,
            ``genai``, ``traceloop``, ``transcript`` or ``unknown``).
        step_name: the name the app gave the step, if any.
        attributes: small scalar attributes of the span (bulky content lives in the typed
            fields of the trace instead).
        location: where the span was read from (``file:line``), if known.
    """

    span_id: str
    parent_span_id: str | None
    action: str | None
    name: str
    start_ns: int
    end_ns: int
    status: str = "UNSET"
    status_message: str = ""
    convention: str = "unknown"
    step_name: str | None = None
    attributes: dict[str, JSON] = {}
    location: str | None = None

    @property
    def duration_ns(self) -> int:
        """End minus start (negative when the clock was skewed)."""
        return self.end_ns - self.start_ns


class Evidence(_Model, frozen=True):
    """One retrieved (or reranked) evidence item.

    Content is either present (capture on) or referenced by ``content_hash`` + ``length``.

    Attributes:
        id: the item's id as the app gave it (``None`` when it gave none).
        step_span_id: the span of the step that returned the item.
        stage: the action of that step, ``"RETRIEVE"`` or ``"RERANK"``.
        rank: 1-based position in that step's list.
        score: the retriever's (or reranker's) score, if recorded.
        title: the item's title, if any.
        source: where the item comes from (a file, URL or collection), if recorded.
        version: the item's version, if recorded.
        content: the item's text (content capture on).
        content_hash: sha256 of the text, ``"sha256:<hex>"`` (there even when the text
            itself was not captured).
        length: length of the text in characters.
        metadata: any other fields the app recorded for the item.
    """

    id: str | None
    step_span_id: str
    stage: str
    rank: int | None = None
    score: float | None = None
    title: str | None = None
    source: str | None = None
    version: str | None = None
    content: str | None = None
    content_hash: str | None = None
    length: int | None = None
    metadata: dict[str, JSON] = {}


class RequestedToolCall(_Model, frozen=True):
    """A tool call the model asked for (``arguments`` is the raw JSON text as sent).

    Attributes:
        id: the call id the model gave (what the tool's reply refers to). "call_abc"
        name: the tool (function) name.
        arguments: the arguments as the raw JSON text the model wrote.
    """

    id: str | None
    name: str | None
    arguments: str | None = None


class Message(_Model, frozen=True):
    """A chat message (OpenAI-style roles: system, user, assistant, tool).

    Attributes:
        role: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"`` (``None`` if not given).
        content: the message text, if captured.
        name: the participant's (or tool's) name, if given.
        tool_call_id: on a tool message, the id of the call it answers.
        tool_calls: on an assistant message, the tool calls it asked for.
    """

    role: str | None
    content: str | None = None
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[RequestedToolCall, ...] = ()


class Usage(_Model, frozen=True):
    """Token usage of one LLM call; ``None`` where the trace does not say.

    Attributes:
        input_tokens: tokens of the prompt.
        output_tokens: tokens of the completion.
        total_tokens: total tokens as the endpoint reported them.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None


class LLMCall(_Model, frozen=True):
    """One model call.

    Attributes:
        span_id: hex id of the call's span.
        model: the model requested.
        response_model: the model the response names, if it says.
        provider: the provider (``gen_ai.provider.name``). "openai"
        api: the API flavour called. "chat.completions" or "responses"
        base_url: the base URL of the endpoint, if recorded.
        stream: whether the call streamed (``None`` when the trace does not say).
        params: request parameters other than model and messages (temperature, seed, ...).
        messages: the input messages, in order.
        output_messages: the messages the model returned.
        output_text: the output text (of the first choice).
        tool_calls: the tool calls the model asked for.
        finish_reasons: why generation stopped, one per choice. ["stop"]
        usage: token usage.
        latency_ns: span duration.
        request_json: the request exactly as sent (groundtrace capture), for replay.
        convention: the convention the call was read from (as :attr:`Step.convention`).
    """

    span_id: str
    model: str | None = None
    response_model: str | None = None
    provider: str | None = None
    api: str | None = None
    base_url: str | None = None
    stream: bool | None = None
    params: dict[str, JSON] = {}
    messages: tuple[Message, ...] = ()
    output_messages: tuple[Message, ...] = ()
    output_text: str | None = None
    tool_calls: tuple[RequestedToolCall, ...] = ()
    finish_reasons: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    latency_ns: int | None = None
    request_json: str | None = None
    convention: str = "unknown"


class ToolCall(_Model, frozen=True):
    """One tool/command execution.

    Attributes:
        span_id: hex id of the TOOL span.
        name: the tool name. "read_document"
        call_id: the tool call id (from the model's tool call when there is one).
        arguments: the arguments as a JSON object (``None`` when absent or not an object).
        arguments_raw: the arguments as the raw text recorded.
        status: a ``ToolStatus`` value: ``"ok"``, ``"error"`` or ``"timeout"``.
        error_type: the exception type when the status is error or timeout.
        paths_read: the paths or resource ids the tool read.
        result_content: the result text (content capture on).
        result_hash: sha256 of the result text, ``"sha256:<hex>"``.
        result_size: size of the result in characters.
    """

    span_id: str
    name: str | None
    call_id: str | None = None
    arguments: dict[str, JSON] | None = None
    arguments_raw: str | None = None
    status: str | None = None
    error_type: str | None = None
    paths_read: tuple[str, ...] = ()
    result_content: str | None = None
    result_hash: str | None = None
    result_size: int | None = None


class ReplayLink(_Model, frozen=True):
    """Link of a counterfactual trace to the original it replays.

    Attributes:
        replay_of: hex trace id of the original trace.
        operator: the intervention operator. "REMOVE"
        target_id: id of the evidence item the operator targets.
        replacement_id: id of the item put in its place (REPLACE only).
    """

    replay_of: str
    operator: str | None = None
    target_id: str | None = None
    replacement_id: str | None = None


class ReplayEntrypoint(_Model, frozen=True):
    """How to call the replayable ANSWER function again.

    Attributes:
        span_id: hex id of the ANSWER span.
        entrypoint: the importable function, ``module:qualname``. "examples.hotpot_rag.app:answer"
        kwargs: keyword arguments of the call other than the query and the evidence.
        query_param: the parameter that receives the query. "question"
        evidence_param: the parameter that receives the evidence list. "evidence"
    """

    span_id: str
    entrypoint: str
    kwargs: dict[str, JSON] = {}
    query_param: str | None = None
    evidence_param: str | None = None


class PromptEvidence(_Model, frozen=True):
    """The evidence block as rendered into a prompt (lets replay edit a captured call).

    Attributes:
        span_id: hex id of the span that recorded the block.
        block: the exact evidence block rendered into the prompt.
        ids: the evidence ids in the order they were rendered.
        format: name and version of the rendering format. "groundtrace.chunks/1"
    """

    span_id: str
    block: str
    ids: tuple[str, ...] = ()
    format: str | None = None


class Evaluation(_Model, frozen=True):
    """A GenAI evaluation result (a ``gen_ai.evaluation.result`` event or log record).

    Attributes:
        span_id: the span it is attached to: the operation evaluated.
        name: ``gen_ai.evaluation.name``, the metric. "faithfulness"
        score_value: ``gen_ai.evaluation.score.value``, if given.
        score_label: ``gen_ai.evaluation.score.label``, if given. "pass"
        explanation: ``gen_ai.evaluation.explanation``, if given.
        response_id: ``gen_ai.response.id`` of the completion evaluated, if given.
        error_type: ``error.type`` when the evaluation itself failed.
        evidence_id: the document (evidence item) of the span it concerns, when it concerns
            one: ``groundtrace.evaluation.evidence_id`` (model 1.2). "p3"
        document_position: that document's 0-based position in the span's
            ``retrieval.documents``, when known:
            ``groundtrace.evaluation.document_position`` (model 1.2).
    """

    span_id: str
    name: str
    score_value: float | None = None
    score_label: str | None = None
    explanation: str | None = None
    response_id: str | None = None
    error_type: str | None = None
    evidence_id: str | None = None
    document_position: int | None = None


class Trace(_Model, frozen=True):
    """The trace model τ of one request.

    Attributes:
        request: the request (query, case id, app...).
        steps: every span, ordered by start time (then span id).
        evidence: retrieved / reranked evidence R, in step order then rank.
        selected_ids: U, the ids of the evidence actually used (``None`` when no SELECT).
        answer: y (``None`` when the trace has none).
        confidence: c in [0, 1] (``None`` when absent or invalid; see findings).
        cited_ids: cited evidence ids or paths.
        quotes: quoted snippets.
        tool_calls: tool executions in step order.
        llm_calls: model calls in step order.
        replay: link to the original trace when this one is a counterfactual replay.
        entrypoint: replay entry point of the ANSWER step, if captured.
        prompt_evidence: the rendered evidence blocks found in the trace.
        conventions: the span conventions seen, sorted.
        findings: what is missing or inconsistent.
        model_version: :data:`MODEL_VERSION` of the layout.
        evaluations: GenAI evaluation results recorded on the trace's spans (model 1.1;
            after ``model_version`` so that the fields of 1.0 keep their layout).
    """

    request: Request
    steps: tuple[Step, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    selected_ids: tuple[str, ...] | None = None
    answer: str | None = None
    confidence: float | None = None
    cited_ids: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    llm_calls: tuple[LLMCall, ...] = ()
    replay: ReplayLink | None = None
    entrypoint: ReplayEntrypoint | None = None
    prompt_evidence: tuple[PromptEvidence, ...] = ()
    conventions: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    model_version: str = MODEL_VERSION
    evaluations: tuple[Evaluation, ...] = ()

    @property
    def trace_id(self) -> str:
        """Hex trace id (same as ``request.trace_id``)."""
        return self.request.trace_id

    def findings_of(self, kind: str) -> list[Finding]:
        """The findings of one kind."""
        return [f for f in self.findings if f.kind == kind]

    @property
    def incomplete(self) -> Finding | None:
        """Why the trace lacks spans it had, or ``None`` when nothing says so.

        A trace is incomplete when spans of it were on input that could not be read
        (``lost_spans``), when a span's parent is missing (``orphan_span``), when it has no
        root (``no_root``) or when it is the late part of a split trace (``split_trace``).
        An analysis never gives a verdict on an incomplete trace: its case is *not
        evaluable, incomplete trace*.
        """
        found = [f for f in self.findings if f.kind in INCOMPLETE_KINDS]
        lost = [f for f in found if f.kind == FindingKind.LOST_SPANS]
        return next(iter(lost or found), None)

    def to_dict(self) -> dict[str, JSON]:
        """The JSON object of :meth:`to_json` as Python values (lists, dicts, scalars)."""
        result: dict[str, JSON] = msgspec.json.decode(_ENCODER.encode(self))
        return result

    def to_json(self) -> str:
        """Compact JSON text (keys in field order; stable across runs).

        JSON has no NaN or infinities: step attributes already hold them as OTLP/JSON spells
        them (``"NaN"``...); anywhere else (a non-finite score, parameter or metadata value)
        msgspec writes ``null``.
        """
        return _ENCODER.encode(self).decode()

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Trace:
        """Rebuild a trace from :meth:`to_dict` output.

        Raises:
            InputError: the dict does not have the trace-model layout.
        """
        if not isinstance(data, dict):
            raise InputError("a trace must be a JSON object")
        _require_version(data.get("model_version"))
        try:
            return msgspec.convert(data, cls)
        except msgspec.ValidationError as exc:
            raise _layout_error(exc) from None

    @classmethod
    def from_json(cls, text: str | bytes) -> Trace:
        """Rebuild a trace from :meth:`to_json` output.

        Raises:
            InputError: the text is not JSON or not a trace of a supported model version.
        """
        try:
            _require_version(_VERSION.decode(text).model_version)
            return _DECODER.decode(text)
        except msgspec.ValidationError as exc:
            raise _layout_error(exc) from None
        except msgspec.DecodeError as exc:
            raise InputError(f"not JSON: {exc}") from None


class _Versioned(Struct):
    """Only the version of a serialised trace, checked before its layout."""

    model_version: JSON = None


_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(Trace)
_VERSION: Final = msgspec.json.Decoder(_Versioned)


def _require_version(version: JSON) -> None:
    if not isinstance(version, str) or version not in _READABLE_VERSIONS:
        expected = ", ".join(repr(v) for v in sorted(_READABLE_VERSIONS))
        raise InputError(
            f"unsupported trace model version {version!r} (expected one of {expected})",
            field="model_version",
        )


def _layout_error(exc: msgspec.ValidationError) -> InputError:
    """msgspec's ``Expected `float`, got `str` - at `$.evidence[0].score``` as an InputError."""
    message, _, where = str(exc).partition(" - at `")
    return InputError(message, field=where.removesuffix("`") or None)
