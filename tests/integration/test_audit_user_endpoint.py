"""audit run --endpoint on a user's corpus: a real local OpenAI-compatible server answers each
question once per source, from that source's text alone, through the project's model client."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli._registry import build_app
from tests.support.openai_server import OpenAICompatServer, Reply, ServerRequest, last_user_text
from tests.support.recycling_corpus import ANSWERS, EXPECTED, GUIDES, QUESTIONS, write_corpus

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

_POINTS = {
    "The hazardous waste shelf.": ["hazardous-shelf"],
    "The library drop-off box.": ["library"],
}


def _model(req: ServerRequest) -> Reply:
    """Answers like a model reading the one source in the prompt (the answers table)."""
    prompt = last_user_text(req)
    cities = [c for c in GUIDES if GUIDES[c][1][:60] in " ".join(prompt.split())]
    question = next(str(q["id"]) for q in QUESTIONS if str(q["text"]) in prompt)
    assert len(cities) == 1, prompt  # one source per request, never two
    said = {(a["question_id"], a["source_id"]): str(a["answer"]) for a in ANSWERS}
    text = said.get((question, cities[0]))
    if text is None:
        body = {"stance": "absent", "answer": "", "quote": ""}
    else:
        first = text.split()[0].strip(",.").lower()
        stance = first if first in ("yes", "no") else "yes" if text in _POINTS else "conditional"
        body = {"stance": stance, "answer": text, "quote": text, "points": _POINTS.get(text, [])}
    return Reply(content=json.dumps(body))


def test_an_endpoint_answers_each_question_from_each_source(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    out = tmp_path / "run"
    with OpenAICompatServer(handler=_model) as server:
        result = CliRunner().invoke(build_app(), [
            "audit", "run", "--sources", str(paths.sources), "--questions", str(paths.questions),
            "--endpoint", server.base_url, "--model", "city-model", "--max-calls", "100",
            "--rate-limit", "1000", "--out", str(out),
        ])  # fmt: skip
        prompts = [last_user_text(r) for r in server.requests if r.path.endswith("/completions")]
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text("utf-8"))
    assert len(prompts) == len(run["answers"]) == 25  # 4 x 5 general, 3 curbside, 2 drop-off
    assert not any(re.search(r"licen[cs]e", p, re.IGNORECASE) for p in prompts)
    labels = {(p["question_id"], p["source_a"], p["source_b"]): p["label"] for p in run["pairs"]}
    # a yes and a yes with where: the model's stances and points agree (no points allowed)
    expected = {**EXPECTED, ("glass", "lakeview", "oakridge"): "consistent"}
    assert {k: labels[k] for k in expected} == expected
    assert run["settings"]["answerer"].startswith("city-model@")
    assert run["model_calls"] is not None
    # a rerun into the folder is served by the journal: no call at all
    with OpenAICompatServer(handler=_model) as again:
        rerun = CliRunner().invoke(build_app(), [
            "audit", "run", "--sources", str(paths.sources), "--questions", str(paths.questions),
            "--endpoint", again.base_url, "--model", "city-model", "--out", str(out),
        ])  # fmt: skip
        assert rerun.exit_code == 0, rerun.output
        assert not [r for r in again.requests if r.path.endswith("/completions")]
