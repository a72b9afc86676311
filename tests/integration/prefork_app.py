"""A tiny WSGI app instrumented with groundtrace, served by gunicorn ``--preload`` workers in
``tests/integration/test_prefork_gunicorn.py``.

groundtrace is configured at import, so with ``--preload`` in the arbiter, before it forks
the workers (the exporter, the file path and the schedule delay come from the environment the
test sets). ``/ask`` records two spans (a request and a retrieval) and answers the worker's
pid and the spans this worker has ended so far; ``/ping`` records nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

import groundtrace.sdk as gt

gt.configure(service_name="prefork-app")


@gt.retrieve(retriever="fixed", k=1)
def search(query: str) -> list[dict[str, Any]]:
    return [{"id": "d1", "title": "Refunds", "content": "Refunds take 5 days.", "score": 1.0}]


@gt.request(app_name="prefork-app", app_version="1")
def handle(question: str) -> str:
    return search(question)[0]["content"]


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("PATH_INFO") == "/ask":
        handle("How long do refunds take?")
        stats = gt.export_stats()
        ended = stats.exported + stats.failed + stats.dropped + stats.queued
    else:
        ended = -1
    body = json.dumps({"pid": os.getpid(), "ended": ended}).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body]
