"""A recorded trace becomes an attribution context: the answer call's prompt, the evidence
found in it (in prompt order), the recorded answer and the reply prefix before it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from groundtrace.analyzer.attribution._context import AblationContext, Mask
from groundtrace.analyzer.attribution._methods import leave_one_out
from groundtrace.analyzer.attribution._traces import trace_context
from groundtrace.analyzer.errors import InputError
from groundtrace.collectors import ReadReport, Trace, read_traces
from groundtrace.collectors.model import Evidence, LLMCall, Message, Request, RequestedToolCall

PROMPT = (
    "Answer from the evidence.\n[p2] Berth seven has a charted depth of twelve metres.\n"
    "[p1] Pilots board at the Eastern buoy.\nQuestion: how deep is berth seven?"
)


def _trace(**changes: object) -> Trace:
    fields: dict[str, object] = {
        "request": Request(trace_id="t1", query="how deep is berth seven?"),
        "evidence": (
            Evidence("p1", "s1", "RETRIEVE", rank=1, content="Pilots board at the Eastern buoy."),
            Evidence("p2", "s1", "RETRIEVE", rank=2,
                     content="Berth seven has a charted depth of twelve metres."),
            Evidence("p3", "s1", "RETRIEVE", rank=3, content="Not shown to the model."),
        ),
        "answer": "twelve metres",
        "llm_calls": (
            LLMCall("s2", messages=(Message("user", PROMPT),),
                    output_text='{"answer": "twelve metres", "used_chunks": ["p2"]}'),
        ),
    }  # fmt: skip
    fields.update(changes)
    return Trace(**fields)  # type: ignore[arg-type]


def test_a_trace_gives_its_prompt_sources_answer_and_reply_prefix() -> None:
    context = trace_context(_trace())
    assert [s.id for s in context.sources] == ["p2", "p1"]  # prompt order; p3 not shown
    assert context.answer == "twelve metres"
    assert context.prefix == '{"answer": "'
    kept = context.render((False, True))[0]["content"]
    assert "twelve" not in kept and "Pilots board" in kept


def test_a_reply_that_cites_before_it_answers_gives_no_prefix() -> None:
    cited_first = '{"used_chunks": ["p2"], "answer": "twelve metres"}'
    call = LLMCall("s2", messages=(Message("user", PROMPT),), output_text=cited_first)
    assert trace_context(_trace(llm_calls=(call,))).prefix == ""


def test_a_trace_that_cannot_be_attributed_says_why() -> None:
    with pytest.raises(InputError, match="trace t1 has no answer"):
        trace_context(_trace(answer=None))
    with pytest.raises(InputError, match="no model call with its prompt"):
        trace_context(_trace(llm_calls=()))
    with pytest.raises(InputError, match="message 0 of the answer call has no captured text"):
        trace_context(_trace(llm_calls=(LLMCall("s2", messages=(Message("user"),)),)))
    with pytest.raises(InputError, match="no evidence item's text is in"):
        trace_context(_trace(evidence=(Evidence("p9", "s1", "RETRIEVE", content="Not shown."),)))


def test_an_agent_s_tool_call_message_without_text_is_part_of_the_prompt() -> None:
    """An agent's prompt: the assistant's tool call (no text, as every chat API records it)
    and the tool's reply holding the evidence. The call is kept, rendered with its tool
    calls; only a message with neither text nor tool calls is one whose text was not
    captured."""
    call = RequestedToolCall("call-1", "search", '{"query": "berth seven"}')
    messages = (
        Message("user", "how deep is berth seven?"),
        Message("assistant", None, tool_calls=(call,)),
        Message("tool", "[p2] Berth seven has a charted depth of twelve metres.",
                tool_call_id="call-1"),
    )  # fmt: skip
    agent = LLMCall("s3", messages=messages, output_text="twelve metres")
    context = trace_context(_trace(llm_calls=(agent,)))
    assert [s.id for s in context.sources] == ["p2"] and context.prefix == ""
    kept = context.render((True,))
    assert kept[1] == {
        "role": "assistant", "content": "",
        "tool_calls": [{"id": "call-1", "type": "function",
                        "function": {"name": "search", "arguments": '{"query": "berth seven"}'}}],
    }  # fmt: skip
    assert kept[2]["tool_call_id"] == "call-1"
    assert "twelve" not in context.render((False,))[2]["content"]
    hidden = LLMCall("s3", messages=(*messages[:1], Message("assistant")), output_text="x")
    with pytest.raises(InputError, match="message 1 of the answer call has no captured text"):
        trace_context(_trace(llm_calls=(hidden,), answer="x"))


def test_an_item_retrieved_twice_is_one_source_removed_from_both_places() -> None:
    """An agent that searched twice: both tool replies hold p2. It is one source, and the
    prompt without it holds it nowhere (before, the second copy stayed, so the answer looked
    independent of its context)."""
    text = "[p2] Berth seven has a charted depth of twelve metres."
    messages = (Message("user", "how deep is berth seven?"), Message("tool", text),
                Message("tool", text))  # fmt: skip
    evidence = (Evidence("p2", "s1", "RETRIEVE", rank=1, content=text[5:]),
                Evidence("p2", "s4", "RETRIEVE", rank=1, content=text[5:]))  # fmt: skip
    call = LLMCall("s5", messages=messages, output_text="twelve metres")
    context = trace_context(_trace(evidence=evidence, llm_calls=(call,)))
    assert [s.id for s in context.sources] == ["p2"]
    assert all("twelve" not in m["content"] for m in context.render((False,)))


def test_two_chunks_of_one_id_are_two_sources_and_behavioural_replay_refuses_them() -> None:
    from groundtrace.analyzer.attribution._behavioural import replay_evidence

    chunks = ("Berth seven has a charted depth of twelve metres.",
              "Pilots board at the Eastern buoy.")  # fmt: skip
    prompt = f"[harbour] {chunks[0]}\n[harbour] {chunks[1]}\nQuestion: how deep?"
    evidence = tuple(Evidence("harbour", "s1", "RETRIEVE", rank=n, content=c)
                     for n, c in enumerate(chunks, 1))  # fmt: skip
    call = LLMCall("s2", messages=(Message("user", prompt),), output_text="twelve metres")
    trace = _trace(evidence=evidence, llm_calls=(call,))
    context = trace_context(trace)
    assert [context.text(i) for i in range(context.k)] == list(chunks)  # the second not lost
    assert "Pilots" not in context.render((True, False))[0]["content"]
    with pytest.raises(InputError, match="evidence id 'harbour' names 2 different texts"):
        replay_evidence(trace, context)


def test_a_trace_without_retrieval_says_so() -> None:
    with pytest.raises(InputError, match=r"records no retrieved evidence \(no retrieval step\)"):
        trace_context(_trace(evidence=()))


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_traces_of_an_openinference_only_app_are_attributed(tmp_path: Path) -> None:
    """The app's reader answers with the context line closest to the question; a scorer that
    gives the answer log-probability 0 while its text is in the prompt and -5 otherwise makes
    leave-one-out rank that line's chunk first, read from OpenInference spans alone."""
    pytest.importorskip("openinference.instrumentation.openai")
    from tests.support.foreign_rag import openinference_app, reader
    from tests.support.openai_server import OpenAICompatServer

    with OpenAICompatServer(handler=reader) as server:
        path = openinference_app(server.base_url, tmp_path / "oi.pb")
    traces = list(read_traces([path], report=ReadReport()))
    assert traces and all(t.conventions == ("openinference",) for t in traces)
    for trace in traces:
        context = trace_context(trace)
        assert context.k == 3 and context.prefix == ""

        def score(masks: Sequence[Mask], context: AblationContext = context) -> list[float]:
            rendered = [context.render(m) for m in masks]
            answer = context.answer.rstrip(".")
            return [0.0 if any(answer in x["content"] for x in r) else -5.0 for r in rendered]

        top = leave_one_out(score, context.k).ranking()[0]
        assert context.answer.rstrip(".") in context.text(top)


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_the_analysis_runs_on_an_openinference_only_apps_traces(tmp_path: Path) -> None:
    """``run_analysis`` on the OpenInference app's trace file, scored by the endpoint tier
    (the loopback toy model of ``test_endpoint_scorer``): each answer's top source is the
    chunk whose line the app's reader answered with."""
    pytest.importorskip("openinference.instrumentation.openai")
    import threading

    from groundtrace.analyzer import run_analysis
    from groundtrace.analyzer.attribution import ANALYSIS, Config
    from tests.analyzer.attribution.test_endpoint_scorer import _Handler, _Server
    from tests.support.foreign_rag import openinference_app, reader
    from tests.support.openai_server import OpenAICompatServer

    with OpenAICompatServer(handler=reader) as app_server:
        path = openinference_app(app_server.base_url, tmp_path / "oi.pb")
    scorer = _Server(("127.0.0.1", 0), _Handler)
    scorer.bodies = []
    threading.Thread(target=scorer.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{scorer.server_address[1]}/v1"
        config = Config(traces=(str(path),), endpoint=url)
        result = run_analysis(ANALYSIS, config, out=tmp_path / "out").result
    finally:
        scorer.shutdown()
        scorer.server_close()
    assert result is not None and not result.not_usable
    assert len(result.rows) == len(list(read_traces([path], report=ReadReport())))
    for row in result.rows:
        top = max(row.sources, key=lambda s: s.score)
        assert row.answer.rstrip(".") in top.text, row.trace_id
        assert row.tier == "endpoint" and len(row.sources) == 3
