"""expanded-slices: which slices a reshape splits are taken after it instead
(schedc.decisions.expanded_slices), that the module computes the same, and what a cuda compile
makes of a prefill's Q/K/V slices."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from schedc.decisions.expanded_slices import ExpandedSlice, expanded_slice, kept_dims


def test_gpt2_s_keys_are_heads_12_to_23_of_the_projection_split_into_heads():
    plan = expanded_slice((1, 32, 2304), (0, 0, 768), (1, 32, 768), (1, 1, 1), (32, 768), ((0,), (1, 2)), (32, 12, 64))
    assert plan == ExpandedSlice(shape=(1, 32, 36, 64), groups=((0,), (1,), (2, 3)), offsets=(0, 0, 12, 0), sizes=(1, 32, 12, 64))


def test_a_split_into_three_parts_divides_by_the_inner_two():
    plan = expanded_slice((6, 120), (2, 40), (3, 40), (1, 1), (3, 40), ((0,), (1, 2, 3)), (3, 2, 4, 5))
    assert plan == ExpandedSlice(shape=(6, 6, 4, 5), groups=((0,), (1, 2, 3)), offsets=(2, 2, 0, 0), sizes=(3, 2, 4, 5))


@pytest.mark.parametrize("args, why", [
    (((8, 2304), (0, 700), (8, 768), (1, 1), (8, 768), ((0,), (1, 2)), (8, 12, 64)), "an offset inside a head"),
    (((8, 2300), (0, 768), (8, 768), (1, 1), (8, 768), ((0,), (1, 2)), (8, 12, 64)), "a source no whole number of heads"),
    (((8, 2304), (0, 0), (8, 768), (1, 2), (8, 768), ((0,), (1, 2)), (8, 12, 64)), "a strided slice"),
    (((8, 2304), (0, 0), (8, 768), (1, 1), (8, 768), ((0, 1), (2,)), (2, 4, 768)), "the split dimension not sliced"),
    (((8, 2304), (0, 0), (8, 768), (1, 1), (8, 768), ((0,), (1, 2)), (8, 12, -1)), "a dynamic size"),
])
def test_what_is_left_alone(args, why):
    assert expanded_slice(*args) is None, why


def test_a_sliced_dimension_split_on_the_outside_too():
    plan = expanded_slice((8, 2304), (2, 0), (4, 2304), (1, 1), (4, 2304), ((0, 1), (2,)), (2, 2, 2304))
    assert plan == ExpandedSlice(shape=(4, 2, 2304), groups=((0, 1), (2,)), offsets=(1, 0, 0), sizes=(2, 2, 2304))


def test_rank_reduction_pairs_dimensions_as_mlir_does():
    assert kept_dims((1, 32, 2304), (1, 32, 768), (32, 768)) == [1, 2]
    assert kept_dims((1, 1, 5), (1, 1, 5), (1, 5)) == [0, 2]  # the first unit matched, the second dropped
    assert kept_dims((4, 5), (4, 5), (5,)) is None


def test_a_plan_slices_the_same_elements():
    """numpy: the original slice-then-reshape and the plan's reshape-then-slice agree."""
    source, offsets, sizes = (2, 6, 120), (0, 1, 40), (1, 4, 40)
    x = np.arange(np.prod(source)).reshape(source)
    before = x[0, 1:5, 40:80].reshape(4, 2, 4, 5)
    plan = expanded_slice(source, offsets, sizes, (1, 1, 1), (4, 40), ((0,), (1, 2, 3)), (4, 2, 4, 5))
    wide = x.reshape(plan.shape)
    after = wide[tuple(slice(o, o + s) for o, s in zip(plan.offsets, plan.sizes))].reshape(4, 2, 4, 5)
    assert np.array_equal(before, after)


@pytest.fixture(scope="session")
def tiny_generation(tmp_path_factory):
    from schedc.torch.generation import import_generation
    from test_generation import tiny_gpt2

    folder = tmp_path_factory.mktemp("expanded")
    model = tiny_gpt2()
    return model, import_generation(model, (8,), 32, params=str(folder / "lm.irpa")), folder / "lm.irpa"


def test_a_generation_module_with_the_pass_gives_hugging_faces_tokens(tiny_generation):
    """The rewrite is target-independent: on llvm-cpu (where it is not implicit) the module with
    it generates Hugging Face's greedy tokens."""
    import schedc
    from test_generation import reference

    model, mlir, params = tiny_generation
    module = schedc.load(schedc.compile(mlir, target="llvm-cpu", passes="expanded-slices,memory-order,arena-plan"), params=str(params))
    prompt = [5, 17, 300, 42, 7]
    assert module.generate(prompt, 12) == reference(model, prompt, 12)


def test_a_cuda_prefill_reads_its_keys_values_and_queries_without_copies(tmp_path):
    """An f16 generation module (IREE's generic matmuls read the heads through their maps)."""
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions
    from schedc.torch.generation import import_generation
    from test_generation import tiny_gpt2

    mlir = import_generation(tiny_gpt2().half(), (8,), 32, params=str(tmp_path / "lm.irpa"))

    def prefill(passes):
        result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow", passes=passes))
        body = result.output[result.output.index("util.func public @prefill_8$async("):]
        return body[: body.index("\n  }")], result.records

    def count(kind, body):
        return len(re.findall(rf"flow\.dispatch @\S+_{kind}", body))

    without, _ = prefill("expanded-slices{enabled=false},memory-order,arena-plan")
    with_, records = prefill("memory-order,arena-plan")
    # two layers: the slices' three copies a layer gone; the key and value caches each written
    # by one scatter that reads the projection in place (no transpose, no copy)
    assert (count("slow_memcpy", without), count("slow_memcpy", with_)) == (2 * 3, 0)
    assert count("scatter", with_) == 2 * 2 and count("transpose", with_) == 0
    assert records["expanded-slices"]["prefill_8$async"] == {"slices_after_reshapes": 2 * 3}
