// arena-plan{persistent-fills=true}: padded buffers (a fill, then one dispatch that stores at
// constant offsets, then reads) get bytes no other slice meets; pads of the same fill and
// stores share them; their fills are listed on the function for static-replay.
// RUN: schedc-opt %s --split-input-file --passes="arena-plan{persistent-fills=true verify=true}" | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="arena-plan{verify=true}" | filecheck %s --check-prefix=OFF

stream.executable private @ex {
  stream.executable.export public @pad workgroups() -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %c1, %c1, %c1 : index, index, index
  }
  stream.executable.export public @accumulate workgroups() -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    // Stores the 4 values inside a 6-value buffer: its first and last values are the border.
    func.func @pad(%in: !stream.binding, %out: !stream.binding) {
      %c0 = arith.constant 0 : index
      %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>
      %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<6xf32>>
      %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0], sizes = [4], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>> -> tensor<4xf32>
      iree_tensor_ext.dispatch.tensor.store %2, %1, offsets = [1], sizes = [4], strides = [1] : tensor<4xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<6xf32>>
      return
    }
    // Reads what it writes (as a split-k reduction into a zeroed buffer): its fill must run on
    // every call.
    func.func @accumulate(%in: !stream.binding, %out: !stream.binding) {
      %c0 = arith.constant 0 : index
      %0 = stream.binding.subspan %in[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readonly:tensor<6xf32>>
      %1 = stream.binding.subspan %out[%c0] : !stream.binding -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<6xf32>>
      %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0], sizes = [6], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<6xf32>> -> tensor<6xf32>
      %3 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0], sizes = [6], strides = [1] : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<6xf32>> -> tensor<6xf32>
      %4 = arith.addf %2, %3 : tensor<6xf32>
      iree_tensor_ext.dispatch.tensor.store %4, %1, offsets = [0], sizes = [6], strides = [1] : tensor<6xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<6xf32>>
      return
    }
  }
}

// %p and %q are pads of the same fill and stores, alive at different times: they share one
// pinned copy. %t (alive between them) and %a (a fill the next dispatch accumulates into) are
// planned as usual; without pinning, %t would reuse %p's bytes.

// CHECK-LABEL: util.func public @pads
//  CHECK-SAME:   sched.persistent_fills = array<i64: 0, 128, [[PIN:[0-9]+]], 24, 0, 128, [[PIN]], 24>
//       CHECK:   sched.arena_offsets = array<i64: [[PIN]], [[T:[0-9]+]], [[PIN]], [[T]]>, sched.arena_size = 128
//       CHECK:   stream.cmd.execute
//       CHECK:   stream.cmd.fill

// Without the option, nothing is listed.
// OFF-LABEL: util.func public @pads
//   OFF-NOT:   sched.persistent_fills
//       OFF:   stream.resource.alloca
util.func public @pads(%input: !stream.resource<external>, %output: !stream.resource<external>) -> !stream.timepoint {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %c0_i8 = arith.constant 0 : i8
  %total, %p, %t, %q, %a = stream.resource.pack slices({
    [0, 2] = %c24,
    [2, 3] = %c24,
    [3, 5] = %c24,
    [5, 7] = %c24
  }) : index
  %arena, %ready = stream.resource.alloca uninitialized : !stream.resource<transient>{%total} => !stream.timepoint
  %done = stream.cmd.execute await(%ready) => with(%input as %in: !stream.resource<external>{%c16}, %output as %out: !stream.resource<external>{%c24}, %arena as %ar: !stream.resource<transient>{%total}) {
    stream.cmd.fill %c0_i8, %ar[%p for %c24] : i8 -> !stream.resource<transient>{%total}
    stream.cmd.dispatch @ex::@pad {
      ro %in[%c0 for %c16] : !stream.resource<external>{%c16},
      rw %ar[%p for %c24] : !stream.resource<transient>{%total}
    }
    stream.cmd.copy %ar[%p], %ar[%t], %c24 : !stream.resource<transient>{%total} -> !stream.resource<transient>{%total}
    stream.cmd.fill %c0_i8, %ar[%q for %c24] : i8 -> !stream.resource<transient>{%total}
    stream.cmd.dispatch @ex::@pad {
      ro %ar[%t for %c16] : !stream.resource<transient>{%total},
      rw %ar[%q for %c24] : !stream.resource<transient>{%total}
    }
    stream.cmd.fill %c0_i8, %ar[%a for %c24] : i8 -> !stream.resource<transient>{%total}
    stream.cmd.dispatch @ex::@accumulate {
      ro %ar[%q for %c24] : !stream.resource<transient>{%total},
      rw %ar[%a for %c24] : !stream.resource<transient>{%total}
    }
    stream.cmd.copy %ar[%a], %out[%c0], %c24 : !stream.resource<transient>{%total} -> !stream.resource<external>{%c24}
  } => !stream.timepoint
  util.return %done : !stream.timepoint
}
