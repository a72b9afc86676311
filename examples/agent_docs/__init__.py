"""An instrumented document agent with injected faults, for command-path validation.

Tools ``search(query)``, ``read_document(path)`` and ``lookup_price(sku, currency)`` over a
small fictional product handbook (``docs/``); a deterministic planner answers with cited
paths and quotes, and on some questions commits realistic faults (answers from a stale
cache, reads the wrong file, cites a path it only saw in search results, fabricates a
quote...). See :mod:`groundtrace.examples.agent_docs.app`.

Usage::

    python -m groundtrace.examples.agent_docs --out runs/agent
    groundtrace paths runs/agent/traces --cases CASES --tools-config TOOLS --out runs/agent/paths

where ``CASES`` and ``TOOLS`` are the ``cases.jsonl`` and ``tools.toml`` shipped beside the
app (the first command prints their installed paths).
"""

__all__: list[str] = []
