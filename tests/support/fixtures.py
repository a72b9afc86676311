"""Pytest fixtures around :mod:`tests.support.openai_server`.

Use them from a test module or a ``conftest.py`` with::

    pytest_plugins = ["tests.support.fixtures"]

or import the names directly (``from tests.support.fixtures import openai_server``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAICompatServer

__all__ = ["openai_server"]


@pytest.fixture
def openai_server() -> Iterator[OpenAICompatServer]:
    """A started :class:`OpenAICompatServer` with the default echo handler.

    Swap the behaviour inside a test by assigning ``openai_server.handler = ...``.
    """
    with OpenAICompatServer() as srv:
        yield srv
