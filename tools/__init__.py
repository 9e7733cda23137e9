"""Command-line entry points: `schedc` and `schedc-opt`."""
