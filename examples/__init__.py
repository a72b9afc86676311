"""Runnable example apps instrumented with groundtrace (importable from a repository checkout)."""

__all__: list[str] = []
