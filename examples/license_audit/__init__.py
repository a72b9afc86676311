"""A multi-source audit over the 47 licences of choosealicense.com (see ``corpus`` and ``app``).

Usage::

    groundtrace audit run --out runs/audit
"""

__all__: list[str] = []
