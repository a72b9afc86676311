"""The groundtrace trace contract: every attribute key, the action vocabulary, the schema version.

This is the only module in the code base that spells out dotted attribute keys. Everything
else -- the SDK that writes spans, the collectors that read them back and the analyzer --
imports the constants defined here. A test fails on dotted attribute-key literals anywhere else.

Three families of keys are written on every span, so each backend shows what it understands:

* ``groundtrace.*`` -- the lossless contract the analyzer reads (schema :data:`SCHEMA_VERSION`);
* OpenInference (``openinference.span.kind``, ``input.value``, ``retrieval.documents.{i}...``,
  ``llm.*``, ``tool.*``) -- what Arize Phoenix renders natively;
* OpenTelemetry GenAI (``gen_ai.*``, and ``openai.*`` on OpenAI client spans), pinned to
  :data:`GENAI_SEMCONV_VERSION`.

Keys of other conventions that the collectors only *read* (OpenLLMetry/Traceloop, the older
``gen_ai.prompt.{i}`` layout) are declared here too, in their own section.

Usage::

    from groundtrace.sdk import semconv as sc

    span.set_attribute(sc.GT_ACTION, sc.Action.RETRIEVE)
    span.set_attribute(sc.OI_SPAN_KIND, sc.OpenInferenceSpanKind.RETRIEVER)
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

__all__ = [
    "ACTION_TO_GENAI_OPERATION",
    "ACTION_TO_OPENINFERENCE_KIND",
    "CONTENT",
    "ENV_PREFIX",
    "ERROR_TYPE",
    "EVENT_NAME",
    "EXCEPTION_EVENT",
    "EXCEPTION_MESSAGE",
    "EXCEPTION_STACKTRACE",
    "EXCEPTION_TYPE",
    "GENAI_AGENT_DESCRIPTION",
    "GENAI_AGENT_ID",
    "GENAI_AGENT_NAME",
    "GENAI_AGENT_VERSION",
    "GENAI_CONVERSATION_ID",
    "GENAI_DATA_SOURCE_ID",
    "GENAI_EVALUATION_EXPLANATION",
    "GENAI_EVALUATION_NAME",
    "GENAI_EVALUATION_SCORE_LABEL",
    "GENAI_EVALUATION_SCORE_VALUE",
    "GENAI_EVENT_ASSISTANT_MESSAGE",
    "GENAI_EVENT_CHOICE",
    "GENAI_EVENT_EVALUATION_RESULT",
    "GENAI_EVENT_OPERATION_DETAILS",
    "GENAI_EVENT_SYSTEM_MESSAGE",
    "GENAI_EVENT_TOOL_MESSAGE",
    "GENAI_EVENT_USER_MESSAGE",
    "GENAI_INPUT_MESSAGES",
    "GENAI_LEGACY_COMPLETION",
    "GENAI_LEGACY_PROMPT",
    "GENAI_LEGACY_USAGE_COMPLETION_TOKENS",
    "GENAI_LEGACY_USAGE_PROMPT_TOKENS",
    "GENAI_OPENAI_API_BASE",
    "GENAI_OPERATION_NAME",
    "GENAI_OUTPUT_MESSAGES",
    "GENAI_OUTPUT_TYPE",
    "GENAI_PREVIOUS_SCHEMA_URL",
    "GENAI_PREVIOUS_SEMCONV_VERSION",
    "GENAI_PROVIDER_NAME",
    "GENAI_REQUEST_CHOICE_COUNT",
    "GENAI_REQUEST_FREQUENCY_PENALTY",
    "GENAI_REQUEST_MAX_TOKENS",
    "GENAI_REQUEST_MODEL",
    "GENAI_REQUEST_PRESENCE_PENALTY",
    "GENAI_REQUEST_SEED",
    "GENAI_REQUEST_STOP_SEQUENCES",
    "GENAI_REQUEST_STREAM",
    "GENAI_REQUEST_TEMPERATURE",
    "GENAI_REQUEST_TOP_K",
    "GENAI_REQUEST_TOP_P",
    "GENAI_RESPONSE_FINISH_REASONS",
    "GENAI_RESPONSE_ID",
    "GENAI_RESPONSE_MODEL",
    "GENAI_RESPONSE_TIME_TO_FIRST_CHUNK",
    "GENAI_RETRIEVAL_DOCUMENTS",
    "GENAI_RETRIEVAL_QUERY_TEXT",
    "GENAI_RETRIEVAL_TOP_K",
    "GENAI_SCHEMA_URL",
    "GENAI_SEMCONV_VERSION",
    "GENAI_SYSTEM",
    "GENAI_SYSTEM_INSTRUCTIONS",
    "GENAI_TOOL_CALL_ARGUMENTS",
    "GENAI_TOOL_CALL_ID",
    "GENAI_TOOL_CALL_RESULT",
    "GENAI_TOOL_DEFINITIONS",
    "GENAI_TOOL_DESCRIPTION",
    "GENAI_TOOL_NAME",
    "GENAI_TOOL_TYPE",
    "GENAI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GENAI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GENAI_USAGE_INPUT_TOKENS",
    "GENAI_USAGE_OUTPUT_TOKENS",
    "GENAI_USAGE_REASONING_OUTPUT_TOKENS",
    "GENAI_USAGE_TOTAL_TOKENS",
    "GT_ACTION",
    "GT_ANSWER_CITED_IDS",
    "GT_ANSWER_CONFIDENCE",
    "GT_ANSWER_QUOTES",
    "GT_ANSWER_TEXT",
    "GT_APP_NAME",
    "GT_APP_VERSION",
    "GT_CONTENT_CAPTURED",
    "GT_EVALUATION_CASE_ID",
    "GT_EVALUATION_DOCUMENT_POSITION",
    "GT_EVALUATION_EVIDENCE_ATTRIBUTION",
    "GT_EVALUATION_EVIDENCE_ID",
    "GT_EVALUATION_EVIDENCE_ROLE",
    "GT_EVALUATION_GATE_CASE",
    "GT_EVALUATION_JUDGE",
    "GT_EVALUATION_PATH_STATUS",
    "GT_EVIDENCE",
    "GT_EVIDENCE_COUNT",
    "GT_LLM_API",
    "GT_LLM_BASE_URL",
    "GT_LLM_OUTPUT_TEXT",
    "GT_LLM_REQUEST",
    "GT_LLM_STREAM",
    "GT_LLM_STREAM_INCOMPLETE",
    "GT_ORIGIN",
    "GT_PROMPT_EVIDENCE_BLOCK",
    "GT_PROMPT_EVIDENCE_IDS",
    "GT_PROMPT_FORMAT",
    "GT_REDACTED",
    "GT_REPLAY_ENTRYPOINT",
    "GT_REPLAY_EVIDENCE_PARAM",
    "GT_REPLAY_KWARGS",
    "GT_REPLAY_OF",
    "GT_REPLAY_OPERATOR",
    "GT_REPLAY_QUERY_PARAM",
    "GT_REPLAY_REPLACEMENT_ID",
    "GT_REPLAY_TARGET_ID",
    "GT_REQUEST_CASE_ID",
    "GT_REQUEST_QUERY",
    "GT_RETRIEVAL_CHUNKS",
    "GT_RETRIEVAL_K",
    "GT_RETRIEVAL_MODE",
    "GT_RETRIEVAL_QUERY",
    "GT_RETRIEVAL_RETRIEVER",
    "GT_RETRIEVAL_SECTIONS",
    "GT_RETRIEVAL_SOURCE_WORDS",
    "GT_SCHEMA_VERSION",
    "GT_SELECTED_IDS",
    "GT_SESSION_ID",
    "GT_SOURCE_ID",
    "GT_STEP_NAME",
    "GT_TOOL_ARGUMENTS",
    "GT_TOOL_CALL_ID",
    "GT_TOOL_ERROR_TYPE",
    "GT_TOOL_NAME",
    "GT_TOOL_PATHS_READ",
    "GT_TOOL_RESULT_CONTENT",
    "GT_TOOL_RESULT_HASH",
    "GT_TOOL_RESULT_SIZE",
    "GT_TOOL_STATUS",
    "GT_TRUNCATED",
    "GT_USER_ID",
    "LLM_API_TO_OPENAI_TYPE",
    "LLM_IS_STREAMING",
    "LLM_REQUEST_FUNCTIONS",
    "LLM_REQUEST_TYPE",
    "LLM_USAGE_TOTAL_TOKENS",
    "OI_DOCUMENT_CONTENT",
    "OI_DOCUMENT_ID",
    "OI_DOCUMENT_METADATA",
    "OI_DOCUMENT_SCORE",
    "OI_INPUT_MIME_TYPE",
    "OI_INPUT_VALUE",
    "OI_LLM_FINISH_REASON",
    "OI_LLM_INPUT_MESSAGES",
    "OI_LLM_INVOCATION_PARAMETERS",
    "OI_LLM_MODEL_NAME",
    "OI_LLM_OUTPUT_MESSAGES",
    "OI_LLM_PROMPT_TEMPLATE_VARIABLES",
    "OI_LLM_PROVIDER",
    "OI_LLM_SYSTEM",
    "OI_LLM_TOKEN_COUNT_COMPLETION",
    "OI_LLM_TOKEN_COUNT_COMPLETION_REASONING",
    "OI_LLM_TOKEN_COUNT_PROMPT",
    "OI_LLM_TOKEN_COUNT_PROMPT_CACHE_READ",
    "OI_LLM_TOKEN_COUNT_PROMPT_CACHE_WRITE",
    "OI_LLM_TOKEN_COUNT_TOTAL",
    "OI_LLM_TOOLS",
    "OI_MESSAGE_CONTENT",
    "OI_MESSAGE_NAME",
    "OI_MESSAGE_ROLE",
    "OI_MESSAGE_TOOL_CALLS",
    "OI_MESSAGE_TOOL_CALL_ID",
    "OI_METADATA",
    "OI_OUTPUT_MIME_TYPE",
    "OI_OUTPUT_VALUE",
    "OI_PROJECT_NAME",
    "OI_RERANKER_INPUT_DOCUMENTS",
    "OI_RERANKER_MODEL_NAME",
    "OI_RERANKER_OUTPUT_DOCUMENTS",
    "OI_RERANKER_QUERY",
    "OI_RERANKER_TOP_K",
    "OI_RETRIEVAL_DOCUMENTS",
    "OI_SESSION_ID",
    "OI_SPAN_KIND",
    "OI_TAG_TAGS",
    "OI_TOOL_CALL_FUNCTION_ARGUMENTS",
    "OI_TOOL_CALL_FUNCTION_NAME",
    "OI_TOOL_CALL_ID",
    "OI_TOOL_DESCRIPTION",
    "OI_TOOL_ID",
    "OI_TOOL_JSON_SCHEMA",
    "OI_TOOL_NAME",
    "OI_TOOL_PARAMETERS",
    "OI_USER_ID",
    "OPENAI_API_TYPE",
    "OPENAI_REQUEST_SERVICE_TIER",
    "OPENAI_RESPONSE_SERVICE_TIER",
    "OPENAI_RESPONSE_SYSTEM_FINGERPRINT",
    "OPENINFERENCE_SEMCONV_VERSION",
    "ROLE",
    "SCHEMA_URL",
    "SCHEMA_VERSION",
    "SERVER_ADDRESS",
    "SERVER_PORT",
    "SERVICE_NAME",
    "SERVICE_VERSION",
    "SUPPRESS_INSTRUMENTATION_KEY_NAME",
    "TRACELOOP_ENTITY_INPUT",
    "TRACELOOP_ENTITY_NAME",
    "TRACELOOP_ENTITY_OUTPUT",
    "TRACELOOP_SPAN_KIND",
    "TRACELOOP_WORKFLOW_NAME",
    "Action",
    "GenAIConventions",
    "GenAIOperation",
    "LLMApi",
    "OpenAIApiType",
    "OpenInferenceSpanKind",
    "ToolStatus",
    "indexed",
    "nested",
]

#: Version of the ``groundtrace.*`` attribute schema. Written on every root span.
SCHEMA_VERSION: Final = "1.0.0"
#: URL naming the groundtrace attribute schema (the version is also :data:`GT_SCHEMA_VERSION`
#: on every root span). The instrumentation scope carries the OpenTelemetry schema URL of the
#: GenAI set emitted (:data:`GENAI_SCHEMA_URL` / :data:`GENAI_PREVIOUS_SCHEMA_URL`), since an
#: OpenTelemetry schema URL is what backends use to translate attribute names.
SCHEMA_URL: Final = "https://groundtrace.dev/schemas/1.0.0"
#: The current OpenTelemetry GenAI conventions followed: the semantic-conventions-genai
#: project (no tagged release yet), development schema gen-ai-dev/1.42.0-dev.
GENAI_SEMCONV_VERSION: Final = "semantic-conventions-genai gen-ai-dev/1.42.0-dev"
#: Schema URL of the current GenAI set, on the instrumentation scope of every span emitted
#: with it (``latest`` and ``both`` modes, see :class:`GenAIConventions`).
GENAI_SCHEMA_URL: Final = "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev"
#: The previous GenAI set: OpenTelemetry semantic conventions v1.36.0, the last version before
#: the transition plan, what the official GenAI instrumentations still emit by default.
GENAI_PREVIOUS_SEMCONV_VERSION: Final = "semantic-conventions 1.36.0"
#: Schema URL of the previous GenAI set, on the scope of spans emitted with it alone.
GENAI_PREVIOUS_SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.36.0"
#: OpenInference semantic conventions followed (spec as of openinference-semantic-conventions 0.1).
OPENINFERENCE_SEMCONV_VERSION: Final = "openinference-semantic-conventions 0.1"


class Action(StrEnum):
    """The fixed action vocabulary: one span per action (SPEC section 1)."""

    REQUEST = "REQUEST"
    RETRIEVE = "RETRIEVE"
    RERANK = "RERANK"
    SELECT = "SELECT"
    VERIFY = "VERIFY"
    INFER = "INFER"
    ANSWER = "ANSWER"
    TOOL = "TOOL"
    LLM = "LLM"


class OpenInferenceSpanKind(StrEnum):
    """Values of ``openinference.span.kind`` that groundtrace emits or reads (all of them)."""

    CHAIN = "CHAIN"
    RETRIEVER = "RETRIEVER"
    RERANKER = "RERANKER"
    LLM = "LLM"
    TOOL = "TOOL"
    AGENT = "AGENT"
    EMBEDDING = "EMBEDDING"
    GUARDRAIL = "GUARDRAIL"
    EVALUATOR = "EVALUATOR"
    UNKNOWN = "UNKNOWN"
    PROMPT = "PROMPT"
    DECISION = "DECISION"


class GenAIOperation(StrEnum):
    """Values of ``gen_ai.operation.name`` groundtrace writes or reads (gen-ai-dev/1.42.0-dev)."""

    CHAT = "chat"
    TEXT_COMPLETION = "text_completion"
    RETRIEVAL = "retrieval"
    EXECUTE_TOOL = "execute_tool"
    INVOKE_AGENT = "invoke_agent"
    GENERATE_CONTENT = "generate_content"
    EMBEDDINGS = "embeddings"
    CREATE_AGENT = "create_agent"
    INVOKE_WORKFLOW = "invoke_workflow"


class GenAIConventions(StrEnum):
    """Which OpenTelemetry GenAI attribute set the SDK writes (next to groundtrace's and
    OpenInference's keys, which never change); chosen once, when the SDK is configured.

    From ``OTEL_SEMCONV_STABILITY_OPT_IN`` (comma-separated tokens):
    ``gen_ai_latest_experimental``
    -> ``LATEST``; ``gen_ai_latest_experimental/dup`` -> ``BOTH``; ``gen_ai_previous`` ->
    ``PREVIOUS``; no GenAI token -> ``LATEST``, the set groundtrace has always written (it
    never wrote the v1.36.0 layout, so keeping its default, as OpenTelemetry's transition
    plan asks, means the current set).
    """

    #: gen-ai-dev/1.42.0-dev: ``gen_ai.provider.name``, structured message content, retrieval
    #: and tool-execution attributes.
    LATEST = "latest"
    #: semantic conventions v1.36.0: ``gen_ai.system``, no content attributes (v1.36.0 kept
    #: content in events), no retrieval attributes, no tool arguments/result.
    PREVIOUS = "previous"
    #: both sets on every span (for backends that read only the older names).
    BOTH = "both"


class LLMApi(StrEnum):
    """Values of ``groundtrace.llm.api``: which OpenAI API flavour an LLM span called."""

    CHAT_COMPLETIONS = "chat.completions"
    RESPONSES = "responses"


class OpenAIApiType(StrEnum):
    """Values of ``openai.api.type``, by :class:`LLMApi` value (:data:`LLM_API_TO_OPENAI_TYPE`)."""

    CHAT_COMPLETIONS = "chat_completions"
    RESPONSES = "responses"


class ToolStatus(StrEnum):
    """Outcome of a TOOL step."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"


#: OpenInference span kind written for each action.
ACTION_TO_OPENINFERENCE_KIND: Final[dict[Action, OpenInferenceSpanKind]] = {
    Action.REQUEST: OpenInferenceSpanKind.CHAIN,
    Action.RETRIEVE: OpenInferenceSpanKind.RETRIEVER,
    Action.RERANK: OpenInferenceSpanKind.RERANKER,
    Action.SELECT: OpenInferenceSpanKind.CHAIN,
    Action.VERIFY: OpenInferenceSpanKind.CHAIN,
    Action.INFER: OpenInferenceSpanKind.CHAIN,
    Action.ANSWER: OpenInferenceSpanKind.CHAIN,
    Action.TOOL: OpenInferenceSpanKind.TOOL,
    Action.LLM: OpenInferenceSpanKind.LLM,
}

#: ``openai.api.type`` written for each ``groundtrace.llm.api`` value.
LLM_API_TO_OPENAI_TYPE: Final[dict[LLMApi, OpenAIApiType]] = {
    LLMApi.CHAT_COMPLETIONS: OpenAIApiType.CHAT_COMPLETIONS,
    LLMApi.RESPONSES: OpenAIApiType.RESPONSES,
}

#: GenAI operation written for the actions that have one.
ACTION_TO_GENAI_OPERATION: Final[dict[Action, GenAIOperation]] = {
    Action.RETRIEVE: GenAIOperation.RETRIEVAL,
    Action.TOOL: GenAIOperation.EXECUTE_TOOL,
    Action.LLM: GenAIOperation.CHAT,
}

# ---------------------------------------------------------------------------------------------
# groundtrace.* -- the contract the analyzer reads
# ---------------------------------------------------------------------------------------------

#: str -- schema version of the groundtrace attributes, on every root (REQUEST) span. "1.0.0"
GT_SCHEMA_VERSION: Final = "groundtrace.schema_version"
#: str -- the action of this span, one of :class:`Action`. "RETRIEVE"
GT_ACTION: Final = "groundtrace.action"
#: str -- the name the app gave the step (function qualname by default). "bm25_top5"
GT_STEP_NAME: Final = "groundtrace.step.name"

# Request (root span)
#: str -- the user query. "Who directed Jaws?"
GT_REQUEST_QUERY: Final = "groundtrace.request.query"
#: str -- case id when run from a dataset; joins traces to case files. "5a8b57f25542995d1e6f1371"
GT_REQUEST_CASE_ID: Final = "groundtrace.request.case_id"
#: str -- application name (what the release gate compares). "hotpot-rag"
GT_APP_NAME: Final = "groundtrace.app.name"
#: str -- application version. "2026.11.1"
GT_APP_VERSION: Final = "groundtrace.app.version"
#: str -- session id, when the app gives one. "sess-42"
GT_SESSION_ID: Final = "groundtrace.session.id"
#: str -- user id, when the app gives one. "user-7"
GT_USER_ID: Final = "groundtrace.user.id"
#: str -- source id for the multi-source audit. "who-2024"
GT_SOURCE_ID: Final = "groundtrace.source.id"

# Evidence (RETRIEVE / RERANK / SELECT)
#: str (JSON list of evidence objects: id, title, source, rank, score, version, content,
#: content_hash, length, metadata). The lossless evidence list. '[{"id":"d1","rank":1,...}]'
GT_EVIDENCE: Final = "groundtrace.evidence"
#: int -- number of evidence items returned. 5
GT_EVIDENCE_COUNT: Final = "groundtrace.evidence.count"
#: str -- retriever name. "bm25"
GT_RETRIEVAL_RETRIEVER: Final = "groundtrace.retrieval.retriever"
#: int -- requested top-k. 5
GT_RETRIEVAL_K: Final = "groundtrace.retrieval.k"
#: str -- retrieval mode. "full_text" | "hierarchical"
GT_RETRIEVAL_MODE: Final = "groundtrace.retrieval.mode"
#: str -- the query the retriever was given, when it differs from the request query.
GT_RETRIEVAL_QUERY: Final = "groundtrace.retrieval.query"
#: str[] -- SELECT: ids of the evidence actually used (U). ["d1", "d3"]
GT_SELECTED_IDS: Final = "groundtrace.selected.ids"

# Answer (ANSWER)
#: str -- the answer text y. "Steven Spielberg"
GT_ANSWER_TEXT: Final = "groundtrace.answer.text"
#: float in [0, 1] -- self-reported confidence c. 0.82
GT_ANSWER_CONFIDENCE: Final = "groundtrace.answer.confidence"
#: str[] -- cited evidence ids or paths. ["d1"]
GT_ANSWER_CITED_IDS: Final = "groundtrace.answer.cited_ids"
#: str[] -- quoted snippets. ["directed by Steven Spielberg"]
GT_ANSWER_QUOTES: Final = "groundtrace.answer.quotes"
#: str -- importable entry point of a replayable ANSWER step. "examples.hotpot_rag.app:answer"
GT_REPLAY_ENTRYPOINT: Final = "groundtrace.replay.entrypoint"
#: str (JSON) -- keyword arguments of the replayable call other than query and evidence.
GT_REPLAY_KWARGS: Final = "groundtrace.replay.kwargs"
#: str -- parameter name that receives the query in the replayable function. "question"
GT_REPLAY_QUERY_PARAM: Final = "groundtrace.replay.query_param"
#: str -- parameter name that receives the evidence list in the replayable function. "evidence"
GT_REPLAY_EVIDENCE_PARAM: Final = "groundtrace.replay.evidence_param"

# Prompt evidence block (the standard rendering helper; lets the analyzer edit a captured call)
#: str -- the exact evidence block rendered into the prompt. "[d1] Jaws\n..."
GT_PROMPT_EVIDENCE_BLOCK: Final = "groundtrace.prompt.evidence_block"
#: str[] -- evidence ids in the order they were rendered. ["d1", "d2"]
GT_PROMPT_EVIDENCE_IDS: Final = "groundtrace.prompt.evidence_ids"
#: str -- name and version of the rendering format. "groundtrace.chunks/1"
GT_PROMPT_FORMAT: Final = "groundtrace.prompt.format"

# Tool (TOOL)
#: str -- tool name. "read_document"
GT_TOOL_NAME: Final = "groundtrace.tool.name"
#: str -- tool call id (from the model's tool call when there is one). "call_abc"
GT_TOOL_CALL_ID: Final = "groundtrace.tool.call_id"
#: str (JSON object) -- arguments of the call. '{"path": "/docs/a.md"}'
GT_TOOL_ARGUMENTS: Final = "groundtrace.tool.arguments"
#: str -- one of :class:`ToolStatus`. "ok"
GT_TOOL_STATUS: Final = "groundtrace.tool.status"
#: str -- exception type when status is error/timeout. "FileNotFoundError"
GT_TOOL_ERROR_TYPE: Final = "groundtrace.tool.error_type"
#: str[] -- paths or resource ids the tool read. ["/docs/a.md"]
GT_TOOL_PATHS_READ: Final = "groundtrace.tool.paths_read"
#: int -- size of the result in characters. 1834
GT_TOOL_RESULT_SIZE: Final = "groundtrace.tool.result.size"
#: str -- sha256 of the result text, "sha256:<hex>".
GT_TOOL_RESULT_HASH: Final = "groundtrace.tool.result.hash"
#: str -- the result text (content capture on). "Return policy: 30 days..."
GT_TOOL_RESULT_CONTENT: Final = "groundtrace.tool.result.content"

# LLM (LLM): what replay needs, losslessly
#: str (JSON object) -- the request as sent: model, messages, parameters. '{"model": ...}'
GT_LLM_REQUEST: Final = "groundtrace.llm.request"
#: str -- base URL of the endpoint. "http://127.0.0.1:8080/v1"
GT_LLM_BASE_URL: Final = "groundtrace.llm.base_url"
#: str -- API flavour called. "chat.completions" | "responses"
GT_LLM_API: Final = "groundtrace.llm.api"
#: bool -- whether the call streamed.
GT_LLM_STREAM: Final = "groundtrace.llm.stream"
#: bool -- the stream ended before the server finished it (closed early, abandoned or broken
#: off): the output attributes hold only what was received. true
GT_LLM_STREAM_INCOMPLETE: Final = "groundtrace.llm.stream.incomplete"
#: str -- the output text of the first choice. '{"answer": "..."}'
GT_LLM_OUTPUT_TEXT: Final = "groundtrace.llm.output_text"

# Content capture and limits
#: bool -- whether text content was captured on this span.
GT_CONTENT_CAPTURED: Final = "groundtrace.content.captured"
#: str[] -- names of attributes that were truncated by size limits.
GT_TRUNCATED: Final = "groundtrace.truncated"
#: str[] -- names of maskers that fired on this span. ["email"]
GT_REDACTED: Final = "groundtrace.redacted"

# Counterfactual links (analyzer replay)
#: str -- resource attribute of traces groundtrace itself produced ("evaluation"): the monitor
#: never samples them nor counts them in production windows. "evaluation"
GT_ORIGIN: Final = "groundtrace.origin"
#: str -- trace id (hex) of the original trace this one replays.
GT_REPLAY_OF: Final = "groundtrace.replay.of"
#: str -- intervention operator. "REMOVE"
GT_REPLAY_OPERATOR: Final = "groundtrace.replay.operator"
#: str -- id of the target evidence item. "d3"
GT_REPLAY_TARGET_ID: Final = "groundtrace.replay.target_id"
#: str -- id of the replacement evidence item (REPLACE only). "p17"
GT_REPLAY_REPLACEMENT_ID: Final = "groundtrace.replay.replacement_id"

# Hierarchical retrieval (RETRIEVE, multi-source audit)
#: str[] -- ids of the sections a hierarchical retriever chose, best first. ["gpl-3.0:s11"]
GT_RETRIEVAL_SECTIONS: Final = "groundtrace.retrieval.sections"
#: str[] -- ids of the chunks chosen (after fusion and reranking), best first. ["gpl-3.0:c42"]
GT_RETRIEVAL_CHUNKS: Final = "groundtrace.retrieval.chunks"
#: int -- words in the source retrieved from (what decides whole vs hierarchical). 5644
GT_RETRIEVAL_SOURCE_WORDS: Final = "groundtrace.retrieval.source_words"

# ---------------------------------------------------------------------------------------------
# OpenInference
# ---------------------------------------------------------------------------------------------

#: str -- OpenInference span kind, one of :class:`OpenInferenceSpanKind`. "RETRIEVER"
OI_SPAN_KIND: Final = "openinference.span.kind"
#: str (resource attribute) -- Phoenix project the spans are filed under. "hotpot-rag"
OI_PROJECT_NAME: Final = "openinference.project.name"
#: str -- input of the step. "Who directed Jaws?"
OI_INPUT_VALUE: Final = "input.value"
#: str -- mime type of input.value. "application/json"
OI_INPUT_MIME_TYPE: Final = "input.mime_type"
#: str -- output of the step.
OI_OUTPUT_VALUE: Final = "output.value"
#: str -- mime type of output.value.
OI_OUTPUT_MIME_TYPE: Final = "output.mime_type"
#: str -- session id. "sess-42"
OI_SESSION_ID: Final = "session.id"
#: str -- user id.
OI_USER_ID: Final = "user.id"
#: str (JSON) -- free metadata.
OI_METADATA: Final = "metadata"
#: str[] -- tags.
OI_TAG_TAGS: Final = "tag.tags"

#: prefix -- RETRIEVER documents, flattened: ``retrieval.documents.{i}.document.id`` etc.
OI_RETRIEVAL_DOCUMENTS: Final = "retrieval.documents"
#: prefix -- RERANKER input documents, flattened like retrieval.documents.
OI_RERANKER_INPUT_DOCUMENTS: Final = "reranker.input_documents"
#: prefix -- RERANKER output documents, flattened like retrieval.documents.
OI_RERANKER_OUTPUT_DOCUMENTS: Final = "reranker.output_documents"
#: str -- query given to the reranker. "Who directed Jaws?"
OI_RERANKER_QUERY: Final = "reranker.query"
#: str -- reranker model. "cross-encoder/ms-marco-MiniLM-L-6-v2"
OI_RERANKER_MODEL_NAME: Final = "reranker.model_name"
#: int -- documents kept by the reranker. 3
OI_RERANKER_TOP_K: Final = "reranker.top_k"
#: suffix of per-document keys: ``retrieval.documents.{i}.document.id`` etc.
OI_DOCUMENT_ID: Final = "document.id"
#: str -- document text (content capture on). "Jaws is a 1975 film..."
OI_DOCUMENT_CONTENT: Final = "document.content"
#: float -- retrieval or rerank score. 7.21
OI_DOCUMENT_SCORE: Final = "document.score"
#: str (JSON) -- document metadata. '{"title": "Jaws"}'
OI_DOCUMENT_METADATA: Final = "document.metadata"

#: str -- model name. "gemma-3-270m"
OI_LLM_MODEL_NAME: Final = "llm.model_name"
#: str -- hosting provider. "openai"
OI_LLM_PROVIDER: Final = "llm.provider"
#: str -- AI product / API family. "openai"
OI_LLM_SYSTEM: Final = "llm.system"
#: str (JSON) -- request parameters. '{"temperature": 0}'
OI_LLM_INVOCATION_PARAMETERS: Final = "llm.invocation_parameters"
#: prefix -- input messages: ``llm.input_messages.{i}.message.role`` etc.
OI_LLM_INPUT_MESSAGES: Final = "llm.input_messages"
#: prefix -- output messages: ``llm.output_messages.{i}.message.content`` etc.
OI_LLM_OUTPUT_MESSAGES: Final = "llm.output_messages"
#: prefix -- tool schemas offered: ``llm.tools.{i}.tool.json_schema``.
OI_LLM_TOOLS: Final = "llm.tools"
#: str (JSON object) -- prompt template variables; Phoenix parses it into a nested object
#: (read by the Phoenix puller only). '{"question": "..."}'
OI_LLM_PROMPT_TEMPLATE_VARIABLES: Final = "llm.prompt_template.variables"
#: int -- prompt tokens. 412
OI_LLM_TOKEN_COUNT_PROMPT: Final = "llm.token_count.prompt"
#: int -- completion tokens. 37
OI_LLM_TOKEN_COUNT_COMPLETION: Final = "llm.token_count.completion"
#: int -- total tokens. 449
OI_LLM_TOKEN_COUNT_TOTAL: Final = "llm.token_count.total"
#: int -- prompt tokens read from the provider's cache. 256
OI_LLM_TOKEN_COUNT_PROMPT_CACHE_READ: Final = "llm.token_count.prompt_details.cache_read"
#: int -- prompt tokens written to the provider's cache (read only). 64
OI_LLM_TOKEN_COUNT_PROMPT_CACHE_WRITE: Final = "llm.token_count.prompt_details.cache_write"
#: int -- completion tokens spent on reasoning. 128
OI_LLM_TOKEN_COUNT_COMPLETION_REASONING: Final = "llm.token_count.completion_details.reasoning"
#: suffix keys of a flattened message: ``llm.input_messages.{i}.message.role`` etc.
OI_MESSAGE_ROLE: Final = "message.role"
#: str -- suffix: message text (content capture on). "Answer briefly."
OI_MESSAGE_CONTENT: Final = "message.content"
#: str -- suffix: message author name or function name. "search"
OI_MESSAGE_NAME: Final = "message.name"
#: str -- suffix: id of the tool call a tool message answers. "call_abc"
OI_MESSAGE_TOOL_CALL_ID: Final = "message.tool_call_id"
#: prefix -- suffix: tool calls of an assistant message, indexed.
OI_MESSAGE_TOOL_CALLS: Final = "message.tool_calls"
#: suffix keys of a flattened tool call: ``...message.tool_calls.{j}.tool_call.id`` etc.
OI_TOOL_CALL_ID: Final = "tool_call.id"
#: str -- suffix: called function name. "read_document"
OI_TOOL_CALL_FUNCTION_NAME: Final = "tool_call.function.name"
#: str (JSON) -- suffix: call arguments. '{"path": "a.md"}'
OI_TOOL_CALL_FUNCTION_ARGUMENTS: Final = "tool_call.function.arguments"

#: str -- TOOL span: tool name. "read_document"
OI_TOOL_NAME: Final = "tool.name"
#: str -- TOOL span: tool description. "Read a file"
OI_TOOL_DESCRIPTION: Final = "tool.description"
#: str (JSON) -- TOOL span: parameters schema or arguments. '{"path": "a.md"}'
OI_TOOL_PARAMETERS: Final = "tool.parameters"
#: str -- TOOL span: tool call id. "call_abc"
OI_TOOL_ID: Final = "tool.id"
#: str (JSON) -- suffix of ``llm.tools.{i}.tool.json_schema``: one tool definition as sent.
#: '{"type": "function", "function": {"name": "get_weather", ...}}'
OI_TOOL_JSON_SCHEMA: Final = "tool.json_schema"

# ---------------------------------------------------------------------------------------------
# OpenTelemetry GenAI (semantic-conventions-genai gen-ai-dev/1.42.0-dev, and v1.36.0)
# ---------------------------------------------------------------------------------------------

#: str -- GenAI operation, one of :class:`GenAIOperation`. "chat"
GENAI_OPERATION_NAME: Final = "gen_ai.operation.name"
#: str -- GenAI provider. "openai"
GENAI_PROVIDER_NAME: Final = "gen_ai.provider.name"
#: str -- predecessor of gen_ai.provider.name (v1.36.0); written with the previous set. "openai"
GENAI_SYSTEM: Final = "gen_ai.system"
#: str -- model requested. "gpt-4o-mini"
GENAI_REQUEST_MODEL: Final = "gen_ai.request.model"
#: float -- sampling temperature. 0.0
GENAI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
#: float -- nucleus sampling mass. 1.0
GENAI_REQUEST_TOP_P: Final = "gen_ai.request.top_p"
#: int -- maximum output tokens. 256
GENAI_REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
#: int -- sampling seed. 42
GENAI_REQUEST_SEED: Final = "gen_ai.request.seed"
#: str[] -- stop sequences. ["\n\n"]
GENAI_REQUEST_STOP_SEQUENCES: Final = "gen_ai.request.stop_sequences"
#: float -- frequency penalty. 0.0
GENAI_REQUEST_FREQUENCY_PENALTY: Final = "gen_ai.request.frequency_penalty"
#: float -- presence penalty. 0.0
GENAI_REQUEST_PRESENCE_PENALTY: Final = "gen_ai.request.presence_penalty"
#: int -- number of choices requested (n). 1
GENAI_REQUEST_CHOICE_COUNT: Final = "gen_ai.request.choice.count"
#: bool -- the request streams (set only when it does; current set). true
GENAI_REQUEST_STREAM: Final = "gen_ai.request.stream"
#: str -- requested output type. "json"
GENAI_OUTPUT_TYPE: Final = "gen_ai.output.type"
#: str -- provider response id. "chatcmpl-123"
GENAI_RESPONSE_ID: Final = "gen_ai.response.id"
#: str -- model that answered. "gpt-4o-mini-2024-07-18"
GENAI_RESPONSE_MODEL: Final = "gen_ai.response.model"
#: str[] -- finish reason per choice. ["stop"]
GENAI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
#: int -- input tokens. 412
GENAI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
#: int -- output tokens. 37
GENAI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
#: int -- total tokens (read only; written by OpenLLMetry). 9
GENAI_USAGE_TOTAL_TOKENS: Final = "gen_ai.usage.total_tokens"
#: str -- base URL of the OpenAI endpoint (read only; written by OpenLLMetry).
GENAI_OPENAI_API_BASE: Final = "gen_ai.openai.api_base"
#: opt-in (content capture): JSON of the input messages.
GENAI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
#: opt-in (content capture): JSON of the output messages.
GENAI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
#: str (JSON) -- opt-in (content capture): system instructions.
GENAI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
#: str (JSON) -- tool definitions offered to the model.
GENAI_TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
#: str -- conversation / session id. "sess-42"
GENAI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
#: str -- agent name. "support-bot"
GENAI_AGENT_NAME: Final = "gen_ai.agent.name"
#: str -- executed tool name. "read_document"
GENAI_TOOL_NAME: Final = "gen_ai.tool.name"
#: str -- tool call id. "call_abc"
GENAI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
#: str -- tool type. "function"
GENAI_TOOL_TYPE: Final = "gen_ai.tool.type"
#: str -- tool description. "Read a file"
GENAI_TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
#: opt-in: JSON arguments of a tool execution.
GENAI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
#: opt-in: JSON result of a tool execution.
GENAI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
#: str -- retrieval data source id. "hotpot-wiki"
GENAI_DATA_SOURCE_ID: Final = "gen_ai.data_source.id"
#: int -- read only: groundtrace's earlier name of gen_ai.request.top_k (no longer written). 5
GENAI_RETRIEVAL_TOP_K: Final = "gen_ai.retrieval.top_k"
#: opt-in: JSON list of {id, score} of the retrieved documents.
GENAI_RETRIEVAL_DOCUMENTS: Final = "gen_ai.retrieval.documents"
#: opt-in: the retrieval query text.
GENAI_RETRIEVAL_QUERY_TEXT: Final = "gen_ai.retrieval.query.text"
#: float -- documents requested from a retriever (on retrieval spans) or the top-k sampling
#: setting of a model call; a double in the registry, so written as a float. 5.0
GENAI_REQUEST_TOP_K: Final = "gen_ai.request.top_k"
#: int -- input tokens served from a provider-managed cache (part of the input tokens). 256
GENAI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
#: int -- input tokens written to a provider-managed cache (read only: OpenAI does not report
#: it). 64
GENAI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
#: int -- output tokens spent on reasoning (part of the output tokens). 128
GENAI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
#: float -- seconds from issuing a streaming request to its first chunk (current set). 0.21
GENAI_RESPONSE_TIME_TO_FIRST_CHUNK: Final = "gen_ai.response.time_to_first_chunk"
#: str -- agent id, when the app gives one. "asst_5j66"
GENAI_AGENT_ID: Final = "gen_ai.agent.id"
#: str -- agent description. "Answers questions from the handbook"
GENAI_AGENT_DESCRIPTION: Final = "gen_ai.agent.description"
#: str -- agent version. "1.0.0"
GENAI_AGENT_VERSION: Final = "gen_ai.agent.version"

# OpenAI-specific attributes (registry.openai; on OpenAI client spans of the current set)
#: str -- the API called, one of :class:`OpenAIApiType`. "chat_completions"
OPENAI_API_TYPE: Final = "openai.api.type"
#: str -- service tier requested, when the request names one other than "auto". "default"
OPENAI_REQUEST_SERVICE_TIER: Final = "openai.request.service_tier"
#: str -- service tier that served the response. "default"
OPENAI_RESPONSE_SERVICE_TIER: Final = "openai.response.service_tier"
#: str -- fingerprint of the backend configuration that answered. "fp_44709d6fcb"
OPENAI_RESPONSE_SYSTEM_FINGERPRINT: Final = "openai.response.system_fingerprint"

# GenAI evaluation results (the gen_ai.evaluation.result event / log record)
#: str -- name of the evaluation metric. "faithfulness"
GENAI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"
#: float -- the score. 0.83
GENAI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
#: str -- human-readable label of the score. "pass"
GENAI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
#: str -- free-form explanation of the score. "The answer cites d1."
GENAI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"

# General OTel keys used alongside GenAI spans
#: str -- error class on a failed operation. "TimeoutError"
ERROR_TYPE: Final = "error.type"
#: event name -- an exception raised by a step (OTel exception conventions).
EXCEPTION_EVENT: Final = "exception"
#: str -- exception event: the exception's class, module-qualified. "json.JSONDecodeError"
EXCEPTION_TYPE: Final = "exception.type"
#: str -- exception event: its message, always masked (recorded only when ``exceptions``
#: content is captured). "bad id"
EXCEPTION_MESSAGE: Final = "exception.message"
#: str -- exception event: the formatted traceback, always masked (recorded only when
#: ``exceptions`` content is captured).
EXCEPTION_STACKTRACE: Final = "exception.stacktrace"
#: str -- server host of a model call. "127.0.0.1"
SERVER_ADDRESS: Final = "server.address"
#: int -- server port of a model call. 8080
SERVER_PORT: Final = "server.port"
#: str -- resource: service name. "hotpot-rag"
SERVICE_NAME: Final = "service.name"
#: str -- resource: service version (the app version). "2026.11.1"
SERVICE_VERSION: Final = "service.version"

# ---------------------------------------------------------------------------------------------
# Read-only keys of other conventions (normalised by the collectors)
# ---------------------------------------------------------------------------------------------

#: older GenAI layout / OpenLLMetry: ``gen_ai.prompt.{i}.role`` / ``.content``
GENAI_LEGACY_PROMPT: Final = "gen_ai.prompt"
#: older GenAI layout / OpenLLMetry: ``gen_ai.completion.{i}.role`` / ``.content``
GENAI_LEGACY_COMPLETION: Final = "gen_ai.completion"
#: older GenAI usage names
GENAI_LEGACY_USAGE_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"
#: int -- read only: older GenAI name of output tokens. 37
GENAI_LEGACY_USAGE_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"
#: str -- read only: OpenLLMetry span kind. "workflow"
TRACELOOP_SPAN_KIND: Final = "traceloop.span.kind"
#: str -- read only: OpenLLMetry entity name. "search"
TRACELOOP_ENTITY_NAME: Final = "traceloop.entity.name"
#: str (JSON) -- read only: OpenLLMetry entity input.
TRACELOOP_ENTITY_INPUT: Final = "traceloop.entity.input"
#: str (JSON) -- read only: OpenLLMetry entity output.
TRACELOOP_ENTITY_OUTPUT: Final = "traceloop.entity.output"
#: str -- read only: OpenLLMetry workflow name. "rag"
TRACELOOP_WORKFLOW_NAME: Final = "traceloop.workflow.name"
#: str -- read only: OpenLLMetry request type. "chat"
LLM_REQUEST_TYPE: Final = "llm.request.type"
#: int -- read only: OpenLLMetry total tokens. 449
LLM_USAGE_TOTAL_TOKENS: Final = "llm.usage.total_tokens"
#: bool -- read only: OpenLLMetry streaming flag.
LLM_IS_STREAMING: Final = "llm.is_streaming"
#: prefix -- read only: OpenLLMetry functions offered, indexed.
LLM_REQUEST_FUNCTIONS: Final = "llm.request.functions"

# GenAI span-event names (read only; not attribute keys, declared here so nothing else spells them)
#: event carrying gen_ai.input.messages / gen_ai.output.messages on the span (newer layout).
GENAI_EVENT_OPERATION_DETAILS: Final = "gen_ai.client.inference.operation.details"
#: older per-message events; their ``content`` attribute holds the message text.
GENAI_EVENT_SYSTEM_MESSAGE: Final = "gen_ai.system.message"
#: event name -- read only: older GenAI user-message event.
GENAI_EVENT_USER_MESSAGE: Final = "gen_ai.user.message"
#: event name -- read only: older GenAI assistant-message event.
GENAI_EVENT_ASSISTANT_MESSAGE: Final = "gen_ai.assistant.message"
#: event name -- read only: older GenAI tool-message event.
GENAI_EVENT_TOOL_MESSAGE: Final = "gen_ai.tool.message"
#: event name -- read only: older GenAI choice event.
GENAI_EVENT_CHOICE: Final = "gen_ai.choice"

# Suffix segments used when flattening indexed keys (not attribute keys by themselves)
#: str -- suffix segment ``role`` of flattened message keys (not a key by itself).
ROLE: Final = "role"
#: str -- suffix segment ``content`` of flattened message keys (not a key by itself).
CONTENT: Final = "content"


def indexed(prefix: str, index: int, suffix: str) -> str:
    """Build a flattened, indexed key such as ``retrieval.documents.0.document.id``."""
    return f"{prefix}.{index}.{suffix}"


def nested(prefix: str, index: int, middle: str, sub_index: int, suffix: str) -> str:
    """Doubly indexed key, e.g. ``llm.output_messages.0.message.tool_calls.1.tool_call.id``."""
    return f"{prefix}.{index}.{middle}.{sub_index}.{suffix}"


# OTel resource / env var names are not attribute keys but live here so nothing else spells them.
ENV_PREFIX: Final = "GROUNDTRACE_"
#: context key set by OTel to suppress instrumentation (honoured by decorators and instrumentors).
SUPPRESS_INSTRUMENTATION_KEY_NAME: Final = "suppress_instrumentation"

# Keys read from other conventions, added with the readers of their current versions
#: str -- read only: OpenInference finish reason of the (first) choice. "stop"
OI_LLM_FINISH_REASON: Final = "llm.finish_reason"

# Evaluation results written back to the backend (``--write-back``): the GenAI
# ``gen_ai.evaluation.result`` event as an OTLP log record (with the GENAI_EVALUATION_* keys
# above), and Phoenix span annotations.
#: event name -- the GenAI evaluation-result event (the log record's event name).
GENAI_EVENT_EVALUATION_RESULT: Final = "gen_ai.evaluation.result"
#: str -- evaluation: the case evaluated (a groundtrace case id). "q17"
GT_EVALUATION_CASE_ID: Final = "groundtrace.evaluation.case_id"
#: str -- evaluation: the evidence item an evidence-role result concerns. "p3"
GT_EVALUATION_EVIDENCE_ID: Final = "groundtrace.evaluation.evidence_id"
#: int -- evaluation: 0-based position of that item in its step's ``retrieval.documents``. 2
GT_EVALUATION_DOCUMENT_POSITION: Final = "groundtrace.evaluation.document_position"
#: evaluation name -- the gate's case decision (label: the decision, explanation: reasons;
#: score: promote 1.0, manual_review 0.5, block 0.0, none when not_evaluable).
GT_EVALUATION_GATE_CASE: Final = "groundtrace.gate.case"
#: evaluation name -- the path status of a case (label: the status; score: pass 1.0, a failed
#: status 0.0, none when not_required or not_applicable).
GT_EVALUATION_PATH_STATUS: Final = "groundtrace.paths.status"
#: evaluation name prefix -- a judge metric: ``groundtrace.judge.<metric>``.
GT_EVALUATION_JUDGE: Final = "groundtrace.judge"
#: evaluation name -- the roles of one evidence item (label: the roles, comma-separated; score:
#: 0.0 with a harmful role, else 1.0 with a helpful one, else 0.5; none when not evaluable).
GT_EVALUATION_EVIDENCE_ROLE: Final = "groundtrace.evidence.role"
#: evaluation name -- the attribution of one answer to one evidence item (score: how much the
#: answer's log-probability, in nats, rests on the item; explanation: tier, method, rank).
GT_EVALUATION_EVIDENCE_ATTRIBUTION: Final = "groundtrace.evidence.attribution"

# OTLP log records (GenAI events sent as log records)
#: str -- log record attribute naming the event, in logs written before OTLP had an
#: ``event_name`` field (read only). "gen_ai.choice"
EVENT_NAME: Final = "event.name"
