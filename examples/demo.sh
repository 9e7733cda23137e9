#!/usr/bin/env bash
# The main job: import the bundled example, compile it for the host CPU and for cuda, rocm and
# vulkan, run it on the CPU, and write a report of what schedc's passes decided.
#
# The model (examples/models.py:staged_branches) has three branches written stage by stage: all
# their wide tensors first, then all their narrow ones. In that order three 256 KiB tensors are
# alive at once. memory-order runs each branch to its end (estimated peak 1,086,464 B ->
# 593,920 B) and arena-plan packs its tensors into exactly that, so the module allocates
# 593,920 B of transients where IREE alone allocates 1,165,888 B (0.509x).
set -euo pipefail
OUT="${1:-build/demo}"
mkdir -p "$OUT"
export PYTHONWARNINGS=ignore

schedc import examples/models.py:staged_branches -o "$OUT/model.mlir" --save-inputs
# schedc's default pipeline (memory-order, arena-plan); --summary says what it saved against
# IREE alone, the report draws it: the memory timeline, the arena maps and the kernel graph.
schedc "$OUT/model.mlir" -o "$OUT/model.cpu.vmfb" --summary --report="$OUT/report.html"
for target in cuda rocm vulkan; do
  schedc "$OUT/model.mlir" --target=$target -o "$OUT/model.$target.vmfb"
done
schedc run "$OUT/model.cpu.vmfb" --function=forward --input=@"$OUT/model.arg0.npy"
echo "open $OUT/report.html in a browser to see what schedc decided"
