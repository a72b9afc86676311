"""An instrumented document agent with injected faults, for command-path validation.

Tools ``search(query)``, ``read_document(path)`` and ``lookup_price(sku, currency)`` over a
small fictional product handbook (``docs/``); a deterministic planner answers with cited
paths and quotes, and on some questions commits realistic faults (answers from a stale
cache, reads the wrong file, cites a path it only saw in search results, fabricates a
quote...). See :mod:`groundtrace.examples.agent_docs.app`.

Usage::

    python -m groundtrace.examples.agent_docs --out runs/agent
    groundtrace paths runs/agent/traces --cases examples/agent_docs/cases.jsonl \
        --tools-config examples/agent_docs/tools.toml --out runs/agent/paths
"""

__all__: list[str] = []
