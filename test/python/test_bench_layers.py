"""bench/layers.py's CPU side: a model's layers as IREE fuses them (a convolution with the
ReLU that reads its output), one of each, the same on every run (the GPU machine finds them by
running the model itself), and its reading of Nsight Compute's kernels between markers; and
what the GPU benches share (bench/timing.py, bench/split_k.py's shapes)."""

from __future__ import annotations

import importlib.util
import sys

import torch
from torch import nn

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
_spec = importlib.util.spec_from_file_location("bench_layers", ROOT / "bench" / "layers.py")
layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layers)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.act = nn.ReLU(inplace=True)
        self.b = nn.Conv2d(8, 8, 3, padding=1)
        self.c = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout()

    def forward(self, x):
        x = self.act(self.a(x))
        x = self.act(self.b(x))
        y = self.c(x)  # the same shapes as b, no ReLU after it: a layer of its own
        return self.drop(self.pool(y + x))


def test_layers_fuse_what_iree_fuses_and_come_once():
    torch.manual_seed(0)
    found = layers.distinct_layers(Net().eval(), (torch.randn(1, 3, 8, 8),))
    assert [[type(m).__name__ for m in entry["module"]] for entry in found] == [["Conv2d", "ReLU"], ["Conv2d", "ReLU"], ["Conv2d"], ["MaxPool2d"]]
    assert not any(getattr(m, "inplace", False) for entry in found for m in entry["module"])


def test_seeded_weights_are_the_same_on_every_run():
    torch.manual_seed(0)
    first = layers.distinct_layers(Net().eval(), (torch.randn(1, 3, 8, 8),))
    a = layers.seeded(first[0]["module"], layers.seed_of(first[0]["key"]), torch.float16)
    b = layers.seeded(first[0]["module"], layers.seed_of(first[0]["key"]), torch.float16)
    assert a[0].weight.dtype == torch.float16 and torch.equal(a[0].weight, b[0].weight)
    assert float(a[0].weight.detach().float().std()) < 0.5  # 1/sqrt(fan in), not N(0, 1)


def test_kernels_between_markers():
    from timing import ncu_kernel_times

    csv = ('==PROF== Connected\n"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
           '"0","spin_kernel(long)","gpu__time_duration.sum","usecond","1.00"\n'
           '"1","cudnn_conv","gpu__time_duration.sum","nsecond","2,500"\n'
           '"2","spin_kernel(long)","gpu__time_duration.sum","usecond","1.00"\n'
           '"3","forward$async_dispatch_0","gpu__time_duration.sum","usecond","3.5"\n'
           '"4","forward$async_dispatch_1","gpu__time_duration.sum","usecond","0.5"\n')
    runs = layers.split_by_marker(ncu_kernel_times(csv))
    assert runs == [[("cudnn_conv", 2.5)], [("forward$async_dispatch_0", 3.5), ("forward$async_dispatch_1", 0.5)]]


def test_modules_compared_in_one_process_are_timed_a_call_of_each_in_turn():
    from timing import interleaved_median_ms

    calls = []
    medians = interleaved_median_ms({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b"] * 4  # a warm-up round, then three timed rounds
    assert set(medians) == {"a", "b"} and all(ms >= 0 for ms in medians.values())


def test_split_k_s_synthetic_linear_layers_are_no_held_out_model_s_and_its_pick_is_the_rule_s():
    spec = importlib.util.spec_from_file_location("bench_split_k", ROOT / "bench" / "split_k.py")
    split_k = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(split_k)
    from schedc.decisions.split_k import MATMUL_MIN_K, MATMUL_SPLIT_OUTPUTS, matmul_parts

    assert not set(split_k.FIT_MATMUL) & set(split_k.HELDOUT_MATMUL)
    for shape in split_k.FIT_MATMUL + split_k.HELDOUT_MATMUL:
        entry = {"shape": list(shape), "dtype": "f16"}
        assert split_k._pick(entry, MATMUL_SPLIT_OUTPUTS, MATMUL_MIN_K) == matmul_parts(split_k._shape_data(shape, "f16"))
        assert set(split_k._parts(shape, "f16")) <= set(split_k.PARTS) and 1 in split_k._parts(shape, "f16")


def _convolutions(model, inputs) -> set[tuple]:
    """(channels, height, width, filters, window, stride, padding) of each dense convolution the
    model runs."""
    found = set()
    for modules, x in layers.record_layers(model.eval(), inputs):
        conv = modules[0]
        if isinstance(conv, nn.Conv2d) and conv.groups == 1:
            found.add((conv.in_channels, x.shape[2], x.shape[3], conv.out_channels, conv.kernel_size[0], conv.stride[0], conv.padding[0]))
    return found


def test_the_fitting_set_s_convolutions_are_its_layers_and_no_held_out_model_s():
    import fitting
    import heldout

    model, inputs = fitting.fitting_convs()
    found = layers.distinct_layers(model.eval(), inputs)
    assert [[type(m).__name__ for m in layer["module"]] for layer in found] == [["Conv2d", "BatchNorm2d", "ReLU"]] * len(fitting.CONVS)
    assert _convolutions(model, inputs) == set(fitting.CONVS)
    for name in ("squeezenet1_1", "shufflenet_v2", "hf_resnet18", "hf_resnet50", "hf_mobilenet_v2", "convnext"):
        assert not _convolutions(*heldout.HELDOUT[name]()) & set(fitting.CONVS), name


def test_coverage_counts_the_triton_kernel_s_convolutions_as_schedc_s_work():
    spec = importlib.util.spec_from_file_location("bench_generalization", ROOT / "bench" / "generalization.py")
    generalization = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generalization)

    kernels = [{"kind": "conv", "work": 300, "source": "heuristic", "dispatch": "a"}, {"kind": "matmul", "work": 100, "source": "iree", "dispatch": "b"},
               {"kind": "reduction", "work": 999, "source": "heuristic", "dispatch": "c"}]
    records = {"kernel-config": {"module": {"kernels": kernels}},
               "triton-conv": {"unavailable": "not here", "forward": {"convolutions": [{"work": 600}], "left_to_iree": []}}}
    row = generalization.coverage_row(records)
    assert (row["dispatches"], row["heuristic"], row["triton"], row["iree"], row["iree_dispatches"]) == (3, 0.3, 0.6, 0.1, ["b"])


def test_the_tf32_module_is_an_f32_model_s_own_column(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_generalization", ROOT / "bench" / "generalization.py")
    generalization = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generalization)

    assert "schedc-graphs-tf32" not in generalization._extra_variants(False, False)
    (keywords, mode), = generalization._extra_variants(False, False, tf32=True).values()
    assert keywords == {"execution": "graphs", "tf32": True} and mode == "graphs"
    (tmp_path / "manifest.json").write_text('[{"model": "m", "dtype": "f32", "tf32": true}, {"model": "m", "dtype": "f16", "tf32": true}]')
    assert "schedc-graphs-tf32" in generalization._variants(tmp_path)
    assert "schedc-graphs-tf32" in generalization.COLUMNS and len(generalization.COLUMNS) == len(generalization.HEADER)
