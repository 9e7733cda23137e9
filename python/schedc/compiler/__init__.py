"""The compiler driver: IREE's compiler stopped at each phase where schedc's passes run.

driver (the compile), phases (IREE's phases and where schedc stops them), pipeline (parse and
run pass pipelines), iree_tools (iree-compile and iree-opt), targets, buckets (batch buckets),
timing (--timing)."""
