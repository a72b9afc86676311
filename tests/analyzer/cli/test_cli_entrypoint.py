"""The ``groundtrace`` entry point: one command table, imports on demand, missing extras named.

Each scenario runs the console-script ``main`` in a fresh interpreter, optionally with an
import hook that makes some top-level packages unimportable (as on an install without the
extra that provides them), and reports what it printed and which modules it loaded.
"""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import typer

import groundtrace.analyzer.cli as cli
from groundtrace.analyzer._extras import missing_extra
from groundtrace.analyzer.cli import _registry
from groundtrace.analyzer.cli._app import handle_errors

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "collectors"

#: Run ``main`` with ``ARGS``, making the packages in ``BLOCKED`` unimportable; write a JSON
#: report to the file ``REPORT`` (stdout and stderr stay the command's own).
SCRIPT = """
import json, sys

BLOCKED, ARGS, REPORT = json.loads(sys.argv[1])


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
sys.argv = ["groundtrace", *ARGS]
code = 0
try:
    from groundtrace.analyzer.cli import main

    main()
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
with open(REPORT, "w", encoding="utf-8") as report:
    json.dump({"code": code, "modules": sorted(sys.modules)}, report)
"""

#: Packages no start-up path may load: the statistics, model client, plotting and analyses.
HEAVY = (
    "scipy",
    "numpy",
    "openai",
    "matplotlib",
    "httpx",
    "h11",
    "yaml",
    "groundtrace.analyzer.gate",
    "groundtrace.analyzer.judge",
    "groundtrace.analyzer.interventions",
    "groundtrace.analyzer.paths",
    "groundtrace.analyzer.stats",
    "groundtrace.analyzer.llm",
    "groundtrace.analyzer.replay",
    "groundtrace.analyzer.backends",
)


def _groundtrace(*args: str, blocked: tuple[str, ...] = ()) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.json"
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, json.dumps([blocked, args, str(path)])],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=folder,  # relative --out folders land here, not in the checkout
            env={**os.environ, "COLUMNS": "100"},
        )
        report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    report.update(stdout=done.stdout, stderr=done.stderr)
    return report


def _loaded(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


COMMANDS = ("demo", "traces", "gate", "judge", "collect", "paths", "interventions", "audit")
#: The commands whose options are generated from their analysis's config record: their help
#: imports that analysis (its record), and no other command's module (the root's help none).
RECORD_BACKED = ("paths", "judge", "gate", "interventions", "audit", "attribution")


def _command_modules(modules: list[str]) -> set[str]:
    loaded = {m.rpartition(".")[2] for m in modules if m.startswith(cli.__name__ + ".")}
    return {row.module for row in _registry.COMMANDS} & loaded


def test_help_loads_neither_the_analyses_nor_the_collectors_nor_any_command() -> None:
    run = _groundtrace("--help")
    assert run["code"] == 0, run["stderr"]
    for name in COMMANDS:
        assert name in run["stdout"]
    assert _loaded(run["modules"], (*HEAVY, "groundtrace.collectors")) == []
    assert _command_modules(run["modules"]) == set()


@pytest.mark.parametrize("command", COMMANDS)
def test_the_help_of_each_command_loads_its_module_only(command: str) -> None:
    run = _groundtrace(command, "--help")
    assert run["code"] == 0, run["stderr"]
    assert "Usage: groundtrace " + command in run["stdout"]
    if command not in RECORD_BACKED:  # which imports its analysis, for its record
        assert _loaded(run["modules"], (*HEAVY, "groundtrace.collectors")) == []
    row = next(row for row in _registry.COMMANDS if row.name == command)
    assert _command_modules(run["modules"]) <= {row.module, "_analyze"}


#: A record-backed command's help, the module of the record its options come from, and what
#: its analysis runs on besides numpy, the statistics and the trace readers.
LIGHT_HELP = [
    (("paths", "--help"), "paths._config", ("paths._run", "_html")),
    (("judge", "run", "--help"), "judge._config", ("judge._run", "llm", "judge._shape")),
    (("audit", "run", "--help"), "audit._config", ("audit._run", "llm", "judge", "audit._shape")),
    (("gate", "run", "--help"), "gate._config", ("gate._run", "gate._shape", "judge", "paths")),
    (("interventions", "--help"), "interventions._config", ("interventions._run", "replay", "llm")),
    (
        ("attribution", "--help"),
        "attribution._config",
        ("attribution._shape", "llm", "backends._llama"),
    ),
]


@pytest.mark.parametrize(("args", "record", "running"), LIGHT_HELP)
def test_the_help_of_a_command_loads_its_config_record_not_its_analysis(
    args: tuple[str, ...], record: str, running: tuple[str, ...]
) -> None:
    """Its options come from the analysis's ``Config``: the record's module is loaded, not
    what the analysis runs on (numpy, the statistics, the trace readers, the reports)."""
    run = _groundtrace(*args)
    assert run["code"] == 0, run["stderr"]
    assert "groundtrace.analyzer." + record in run["modules"]
    heavy = ("numpy", "groundtrace.analyzer.stats", "groundtrace.collectors")
    assert _loaded(run["modules"], (*heavy, *("groundtrace.analyzer." + r for r in running))) == []


def test_traces_summary_loads_the_collectors_only(tmp_path: Path) -> None:
    first = (FIXTURES / "groundtrace.spans.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "one.jsonl").write_text(first + "\n", encoding="utf-8")
    run = _groundtrace("traces", "summary", "--json", str(tmp_path / "one.jsonl"))
    assert run["code"] == 0, run["stderr"]
    assert json.loads(run["stdout"])["traces"] == 1
    assert "groundtrace.collectors" in run["modules"]
    assert _loaded(run["modules"], HEAVY) == []


def test_without_typer_the_entry_point_names_the_analyzer_extra() -> None:
    run = _groundtrace("--help", blocked=("typer",))
    assert run["code"] == 2
    assert run["stdout"] == ""
    assert run["stderr"] == (
        "groundtrace: this command needs the 'analyzer' extra (typer is not installed): "
        "pip install 'groundtrace[analyzer]'\n"
    )


def _gold_file(folder: Path) -> str:
    """A small gold set the lexical judge validates: the run reaches its statistics (scipy)."""
    rows = [
        {
            "id": f"g{i}",
            "item": {"question": "Where is Paris?", "context": ["Paris is in France."],
                     "answer": "France" if i % 2 else "Spain"},
            "annotator_a": "pass" if i % 2 else "fail",
            "annotator_b": "pass" if i % 2 else "fail",
            "adjudicated": i % 2,
        }
        for i in range(12)
    ]  # fmt: skip
    gold = folder / "gold.jsonl"
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(gold)


@pytest.mark.parametrize(
    ("blocked", "args"),
    [
        ("numpy", ("gate", "simulate", "--reps", "1", "--samples", "10")),
        ("scipy", ("judge", "validate", "--gold", "{gold}", "--out", "out")),
    ],
)
def test_a_command_whose_dependency_is_missing_names_its_extra(
    blocked: str, args: tuple[str, ...], tmp_path: Path
) -> None:
    """scipy is imported where it is used (its load costs ~1 s): the message comes mid-run."""
    gold = _gold_file(tmp_path)
    run = _groundtrace(*(a.format(gold=gold) for a in args), blocked=(blocked,))
    assert run["code"] == 2, run["stderr"]
    assert f"needs the 'analyzer' extra ({blocked} is not installed)" in run["stderr"]
    assert "pip install 'groundtrace[analyzer]'" in run["stderr"]
    assert "Traceback" not in run["stderr"]


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("matplotlib.pyplot", "plots"),
        ("scipy.stats", "analyzer"),
        ("openai", "analyzer"),
        ("llama_cpp", "llm"),
        ("phoenix.client", "phoenix"),
    ],
)
def test_each_optional_import_maps_to_its_extra(module: str, extra: str) -> None:
    error = missing_extra(ModuleNotFoundError(f"No module named {module!r}", name=module))
    assert error is not None
    assert (error.extra, error.module, error.exit_code) == (extra, module, 2)
    assert f"pip install 'groundtrace[{extra}]'" in str(error)


def test_a_module_no_extra_provides_is_a_bug_not_a_message() -> None:
    @handle_errors
    def command() -> None:
        raise ModuleNotFoundError("No module named 'groundtrace.nope'", name="groundtrace.nope")

    with pytest.raises(ModuleNotFoundError, match=r"groundtrace\.nope"):
        command()


def test_every_command_module_is_in_the_one_table() -> None:
    support = {
        "_app",
        "_budget",
        "_executor",
        "_options",
        "_fields",
        "_progress",
        "_unreadable",
        "_registry",
        "_writeback",
        "_send",  # `traces send`: a command of the traces group, registered by _traces
        "_demo_tables",  # the demo's interventions table, printed by _demo
    }
    modules = {info.name for info in pkgutil.iter_modules(cli.__path__)} - support
    assert {row.module for row in _registry.COMMANDS} == modules
    assert isinstance(cli.build_app(), typer.Typer)
    for row in _registry.COMMANDS:
        assert _registry.load_command(row).name == row.name


def test_the_defaults_the_commands_spell_out_are_the_librarys() -> None:
    from groundtrace.analyzer.cli import _collect
    from groundtrace.collectors.phoenix import DEFAULT_PAGE_SIZE

    assert _collect.PAGE_SIZE == DEFAULT_PAGE_SIZE  # a record-backed command spells out none
