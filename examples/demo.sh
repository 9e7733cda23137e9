#!/usr/bin/env bash
# The main job: import the bundled example (a conv net with four parallel branches), compile it
# for the host CPU and for cuda, rocm and vulkan, run it on the CPU, and show its kernel graph
# and what schedc's passes saved.
set -euo pipefail
OUT="${1:-build/demo}"
mkdir -p "$OUT"
export PYTHONWARNINGS=ignore

schedc import examples/models.py:branchy_convnet -o "$OUT/model.mlir" --save-inputs
# The kernel graph as IREE's flow phase gives it, then schedc's pipeline, and a summary of what
# it saved against IREE alone.
schedc "$OUT/model.mlir" -o "$OUT/model.cpu.vmfb" --passes=print-kernel-graph,memory-order,arena-plan \
  --summary --dump-phases "$OUT/phases"
for target in cuda rocm vulkan; do
  schedc "$OUT/model.mlir" --target=$target -o "$OUT/model.$target.vmfb"
done
ls -l "$OUT"/*.vmfb
schedc run "$OUT/model.cpu.vmfb" --function=forward --input=@"$OUT/model.arg0.npy"
