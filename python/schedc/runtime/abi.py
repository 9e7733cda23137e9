"""What a schedc module says about itself, in its exported functions' `iree.reflection`, for
the runtime that loads it: one vocabulary, written by the compiler and read here.

    schedc.execution             "graphs": the module replays its calls (--execution=graphs)
    schedc.static_results        "true": the results live in static buffers (static-replay)
    schedc.static_result_slots   the results that are views of the same static buffer every call
    schedc.static_inputs_of      on __schedc_static_inputs_<f>: the function it serves
    schedc.bucket_of / batch     a batch bucket's copy of a function, and its batch
    schedc.batched_inputs/outputs the arguments and results that carry the batch
    schedc.generation            a generation module's sequence buckets, cache length and batch
                                 buckets, as JSON: {"buckets": [32, 64], "max_seq": 512,
                                 "batches": [1, 4]} (torch.generation; its functions' names:
                                 `generation_functions`)
    schedc.parameters            the parameters the module reads from archives, as JSON:
                                 [[scope, key, element type, shape], ...] (runtime.parameters)
    schedc.signature             the function's arguments and results in torch's terms, as JSON
                                 (torch.signature writes it, runtime.signature reads it)
"""

EXECUTION = "schedc.execution"
STATIC_RESULTS = "schedc.static_results"
STATIC_RESULT_SLOTS = "schedc.static_result_slots"
STATIC_INPUTS_OF = "schedc.static_inputs_of"
# A replayed function's companion that returns views of its static input buffers.
STATIC_INPUTS_PREFIX = "__schedc_static_inputs_"
BUCKET_OF = "schedc.bucket_of"
BATCH = "schedc.batch"
BATCHED_INPUTS = "schedc.batched_inputs"
BATCHED_OUTPUTS = "schedc.batched_outputs"
PARAMETERS = "schedc.parameters"
GENERATION = "schedc.generation"
SIGNATURE = "schedc.signature"


def generation_functions(bucket: int, batch: int) -> tuple[str, str]:
    """A generation module's prefill function of sequence bucket `bucket` and its decode
    function, for `batch` sequences: prefill_<bucket> and decode for one, prefill_<bucket>_x<batch>
    and decode_x<batch> for several."""
    suffix = "" if batch == 1 else f"_x{batch}"
    return f"prefill_{bucket}{suffix}", f"decode{suffix}"
