"""What IREE's IR means for scheduling, read through the MLIR bindings: the one place that knows
IREE's ops. Passes, the kernel graph and the report ask it and get typed records back.

- Structure: functions and their bodies, symbols (`@executable::@entry`), the function an op
  is in, index constants.
- Flow phase (`FlowOp`): which ops are kernels and fills, which results are views of an operand
  or written into one in place (updates, dispatch results tied to an operand), which buffers
  live outside the transient arena, which ops have side effects, and where IREE's stream phase
  writes a dispatch's result straight into an update's target.
- Stream phase: transient packs (`Pack`: slice lifetimes and sizes), transient allocations,
  concurrent regions, the sizes and ties of async dispatches and fills.
- HAL phase: executables and the formats of their binaries.

Nothing here reads IR as text; a new IREE release changes this file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from iree.compiler import ir
from iree.compiler.dialects import arith

from schedc.decisions.liveness import peak
from schedc.decisions.write_in_place import InPlaceSite

# -- structure ---------------------------------------------------------------------------------


def function_ops(module: ir.Operation) -> list[ir.Operation]:
    """The module's functions with a body (`util.func` and `func.func`), in order."""
    functions = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name in ("util.func", "func.func") and len(op.regions[0].blocks) > 0:
            functions.append(op)
    return functions


def function_name(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


# IREE's ABI makes each exported function `f` a `f$async` twin that holds its body (f calls it
# and waits): the function the user wrote and calls is `f`.
ASYNC_SUFFIX = "$async"


def user_function_name(name: str) -> str:
    """The name the user wrote for a function IREE's ABI renamed (`forward$async` -> `forward`)."""
    return name.removesuffix(ASYNC_SUFFIX)


def with_user_function_names(text: str) -> str:
    """`text` with each `@f$async` named `@f`, as the user wrote it."""
    return re.sub(r"(@[\w.-]+)\$async\b", r"\1", text)


def enclosing_function_op(op: ir.Operation) -> ir.Operation | None:
    """The function (or initializer) an op is in; None outside any."""
    parent = op.parent
    while parent is not None and parent.name not in ("util.func", "util.initializer", "func.func"):
        parent = parent.parent
    return parent


def enclosing_function(op: ir.Operation) -> str:
    """The name of the function an op is in; "util.initializer" for initializers."""
    parent = enclosing_function_op(op)
    if parent is None or "sym_name" not in parent.attributes:
        return "util.initializer"
    return function_name(parent)


def body_ops(func: ir.Operation) -> list[ir.Operation]:
    """The function body's ops in program order, without the terminator."""
    return [op.operation for op in func.regions[0].blocks[0].operations][:-1]


def ops_named(root: ir.Operation, *names: str) -> list[ir.Operation]:
    """Every op called one of `names` nested in `root`, collected before anyone edits the IR."""
    found: list[ir.Operation] = []

    def visit(op):
        if op.name in names:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def defining_op_name(value: ir.Value) -> str | None:
    """The name of the op that defines `value`; None for a block argument."""
    return None if isinstance(value.owner, ir.Block) else value.owner.operation.name


def symbol_path(attr: ir.Attribute) -> tuple[str, ...]:
    """`@executable::@entry` as ("executable", "entry")."""
    return tuple(ir.SymbolRefAttr(attr).value)


def constant_index(value: ir.Value) -> int | None:
    """The value of an `arith.constant` index, or None when it is not a constant."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def index_constant(value: int) -> ir.Value:
    """A new `arith.constant` index at the current insertion point and location."""
    return arith.ConstantOp(ir.IndexType.get(), value).result


# -- tensors -----------------------------------------------------------------------------------


def is_tensor(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


def tensor_bytes(type_: ir.Type) -> int | None:
    """Bytes of a ranked tensor as IREE stores it; None for dynamic shapes."""
    if not isinstance(type_, ir.RankedTensorType) or not type_.has_static_shape:
        return None
    count = 1
    for dim in type_.shape:
        count *= dim
    return (count * element_bits(type_.element_type) + 7) // 8


def element_bits(element: ir.Type) -> int:
    if isinstance(element, ir.IntegerType):
        return 8 if element.width == 1 else element.width  # i1 is stored a byte per element
    if isinstance(element, ir.IndexType):
        return 64
    if isinstance(element, ir.ComplexType):
        return 2 * element_bits(element.element_type)
    if isinstance(element, ir.FloatType):
        return element.width
    raise ValueError(f"unsupported element type {element}")


# -- flow phase --------------------------------------------------------------------------------

# Ops that make a fresh tensor from nothing: IREE clones them for each in-place writer.
FILLS = ("flow.tensor.splat", "flow.tensor.empty", "stream.async.splat")
# Ops whose result is a view of operand 0's buffer.
_VIEWS = ("flow.tensor.reshape", "flow.tensor.bitcast")
# Ops that write into their `target` operand in place (copy-on-write when it has other users).
_UPDATES = ("flow.tensor.update", "flow.tensor.store")
# Ops that only order or hand over tensors; results alias operands one to one.
_PASS_THROUGH = ("hal.tensor.barrier", "hal.tensor.alias", "hal.tensor.transients")
# Ops whose tensor results live outside the transient arena, by the kind of buffer they are.
_EXTERNAL_KINDS = {
    "util.global.load": "constant",
    "flow.tensor.constant": "constant",
    "arith.constant": "constant",
    "hal.tensor.import": "argument",
}
# Ops whose tensor operands leave the function: their buffers are results, not transients.
_SINKS = ("util.return", "func.return", "hal.tensor.export")
_PURE_PREFIXES = ("arith.", "flow.", "util.global.load", "util.null")


def is_kernel(op: ir.Operation) -> bool:
    """Whether the op runs on the device: flow.dispatch and the flow.tensor.* ops."""
    return is_dispatch(op) or op.name.startswith("flow.tensor.")


def is_dispatch(op: ir.Operation) -> bool:
    return op.name == "flow.dispatch"


def is_fill(op: ir.Operation) -> bool:
    return op.name in FILLS


def may_write_in_place(op: ir.Operation) -> bool:
    """Whether the op can write into an operand's buffer (a tied dispatch, an update): IREE
    gives such a writer of a shared fill a fill of its own."""
    return op.name in ("flow.dispatch", "flow.tensor.update")


@dataclass(frozen=True)
class FlowOp:
    """What one op of a flow-phase function body means for memory and order."""

    kernel: bool
    fill: bool  # makes a fresh tensor from nothing
    pinned: bool  # has side effects: keeps its order relative to other pinned ops
    label: str  # a dispatch's entry point, else the op's name
    views: tuple[tuple[int, int], ...]  # (result, operand): the result is the operand's buffer
    # (result, operand): the result is written into the operand's buffer in place, when
    # nothing else uses the operand (IREE copies it first otherwise).
    writes_into: tuple[tuple[int, int], ...]
    external: str | None  # where its tensor results live when not in the arena
    sink: bool  # its tensor operands leave the function
    entry: tuple[str, ...] = ()  # a dispatch's (executable, entry point)


def flow_op(op: ir.Operation) -> FlowOp:
    name = op.name
    tensor_results = [i for i, r in enumerate(op.results) if is_tensor(r)]
    views: tuple = ()
    writes_into: tuple = ()
    external = None
    entry: tuple = ()
    if name in _VIEWS:
        views = tuple((r, 0) for r in tensor_results)
    elif name in _UPDATES:
        target = _operand_index(op, op.opview.target)
        writes_into = tuple((r, target) for r in tensor_results)
    elif name in _PASS_THROUGH:
        views = tuple((r, r) for r in tensor_results if r < len(op.operands))
    elif is_dispatch(op):
        entry = symbol_path(ir.ArrayAttr(op.attributes["entry_points"])[0])
        writes_into = tuple((r, t) for r in range(len(op.results)) if (t := _tied_operand(op, r)) is not None)
    elif not is_kernel(op):
        external = _EXTERNAL_KINDS.get(name, "external")
    return FlowOp(
        kernel=is_kernel(op),
        fill=name in FILLS,
        pinned=_is_pinned(op),
        label=entry[-1] if entry else name,
        views=views,
        writes_into=writes_into,
        external=external,
        sink=name in _SINKS,
        entry=entry,
    )


def _operand_index(op: ir.Operation, value: ir.Value) -> int:
    for i, operand in enumerate(op.operands):
        if operand == value:
            return i
    raise ValueError(f"{op.name} does not use {value}")


def _tied_operand(op: ir.Operation, result_index: int) -> int | None:
    """The operand a `flow.dispatch` result is tied to (written in place), if any."""
    if "tied_operands" not in op.attributes:
        return None
    tied = [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes["tied_operands"])]
    if result_index >= len(tied) or tied[result_index] < 0:
        return None
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return segments[0] + tied[result_index]  # tied indices skip the workload operands


def _is_pinned(op: ir.Operation) -> bool:
    if op.name == "util.global.load":
        return "is_immutable" not in op.attributes  # a mutable global may be stored to
    if op.name == "flow.tensor.trace":
        return True
    return not (is_kernel(op) or op.name.startswith(_PURE_PREFIXES))


def update_of(op: ir.Operation) -> tuple[ir.Value, ir.Value] | None:
    """A flow.tensor.update's (target, update) values; None for other ops."""
    if op.name != "flow.tensor.update":
        return None
    return op.opview.target, op.opview.update


def emplaced_update(op: ir.Operation, result_index: int) -> ir.Operation | None:
    """The `flow.tensor.update` IREE writes this dispatch result into, if any.

    IREE's stream phase (EmplaceAllocations) makes a dispatch write its result straight into
    the target of the update that is the result's only user (views between them vanish in the
    stream phase), when the result is not already tied, and moves the target's producer
    before the dispatch. Concatenations of branch outputs become one buffer that way.
    """
    if _tied_operand(op, result_index) is not None:
        return None
    value = op.results[result_index]
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            return None
        user = uses[0].owner.operation
        if user.name in _VIEWS:
            value = user.results[0]
            continue
        update = update_of(user)
        return user if update is not None and update[1] == value else None


# -- writes in place (flow phase) --------------------------------------------------------------

_DISPATCH_TENSOR = "!iree_tensor_ext.dispatch.tensor"
# What an elementwise kernel's body may hold besides its linalg.generics.
_ELEMENTWISE_BODY = ("arith.constant", "tensor.empty", "linalg.fill", "iree_tensor_ext.dispatch.tensor.load",
                     "iree_tensor_ext.dispatch.tensor.store", "func.return")


def in_place_site(dispatch: ir.Operation, entry: ir.Operation) -> InPlaceSite | None:
    """What `schedc.decisions.write_in_place` needs of one `flow.dispatch` and its entry
    function; None when the kernel is not elementwise throughout.

    Elementwise throughout: every linalg op is a `linalg.generic` with only parallel loops over
    one iteration space, reading each tensor another generic made, and each candidate binding,
    at the output's own position (the identity map), and writing its results there. Then each
    output element depends on a candidate only at its own position, so writing the output over
    the candidate reads every element before it is overwritten. The entry's arguments are the
    dispatch's arguments, then one per result not already tied (IREE's flow-to-stream
    conversion gives them bindings in that order)."""
    segments = list(ir.DenseI32ArrayAttr(dispatch.attributes["operandSegmentSizes"]))
    arguments = list(dispatch.operands)[segments[0]:segments[0] + segments[1]]
    if any(segments[2:]) or not all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape for v in list(dispatch.results)):
        return None
    tied = [_tied_operand(dispatch, r) for r in range(len(dispatch.results))]
    untied = [r for r, t in enumerate(tied) if t is None]
    block = entry.regions[0].blocks[0]
    if len(block.arguments) != len(arguments) + len(untied):
        return None
    readable, stored = _elementwise_bindings(block)
    if readable is None:
        return None
    result_arg = {r: len(arguments) + k for k, r in enumerate(untied)}
    results = tuple(str(dispatch.results[r].type) if r in result_arg and result_arg[r] in stored
                    and emplaced_update(dispatch, r) is None else None for r in range(len(dispatch.results)))
    candidates = tuple((i, str(v.type)) for i, v in enumerate(arguments)
                       if i in readable and is_tensor(v) and v.type.has_static_shape and _dies_at(v, dispatch))
    return InPlaceSite(results, candidates)


def _dies_at(value: ir.Value, dispatch: ir.Operation) -> bool:
    """The value's only reader is `dispatch`, and a dispatch of the same body made it as a
    result of its own (not one written into another buffer), maybe through views (reshapes)
    that nothing else reads."""
    uses = list(value.uses)
    if len(uses) != 1 or uses[0].owner.operation != dispatch:
        return False
    owner = value.owner
    while not isinstance(owner, ir.Block) and owner.operation.name in _VIEWS:
        value = owner.operation.operands[0]
        if len(list(value.uses)) != 1:
            return False
        owner = value.owner
    if isinstance(owner, ir.Block) or not is_dispatch(owner.operation) or owner.operation.parent != dispatch.parent:
        return False
    return _tied_operand(owner.operation, ir.OpResult(value).result_number) is None


def _whole(op: ir.Operation, shape: list[int]) -> bool:
    """A dispatch.tensor load or store of the whole tensor, with static offsets."""
    offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    return offsets == [0] * len(shape) and sizes == list(shape) and strides == [1] * len(shape)


def _elementwise_bindings(block: ir.Block) -> tuple[set | None, set]:
    """(arguments loaded whole and read at each output's own position, arguments stored whole
    from such a position) of an entry body; (None, set()) when the body is not elementwise."""
    generics = []
    for op in block.operations:
        op = op.operation
        if op.name == "linalg.generic":
            generics.append(op)
        elif op.name not in _ELEMENTWISE_BODY:
            return None, set()
    domains = set()
    made = set()  # tensors the generics make
    for generic in generics:
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
        if not maps or any("parallel" not in str(t) for t in ir.ArrayAttr(generic.attributes["iterator_types"])):
            return None, set()
        rank = maps[0].n_dims
        identity = ir.AffineMap.get_identity(rank)
        if any(m != identity for m in maps[len(maps) - len(generic.results):]):
            return None, set()
        domains.add(tuple(ir.RankedTensorType(generic.results[0].type).shape) if generic.results else None)
        made.update(generic.results)
    if len(domains) > 1:
        return None, set()
    read_at_own_position: dict = {}  # value -> every read is an input at the identity map
    for generic in generics:
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
        identity = ir.AffineMap.get_identity(maps[0].n_dims)
        inputs = len(generic.operands) - len(generic.results)
        for i, value in enumerate(generic.operands):
            aligned = i < inputs and maps[i] == identity
            if value in made and not aligned:
                return None, set()  # a tensor made here read elsewhere than its own position
            read_at_own_position[value] = read_at_own_position.get(value, True) and aligned
    readable, stored = set(), set()
    for index, argument in enumerate(block.arguments):
        if not str(argument.type).startswith(_DISPATCH_TENSOR):
            continue
        uses = [u.owner.operation for u in argument.uses]
        if not uses:
            continue
        shape = _dispatch_tensor_shape(argument.type)
        if all(u.name == "iree_tensor_ext.dispatch.tensor.load" and len(u.operands) == 1 and _whole(u, shape)
               and read_at_own_position.get(u.results[0], False)
               and all(r.owner.operation.name == "linalg.generic" for r in u.results[0].uses) for u in uses):
            readable.add(index)
        if (len(uses) == 1 and uses[0].name == "iree_tensor_ext.dispatch.tensor.store" and len(uses[0].operands) == 2
                and _whole(uses[0], shape) and uses[0].operands[0] in made):
            stored.add(index)
    return readable, stored


def _dispatch_tensor_shape(type_: ir.Type) -> list[int]:
    """The shape of `!iree_tensor_ext.dispatch.tensor<access:tensor<AxBxT>>`."""
    inner = str(type_).split(":", 1)[1].removesuffix(">")
    return list(ir.RankedTensorType(ir.Type.parse(inner)).shape)


def tie_results(dispatch: ir.Operation, chosen: tuple[int, ...]) -> None:
    """Ties each result with a chosen argument (its index among the dispatch's arguments; -1:
    none) to that argument: the dispatch writes the result into the argument's buffer. Its
    entry function needs `bind_in_place` with the same choice."""
    segments = list(ir.DenseI32ArrayAttr(dispatch.attributes["operandSegmentSizes"]))
    ties = [t - segments[0] if (t := _tied_operand(dispatch, r)) is not None else c for r, c in enumerate(chosen)]
    with dispatch.context:
        index = ir.IndexType.get()
        dispatch.attributes["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(index, t) for t in ties])


def bind_in_place(dispatch: ir.Operation, entry: ir.Operation, chosen: tuple[int, ...]) -> None:
    """The entry function's side of `tie_results` (before it, for any one of the entry's
    calls): each chosen result's binding replaced by its argument's, made `readwrite`."""
    segments = list(ir.DenseI32ArrayAttr(dispatch.attributes["operandSegmentSizes"]))
    untied = [r for r in range(len(dispatch.results)) if _tied_operand(dispatch, r) is None]
    block = entry.regions[0].blocks[0]
    erased = []
    with dispatch.context:
        for r, argument in enumerate(chosen):
            if argument < 0 or r not in untied:
                continue
            operand = block.arguments[argument]
            inner = str(operand.type).split(":", 1)[1]
            operand.set_type(ir.Type.parse(f"{_DISPATCH_TENSOR}<readwrite:{inner}"))
            result_arg = block.arguments[segments[1] + untied.index(r)]
            result_arg.replace_all_uses_with(operand)
            erased.append(result_arg.arg_number)
        for number in sorted(erased, reverse=True):
            block.erase_argument(number)
        entry.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], []))


def serialize_partitioning(func: ir.Operation) -> None:
    """Asks IREE to run the function's kernels one at a time, in order: no concurrent waves
    ("debug" is IREE's name for that partitioning)."""
    with func.context:
        func.attributes["stream.partitioning"] = ir.Attribute.parse('#stream.partitioning_config<"debug">')


def unserialize_partitioning(func: ir.Operation) -> None:
    """Takes back `serialize_partitioning`: IREE groups the function's independent kernels into
    concurrent waves again."""
    if "stream.partitioning" in func.attributes:
        del func.attributes["stream.partitioning"]


# IREE's partitioning when nothing says otherwise (--iree-stream-partitioning-favor's default).
DEFAULT_PARTITIONING = '#stream.partitioning_config<"min-peak-memory">'


def serialize_initializers(module: ir.Operation) -> None:
    """Asks IREE to run what the module's initializers dispatch one at a time. IREE combines
    the initializers into a new one in its stream phase, which looks for its partitioning on
    the module; so the module gets "debug", and each function that names none gets IREE's
    default."""
    with module.context:
        for op in function_ops(module):
            if "stream.partitioning" not in op.attributes:
                op.attributes["stream.partitioning"] = ir.Attribute.parse(DEFAULT_PARTITIONING)
        module.attributes["stream.partitioning"] = ir.Attribute.parse('#stream.partitioning_config<"debug">')


def exported_functions(module: ir.Operation) -> list[ir.Operation]:
    """The functions IREE exports to callers (its ABI stubs)."""
    return [op for op in function_ops(module) if op.name == "util.func" and "iree.abi.stub" in op.attributes]


def module_string_attribute(module: ir.Operation, name: str) -> str | None:
    """A string attribute of the module op (one the input carried through IREE's phases)."""
    if name not in module.attributes:
        return None
    return ir.StringAttr(module.attributes[name]).value


def set_reflection(func: ir.Operation, key: str, value: str) -> None:
    """Adds `key = value` to an exported function's reflection, which the runtime can read."""
    with func.context:
        entries = {}
        if "iree.reflection" in func.attributes:
            old = ir.DictAttr(func.attributes["iree.reflection"])
            entries = {old[i].name: old[i].attr for i in range(len(old))}
        entries[key] = ir.StringAttr.get(value)
        func.attributes["iree.reflection"] = ir.DictAttr.get(entries)


# `#stream.parameter.named<"scope"::"key">` or `<"key">`: IREE's bindings have no accessor
# for its fields, so they are read from the attribute's printed form (quoted MLIR strings).
_PARAMETER_ATTR = re.compile(r'^#stream\.parameter\.named<"((?:[^"\\]|\\.)*)"(?:::"((?:[^"\\]|\\.)*)")?>')


@dataclass(frozen=True)
class NamedParameter:
    """A global initialised from a parameter archive's entry."""

    scope: str  # "" where the attribute names none
    key: str
    element: str  # the element type as MLIR prints it: f32, f16, i64, ...
    shape: tuple[int, ...]


def named_parameters(module: ir.Operation) -> list[NamedParameter]:
    """The module's globals whose initial value is a named parameter, in order."""
    found = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "util.global" or "initial_value" not in op.attributes:
            continue
        match = _PARAMETER_ATTR.match(str(op.attributes["initial_value"]))
        if match is None:
            continue
        first, second = (_unquoted(g) if g is not None else None for g in match.groups())
        scope, key = (first, second) if second is not None else ("", first)
        type_ = ir.RankedTensorType(ir.TypeAttr(op.attributes["type"]).value)
        found.append(NamedParameter(scope, key, str(type_.element_type), tuple(type_.shape)))
    return found


def _unquoted(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def executable_bodies(module: ir.Operation) -> dict[tuple[str, ...], ir.Operation]:
    """(executable, entry) -> the entry's func.func, for every flow.executable (stream.executable
    in the stream phase)."""
    found: dict = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name not in ("flow.executable", "stream.executable"):
            continue
        executable = function_name(op)
        for inner in ops_named(op, "func.func"):
            found[(executable, function_name(inner))] = inner
    return found


@dataclass(frozen=True)
class DispatchName:
    """What IREE's dispatch names say of the kernel: `<fn>_dispatch_<n>_<kind>_<dims>_<type>`."""

    kind: str  # matmul, conv, elementwise, ...
    ranges: tuple[int, ...]
    dtype: str


_NAMED_KINDS = ("matmul_like", "batch_matmul", "matmul", "conv", "elementwise", "reduction", "generic", "transpose")


def dispatch_name(entry: str) -> DispatchName | None:
    """The kind, loop ranges and element type IREE writes into a dispatch's name, if it does."""
    for kind in _NAMED_KINDS:
        head, sep, tail = entry.rpartition(f"_{kind}_")
        if not sep or not head:
            continue
        dims, _, dtype = tail.partition("_")
        ranges = dims.split("x")
        if dtype.replace("_", "").isalnum() and all(r.isdigit() for r in ranges):
            return DispatchName(kind, tuple(int(r) for r in ranges), dtype)
    return None


# -- stream phase ------------------------------------------------------------------------------

_RESOURCE_LIFETIMES = ("*", "external", "transient", "variable", "constant", "staging")


def _resource_type(lifetime: str) -> ir.Type:
    return ir.Type.parse(f"!stream.resource<{lifetime}>")


def is_resource(value: ir.Value) -> bool:
    """Whether a value is a `!stream.resource` of any lifetime."""
    with value.context:
        return value.type in {_resource_type(lifetime) for lifetime in _RESOURCE_LIFETIMES}


def is_transient(value: ir.Value) -> bool:
    with value.context:
        return value.type == _resource_type("transient")


def transient_allocas(root: ir.Operation) -> list[ir.Operation]:
    """The `stream.resource.alloca` ops of transient resources (one per execution region)."""
    return [op for op in ops_named(root, "stream.resource.alloca") if is_transient(op.results[0])]


def transient_allocations(module: ir.Operation) -> dict[str, list[int | None]]:
    """Per function (initializers as "util.initializer"), the bytes of each transient
    allocation, in order; None where the size is not a constant."""
    found: dict[str, list[int | None]] = {}
    for alloca in transient_allocas(module):
        found.setdefault(enclosing_function(alloca), []).append(constant_index(alloca.opview.storage_size))
    return found


@dataclass(frozen=True)
class Pack:
    """One `stream.resource.pack`: the [start, end] lifetime (inclusive) and bytes of each
    slice, None where the bytes are not a constant."""

    op: ir.Operation
    function: str
    slices: tuple[tuple[int, int, int | None], ...]
    base_offset: int | None  # where the packed range starts; None when not a constant
    allocas: tuple[ir.Operation, ...]  # the transient allocations it sizes

    @property
    def dynamic_slices(self) -> int:
        return sum(size is None for _, _, size in self.slices)

    @property
    def load(self) -> int:
        """The most bytes alive at once (dynamic sizes count as 0): no packing is smaller."""
        return peak((start, end, size or 0) for start, end, size in self.slices)

    def replace(self, offsets, total: int) -> None:
        """Replaces the pack with index constants: the total length and each slice's offset
        (relative to the base offset), then erases it."""
        view = self.op.opview
        base = self.base_offset or 0
        with ir.InsertionPoint(self.op), self.op.location:
            view.total_length.replace_all_uses_with(index_constant(base + total))
            for value, offset in zip(view.packed_offsets, offsets):
                value.replace_all_uses_with(index_constant(base + offset))
        self.op.erase()


def packs(module: ir.Operation) -> list[Pack]:
    """Every `stream.resource.pack` of IR stopped after schedule-allocation, in order."""
    found = []
    for op in ops_named(module, "stream.resource.pack"):
        view = op.opview
        bounds = [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes["lifetime_intervals"])]
        sizes = [constant_index(v) for v in view.dynamic_slice_sizes]
        slices = tuple((bounds[2 * i], bounds[2 * i + 1], size) for i, size in enumerate(sizes))
        base = 0 if view.offset is None else constant_index(view.offset)
        allocas = tuple(
            u.owner.operation for u in view.total_length.uses
            if u.owner.operation.name == "stream.resource.alloca" and is_transient(u.owner.operation.results[0])
        )
        found.append(Pack(op, enclosing_function(op), slices, base, allocas))
    return found


# stream.cmd.dispatch's operand segments (IREE 3.13's StreamOps.td): workload, uniform
# operands, resources, their sizes, offsets and lengths.
_CMD_RESOURCES, _CMD_OFFSETS, _CMD_LENGTHS = 2, 4, 5
RESOURCE_WRITE = 2  # the write bit of a stream.cmd.dispatch's resource_accesses


def cmd_dispatch_resources(op: ir.Operation) -> list[tuple[ir.Value, ir.Value, ir.Value, int]]:
    """A stream.cmd.dispatch's (resource, offset, length, access bits) per binding."""
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = list(op.operands)
    segments = [operands[sum(sizes[:k]):sum(sizes[:k + 1])] for k in range(len(sizes))]
    accesses = [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes["resource_accesses"])]
    return list(zip(segments[_CMD_RESOURCES], segments[_CMD_OFFSETS], segments[_CMD_LENGTHS], accesses))


def concurrent_groups(module: ir.Operation) -> dict[str, list[int]]:
    """Per function, the number of dispatches in each `stream.cmd.concurrent` (the waves IREE
    runs concurrently), in program order."""
    found: dict[str, list[int]] = {}
    for region in ops_named(module, "stream.cmd.concurrent"):
        found.setdefault(enclosing_function(region), []).append(len(ops_named(region, "stream.cmd.dispatch")))
    return found


def is_async_dispatch(op: ir.Operation) -> bool:
    return op.name == "stream.async.dispatch"


def async_resource_operands(op: ir.Operation) -> list[tuple[ir.Value, ir.Value]]:
    """A stream.async.dispatch's (resource, size) operand pairs."""
    view = op.opview
    resources = [v for v in view.resource_operands if is_resource(v)]
    return list(zip(resources, view.resource_operand_sizes))


def resource_size(value: ir.Value, users) -> ir.Value:
    """The SSA size of a resource, from the op that defines it or one of `users`."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        if is_async_dispatch(owner):
            return list(owner.opview.result_sizes)[list(owner.results).index(value)]
        if owner.name == "stream.async.splat":
            return owner.opview.result_size
    for user in users:
        if is_async_dispatch(user):
            for operand, size in async_resource_operands(user):
                if operand == value:
                    return size
    raise ValueError(f"no size found for {value}")


def async_tied_operand(result: ir.Value) -> ir.Value | None:
    """The resource operand a stream.async.dispatch result is written into, if any."""
    owner = result.owner
    if isinstance(owner, ir.Block) or not is_async_dispatch(owner) or "tied_operands" not in owner.attributes:
        return None
    ties = [ir.IntegerAttr(a).value for a in ir.ArrayAttr(owner.attributes["tied_operands"])]
    position = list(owner.results).index(result)
    if position >= len(ties) or ties[position] < 0:
        return None
    return list(owner.opview.resource_operands)[ties[position]]


# -- HAL phase ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Executable:
    """A `hal.executable` and the format of each binary it holds (e.g. "cuda-nvptx-fb")."""

    name: str
    formats: tuple[str, ...]


def executables(module: ir.Operation) -> list[Executable]:
    """The HAL phase's executables (serialized for the target), in order."""
    found = []
    for op in ops_named(module, "hal.executable"):
        formats = tuple(ir.StringAttr(b.attributes["format"]).value for b in ops_named(op, "hal.executable.binary"))
        found.append(Executable(function_name(op), formats))
    return found
