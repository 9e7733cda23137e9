"""Static replay (--execution=graphs) on the CPU: the recorded command buffers replay with
fresh inputs on every call, and the runtime's rules for the static results hold."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import schedc
from schedc.options import CompileOptions
from schedc.compiler.driver import compile_with_options

TWO_IN_TWO_OUT = """
func.func @forward(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %t = math.tanh %m : tensor<4x16xf32>
  %s = arith.addf %a, %a : tensor<4x8xf32>
  return %t, %s : tensor<4x16xf32>, tensor<4x8xf32>
}
"""

PASSTHROUGH = """
func.func @forward(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = arith.addf %a, %a : tensor<4x8xf32>
  return %a, %s : tensor<4x8xf32>, tensor<4x8xf32>
}
"""

DYNAMIC = """
func.func @forward(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %s = arith.addf %a, %a : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
"""


@pytest.fixture(scope="session")
def replayed_mlp(imported, tmp_path_factory):
    model, args, mlir = imported("mlp")
    path = tmp_path_factory.mktemp("replay") / "mlp.graphs.vmfb"
    schedc.compile(mlir, output=str(path), execution="graphs")
    return model, args, path


def reference(model, x):
    with torch.no_grad():
        return model(torch.as_tensor(x)).numpy()


def test_replays_give_fresh_results_for_changing_inputs(replayed_mlp):
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    generator = np.random.default_rng(0)
    inputs = [generator.standard_normal(x.shape).astype(np.float32) for _ in range(4)]
    results = [module.forward(value) for value in inputs]  # numpy results are the caller's own
    for value, result in zip(inputs, results):
        np.testing.assert_allclose(result, reference(model, value), rtol=1e-5, atol=1e-5)
    assert not np.allclose(results[0], results[1])


def test_device_arrays_in_turn_are_copied_from_the_buffer_each_call_passes(replayed_mlp):
    """A new input buffer is queue-copied in; the same buffer twice in a row gets a recording
    with its copy in front, kept for later calls with it. Arrays passed in turn (new, again,
    kept, another, kept) each give their own results."""
    import iree.runtime as rt

    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    generator = np.random.default_rng(1)
    values = [generator.standard_normal(x.shape).astype(np.float32) for _ in range(2)]
    arrays = [rt.asdevicearray(module.device, value) for value in values]
    for turn in (0, 1, 1, 1, 0, 1):
        result = module.forward(arrays[turn]).to_host()
        np.testing.assert_allclose(result, reference(model, values[turn]), rtol=1e-5, atol=1e-5)


def test_a_spinning_wait_gives_the_same_results_and_is_the_gpu_default_only(replayed_mlp):
    """wait="spin" calls the function's fence-taking twin and polls its fence; the CPU drivers
    block by default (their workers need the cores), and an unknown wait is an error."""
    model, (x,), path = replayed_mlp
    assert schedc.load(path).wait == "block"
    module = schedc.load(path, wait="spin")
    generator = np.random.default_rng(2)
    for _ in range(3):
        value = generator.standard_normal(x.shape).astype(np.float32)
        np.testing.assert_allclose(module.forward(value), reference(model, value), rtol=1e-5, atol=1e-5)
        tensor = torch.from_numpy(value)
        np.testing.assert_allclose(module.forward(tensor).numpy(), reference(model, value), rtol=1e-5, atol=1e-5)
    assert module.forward._spin and module.forward._signalled == 6
    with pytest.raises(schedc.RuntimeLoadError, match="unknown wait 'busy'; valid: spin, block"):
        schedc.load(path, wait="busy")


def test_numpy_calls_go_through_one_pinned_host_buffer_per_slot(replayed_mlp):
    # IREE's own numpy path lets the device read the caller's registered memory, which
    # failed in CUDA graph mode; a replay's numpy arguments go through host buffers of its own
    # (on CUDA, where its static inputs are device memory), made once per slot and reused.
    from schedc.runtime.interop import HostStaging

    _, (x,), path = replayed_mlp
    x = np.asarray(x)
    module = schedc.load(path)
    staging = HostStaging(module.device)
    first = staging.upload([np.ones_like(x)])
    again = staging.upload([x])
    assert sorted(staging._slots) == [("in", 0)] and again[0] is first[0]
    np.testing.assert_array_equal(staging._inputs[0][3], x)


def test_numpy_calls_write_into_the_static_inputs_and_read_results_where_they_are(replayed_mlp):
    # On the CPU's local devices the module's static buffers are host memory: a numpy call
    # writes its arguments into the static input buffers (the module then copies nothing in)
    # and reads its results in place, with no pinned buffer of the runtime's own.
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    first = np.ones_like(x)
    result = module.forward(first)
    staging = module.forward._staging
    assert staging._slots == {}
    assert staging._inputs[0][2].get_buffer().ref == module.forward._static_input_views()[0].get_buffer().ref
    first[...] = 2.0  # the caller's array is read at the call, not later
    again = module.forward(x)
    np.testing.assert_allclose(result, reference(model, np.ones_like(x)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(again, reference(model, x), rtol=1e-5, atol=1e-5)
    with pytest.raises(schedc.SchedcError, match="shape"):  # an argument that does not fit goes through a slot, and fails
        module.forward(np.ones((x.shape[0] + 1, *x.shape[1:]), np.float32))
    np.testing.assert_allclose(module.forward(np.asarray(x)), reference(model, x), rtol=1e-5, atol=1e-5)
    assert staging._inputs[0] is staging._adopted[0]  # then back to the static input


def test_torch_results_are_static_until_copied(replayed_mlp):
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    first_input, second_input = torch.randn(x.shape), torch.randn(x.shape)
    kept = module.forward(first_input, copy=True)
    view = module.forward(first_input)  # CPU tensors on local-task: DLPack, no copy
    expected_first = reference(model, first_input)
    np.testing.assert_allclose(kept.numpy(), expected_first, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(view.numpy(), expected_first, rtol=1e-5, atol=1e-5)
    module.forward(second_input)
    expected_second = reference(model, second_input)
    np.testing.assert_allclose(view.numpy(), expected_second, rtol=1e-5, atol=1e-5)  # overwritten
    np.testing.assert_allclose(kept.numpy(), expected_first, rtol=1e-5, atol=1e-5)  # its own


def test_queued_calls_keep_their_own_results(replayed_mlp):
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    inputs = [torch.randn(x.shape) for _ in range(3)]
    pending = [module.forward.async_(value) for value in inputs]
    for value, call in zip(inputs, pending):
        np.testing.assert_allclose(call.wait().numpy(), reference(model, value), rtol=1e-5, atol=1e-5)


def test_several_inputs_and_outputs(tmp_path):
    replayed, plain = tmp_path / "two.graphs.vmfb", tmp_path / "two.vmfb"
    schedc.compile(TWO_IN_TWO_OUT, output=str(replayed), execution="graphs")
    schedc.compile(TWO_IN_TWO_OUT, output=str(plain))
    replay, reference_module = schedc.load(replayed, device="local-sync"), schedc.load(plain)
    generator = np.random.default_rng(1)
    for _ in range(3):
        a = generator.standard_normal((4, 8)).astype(np.float32)
        b = generator.standard_normal((8, 16)).astype(np.float32)
        for got, want in zip(replay.forward(a, b), reference_module.forward(a, b)):
            np.testing.assert_array_equal(got, want)


def test_concurrent_waves_replay_correctly(imported, tmp_path):
    model, (x,), mlir = imported("branchy_convnet")
    path = tmp_path / "branchy.graphs.vmfb"
    pipeline = "memory-order,stream-schedule{mode=max-concurrency},arena-plan"
    result = compile_with_options(mlir, CompileOptions.for_target(
        schedc.resolve_target("llvm-cpu"), passes=pipeline, execution="graphs"))
    path.write_bytes(result.output)
    assert result.records["static-replay"]["forward$async"]["recorded_command_buffers"] >= 1
    module = schedc.load(path)
    for value in (x, torch.randn(x.shape)):
        np.testing.assert_allclose(module.forward(value.numpy()), reference(model, value), rtol=1e-4, atol=1e-4)


def test_fills_beside_kernels_replay_correctly(imported, tmp_path):
    """overlap-fills runs a padded conv input's fill beside the kernel before it, whose bytes
    it does not touch; fresh inputs still meet zeroed borders."""
    model, (x,), mlir = imported("branchy_convnet")
    pipeline = "memory-order,arena-plan,overlap-fills"
    # IREE's own CPU build: cpu-config's im2col would fold the padded input into its matmul.
    result = compile_with_options(mlir, CompileOptions.for_target(schedc.resolve_target("llvm-cpu"), passes=pipeline, execution="graphs", tuning=False))
    record = result.records["overlap-fills"]["forward$async"]
    assert 1 <= record["overlapped"] < record["fills"]
    path = tmp_path / "branchy.graphs.vmfb"
    path.write_bytes(result.output)
    module = schedc.load(path)
    for value in (x, torch.randn(x.shape) * 10, x):
        np.testing.assert_allclose(module.forward(value.numpy()), reference(model, value), rtol=1e-4, atol=1e-4)


def test_persistent_fills_run_once_and_replay_correctly(imported, tmp_path):
    """arena-plan{persistent-fills=true} pins the branchy convnet's padded buffers and
    static-replay fills them once, when the module loads: later calls, with other inputs,
    still meet the fill value in the borders (a border another slice overwrote between calls
    would show as a wrong result)."""
    model, (x,), mlir = imported("branchy_convnet")
    pipeline = "memory-order,arena-plan{persistent-fills=true}"
    result = compile_with_options(mlir, CompileOptions.for_target(schedc.resolve_target("llvm-cpu"), passes=pipeline, execution="graphs", report="r.json"))
    (arena,) = result.records["arena-plan"]["forward$async"]
    assert arena["persistent_fills"] >= 2 and arena["pinned_bytes"] > 0
    from schedc.report.build import summary_lines

    assert f"{arena['persistent_fills']} fills run once in {arena['pinned_bytes']:,} B pinned" in summary_lines(result.report)[0]
    assert 1 <= result.records["static-replay"]["forward$async"]["fills_once"] <= arena["persistent_fills"]
    path = tmp_path / "branchy.pinned.vmfb"
    path.write_bytes(result.output)
    module = schedc.load(path)
    for value in (x, torch.randn(x.shape) * 10, torch.randn(x.shape) - 5, x):
        np.testing.assert_allclose(module.forward(value.numpy()), reference(model, value), rtol=1e-4, atol=1e-4)


def test_persistent_fills_without_replay_are_warned_about(imported, capsys):
    _, _, mlir = imported("branchy_convnet")
    options = CompileOptions.for_target(schedc.resolve_target("llvm-cpu"), passes="arena-plan{persistent-fills=true}", execution="streams")
    result = compile_with_options(mlir, options)
    assert "persistent-fills=true} pins padded buffers" in capsys.readouterr().err
    assert "static-replay" not in result.records
    compile_with_options(mlir, CompileOptions.for_target(schedc.resolve_target("llvm-cpu"), passes="arena-plan", execution="streams"))
    assert "persistent-fills" not in capsys.readouterr().err


def test_dynamic_shapes_are_refused_with_a_clear_error(tmp_path):
    output = tmp_path / "dynamic.vmfb"
    with pytest.raises(schedc.SchedcError, match="@forward takes a tensor of dynamic shape: static replay .* needs static shapes"):
        schedc.compile(DYNAMIC, output=str(output), execution="graphs")
    assert not output.exists()


def test_torch_results_of_a_module_not_replayed_are_their_own(imported, tmp_path):
    model, (x,), mlir = imported("mlp")
    path = tmp_path / "mlp.vmfb"
    schedc.compile(mlir, output=str(path))
    module = schedc.load(path)
    first_input, second_input = torch.randn(x.shape), torch.randn(x.shape)
    first = module.forward(first_input)
    module.forward(second_input)
    np.testing.assert_allclose(first.numpy(), reference(model, first_input), rtol=1e-5, atol=1e-5)


def test_a_result_torch_cannot_take_over_is_copied_on_the_device(replayed_mlp):
    from schedc.runtime.interop import _DLPACK_CPU, copy_into_torch

    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    value = np.random.default_rng(3).standard_normal(x.shape).astype(np.float32)
    result = module._context.modules[module.vm_name]["forward"](value)  # an IREE DeviceArray
    tensor = copy_into_torch(module.device, result, (_DLPACK_CPU, 0))
    module.forward(np.zeros_like(value))  # overwrites the static result, not the copy
    np.testing.assert_allclose(tensor.numpy(), reference(model, value), rtol=1e-5, atol=1e-5)


def test_a_module_replayed_by_name_still_returns_numpy_results_of_their_own(tmp_path):
    path = tmp_path / "two.replayed.vmfb"
    schedc.compile(TWO_IN_TWO_OUT, output=str(path), passes="static-replay")  # no --execution
    module = schedc.load(path)
    assert module.replayed
    a, b = np.ones((4, 8), np.float32), np.ones((8, 16), np.float32)
    first, _ = module.forward(a, b)
    module.forward(a * 2, b)
    np.testing.assert_allclose(first, np.tanh(np.full((4, 16), 8.0, np.float32)), rtol=1e-6)


def test_a_tensor_changed_in_place_gives_fresh_results(replayed_mlp):
    """The view imported for a tensor is reused while the same tensor comes back: IREE must
    still read its current contents on every call. The calls go through every path a tensor
    takes: written into the static input by torch, then imported (the module queue-copies it,
    then records its kept recording for it, then replays that)."""
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    value = torch.randn(x.shape)
    for _ in range(5):
        result = module.forward(value, copy=True)
        np.testing.assert_allclose(result.numpy(), reference(model, value), rtol=1e-5, atol=1e-5)
        value.mul_(-2.0).add_(0.5)


def test_a_strided_tensor_changed_in_place_gives_fresh_results(replayed_mlp):
    """A tensor that is not contiguous goes in as a contiguous copy: a copy is never reused."""
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    storage = torch.randn(x.shape[1], x.shape[0])
    value = storage.t()  # the same shape as x, transposed strides
    assert not value.is_contiguous()
    first = module.forward(value, copy=True)
    storage.mul_(3.0)
    second = module.forward(value, copy=True)
    np.testing.assert_allclose(first.numpy(), reference(model, value / 3.0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second.numpy(), reference(model, value), rtol=1e-5, atol=1e-5)


def test_a_new_tensor_in_the_same_slot_gives_fresh_results(replayed_mlp):
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    for seed in range(3):  # each tensor is dropped after its call: its memory can come back
        value = torch.randn(x.shape, generator=torch.Generator().manual_seed(seed))
        np.testing.assert_allclose(module.forward(value).numpy(), reference(model, value), rtol=1e-5, atol=1e-5)
        del value


def test_replayed_results_alias_the_same_static_memory_each_call(replayed_mlp):
    """The tensor exported for a static result buffer is handed out again, as torch's CUDA
    graphs hand out their static outputs; once the caller changed the one handed out (its
    shape, or autograd's tracking), the next call hands out a fresh alias."""
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    first = module.forward(torch.randn(x.shape))
    assert module.forward(torch.randn(x.shape)) is first
    expected_shape = tuple(first.shape)
    first.unsqueeze_(0)
    value = torch.randn(x.shape)
    second = module.forward(value)
    assert second.data_ptr() == first.data_ptr() and second is not first
    assert tuple(second.shape) == expected_shape
    np.testing.assert_allclose(second.numpy(), reference(model, value), rtol=1e-5, atol=1e-5)
    second.requires_grad_()
    third = module.forward(value)
    assert third is not second and not third.requires_grad and third.data_ptr() == first.data_ptr()


def test_torch_inputs_are_written_into_the_static_input_buffers(replayed_mlp):
    """A replayed module offers its static input buffers; by default the runtime writes torch
    inputs there itself, so the module's own copy is skipped, and results follow each input.
    With static_inputs=False it imports them and the module copies."""
    model, (x,), path = replayed_mlp
    importing = schedc.load(path, static_inputs=False)
    value = torch.randn(x.shape)
    np.testing.assert_allclose(importing.forward(value).numpy(), reference(model, value), rtol=1e-5, atol=1e-5)
    assert importing.forward._static_inputs is None  # never looked up
    module = schedc.load(path)
    for _ in range(2):
        value = torch.randn(x.shape)
        np.testing.assert_allclose(module.forward(value).numpy(), reference(model, value), rtol=1e-5, atol=1e-5)
        _, (static,) = module.forward._static_inputs
        assert torch.equal(static, value) and static.data_ptr() != value.data_ptr()


def test_a_result_that_is_not_a_static_buffer_follows_each_call(tmp_path):
    """static-replay lists the results that are views of the same static buffer every call;
    the runtime hands out the tensor it exported for those unchecked, and checks the others
    (here the input, returned as it is: a new tensor's memory each call, imported)."""
    path = tmp_path / "passthrough.vmfb"
    schedc.compile(PASSTHROUGH, output=str(path), execution="graphs")
    module = schedc.load(path, static_inputs=False)
    assert module.static_result_slots("forward") == {1}
    for _ in range(4):
        value = torch.randn(4, 8)
        same, doubled = module.forward(value)
        np.testing.assert_allclose(same.numpy(), value.numpy())
        np.testing.assert_allclose(doubled.numpy(), 2 * value.numpy(), rtol=1e-6)


def test_a_torch_input_of_another_shape_is_still_an_error(replayed_mlp):
    model, (x,), path = replayed_mlp
    module = schedc.load(path)
    module.forward(torch.randn(x.shape))
    with pytest.raises(schedc.SchedcError, match="calling forward failed"):
        module.forward(torch.randn(x.shape[0] + 1, *x.shape[1:]))


def test_functions_share_one_pool_of_transients_laid_out_per_function():
    from schedc.decisions.static_replay import POOL_ALIGNMENT, ReplayPlan, StaticBuffer, pooled_bytes, shared_pool

    def plan(name, *buffers):
        return ReplayPlan(name, "__device_0", tuple(StaticBuffer(f"{name}_{i}", n, "alloca 0", transient) for i, (n, transient) in enumerate(buffers)), ())

    small = plan("prefill_8", (1000, True), (300, True), (64, False))
    large = plan("prefill_16", (5000, True), (64, False))
    pool = shared_pool([small, large])
    assert pool.by_buffer == {"prefill_8_0": 0, "prefill_8_1": 1024, "prefill_16_0": 0}  # one after another, aligned
    assert pool.bytes == 5120 and pool.bytes % POOL_ALIGNMENT == 0
    assert pooled_bytes([small, large], pool) == {"static_bytes": 5120 + 128, "static_bytes_unshared": 1364 + 5064, "pool_bytes": 5120}
    assert shared_pool([small, plan("decode", (64, False))]) is None  # one function's transients: nothing to share


@pytest.mark.parametrize("function, nbytes, generation, host", [
    ("decode$async", 8, True, True),  # a step's token id
    ("prefill_32_x4$async", 32, True, True),  # four sequences' tokens
    ("decode_x8", 64, True, True),
    ("decode$async", 2048, True, False),  # larger than a step's tokens (its mask over the cache, logits)
    ("forward$async", 8, True, False),  # a generation module's other function
    ("decode$async", 8, False, False),  # a model's own function named decode
    ("decode$async", 0, True, False),
])
def test_only_a_generation_steps_small_inputs_and_results_live_in_host_memory(function, nbytes, generation, host):
    from schedc.decisions.static_replay import in_host_memory

    assert in_host_memory(function, nbytes, generation) is host
