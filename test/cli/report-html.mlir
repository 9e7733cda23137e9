// The HTML report and --timing: one self-contained page with every chart, and the wall time
// of each phase and pass. Piped, stderr is not a terminal: no progress line.
// RUN: schedc %s --report=%t.html --timing -o %t.vmfb 2>&1 | filecheck %s --check-prefix=TIMING
// RUN: filecheck %s --check-prefix=HTML < %t.html
// RUN: filecheck %s --check-prefix=OFFLINE < %t.html
// RUN: schedc %s --report=%t.json -o %t.vmfb 2>&1 | filecheck %s --check-prefix=JSON
// RUN: schedc report %t.json -o %t.again.html 2>&1 | filecheck %s --check-prefix=WROTE
// RUN: filecheck %s --check-prefix=HTML < %t.again.html

// TIMING-NOT: schedc [
// TIMING: schedc execution time report
// TIMING: Total Execution Time:
// TIMING: IREE from the input phase to the flow phase
// TIMING-NEXT: schedc's passes at flow
// TIMING-NEXT:   write-in-place
// TIMING-NEXT:   memory-order
// TIMING-NEXT: IREE's allocation of concurrent waves
// TIMING-NEXT: IREE's stream phase up to stream-allocation
// TIMING-NEXT: schedc's passes at stream-allocation
// TIMING-NEXT:   arena-plan
// TIMING-NEXT: IREE's stream phase up to its end
// TIMING-NEXT: IREE from the stream phase to the module
// TIMING-NEXT: report: IREE's stream phase without schedc
// TIMING-NEXT: report: writing {{.*}}.html
// TIMING-NEXT: (100.0%)  Total

// HTML: <!DOCTYPE html>
// HTML: <section data-function="add_mul">
// The short table first, every figure of the report folded below it; a byte cell holds the
// exact bytes in data-value and shows them in the page's unit (B for a model this small).
// HTML: <tr data-key="headline.transient"><th><a class="term" href="#term-transient">transient</a> bytes the module allocates</th><td data-value="1024" title="1,024 B">1,024 B</td>
// HTML: <details><summary>All figures
// HTML: <tr data-key="program_peak_bytes"><th>{{[^<]*}}</th><td data-value="1024" title="1,024 B">1,024 B</td></tr>
// HTML: <tr data-key="schedc_bytes"><th>{{[^<]*}}</th><td data-value="1024" title="1,024 B">1,024 B</td></tr>
// HTML: data-chart="memory-timeline"
// HTML: data-chart="arena-map"
// HTML: data-chart="arena-map"
// HTML: data-chart="arena-map"
// HTML: stream-schedule did not run
// HTML: data-chart="kernel-graph"
// HTML: <dl class="glossary"><dt id="term-kernel">
// HTML: <script type="application/json" id="schedc-report">
// Nothing to fetch: no external script, style, image or font; links only within the page.
// OFFLINE-NOT: {{ src=| href="[^#]|url\(|@import}}
// OFFLINE: <a class="term" href="#term-
// OFFLINE-NOT: {{ src=| href="[^#]|url\(|@import}}
// JSON: wrote {{.*}}.vmfb and {{.*}}.json
// WROTE: wrote {{.*}}.again.html
func.func @add_mul(%a: tensor<256xf32>, %b: tensor<256x256xf32>) -> tensor<256xf32> {
  %init = tensor.empty() : tensor<256xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256xf32>) -> tensor<256xf32>
  %mv = linalg.matvec ins(%b, %a : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  %mv2 = linalg.matvec ins(%b, %mv : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  return %mv2 : tensor<256xf32>
}
