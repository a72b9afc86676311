"""Runnable example apps instrumented with groundtrace, shipped with the package with their data.

``groundtrace.examples.hotpot_rag`` is the app behind ``groundtrace demo``;
``groundtrace.examples.agent_docs`` is a document agent with injected path faults.
"""

__all__: list[str] = []
