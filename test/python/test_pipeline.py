"""Parsing `a,b{opt=value}` pipelines against the pass registry."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from schedc.passes import REGISTRY, PassInfo
from schedc.compiler.pipeline import PipelineError, complete_pipeline, parse_pipeline


@dataclass(frozen=True)
class Options:
    strategy: str = "auto"
    limit: int = 10
    strict: bool = False


FAKE = {"p": PassInfo("p", "a pass", run=lambda *a: None, options=Options), **REGISTRY}


def test_options_are_typed():
    (inv,) = parse_pipeline("p{strategy=exact limit=3 strict=true}", FAKE)
    assert inv.options == Options("exact", 3, True)


def test_several_passes_keep_their_order():
    names = [i.name for i in parse_pipeline("print-kernel-graph, p{limit=1},print-kernel-graph", FAKE)]
    assert names == ["print-kernel-graph", "p", "print-kernel-graph"]


def test_empty_pipeline_is_no_passes():
    assert parse_pipeline("", FAKE) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("nope", "unknown pass 'nope'; available passes: arena-plan, cpu-config, expanded-slices, kernel-config, memory-order, mma-operands, overlap-fills, p, padded-producers, print-kernel-graph"),
        ("p{depth=1}", "pass 'p' has no option 'depth'; its options: limit, strategy, strict"),
        ("p{limit=many}", "expected int, got 'many'"),
        ("p{strict=maybe}", "expected true or false"),
        ("p{limit=1", "unbalanced '{'"),
    ],
)
def test_errors_say_what_is_valid(text, message):
    with pytest.raises(PipelineError, match=message.replace("(", r"\(").replace("{", r"\{")):
        parse_pipeline(text, FAKE)


def test_followers_join_and_passes_run_phase_by_phase():
    names = [i.name for i in complete_pipeline(parse_pipeline("arena-plan,memory-order,stream-schedule", REGISTRY), REGISTRY)]
    assert names == ["memory-order", "stream-schedule", "stream-waves", "arena-plan"]


def test_a_missing_prerequisite_is_an_error():
    with pytest.raises(PipelineError, match="pass 'stream-waves' needs 'stream-schedule' to run before it"):
        complete_pipeline(parse_pipeline("stream-waves", REGISTRY), REGISTRY)


def test_a_pass_before_what_it_must_follow_is_an_error():
    with pytest.raises(PipelineError, match="pass 'stream-schedule' must run after 'memory-order'"):
        complete_pipeline(parse_pipeline("stream-schedule,memory-order", REGISTRY), REGISTRY)


def test_an_unknown_phase_is_an_error_where_the_pass_is_defined():
    with pytest.raises(ValueError, match="unknown phase 'stream-asnyc'; phases: input, preprocessing, flow, stream-async, stream, configurations, hal"):
        PassInfo("p", "a pass", run=lambda *a: None, phase="stream-asnyc")


def test_the_registry_holds_exactly_these_passes_in_these_phases():
    assert {name: info.phase for name, info in REGISTRY.items()} == {
        "print-kernel-graph": "flow",
        "cpu-config": "input",
        "split-k": "input",
        "triton-conv": "input",
        "split-concat": "input",
        "shared-concat": "input",
        "strided-slices": "preprocessing",
        "expanded-slices": "preprocessing",
        "padded-producers": "preprocessing",
        "mma-operands": "flow",
        "kernel-config": "flow",
        "write-in-place": "flow",
        "memory-order": "flow",
        "remat": "flow",
        "stream-schedule": "flow",
        "stream-waves": "stream-async",
        "arena-plan": "stream",
        "overlap-fills": "stream",
        "reduction-config": "configurations",
        "static-replay": "hal",
    }
    with pytest.raises(PipelineError) as info:
        parse_pipeline("nope", REGISTRY)
    assert str(info.value) == (
        "unknown pass 'nope'; available passes: arena-plan, cpu-config, expanded-slices, kernel-config, memory-order, mma-operands, overlap-fills, padded-producers, print-kernel-graph, reduction-config, remat, shared-concat, split-concat, split-k, static-replay, stream-schedule, stream-waves, strided-slices, triton-conv, write-in-place"
    )
