"""``groundtrace analyze NAME``: every analysis, a plugin's too, gets its record's fields as
options over ``--config``; the friendly command and ``analyze`` take the same settings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.analyzer.test_plugin_analysis import CASES, cli, plugin, write_run

__all__ = ["plugin"]  # the fixture, used by name


def test_a_plugins_record_fields_are_options_of_analyze(plugin: dict[str, str]) -> None:
    shown = cli(plugin, "analyze", "cited", "--help")
    assert shown.returncode == 0, shown.stderr
    for option in ("--config", "--out", "--traces", "--min-citations", "--model-url"):
        assert option in shown.stdout, option
    assert "Does each answer cite the evidence it was given?" in shown.stdout


def test_an_option_overrides_the_config_files_field(plugin: dict[str, str], tmp_path: Path) -> None:
    run = write_run(tmp_path / "harbour")
    (tmp_path / "empty").mkdir()
    config = tmp_path / "cited.toml"
    config.write_text(f'traces = ["{tmp_path / "empty"}"]\n', encoding="utf-8")
    base = ["analyze", "cited", "--config", str(config)]
    from_file = cli(plugin, *base, "--out", str(tmp_path / "a"))
    assert from_file.returncode == 6, from_file.stderr  # the file's traces: none
    over = cli(plugin, *base, "--traces", str(run / "traces"), "--out", str(tmp_path / "b"))
    assert over.returncode == 0, over.stderr
    rows = json.loads((tmp_path / "b" / "cited.json").read_text())
    assert len(rows["rows"]) == len(CASES)
    strict = cli(plugin, *base, "--traces", str(run / "traces"), "--min-citations", "1000",
                 "--out", str(tmp_path / "c"))  # fmt: skip
    assert strict.returncode == 0, strict.stderr
    assert json.loads((tmp_path / "c" / "cited.json").read_text())["cited"] == 0
    assert rows["cited"] > 0


def test_without_a_config_file_the_options_are_the_record(
    plugin: dict[str, str], tmp_path: Path
) -> None:
    run = write_run(tmp_path / "harbour")
    done = cli(plugin, "analyze", "cited", "--traces", str(run / "traces"), "--out",
               str(tmp_path / "o"), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["rows"]) == len(CASES)
    missing = cli(plugin, "analyze", "cited", "--out", str(tmp_path / "m"))
    assert missing.returncode == 2
    assert "traces" in missing.stderr and "--config" in missing.stderr
    bad = cli(plugin, "analyze", "cited", "--traces", "x", "--min-citations", "two",
              "--out", str(tmp_path / "m"))  # fmt: skip
    assert bad.returncode == 2 and "--min-citations" in bad.stderr
    assert not (tmp_path / "m").exists()


def test_paths_and_analyze_paths_take_the_same_options_and_write_the_same_reports(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app
    from tests.analyzer.test_paths_parity import _friendly, _same_reports, inputs

    folder = inputs.__wrapped__(tmp_path)  # type: ignore[attr-defined]
    friendly = _friendly(folder, "traces.jsonl", tmp_path / "a")
    generic = CliRunner().invoke(build_app(), [
        "analyze", "paths", "--traces", str(folder / "traces.jsonl"),
        "--cases", str(folder / "cases.jsonl"), "--tools-config", str(folder / "tools.toml"),
        "--resamples", "300", "--seed", "11", "--out", str(tmp_path / "b"),
    ])  # fmt: skip
    assert (friendly.exit_code, generic.exit_code) == (0, 0), generic.output
    _same_reports(tmp_path / "a", tmp_path / "b")
    bad = CliRunner().invoke(build_app(), [
        "analyze", "paths", "--traces", str(folder / "traces.jsonl"),
        "--cases", str(folder / "cases.jsonl"), "--resamples", "0", "--out", str(tmp_path / "c"),
    ])  # fmt: skip
    assert bad.exit_code == 2
    assert "--resamples" in bad.output and not (tmp_path / "c").exists()
