"""schedc's pass pipeline: parse `a,b{opt=value}` and run the passes on a module."""

from __future__ import annotations

import dataclasses
import math
import sys
import typing
from dataclasses import dataclass

from iree.compiler import ir, passmanager

from schedc.errors import SchedcError
from schedc.ir.iree import with_user_function_names
from schedc.ir.mlirio import format_diagnostics, location_prefix


class PipelineError(SchedcError):
    """A pipeline string names an unknown pass or option, or a pass failed on the IR."""


@dataclass(frozen=True)
class PassInvocation:
    name: str
    options: object  # the pass's frozen options dataclass


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced '}}' in pass pipeline '{text}'")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if depth != 0:
        raise PipelineError(f"unbalanced '{{' in pass pipeline '{text}'")
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _convert(value: str, type_, where: str):
    if type_ is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise PipelineError(f"{where}: expected true or false, got '{value}'")
    if type_ in (int, float):
        try:
            number = type_(value)
        except ValueError:
            raise PipelineError(f"{where}: expected {type_.__name__}, got '{value}'") from None
        if type_ is float and not math.isfinite(number):
            raise PipelineError(f"{where}: expected a finite number, got '{value}'")
        return number
    return value


def parse_pipeline(text: str, registry) -> list[PassInvocation]:
    """Parses `a,b{opt=value other=2}` against the registry of passes."""
    invocations = []
    for part in _split_top_level(text):
        name, _, rest = part.partition("{")
        name = name.strip()
        if name not in registry:
            raise PipelineError(
                f"unknown pass '{name}'; available passes: {', '.join(sorted(registry))}"
            )
        info = registry[name]
        hints = typing.get_type_hints(info.options)
        fields = {f.name for f in dataclasses.fields(info.options)}
        values = {}
        for item in rest.rstrip("}").split():
            key, eq, value = item.partition("=")
            field_name = key.replace("-", "_")
            if field_name in fields and not eq:
                raise PipelineError(f"pass '{name}': option '{key}' needs a value ({key}=...)")
            if field_name not in fields:
                valid = ", ".join(sorted(f.replace("_", "-") for f in fields)) or "none"
                raise PipelineError(f"pass '{name}' has no option '{key}'; its options: {valid}")
            values[field_name] = _convert(value, hints[field_name], f"{name}{{{key}}}")
        try:
            options = info.options(**values)
        except ValueError as e:  # options validate themselves in __post_init__
            raise PipelineError(f"pass '{name}': {e}") from None
        invocations.append(PassInvocation(name, options))
    return invocations


def complete_pipeline(invocations: list[PassInvocation], registry) -> list[PassInvocation]:
    """The passes a compile runs, phase by phase (the pipeline's order within a phase), with
    the passes that carry others' decisions further (`followed_by`) added; a pass whose
    `requires` do not run before it, or that runs before one of its `after`, is an error."""
    from schedc.compiler.phases import PHASE_NAMES

    invocations = list(invocations)
    names = [i.name for i in invocations]
    for invocation in invocations:  # grows while it runs: followers may have followers
        for follower in registry[invocation.name].followed_by:
            if follower not in names:
                invocations.append(PassInvocation(follower, registry[follower].options()))
                names.append(follower)
    ordered = sorted(invocations, key=lambda i: PHASE_NAMES.index(registry[i.name].phase))
    for index, invocation in enumerate(ordered):
        info = registry[invocation.name]
        before = {i.name for i in ordered[:index]}
        for needed in info.requires:
            if needed not in before:
                raise PipelineError(f"pass '{info.name}' needs '{needed}' to run before it")
        for earlier in info.after:
            if earlier in names and earlier not in before:
                raise PipelineError(f"pass '{info.name}' must run after '{earlier}'; the pipeline has it later")
    return ordered


def run_pipeline(module: ir.Operation, invocations: list[PassInvocation], registry, context, where=None) -> None:
    """Runs the passes through MLIR's pass manager (which verifies the IR after each).

    Warnings are printed with their `file:line:col: `, or what `where(prefix)` makes of it (the
    driver names the user's input in place of its intermediate files, gone after the run)."""
    if not invocations:
        return
    with module.context:
        pm = passmanager.PassManager("builtin.module")
        for invocation in invocations:
            info = registry[invocation.name]

            def run(op, pass_, info=info, options=invocation.options):
                timer = getattr(context, "timer", None)  # contexts made by hand may have none
                if timer is None:
                    info.run(op, pass_, options, context)
                    return
                with timer.phase(info.name):
                    info.run(op, pass_, options, context)

            pm.add(run, name=invocation.name)
        try:
            pm.run(module)
        except ir.MLIRError as e:
            raise PipelineError(format_diagnostics(e)) from None
    for location, message in getattr(context, "warnings", []):
        prefix = location_prefix(location)
        print(f"{where(prefix) if where else prefix}warning: {with_user_function_names(message)}", file=sys.stderr)
    if hasattr(context, "warnings"):
        context.warnings.clear()
