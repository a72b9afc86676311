"""Subprocess entry point of :class:`LlamaServer`: llama-cpp-python's server, CPU-safe.

``python -m groundtrace.analyzer.backends._llama_launch [--extra-bufts] <server args>``

Without ``--extra-bufts`` the model is loaded with llama.cpp's *extra buffer types* switched
off (``use_extra_bufts = False``): those repack weights for CPU extensions such as Intel AMX,
and a CPU that advertises AMX while the kernel or hypervisor does not enable it kills the
server with SIGILL at the first token. Plain CPU buffers are slower on real AMX hardware but
run everywhere.
"""

from __future__ import annotations

import runpy
import sys
from typing import Any

__all__ = ["main"]


def _disable_extra_buffer_types() -> None:
    import llama_cpp.llama_cpp as lc

    original = lc.llama_model_default_params

    def default_params() -> Any:
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    lc.llama_model_default_params = default_params


def main() -> None:
    """Run ``llama_cpp.server`` with the remaining command-line arguments."""
    args = sys.argv[1:]
    if "--extra-bufts" in args:
        args.remove("--extra-bufts")
    else:
        _disable_extra_buffer_types()
    sys.argv = ["llama_cpp.server", *args]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
