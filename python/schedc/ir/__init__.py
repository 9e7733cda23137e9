"""The one place that knows IREE's IR: what its ops mean, read and built through the MLIR
bindings, handed to passes as typed records.

iree (flow and stream ops), hal (the HAL ops static-replay reads and builds), mlirio (reading
and printing MLIR), extract (the kernel graph of a flow-phase function), dispatches (dispatch
signatures, applying kernel configs), costs (the roofline cost model over dispatch bodies)."""
