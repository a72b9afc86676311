"""Every decorator on sync, async, generator and async-generator functions; nesting; names."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from opentelemetry import trace

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc

from .conftest import APP_NAME, APP_VERSION, Traces

DECORATORS: dict[str, Callable[..., Any]] = {
    "REQUEST": gt.request,
    "RETRIEVE": gt.retrieve,
    "RERANK": gt.rerank,
    "SELECT": gt.select,
    "VERIFY": gt.verify,
    "INFER": gt.infer,
    "ANSWER": gt.answer,
    "TOOL": gt.tool,
}
RESULT = ["a", "b"]


def _kinds(deco: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    def sync_fn(query: str) -> list[str]:
        return list(RESULT)

    async def async_fn(query: str) -> list[str]:
        await asyncio.sleep(0)
        return list(RESULT)

    def gen_fn(query: str) -> Iterator[str]:
        yield from RESULT

    async def agen_fn(query: str) -> AsyncIterator[str]:
        for item in RESULT:
            await asyncio.sleep(0)
            yield item

    return {
        "sync": deco(sync_fn),
        "async": deco(async_fn),
        "gen": deco(gen_fn),
        "agen": deco(agen_fn),
    }


async def _collect(agen: AsyncIterator[str]) -> list[str]:
    return [item async for item in agen]


def _call(kind: str, fn: Callable[..., Any]) -> Any:
    if kind == "sync":
        return fn("q?")
    if kind == "async":
        return asyncio.run(fn("q?"))
    if kind == "gen":
        return list(fn("q?"))
    return asyncio.run(_collect(fn("q?")))


@pytest.mark.parametrize("kind", ["sync", "async", "gen", "agen"])
@pytest.mark.parametrize("action", list(DECORATORS))
@pytest.mark.parametrize("bare", [True, False])
def test_every_decorator_every_kind(traces: Traces, action: str, kind: str, bare: bool) -> None:
    deco = DECORATORS[action]
    fn = _kinds(deco if bare else deco(name="custom"))[kind]
    assert _call(kind, fn) == RESULT
    span = traces.one(action)
    attrs = span.attributes or {}
    assert attrs[sc.GT_ACTION] == action
    assert attrs[sc.OI_SPAN_KIND] == sc.ACTION_TO_OPENINFERENCE_KIND[sc.Action(action)].value
    expected_step = "custom" if not bare else f"{kind}_fn"
    assert str(attrs[sc.GT_STEP_NAME]).endswith(expected_step)
    if action == "TOOL":
        assert span.name == f"execute_tool {expected_step}"
        assert attrs[sc.GT_TOOL_STATUS] == "ok"
    else:
        assert span.name == expected_step
    assert span.status.status_code is trace.StatusCode.UNSET
    assert span.end_time is not None


def test_decorated_function_keeps_metadata() -> None:
    @gt.retrieve(retriever="bm25")
    def search(query: str) -> list[str]:
        """Search the corpus."""
        return []

    assert search.__name__ == "search"
    assert search.__doc__ == "Search the corpus."


def test_nesting_request_steps(traces: Traces) -> None:
    @gt.retrieve(retriever="bm25", k=2)
    def search(query: str) -> list[dict[str, Any]]:
        return [{"id": "d1", "content": "x"}, {"id": "d2", "content": "y"}]

    @gt.answer
    def respond(question: str, evidence: list[dict[str, Any]]) -> str:
        return "yes"

    @gt.request
    def handle(question: str) -> str:
        return respond(question, search(question))

    assert handle("Is it?") == "yes"
    root = traces.one("REQUEST")
    retrieval = traces.by_name("retrieval bm25")
    ans = traces.one("ANSWER")
    assert root.parent is None
    assert retrieval.parent is not None and retrieval.parent.span_id == root.context.span_id
    assert ans.parent is not None and ans.parent.span_id == root.context.span_id
    assert len({s.context.trace_id for s in traces.spans()}) == 1


def test_nesting_survives_asyncio_tasks(traces: Traces) -> None:
    @gt.retrieve
    async def search(query: str) -> list[str]:
        await asyncio.sleep(0)
        return [query]

    @gt.request
    async def handle(question: str) -> list[list[str]]:
        tasks = [asyncio.create_task(search(f"{question}{i}")) for i in range(3)]
        return list(await asyncio.gather(*tasks))

    assert asyncio.run(handle("q")) == [["q0"], ["q1"], ["q2"]]
    root = traces.one("REQUEST")
    children = [s for s in traces.spans() if s.attributes.get(sc.GT_ACTION) == "RETRIEVE"]
    assert len(children) == 3
    assert all(c.parent is not None and c.parent.span_id == root.context.span_id for c in children)


def test_async_generator_nesting(traces: Traces) -> None:
    tracer = traces.provider.get_tracer("test")

    @gt.tool
    async def lookup(key: str) -> str:
        return key.upper()

    @gt.retrieve
    async def stream(query: str) -> AsyncIterator[str]:
        for key in ("a", "b"):
            yield await lookup(key)  # inside the generator body: child of RETRIEVE

    @gt.request
    async def handle(question: str) -> list[str]:
        out = []
        async for item in stream(question):
            with tracer.start_as_current_span(f"consume {item}"):  # the consumer's own work
                out.append(item)
        return out

    assert asyncio.run(handle("q")) == ["A", "B"]
    root = traces.one("REQUEST")
    retrieve_span = traces.one("RETRIEVE")
    for tool_span in [s for s in traces.spans() if s.attributes.get(sc.GT_ACTION) == "TOOL"]:
        assert tool_span.parent is not None
        assert tool_span.parent.span_id == retrieve_span.context.span_id
    for name in ("consume A", "consume B"):
        consumer = traces.by_name(name)
        assert consumer.parent is not None and consumer.parent.span_id == root.context.span_id


def test_request_root_attributes(traces: Traces) -> None:
    @gt.request
    def handle(question: str, case_id: str | None = None, session_id: str = "") -> str:
        return "done"

    handle("Who directed Jaws?", case_id="c-1", session_id="s-9")
    attrs = traces.one("REQUEST").attributes
    assert attrs[sc.GT_SCHEMA_VERSION] == sc.SCHEMA_VERSION
    assert attrs[sc.GT_REQUEST_QUERY] == "Who directed Jaws?"
    assert attrs[sc.OI_INPUT_VALUE] == "Who directed Jaws?"
    assert attrs[sc.GT_REQUEST_CASE_ID] == "c-1"
    assert attrs[sc.GT_SESSION_ID] == "s-9"
    assert attrs[sc.OI_SESSION_ID] == "s-9"
    assert attrs[sc.GT_APP_NAME] == APP_NAME
    assert attrs[sc.GT_APP_VERSION] == APP_VERSION
    assert attrs[sc.OI_OUTPUT_VALUE] == "done"


def test_request_options_override_resource(traces: Traces) -> None:
    @gt.request(app_name="rag", app_version="9", query_param="q", source_id="who-2024")
    def handle(prefix: str, q: str, user_id: str) -> None:
        return None

    handle("ignored", "the query", user_id="u-1")
    attrs = traces.one("REQUEST").attributes
    assert attrs[sc.GT_APP_NAME] == "rag"
    assert attrs[sc.GT_APP_VERSION] == "9"
    assert attrs[sc.GT_REQUEST_QUERY] == "the query"
    assert attrs[sc.GT_SOURCE_ID] == "who-2024"
    assert attrs[sc.GT_USER_ID] == "u-1"


def test_step_root_without_request_carries_schema_version(traces: Traces) -> None:
    @gt.retrieve
    def search(query: str) -> list[str]:
        return []

    search("q")
    assert traces.one("RETRIEVE").attributes[sc.GT_SCHEMA_VERSION] == sc.SCHEMA_VERSION


def test_genai_span_names_and_attributes(traces: Traces) -> None:
    @gt.retrieve(retriever="bm25", k=5, mode="full_text")
    def search(query: str) -> list[str]:
        return ["x"]

    @gt.tool(name="read_document")
    def read(path: str) -> str:
        """Read one document."""
        return "text"

    search("q")
    read("/docs/a.md")
    r = traces.by_name("retrieval bm25").attributes
    assert r[sc.GENAI_OPERATION_NAME] == "retrieval"
    assert r[sc.GENAI_REQUEST_TOP_K] == 5
    assert r[sc.GENAI_DATA_SOURCE_ID] == "bm25"
    assert r[sc.GT_RETRIEVAL_K] == 5
    assert r[sc.GT_RETRIEVAL_MODE] == "full_text"
    assert r[sc.GENAI_RETRIEVAL_QUERY_TEXT] == "q"
    t = traces.by_name("execute_tool read_document").attributes
    assert t[sc.GENAI_OPERATION_NAME] == "execute_tool"
    assert t[sc.GENAI_TOOL_NAME] == "read_document"
    assert t[sc.OI_TOOL_NAME] == "read_document"
    assert t[sc.OI_TOOL_DESCRIPTION] == "Read one document."
    schema = json.loads(str(t[sc.OI_TOOL_PARAMETERS]))
    assert schema["properties"] == {"path": {"type": "string"}}
    assert schema["required"] == ["path"]


@gt.answer(replayable=True)
def replayable_answer(question: str, evidence: list[str], *, style: str = "short") -> str:
    return f"{question}:{len(evidence)}:{style}"


def test_replayable_answer_records_importable_entrypoint(traces: Traces) -> None:
    assert (
        replayable_answer(
            "q",
            ["a", "b"],
            style="long",
        )
        == "q:2:long"
    )
    attrs = traces.one("ANSWER").attributes
    module, qualname = str(attrs[sc.GT_REPLAY_ENTRYPOINT]).split(":")
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    assert target is replayable_answer
    assert attrs[sc.GT_REPLAY_QUERY_PARAM] == "question"
    assert attrs[sc.GT_REPLAY_EVIDENCE_PARAM] == "evidence"
    assert json.loads(str(attrs[sc.GT_REPLAY_KWARGS])) == {"style": "long"}


@gt.answer(replayable=True)
def replayable_plain(question: str, evidence: list[str]) -> str:
    return question


@gt.answer(replayable=True)
def replayable_open(question: str, evidence: list[str], **options: object) -> str:
    return question


def test_replay_kwargs_of_functions_with_and_without_extra_parameters(traces: Traces) -> None:
    replayable_plain("q", evidence=["a"])
    replayable_open("q", ["a"], tone="dry")
    plain, open_ = traces.by_name("replayable_plain"), traces.by_name("replayable_open")
    assert (plain.attributes or {})[sc.GT_REPLAY_KWARGS] == "{}"
    assert json.loads(str((open_.attributes or {})[sc.GT_REPLAY_KWARGS])) == {"tone": "dry"}


def test_replayable_with_explicit_params_skips_unjsonable_kwargs(traces: Traces) -> None:
    @gt.answer(replayable=True, query_param="q", evidence_param="docs")
    def respond(client: object, q: str, docs: list[str], temperature: float = 0.0) -> str:
        return "a"

    respond(object(), "q", [], temperature=0.5)
    attrs = traces.one("ANSWER").attributes
    # defined inside a function: not importable, so no entry point is claimed
    assert sc.GT_REPLAY_ENTRYPOINT not in attrs


def test_context_manager_forms(traces: Traces) -> None:
    with gt.request_context(query="q?", case_id="c-7") as root:
        with gt.step(gt.Action.RETRIEVE, retriever="bm25", query="q?") as s:
            s.record_evidence([{"id": "d1", "content": "text"}])
        with gt.step("SELECT") as s:
            s.record_selected(["d1"])
        with gt.step(gt.Action.ANSWER) as s:
            s.record_answer({"answer": "A", "confidence": 0.5, "used_chunks": ["d1"]})
        assert root.recording
    req = traces.one("REQUEST")
    assert req.attributes[sc.GT_REQUEST_CASE_ID] == "c-7"
    assert req.attributes[sc.GT_REQUEST_QUERY] == "q?"
    ret = traces.by_name("retrieval bm25")
    assert ret.parent is not None and ret.parent.span_id == req.context.span_id
    assert json.loads(str(ret.attributes[sc.GT_EVIDENCE]))[0]["id"] == "d1"
    assert ret.attributes[sc.GT_RETRIEVAL_QUERY] == "q?"
    assert tuple(traces.one("SELECT").attributes[sc.GT_SELECTED_IDS]) == ("d1",)
    ans = traces.one("ANSWER").attributes
    assert ans[sc.GT_ANSWER_TEXT] == "A"
    assert ans[sc.GT_ANSWER_CONFIDENCE] == 0.5


def test_async_context_manager_and_tool_step(traces: Traces) -> None:
    async def run() -> None:
        async with gt.request_context(query="q"):
            async with gt.step(
                gt.Action.TOOL, name="read_document", arguments={"path": "/a"}, call_id="c1"
            ) as s:
                s.record_tool_result("content", paths_read=("/a",))

    asyncio.run(run())
    tool_span = traces.by_name("execute_tool read_document")
    attrs = tool_span.attributes
    assert attrs[sc.GT_TOOL_CALL_ID] == "c1"
    assert json.loads(str(attrs[sc.GT_TOOL_ARGUMENTS])) == {"path": "/a"}
    assert tuple(attrs[sc.GT_TOOL_PATHS_READ]) == ("/a",)
    assert tool_span.parent is not None
    assert tool_span.parent.span_id == traces.one("REQUEST").context.span_id


def test_method_decorators_drop_self(traces: Traces) -> None:
    class Retriever:
        @gt.retrieve(retriever="bm25")
        def search(self, query: str) -> list[str]:
            return [query]

        @gt.tool
        def read(self, path: str) -> str:
            return path

    r = Retriever()
    assert r.search("q") == ["q"]
    assert r.read("/p") == "/p"
    assert traces.by_name("retrieval bm25").attributes[sc.GT_RETRIEVAL_QUERY] == "q"
    args = json.loads(str(traces.one("TOOL").attributes[sc.GT_TOOL_ARGUMENTS]))
    assert args == {"path": "/p"}
