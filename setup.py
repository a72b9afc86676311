"""Build hook for the one thing ``pyproject.toml`` cannot declare stably: the C extension.

``groundtrace.collectors._speedups`` (``collectors/_speedups.c``) is optional: where no C
compiler is available the build goes on without it and the collectors run the same code in
Python (see CONTRIBUTING.md, "Native code").
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "groundtrace.collectors._speedups",
            sources=["collectors/_speedups.c"],
            optional=True,
        )
    ]
)
