"""schedc's decisions, pure Python over plain data (no MLIR): one module per pass, named like
it (memory_order for memory-order, arena_plan for arena-plan, ...), and the shared models they
decide over: kernel_graph (kernels and tensors), liveness (intervals, peak, last use) and
budget (work bounds for searches)."""
