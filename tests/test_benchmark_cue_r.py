"""The CUE-R benchmark's pipeline on the lexical reader: table, resumption, shared cache keys.

No model runs here (the lexical reader answers); the figures themselves come from a run with
the embedded model (docs/cue_r.md).
"""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

import pytest

from groundtrace.analyzer.backends import LEXICAL_MODEL
from groundtrace.analyzer.llm._types import cache_key

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _keys(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT key FROM calls")}


@pytest.mark.timeout(240)
def test_cue_r_reports_each_operator_and_resumes_with_no_repeated_call(tmp_path: Path) -> None:
    cue_r = _script("cue_r")
    out = tmp_path / "cue_r"
    args = ["--items", "3", "--model", "lexical", "--out", str(out)]

    first = cue_r.main(args)
    assert first["items"] == 3
    assert set(first["operators"]) == {"REMOVE", "REPLACE", "DUPLICATE"}
    for row in first["operators"].values():
        assert {axis["n"] for axis in map(row.get, ("correctness", "divergence"))} == {3}
        assert row["failed"] == 0
    # DUPLICATE keeps the target: the answers stay, D is small; REMOVE moves them more
    duplicate, remove = first["operators"]["DUPLICATE"], first["operators"]["REMOVE"]
    assert duplicate["divergence"]["delta"] < remove["divergence"]["delta"]
    assert first["app_calls"] == {"requests": 3, "from_cache": 0}
    assert first["replay_calls"]["made"] == 9

    # the table of the first items of a run (what a run stopped part way holds), no call
    part = cue_r.main([*args, "--limit", "2"])
    assert part["items"] == 2
    assert part["replay_calls"] == {"made": 0, "from_cache": 0, "from_journal": 6}

    # the app run interrupted before its case file: run again, every call from the cache
    (out / "app" / "cases.jsonl").unlink()
    again = cue_r.main(args)
    assert again["app_calls"] == {"requests": 3, "from_cache": 3}
    assert again["replay_calls"]["made"] == 0
    assert again["operators"] == first["operators"]

    # the app's requests are the model comparison's: its cache answers the CUE-R app phase
    models = _script("models")
    pairs = models._requests(LEXICAL_MODEL, 3, models.app.DEFAULT_TOP_K)
    expected = {cache_key(request) for request, _ in pairs}
    assert _keys(out / "app" / "llm_cache.sqlite") == expected


def test_cue_r_refuses_an_app_run_of_another_size(tmp_path: Path) -> None:
    cue_r = _script("cue_r")
    from groundtrace.analyzer.errors import ConfigError

    app_dir = tmp_path / "app"
    app_dir.mkdir()
    (app_dir / "cases.jsonl").write_text('{"case_id": "a"}\n{"case_id": "b"}\n')
    with pytest.raises(ConfigError, match="2 questions, not 3"):
        cue_r.run_app(app_dir, 3, "http://127.0.0.1:9/v1", "m", tmp_path / "cache.sqlite")
