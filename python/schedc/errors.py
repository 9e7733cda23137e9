"""Errors schedc reports to users.

A `SchedcError` is a user's mistake or a failure of a tool schedc drives; the command-line tools
print its message and exit non-zero without a traceback. Anything else is a bug in schedc.
"""


class SchedcError(Exception):
    """A problem the user can act on; its message is complete and printed as is."""


class CompileError(SchedcError):
    """A compile failed: bad input IR, an unknown target, or IREE's own failure.

    `repro` is a one-line shell command that reproduces an IREE failure, when there is one.
    """

    def __init__(self, message: str, repro: str | None = None):
        super().__init__(message)
        self.repro = repro
        self.crashed = False  # IREE's tool died of a signal or an assertion (iree_tools.run_iree_tool)

    def __str__(self) -> str:
        text = super().__str__()
        if self.repro:
            text += f"\nreproduce with: {self.repro}"
        return text


class RuntimeLoadError(SchedcError):
    """A module could not be loaded or called on the requested device."""
