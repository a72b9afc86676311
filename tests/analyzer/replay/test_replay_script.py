"""Function replay of an app run as a script (``python app.py``): the SDK records the
script's path, and ``groundtrace interventions --replay recorded`` loads it from there.

The app is a small extractive RAG app about bicycle repair (a domain the repository has no
other data of): it answers with the chunk sharing the most words with the question, so its
answers change when the evidence does, and it needs no model.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groundtrace.analyzer.errors import ReplayError
from groundtrace.analyzer.replay._function import resolve_entrypoint
from groundtrace.collectors import read_traces

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

APP = textwrap.dedent(
    """
    import sys

    import groundtrace.sdk as gt
    from chunks import CHUNKS

    # configured at import, as the README's quick start does
    gt.configure(service_name="bike-help", exporter="file", file_path=sys.argv[1],
                 capture_content=True)


    @gt.retrieve(retriever="overlap", k=3)
    def search(question: str) -> list[dict]:
        words = set(question.lower().split())
        ranked = sorted(CHUNKS, key=lambda c: -len(words & set(c["content"].lower().split())))
        return ranked[:3]


    @gt.answer(replayable=True)
    def respond(question: str, evidence: list[dict]) -> dict:
        words = set(question.lower().split())
        if not evidence:
            return {"answer": "I do not know.", "confidence": 0.0, "used_chunks": []}
        best = max(evidence, key=lambda c: len(words & set(c["content"].lower().split())))
        return {"answer": best["content"], "confidence": 0.9, "used_chunks": [best["id"]]}


    @gt.request(app_name="bike-help", app_version="1")
    def handle(question: str, case_id: str | None = None) -> str:
        return respond(question, search(question))["answer"]


    if __name__ == "__main__":
        handle("how do I fix a flat tube puncture", case_id="flat")
        handle("how tight should the brake cable be", case_id="brake")
        gt.shutdown()
    """
)
CHUNKS = textwrap.dedent(
    """
    CHUNKS = [
        {"id": "tube-1", "title": "Flats",
         "content": "to fix a flat tube puncture patch the tube after finding the hole"},
        {"id": "brake-2", "title": "Brakes",
         "content": "the brake cable should be tight enough that the lever stops short"},
        {"id": "chain-3", "title": "Chain",
         "content": "oil the chain every 300 km and wipe off the extra oil"},
        {"id": "saddle-4", "title": "Saddle",
         "content": "set the saddle height so the knee is almost straight at the bottom"},
    ]
    """
)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = "from groundtrace.analyzer.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False, cwd=cwd, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def _script_app(tmp_path: Path, *run: str) -> tuple[Path, Path]:
    """The app written to ``<tmp>/bike`` and run there (``python [run] TRACES``, by default
    ``app.py``): its folder and the traces it wrote."""
    app_dir = tmp_path / "bike"
    app_dir.mkdir()
    (app_dir / "app.py").write_text(APP, encoding="utf-8")
    (app_dir / "chunks.py").write_text(CHUNKS, encoding="utf-8")
    traces = tmp_path / "traces"
    subprocess.run(
        [sys.executable, *(run or ("app.py",)), str(traces)],
        cwd=app_dir, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return app_dir, traces


def test_script_app_records_its_file_and_replays_from_it(tmp_path: Path) -> None:
    app_dir, traces = _script_app(tmp_path)
    recorded = [t for t in read_traces([str(traces)]) if t.entrypoint is not None]
    assert len(recorded) == 2
    assert {t.entrypoint.entrypoint for t in recorded if t.entrypoint} == {
        f"{(app_dir / 'app.py').resolve()}:respond"
    }
    # run from elsewhere: nothing of the app is on the path of the analysing process
    out = tmp_path / "run"
    res = _cli(
        "interventions", str(traces), "--replay", "recorded", "--out", str(out),
        "--operators", "REMOVE,REPLACE,DUPLICATE", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["items"] == 2
    assert summary["input"]["not_replayable"] == {}
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert rows and all(r["status"] == "ok" for r in rows), rows
    removed = {r["case_id"]: r for r in rows if r["operator"] == "REMOVE"}
    # removing the chunk the answer came from changes the answer
    assert removed["flat"]["target_id"] == "tube-1"
    assert "patch the tube" not in removed["flat"]["counterfactual"]["answer"]
    assert "patch the tube" in removed["flat"]["original"]["answer"]
    # the replayed app's module-level configure() did not take the counterfactual traces
    counterfactual = list(read_traces([str(out / "counterfactual_traces")]))
    assert len(counterfactual) == len(rows)
    assert all(t.replay is not None for t in counterfactual)
    assert [t for t in read_traces([str(traces)]) if t.replay is not None] == []


def test_main_entrypoint_of_an_old_sdk_names_the_replay_fix() -> None:
    with pytest.raises(ReplayError) as caught:
        resolve_entrypoint("__main__:respond")
    message = str(caught.value)
    assert "--replay path/to/app.py:respond" in message
    assert "--replay package.module:respond" in message


def test_missing_script_names_the_replay_fix(tmp_path: Path) -> None:
    with pytest.raises(ReplayError) as caught:
        resolve_entrypoint(f"{tmp_path / 'gone' / 'app.py'}:respond")
    assert "--replay path/to/app.py:respond" in str(caught.value)


def test_a_script_whose_top_level_code_fails_names_the_fix(tmp_path: Path) -> None:
    """An app that runs itself at import (no ``__main__`` guard) and fails there is a clear
    replay error naming the script, the error and the fix; nothing of it stays loaded."""
    script = tmp_path / "app.py"
    script.write_text("def respond(q, e):\n    return q\n\nraise ValueError('no settings')\n")
    for _ in range(2):  # not half-loaded the first time
        with pytest.raises(ReplayError) as caught:
            resolve_entrypoint(f"{script}:respond")
        message = str(caught.value)
        assert str(script) in message and "ValueError" in message
        assert 'if __name__ == "__main__":' in message


def test_app_run_with_dash_m_records_its_module_name(tmp_path: Path) -> None:
    _, traces = _script_app(tmp_path, "-m", "app")
    recorded = {t.entrypoint.entrypoint for t in read_traces([str(traces)]) if t.entrypoint}
    assert recorded == {"app:respond"}
