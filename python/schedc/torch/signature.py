"""The torch signature of an imported function: what its arguments and results are in torch's
terms, where IREE's ABI loses them.

IREE's buffer views have signless integers (torch's uint8 comes back as int8), a function's
Python-number result comes back as a 0-d array, and torch.export turns an in-place write to
an argument into one more result. The importer records, per function, the torch dtype of each
argument and result, the Python numbers, and which results are writes to arguments. The
compiler copies it into the function's reflection (`schedc.signature`), and the runtime gives
results back as torch gave them (schedc.runtime.signature).

    {"args": ["float32", "int", ...], "results": ["uint8", "bool:number", "mutates:0", ...]}

An argument or result entry is a torch dtype's name (`float32`, `uint8`, `bool`), or `int`,
`float` or `bool` with `:number` for a Python number; a result `mutates:N` is argument N's
value after the call (the runtime writes it back into the caller's tensor and drops it).
"""

from __future__ import annotations

import json


def torch_signature(program) -> dict | None:
    """The signature of an ExportedProgram (after its decompositions, as torch-mlir imports it:
    the frozen import's results are its outputs but the buffer writes). None where it has an
    input or output this cannot describe."""
    from torch.export.graph_signature import InputKind, OutputKind

    signature = program.graph_signature
    user_inputs = [spec for spec in signature.input_specs if spec.kind == InputKind.USER_INPUT]
    args = []
    for spec in user_inputs:
        entry = _entry(program, spec.arg)
        if entry is None:
            return None
        args.append(entry)
    positions = {spec.arg.name: i for i, spec in enumerate(user_inputs)}
    results = []
    for spec in signature.output_specs:
        if spec.kind == OutputKind.BUFFER_MUTATION:  # frozen: the module keeps no buffer state
            continue
        if spec.kind == OutputKind.USER_INPUT_MUTATION:
            if spec.target not in positions:
                return None
            results.append(f"mutates:{positions[spec.target]}")
            continue
        if spec.kind != OutputKind.USER_OUTPUT:
            return None
        entry = _entry(program, spec.arg)
        if entry is None:
            return None
        results.append(entry)
    return {"args": args, "results": results}


def _entry(program, arg) -> str | None:
    from torch.export.graph_signature import ConstantArgument, SymBoolArgument, SymFloatArgument, SymIntArgument, TensorArgument

    if isinstance(arg, TensorArgument):
        node = next((n for n in program.graph.nodes if n.name == arg.name), None)
        value = node.meta.get("val") if node is not None else None
        dtype = getattr(value, "dtype", None)
        return str(dtype).removeprefix("torch.") if dtype is not None else None
    if isinstance(arg, SymIntArgument):
        return "int:number"
    if isinstance(arg, SymFloatArgument):
        return "float:number"
    if isinstance(arg, SymBoolArgument):
        return "bool:number"
    if isinstance(arg, ConstantArgument):
        kind = {bool: "bool", int: "int", float: "float"}.get(type(arg.value))
        return f"{kind}:number" if kind else None
    return None


def signature_text(signature: dict) -> str:
    return json.dumps(signature, separators=(",", ":"))
