"""groundtrace test suite (a package so shared helpers import as ``tests.support``)."""
