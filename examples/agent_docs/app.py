"""The document agent: tools, a deterministic planner with injected faults, and a runner.

Each task is answered by the same plan -- ``search`` the handbook, ``read_document`` the
top hit, extract the answer with the task's pattern, answer with the path read as the
citation and the sentence it came from as the quote -- unless the task carries a fault:

===================  ===========================================================  ==========
fault                what the planner does                                        text
===================  ===========================================================  ==========
``stale_cache``      runs no tool; answers, cites and quotes from an old cache    correct
``skip_read``        searches, never reads; answers from the cache                correct
``wrong_file``       reads the second hit instead; answers from the cache and     correct
                     cites the right path (which it never read)
``search_citation``  reads the right file, also cites the second search hit       correct
                     (seen only in the search results)
``fabricated``       reads the right file, but the quote is made up               correct
``read_error``       the read fails (wrong encoding); answers from the cache      correct
``read_timeout``     the read times out; answers from the cache                   correct
``wrong_currency``   reads the right file, calls ``lookup_price`` in USD          correct
``ignored_result``   reads the right file, answers with the stale cached value    wrong
===================  ===========================================================  ==========

Every fault but ``ignored_result`` is *correct by luck*: the text channel cannot see it.

Each request's root span is also the agent's OpenTelemetry GenAI ``invoke_agent`` span
(``invoke_agent handbook-agent``, :data:`AGENT_ATTRIBUTES`); its tools are ``execute_tool``
spans below it.

Usage::

    from groundtrace.examples.agent_docs.app import run

    results = run("runs/agent")   # traces in runs/agent/traces/
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rank_bm25 import BM25Okapi

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc

__all__ = [
    "AGENT_ATTRIBUTES",
    "AGENT_NAME",
    "APP_NAME",
    "APP_VERSION",
    "CACHE",
    "DOCS_DIR",
    "EXAMPLE_DIR",
    "FAULTS",
    "LUCKY_FAULTS",
    "TASKS",
    "Task",
    "handle",
    "lookup_price",
    "read_document",
    "run",
    "search",
]

APP_NAME: Final = "agent-docs"
APP_VERSION: Final = "1.0.0"
#: The agent's name in its ``invoke_agent`` span (``gen_ai.agent.name``).
AGENT_NAME: Final = "handbook-agent"
#: What makes each request's root span the OpenTelemetry GenAI ``invoke_agent`` span of an
#: in-process agent (span kind INTERNAL) and an OpenInference AGENT span. The planner calls
#: no model, so the span has no ``gen_ai.provider.name`` nor ``gen_ai.request.model``.
AGENT_ATTRIBUTES: Final[dict[str, str]] = {
    sc.GENAI_OPERATION_NAME: sc.GenAIOperation.INVOKE_AGENT.value,
    sc.GENAI_AGENT_NAME: AGENT_NAME,
    sc.GENAI_AGENT_DESCRIPTION: "Answers questions about Lumen appliances from the handbook",
    sc.GENAI_AGENT_VERSION: APP_VERSION,
    sc.OI_SPAN_KIND: sc.OpenInferenceSpanKind.AGENT.value,
}
EXAMPLE_DIR: Final = Path(__file__).resolve().parent
DOCS_DIR: Final = EXAMPLE_DIR / "docs"
_TOKEN_RE: Final = re.compile(r"[a-z0-9]+")
_PRICES: Final = {"KT-200": 89.0, "GR-500": 149.0, "SC-100": 45.0}
_RATES: Final = {"EUR": 1.0, "USD": 1.09}


@dataclass(frozen=True, slots=True)
class Task:
    """One question for the agent.

    Attributes:
        case_id: joins the trace to ``cases.jsonl``.
        question: the user question.
        pattern: regex whose first group is the answer in the document read.
        fault: the injected fault, if any (see the module docstring).
        sku: article number to price (``wrong_currency`` only).
    """

    case_id: str
    question: str
    pattern: str = ""
    fault: str | None = None
    sku: str | None = None


@dataclass(frozen=True, slots=True)
class Cached:
    """An answer remembered from an earlier session (the stale cache)."""

    answer: str
    path: str
    quote: str


TASKS: Final[tuple[Task, ...]] = (
    Task("warranty", "How long does the standard warranty last?", r"lasts (\d+ months)"),
    Task("returns", "Within how many days can unused items be returned?", r"within (\d+ days)"),
    Task("capacity", "How many litres does the K2 kettle hold?", r"holds ([\d.]+ litres)"),
    Task("descale", "How often should I descale the K2 kettle?", r"K2 kettle (every \d+ weeks)"),
    Task("recycling", "What percent of materials is recycled?", r"recycle (\d+ percent)"),
    Task("hours", "When is the support hotline open?", r"(.*open.*)"),
    Task(
        "grind_settings", "How many grind settings does the G5 grinder offer?", fault="stale_cache"
    ),
    Task("free_shipping", "Above which order value is shipping free?", fault="skip_read"),
    Task("express", "How long does express delivery take?", fault="wrong_file"),
    Task(
        "lid_price",
        "How much does a replacement lid for the K2 kettle cost?",
        r"cost (EUR \d+)",
        fault="search_citation",
    ),
    Task(
        "scale_max",
        "Up to how many kilograms does the S1 scale weigh?",
        r"up to (\d+ kilograms)",
        fault="fabricated",
    ),
    Task("refund_time", "How soon are refunds paid after a return?", fault="read_error"),
    Task("email_reply", "How fast are support email requests answered?", fault="read_timeout"),
    Task(
        "g5_price",
        "What does the G5 grinder cost in euros?",
        r"costs (EUR \d+)",
        fault="wrong_currency",
        sku="GR-500",
    ),
    Task(
        "warranty_months",
        "How many months of standard warranty does a new appliance get?",
        r"lasts (\d+ months)",
        fault="ignored_result",
    ),
    Task("hello", "Hello!"),
)

#: case id -> injected fault.
FAULTS: Final[dict[str, str]] = {t.case_id: t.fault for t in TASKS if t.fault}
#: the faults whose answer is nevertheless correct (masked failures).
LUCKY_FAULTS: Final = frozenset(f for f in FAULTS.values() if f != "ignored_result")

#: Answers remembered from an earlier session, by case id.
CACHE: Final[dict[str, Cached]] = {
    "grind_settings": Cached(
        "40", "docs/products/grinder-g5.md", "The G5 grinder offers 40 grind settings"
    ),
    "free_shipping": Cached("EUR 60", "docs/shipping.md", "Orders above EUR 60 ship free"),
    "express": Cached(
        "1 business day", "docs/shipping.md", "express delivery takes 1 business day"
    ),
    "refund_time": Cached("5 business days", "docs/returns.md", ""),
    "email_reply": Cached("2 business days", "docs/support.md", ""),
    "warranty_months": Cached("12 months", "docs/warranty.md", ""),
}
_FABRICATED_QUOTE: Final = "The S1 scale is certified for laboratory use up to 3 kilograms"


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


def _corpus() -> list[tuple[str, str]]:
    return [
        (p.relative_to(EXAMPLE_DIR).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted(DOCS_DIR.rglob("*.md"))
    ]


@gt.tool(name="search", description="Search the handbook; returns paths, titles, snippets.")
def search(query: str, k: int = 3) -> list[dict[str, Any]]:
    """BM25 over the handbook documents (title and body)."""
    corpus = _corpus()
    bm25 = BM25Okapi([_tokens(text) for _, text in corpus])
    scores = bm25.get_scores(_tokens(query))
    ranked = sorted(range(len(corpus)), key=lambda i: (-scores[i], corpus[i][0]))[:k]
    return [
        {
            "path": corpus[i][0],
            "title": corpus[i][1].splitlines()[0].lstrip("# "),
            "score": round(float(scores[i]), 3),
        }
        for i in ranked
    ]


@gt.tool(name="read_document", paths=("path",))
def read_document(path: str, encoding: str = "utf-8", timeout_s: float = 5.0) -> str:
    """Read one handbook document (paths relative to the example folder).

    Raises:
        PermissionError: the path leaves the example folder.
        TimeoutError: the storage budget ``timeout_s`` is not positive.
        OSError / UnicodeDecodeError: the file cannot be read as ``encoding``.
    """
    target = (EXAMPLE_DIR / path).resolve()
    if EXAMPLE_DIR not in target.parents:
        raise PermissionError(f"{path} is outside the handbook")
    if timeout_s <= 0:
        raise TimeoutError(f"reading {path} exceeded its {timeout_s} s budget")
    return target.read_bytes().decode(encoding)


@gt.tool(name="lookup_price")
def lookup_price(sku: str, currency: str = "EUR") -> str:
    """Current list price of an article."""
    return f"{currency} {_PRICES[sku] * _RATES[currency]:.2f}"


@gt.answer
def respond(question: str, text: str, cited: list[str], quotes: list[str]) -> dict[str, Any]:
    """The final answer with its citations and quotes."""
    return {"answer": text, "cited_ids": cited, "quotes": quotes}


def _sentence(document: str, pattern: str) -> tuple[str, str] | None:
    for line in document.splitlines():
        found = re.search(pattern, line)
        if found and not line.startswith("#"):
            return found.group(1), line.strip()
    return None


def _answer_from(document: str, task: Task, path: str) -> dict[str, Any]:
    found = _sentence(document, task.pattern)
    if found is None:
        return respond(task.question, "I could not find that in the handbook.", [], [])
    value, sentence = found
    return respond(task.question, value, [path], [sentence])


def _from_cache(task: Task, cite: bool) -> dict[str, Any]:
    cached = CACHE[task.case_id]
    cited = [cached.path] if cite else []
    quotes = [cached.quote] if cite and cached.quote else []
    return respond(task.question, cached.answer, cited, quotes)


def _plan(task: Task) -> dict[str, Any]:
    fault = task.fault
    if task.case_id == "hello":
        return respond(task.question, "Hello! Ask me anything about Lumen appliances.", [], [])
    if fault == "stale_cache":
        return _from_cache(task, cite=True)
    hits = search(task.question)
    top, second = hits[0]["path"], hits[1]["path"]
    if fault == "skip_read":
        return _from_cache(task, cite=False)
    if fault == "wrong_file":
        read_document(second)
        return _from_cache(task, cite=True)
    if fault in ("read_error", "read_timeout"):
        try:
            if fault == "read_error":
                read_document(top, encoding="utf-16")
            else:
                read_document(top, timeout_s=0.0)
        except (UnicodeDecodeError, TimeoutError):
            pass  # the planner falls back to its cache
        return _from_cache(task, cite=False)
    path, document = top, read_document(top)
    if task.pattern and _sentence(document, task.pattern) is None:
        path, document = second, read_document(second)  # not there: try the next hit
    if fault == "ignored_result":
        reply = _answer_from(document, task, path)
        return respond(
            task.question, CACHE[task.case_id].answer, reply["cited_ids"], reply["quotes"]
        )
    if fault == "wrong_currency" and task.sku is not None:
        lookup_price(task.sku, currency="USD")
    reply = _answer_from(document, task, path)
    if fault == "search_citation":
        return respond(
            task.question, reply["answer"], [*reply["cited_ids"], second], reply["quotes"]
        )
    if fault == "fabricated":
        return respond(task.question, reply["answer"], reply["cited_ids"], [_FABRICATED_QUOTE])
    return reply


@gt.request(
    name=f"{sc.GenAIOperation.INVOKE_AGENT.value} {AGENT_NAME}",
    app_name=APP_NAME,
    app_version=APP_VERSION,
    attributes=AGENT_ATTRIBUTES,
)
def handle(question: str, case_id: str | None = None) -> dict[str, Any]:
    """One user request: plan, act, answer."""
    task = next(t for t in TASKS if t.case_id == case_id)
    return _plan(task)


def run(
    out: str | os.PathLike[str] | None = None,
    *,
    tracer_provider: Any = None,
    tasks: tuple[Task, ...] = TASKS,
) -> dict[str, Mapping[str, Any]]:
    """Answer every task; traces go to ``OUT/traces/`` (or to ``tracer_provider``).

    Returns:
        case id -> the answer (``answer``, ``cited_ids``, ``quotes``).
    """
    if tracer_provider is not None:
        gt.configure(service_name=APP_NAME, tracer_provider=tracer_provider, capture_content=True)
    else:
        traces = Path(out or "runs/agent") / "traces"
        traces.mkdir(parents=True, exist_ok=True)
        gt.configure(service_name=APP_NAME, exporter="file", file_path=traces, capture_content=True)
    try:
        return {t.case_id: handle(t.question, case_id=t.case_id) for t in tasks}
    finally:
        gt.shutdown()
