"""The one options model: the CLI's flags, `schedc.compile`'s keywords, the pass context and
the torch.compile backend's options all come from `schedc.options.CompileOptions`, so none of
them can gain an option the others lack without one of these tests failing."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from schedc.compiler.driver import compile as compile_api
from schedc.errors import CompileError
from schedc.options import CompileOptions, Emit, Execution, Phase, TargetName, backend_fields, compile_fields
from schedc.passes import REGISTRY
from schedc.passes.base import PassContext
from schedc.targets import resolve_target
from schedc.tools.schedc import compile_parser
from schedc.torch.dynamo import BACKEND_OWN_OPTIONS, BackendOptions

# What compile() and the CLI take besides the options: the input and the output (and, for
# compile, where passes print and the progress line goes).
IO_KEYWORDS = {"source", "input_file", "output", "pass_output", "progress"}
IO_FLAGS = {"input_file", "output"}


def test_every_option_says_where_it_goes():
    for f in compile_fields():
        assert set(f.metadata) >= {"help", "flag", "backend", "context"}, f"{f.name} was not declared with option(...)"
        assert f.metadata["help"], f"{f.name} has no help"


def test_the_command_line_has_one_flag_per_option():
    dests = {a.dest for a in compile_parser()._actions} - {"help"}
    with_flags = {f.name for f in compile_fields() if f.metadata["flag"]}
    assert dests == with_flags | IO_FLAGS
    flags = [f.metadata["flag"] for f in compile_fields() if f.metadata["flag"]]
    assert len(flags) == len(set(flags))


def test_compile_takes_every_option_as_a_keyword():
    keywords = set(inspect.signature(compile_api).parameters)
    assert keywords == {f.name for f in compile_fields()} | IO_KEYWORDS


def test_compile_keyword_defaults_are_the_options_defaults():
    parameters = inspect.signature(compile_api).parameters
    defaults = CompileOptions()
    for f in compile_fields():
        if f.name == "target":
            continue  # None: the default target
        default, expected = parameters[f.name].default, getattr(defaults, f.name)
        assert (tuple(default) if isinstance(expected, tuple) else default) == expected, f.name


def test_the_backend_takes_the_options_marked_backend_and_its_own():
    fields = {f.name for f in dataclasses.fields(BackendOptions)}
    assert fields == {f.name for f in backend_fields()} | set(BACKEND_OWN_OPTIONS)
    passed_on = set(BackendOptions().compile_options("cuda"))
    assert passed_on == {f.name for f in backend_fields()} - {"target"}
    assert set(passed_on) <= set(inspect.signature(compile_api).parameters)


def test_the_pass_context_gets_every_option_marked_context():
    context_fields = {f.name for f in dataclasses.fields(PassContext)}
    marked = {f.name: f.metadata["context"] for f in compile_fields() if f.metadata["context"]}
    assert set(marked.values()) <= context_fields
    options = CompileOptions(target="cuda", cuda_arch="sm_86", execution="graphs", kernel_db="db.json", verify_plan=True)
    context = PassContext.from_options(options)
    assert (context.target, context.arch, context.execution, context.kernel_database, context.verify) == (
        TargetName.CUDA, "sm_86", Execution.GRAPHS, "db.json", True)
    assert PassContext().target is None and PassContext().execution is None  # schedc-opt: not known


def test_options_are_enums_spelled_as_on_the_command_line():
    options = CompileOptions(target="hip", emit="flow", execution="graphs")
    assert options.target is TargetName.ROCM and options.emit is Emit.FLOW and options.execution is Execution.GRAPHS
    assert f"{options.target}" == "rocm" and options.execution == "graphs"
    assert {p.phase for p in REGISTRY.values()} <= set(Phase)
    assert CompileOptions.for_target(resolve_target("cuda", cuda_arch="sm_89")).resolved_target.arch == "sm_89"


@pytest.mark.parametrize("options, message", [
    ({"target": "tpu"}, "unknown target 'tpu'"),
    ({"emit": "llvm"}, "unknown --emit 'llvm'"),
    ({"execution": "eager"}, "unknown execution 'eager'"),
    ({"target": "cuda", "cuda_arch": "sm_90"}, "unknown --cuda-arch 'sm_90'"),
])
def test_a_wrong_option_is_an_error_where_the_options_are_made(options, message):
    with pytest.raises(CompileError, match=message):
        CompileOptions(**options)
