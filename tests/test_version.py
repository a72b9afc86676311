"""One version source: ``groundtrace.sdk.__version__``; everything else reads it.

The packaging metadata (``pyproject.toml``'s dynamic version), the installed distribution,
``groundtrace --version`` and the instrumentation scope of every span the SDK and its
instrumentors make all carry that one string, and no other file of the packages spells it out.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import groundtrace.sdk as gt
from groundtrace.sdk import _runtime

ROOT = Path(__file__).resolve().parents[1]
VERSION_MODULE = ROOT / "sdk" / "_version.py"
#: The folders of the four packages (package-dir in pyproject.toml).
PACKAGES = ("sdk", "collectors", "analyzer", "examples")


def test_the_version_is_a_release_version() -> None:
    # PEP 440's public version form, e.g. 0.1.0, 1.2.0rc1, 2.0.post1
    assert re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", gt.__version__)
    assert "__version__" in gt.__all__


def _static_attr(module_file: Path, name: str) -> object:
    """The literal ``module_file`` assigns to ``name``, read as setuptools' ``attr:`` reads it
    (statically, without importing)."""
    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{module_file} assigns no literal {name}")


def test_pyproject_reads_the_version_from_the_sdk() -> None:
    # Read with tomllib only: the runtime setuptools (whatever version the environment has)
    # must not decide whether the suite passes.
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in declared["project"], "pyproject.toml must not spell the version"
    assert declared["project"]["dynamic"] == ["version"]
    setuptools = declared["tool"]["setuptools"]
    attr = setuptools["dynamic"]["version"]["attr"]
    module, _, name = attr.rpartition(".")
    # the module's file through [tool.setuptools.package-dir], as the build resolves it
    package = max(
        (p for p in setuptools["package-dir"] if module == p or module.startswith(p + ".")),
        key=len,
    )
    rest = module.removeprefix(package).lstrip(".").split(".")
    module_file = ROOT / setuptools["package-dir"][package] / Path(*rest).with_suffix(".py")
    assert module_file == VERSION_MODULE
    assert _static_attr(module_file, name) == gt.__version__


def test_the_installed_distribution_has_the_version() -> None:
    installed = importlib.metadata.version("groundtrace")
    assert installed == gt.__version__, (
        f"the installed metadata says {installed}, the source {gt.__version__}: "
        "reinstall (pip install -e .)"
    )


def test_no_other_file_of_the_packages_spells_the_version() -> None:
    quoted = re.compile(rf"""["']v?{re.escape(gt.__version__)}["']""")
    files = [ROOT / "pyproject.toml"]
    for package in PACKAGES:
        files += [p for p in (ROOT / package).rglob("*") if p.suffix in {".py", ".toml", ".cfg"}]
    copies = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        if path != VERSION_MODULE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if quoted.search(line)
    ]
    assert not copies, "the version is written again outside sdk/_version.py:\n" + "\n".join(copies)


def test_the_command_line_prints_the_version() -> None:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    result = CliRunner().invoke(build_app(), ["--version"], prog_name="groundtrace")
    assert result.exit_code == 0, result.output
    assert result.output == f"groundtrace {gt.__version__}\n"
    help_text = CliRunner().invoke(build_app(), ["--help"], prog_name="groundtrace").output
    assert "--version" in help_text


@pytest.fixture
def provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    old_settings, old_provider = _runtime.settings(), _runtime._STATE.provider
    _runtime.install(_runtime.Settings(), provider)
    try:
        yield provider, exporter
    finally:
        _runtime.install(old_settings, old_provider)
        provider.shutdown()


def test_spans_carry_the_version_as_their_scope_version(
    provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    from rank_bm25 import BM25Okapi

    from groundtrace.sdk.instrumentation.rank_bm25 import RankBM25Instrumentor

    tracer_provider, exporter = provider

    @gt.request(app_name="version-test")
    def handle(question: str) -> str:
        corpus = ["jaws is a film", "the beatles were a band", "paris is a city"]
        bm25 = BM25Okapi([doc.split() for doc in corpus])
        return str(bm25.get_top_n(question.split(), corpus, n=1)[0])

    instrumentor = RankBM25Instrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider)
    try:
        assert handle("jaws film") == "jaws is a film"
    finally:
        instrumentor.uninstrument()
    spans = exporter.get_finished_spans()
    assert len(spans) == 2  # the request (decorator) and the retrieval (instrumentor)
    scopes = {(s.instrumentation_scope.name, s.instrumentation_scope.version) for s in spans}
    assert scopes == {("groundtrace", gt.__version__)}
