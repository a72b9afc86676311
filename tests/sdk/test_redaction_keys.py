"""Secrets used as mapping keys are masked like values, and two keys never become one.

Every secret of the redaction matrix (in its context, and bare when it is masked even alone)
is used as a key of the document metadata, of a replayable answer's keyword argument and of a
tool's argument and result; the spans go through the real OTLP-JSON file exporter and the
written bytes are read back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

import pytest

import groundtrace.sdk as gt
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._record import Recorder
from groundtrace.sdk._runtime import Settings
from groundtrace.sdk.redaction import Redactor

from .test_redaction import POSITIVE

pytestmark = pytest.mark.usefixtures("clean_config")

REDACTOR: Final = Redactor()
#: Every secret in its context, plus the bare secrets that are masked even alone (those are
#: the keys that would all become the same ``[REDACTED:<kind>]`` without a suffix).
KEYS: Final = list(
    dict.fromkeys(
        [text for _, text, _ in POSITIVE]
        + [secret for _, _, secret in POSITIVE if REDACTOR(secret)[0] != secret]
    )
)
KEYED: Final = {key: index for index, key in enumerate(KEYS)}
SECRETS: Final = sorted({secret for _, _, secret in POSITIVE})
SUFFIX: Final = re.compile(r"#[0-9a-f]{12}$")


@gt.retrieve(retriever="keys")
def search(query: str) -> list[dict[str, Any]]:
    return [{"id": "d1", "content": "text", "metadata": KEYED}]


@gt.answer(replayable=True)
def respond(question: str, evidence: list[Any], *, options: Any = None) -> str:
    return "ok"


@gt.tool
def store(settings: dict[str, int]) -> dict[str, int]:
    return settings


def _exported(tmp_path: Path) -> tuple[bytes, dict[str, dict[str, str]]]:
    """Run the steps through the file exporter; the bytes written and each span's string
    attributes by action."""
    gt.configure(exporter="file", file_path=f"{tmp_path}/", capture_content=True)
    search("which settings?")
    respond("which settings?", [], options=KEYED)
    store(KEYED)
    gt.shutdown()
    raw = b"".join(path.read_bytes() for path in sorted(tmp_path.glob("*.jsonl")))
    spans: dict[str, dict[str, str]] = {}
    for line in raw.splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attrs = {
                        a["key"]: a["value"]["stringValue"]
                        for a in span["attributes"]
                        if "stringValue" in a["value"]
                    }
                    spans[attrs[sc.GT_ACTION]] = attrs
    return raw, spans


def test_secret_mapping_keys_are_masked_and_stay_distinct(tmp_path: Path) -> None:
    raw, spans = _exported(tmp_path)
    for secret in SECRETS:
        assert secret.encode() not in raw, secret
    (document,) = json.loads(spans["RETRIEVE"][sc.GT_EVIDENCE])
    recorded = {
        "metadata": document["metadata"],
        "replay kwargs": json.loads(spans["ANSWER"][sc.GT_REPLAY_KWARGS])["options"],
        "tool arguments": json.loads(spans["TOOL"][sc.GT_TOOL_ARGUMENTS])["settings"],
        "tool result": json.loads(spans["TOOL"][sc.OI_OUTPUT_VALUE]),
    }
    masked_keys = set(recorded["metadata"])
    for field, mapping in recorded.items():
        # as many entries as the app's mapping, each with its own value: none merged
        assert sorted(mapping.values()) == list(range(len(KEYS))), field
        assert all("[REDACTED:" in key and SUFFIX.search(key) for key in mapping), field
        assert set(mapping) == masked_keys, field  # the same key, the same mask everywhere
    assert len(masked_keys) == len(KEYS)


def test_keys_masking_leaves_alone_and_number_keys_are_kept() -> None:
    rec = Recorder(Settings(redact=REDACTOR))
    value = {"plain": "bob@example.com", 4111111111111111: "card as a number", "n": 1}
    assert rec.masked("k", value) == {
        "plain": "[REDACTED:email]",
        "4111111111111111": "card as a number",
        "n": 1,
    }
    assert rec.json("k", {"title": "a", "id": 2}) == '{"title":"a","id":2}'


def test_a_masked_key_is_the_same_in_both_recordings_and_differs_from_another() -> None:
    rec = Recorder(Settings(redact=REDACTOR))
    one, other = "bob@example.com", "alice@example.org"
    structured = rec.masked("k", {one: 1, other: 2})
    as_json = json.loads(rec.json("k", {"nested": {one: 1, other: 2}}))["nested"]
    assert structured == as_json
    assert len(structured) == 2
    assert all(key.startswith("[REDACTED:email]#") for key in structured)
    assert rec.fired == {"email"}


def test_the_default_redactor_is_shared_so_its_masked_keys_survive_a_new_configure() -> None:
    assert Redactor.default() is Redactor.default()
    first = Recorder(Settings(redact=Redactor.default())).masked("k", {"bob@example.com": 1})
    again = Recorder(Settings(redact=Redactor.default())).masked("k", {"bob@example.com": 1})
    assert first == again
