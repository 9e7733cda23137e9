"""schedc's version (pyproject.toml's), for cache keys and the public API."""

__version__ = "0.1.0"
