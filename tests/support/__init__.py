"""Shared test helpers: the local OpenAI-compatible server and its pytest fixtures."""
