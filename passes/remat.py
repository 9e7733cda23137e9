"""remat: recompute tensors where they are read again, to keep live bytes under a budget.

A tensor made early and read again much later (an activation the backward pass needs, a
branch's output a late join reads) holds its bytes the whole time. Running a copy of the ops
that made it just before the late reader frees them in between, at the copy's time. This pass
takes the kernels' order as it is (memory-order's), builds `schedc.decisions.remat.RematProblem` from
the kernel graph, lets `schedc.decisions.remat.plan_remat` choose the copies with the least estimated
time whose peak fits `memory-budget`, and inserts them. A copied dispatch calls a copy of its
executable under a new symbol: IREE would merge identical dispatches back (CSE).

    // before: %act (256 KiB) is alive from the forward kernel to the backward one
    %act = flow.dispatch @bn_relu::@f(%conv, %scale) ...
    %y = flow.dispatch @next::@f(%act) ...            // ... 100 kernels ...
    %g = flow.dispatch @weight_grad::@f(%act, %dy) ...
    // after (memory-budget=0.7): a copy made from %conv, which is alive there anyway
    %act = flow.dispatch @bn_relu::@f(%conv, %scale) ...
    %y = flow.dispatch @next::@f(%act) ...
    %act_1 = flow.dispatch @bn_relu_remat0::@f(%conv, %scale) ...
    %g = flow.dispatch @weight_grad::@f(%act_1, %dy) ...

Options: `memory-budget` in bytes (`1500000`) or as a fraction of the peak without
recomputation (`0.6`, `60%`); `exact-limit` and `max-nodes` bound the exact search by work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from iree.compiler import ir

from schedc.ir.costs import PEAKS, node_cost
from schedc.dialects.sched import POSITION
from schedc.ir.extract import analyse_function, build_kernel_graph
from schedc.decisions.kernel_graph import KernelGraph
from schedc.ir.iree import FILLS, body_ops, executable_bodies, flow_op, function_name, function_ops, is_dispatch, is_tensor, ops_named, symbol_path
from schedc.decisions.remat import Candidate, Recipe, RematLimits, RematPlan, RematProblem, budget_bytes, parse_budget, plan_remat

from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    memory_budget: str = "1.0"  # bytes, or a fraction of the peak without recomputation
    exact_limit: int = RematLimits.exact_limit  # copies to decide on, above which the heuristic decides
    max_nodes: int = RematLimits.max_nodes  # branch-and-bound nodes the exact search may explore
    max_depth: int = 6  # levels of dead inputs a copy may make again first
    objective: str = "time"  # minimise the copies' estimated "time", or their "flops"
    target: str = ""  # whose cost model times a copy; empty: the target being compiled
    # IREE's dispatch formation keeps an op with several readers in its own kernel instead of
    # fusing it into a multi-result one with them: no FLOPs added, more kernels, and tensors
    # made where they are read (the lever on branchy inference nets, see bench/remat.py).
    split_fusions: bool = False

    def __post_init__(self):
        parse_budget(self.memory_budget)  # raises ValueError with the accepted forms
        if self.exact_limit < 0:
            raise ValueError(f"exact-limit must be >= 0, got {self.exact_limit}")
        if self.objective not in ("time", "flops"):
            raise ValueError(f"objective must be time or flops, got '{self.objective}'")
        if self.max_depth < 0:
            raise ValueError(f"max-depth must be >= 0, got {self.max_depth}")
        if self.max_nodes < 1:
            raise ValueError(f"max-nodes must be >= 1, got {self.max_nodes}")
        if self.target and self.target not in PEAKS:
            raise ValueError(f"unknown target '{self.target}'; valid: {', '.join(PEAKS)}")


@dataclass(frozen=True)
class Unit:
    """The ops that make one candidate buffer, and its readers, in IR."""

    ops: tuple[ir.Operation, ...]  # in program order
    values: frozenset  # the buffer's values these ops define
    readers: dict  # step -> the op at that step that reads the buffer
    recipes: tuple = ()  # the op lists of its `schedc.decisions.remat.Recipe`s, in their order


def remat(module, pass_, options: Options, context) -> None:
    records = context.records.setdefault("remat", {})
    peaks = PEAKS[options.target or context.target or "llvm-cpu"]
    limits = RematLimits(options.exact_limit, options.max_nodes, options.objective)
    budget = parse_budget(options.memory_budget)
    bodies = executable_bodies(module)
    for func in function_ops(module):
        started = time.perf_counter()
        graph, buffer_of = analyse_function(func)
        if not graph.kernels or graph.has_dynamic_sizes:
            continue
        problem, units = build_problem(func, graph, buffer_of, bodies, peaks, options.max_depth)
        total_flops = _function_flops(func, bodies)
        plan = plan_remat(problem, budget_bytes(budget, max(problem_peak(graph), 1)), limits)
        apply_plan(module, problem, units, plan)
        erase_unused(func)
        bodies = executable_bodies(module)
        after = build_kernel_graph(func)
        if not plan.feasible:
            context.warn(func.location, f"remat: @{graph.function} cannot get under the budget of {plan.budget_bytes:,} B "
                         f"by recomputation; the lowest peak it reaches is {after.peak_bytes():,} B")
        records[graph.function] = record(graph, after, problem, plan) | {
            "split_fusions": options.split_fusions,
            "function_flops": total_flops,
            # What the copies add once the originals no reader needs any more are gone (a copy
            # before a buffer's only reader moves the work rather than repeating it).
            "extra_flops": _function_flops(func, bodies) - total_flops,
            "pass_seconds": round(time.perf_counter() - started, 4),
        }


def _function_flops(func, bodies) -> float:
    return sum(node_cost(op, bodies).flops for op in body_ops(func))


def problem_peak(graph: KernelGraph) -> int:
    return graph.peak_bytes(graph.program_order())


# -- 1. analyse: candidates from the kernel graph and the IR ----------------------------------


_RECOMPUTABLE_VIEWS = ("flow.tensor.reshape", "flow.tensor.bitcast")
_RECOMPUTABLE_UPDATES = ("flow.tensor.update",)


def build_problem(func, graph: KernelGraph, buffer_of: dict, bodies, peaks, depth: int = 6) -> tuple[RematProblem, dict[int, Unit]]:
    """The function's candidates (buffers whose makers can run again) and fixed live bytes."""
    ops = body_ops(func)
    order = graph.program_order()
    step_of = {node: step for step, node in enumerate(order)}
    op_step = {op: step_of[i] for i, op in enumerate(ops)}
    spans = graph.live_ranges(order)
    makers: dict[int, list[int]] = {}
    readers: dict[int, set[int]] = {}  # buffer -> ops with an operand in it (makers too)
    for index, op in enumerate(ops):
        for result in op.results:
            if result in buffer_of:
                makers.setdefault(buffer_of[result], []).append(index)
        for operand in op.operands:
            if operand in buffer_of:
                readers.setdefault(buffer_of[operand], set()).add(index)
    units = {}
    for buffer_id in sorted(spans):
        unit = _unit(ops, graph, buffer_of, buffer_id, makers.get(buffer_id, []), readers.get(buffer_id, set()), step_of, bodies)
        if unit is not None:
            units[buffer_id] = unit
    costs_of = {}  # op -> (seconds, FLOPs) of running it once
    for unit in units.values():
        for op in unit.ops:
            if op not in costs_of:
                cost = node_cost(op, bodies)
                costs_of[op] = (cost.seconds(peaks), cost.flops)
    candidates, chosen = [], {}
    for buffer_id, unit in units.items():
        reads = sorted(unit.readers)
        made = max(op_step[op] for op in unit.ops)
        if not reads or reads[0] < made:
            continue
        recipes, recipe_ops = [], []
        for ops_ in _recipe_ops(unit, units, graph, buffer_of, op_step, depth):
            recipes.append(_recipe(ops_, unit.values, graph, buffer_of, costs_of, op_step))
            recipe_ops.append(ops_)
        candidates.append(Candidate(buffer_id, graph.buffers[buffer_id].size, spans[buffer_id][0], made, tuple(reads), tuple(recipes)))
        chosen[buffer_id] = replace(unit, recipes=tuple(recipe_ops))
    fixed = [0] * len(order)
    for buffer_id, (first, last) in spans.items():
        if buffer_id not in chosen:
            for step in range(first, last + 1):
                fixed[step] += graph.buffers[buffer_id].size or 0
    return RematProblem(len(order), tuple(fixed), tuple(candidates), dict(spans)), chosen


def _recipe_ops(unit: Unit, units: dict, graph: KernelGraph, buffer_of: dict, op_step: dict, depth: int) -> list[tuple]:
    """The op lists a copy can run: the unit alone; then, level by level (up to `depth`), the
    same after the units of its transient inputs that can be made again, so a copy does not
    need those inputs alive. Each list is in program order."""
    lists = [unit.ops]
    ops = unit.ops
    for _ in range(depth):
        remade = [b for b in sorted(_inputs(ops, graph, buffer_of)) if b in units]
        if not remade:
            break
        ops = tuple(sorted(set(ops) | {op for b in remade for op in units[b].ops}, key=op_step.get))
        lists.append(ops)
    return lists


def _inputs(ops, graph: KernelGraph, buffer_of: dict) -> set[int]:
    """The transient buffers `ops` read that they do not make themselves."""
    made = {r for op in ops for r in op.results}
    return {
        buffer_of[v] for op in ops for v in op.operands
        if is_tensor(v) and v not in made and v in buffer_of and graph.buffers[buffer_of[v]].transient
    }


def _recipe(ops, values, graph: KernelGraph, buffer_of: dict, costs_of: dict, op_step: dict) -> Recipe:
    extra = {buffer_of[r] for op in ops for r in op.results if is_tensor(r) and r not in values}
    costs = [costs_of[op] for op in ops if op.name not in _RECOMPUTABLE_VIEWS]
    return Recipe(
        inputs=tuple(sorted(_inputs(ops, graph, buffer_of))),
        extra_bytes=sum(graph.buffers[b].size or 0 for b in extra),
        seconds=sum(seconds for seconds, _ in costs),
        flops=sum(flops for _, flops in costs),
        kernels=sum(1 for op in ops if is_dispatch(op)),
        ops=frozenset(op_step[op] for op in ops),
    )


def _unit(ops, graph: KernelGraph, buffer_of: dict, buffer_id: int, maker_indices: list[int], reader_indices: set[int], step_of: dict, bodies: dict) -> Unit | None:
    """The ops that make a transient buffer, if running them again is safe: dispatches without
    side effects (of executables in the module, which a copy gets its own copy of), fills,
    views and in-place updates, whose results are all transient."""
    if not maker_indices or not graph.buffers[buffer_id].size:
        return None
    unit_ops = [ops[i] for i in sorted(maker_indices, key=step_of.get)]
    for op in unit_ops:
        if not _recomputable(op) or (is_dispatch(op) and flow_op(op).entry not in bodies) or _has_body(op):
            return None
        if any(is_tensor(r) and not graph.buffers[buffer_of[r]].transient for r in op.results):
            return None
    values = frozenset(r for op in unit_ops for r in op.results if is_tensor(r) and buffer_of.get(r) == buffer_id)
    unit_set = set(unit_ops)
    readers = {}
    for index in sorted(reader_indices):
        op = ops[index]
        if op in unit_set or not any(v in values for v in op.operands):
            continue
        if _has_body(op) or flow_op(op).sink:
            return None  # reads it inside a region, or hands it out of the function
        readers[step_of[index]] = op
    return Unit(tuple(unit_ops), values, readers)


def _recomputable(op: ir.Operation) -> bool:
    """Whether running `op` again (or not at all) changes nothing but its results."""
    if is_dispatch(op):
        return not flow_op(op).pinned
    return op.name in FILLS or op.name in _RECOMPUTABLE_VIEWS or op.name in _RECOMPUTABLE_UPDATES


def _has_body(op: ir.Operation) -> bool:
    return any(len(region.blocks) for region in op.regions)


# -- 3. rewrite: insert the copies -------------------------------------------------------------


def apply_plan(module, problem: RematProblem, units: dict[int, Unit], plan: RematPlan) -> None:
    """Inserts each copy just before its reader, in step order, and points every later reader
    (up to the next copy) at it. A copy reads its inputs' latest copies; a copy that shares
    another's run (`plan.shares`) inserts nothing and takes its values from that run."""
    giver_of = {taker: giver for giver, taker in plan.shares}
    copies_at: dict[int, list] = {}
    for copy in sorted(plan.copies, key=lambda c: c in giver_of):  # givers before takers
        copies_at.setdefault(problem.candidates[copy.candidate].reads[copy.read], []).append(copy)
    readers: dict[int, ir.Operation] = {}
    for unit in units.values():
        readers.update(unit.readers)
    current: dict = {}  # a unit's original value -> its latest copy
    origin: dict = {}  # a copy -> the original value it copies
    runs: dict = {}  # a copy that ran -> its clones of the original values
    names = _SymbolNames(module)
    for step in sorted(readers):
        reader = readers[step]
        for copy in copies_at.get(step, ()):
            unit = units[problem.candidates[copy.candidate].buffer]
            if copy in giver_of:
                clones = runs[giver_of[copy]]
            else:
                clones = runs[copy] = _run_copy(unit.recipes[copy.recipe], reader, current, origin, names)
            for value in unit.values:
                current[value] = clones[value]
        for i, operand in enumerate(reader.operands):
            original = origin.get(operand, operand)
            if original in current and current[original] != operand:
                reader.operands[i] = current[original]


def _run_copy(ops, reader: ir.Operation, current: dict, origin: dict, names: "_SymbolNames") -> dict:
    """Clones `ops` before `reader`, reading the latest copies of their inputs; returns each
    original result's clone."""
    clones: dict = {}
    for op in ops:
        clone = op.clone(ir.InsertionPoint(reader))
        for i, operand in enumerate(clone.operands):
            original = origin.get(operand, operand)
            replacement = clones.get(original, current.get(original))
            if replacement is not None:
                clone.operands[i] = replacement
        if POSITION.name in clone.attributes:
            del clone.attributes[POSITION.name]
        if is_dispatch(clone):
            _call_own_executable(clone, names)
        for old, new in zip(op.results, clone.results):
            clones[old] = new
            origin[new] = old
    return clones


def erase_unused(func) -> None:
    """Erases the recomputable ops (dispatches without side effects, fills, views, updates)
    whose results nothing reads any more: the originals the copies replaced everywhere."""
    changed = True
    while changed:
        changed = False
        for op in reversed(body_ops(func)):
            if _recomputable(op) and op.results and all(not list(r.uses) for r in op.results):
                op.erase()
                changed = True


class _SymbolNames:
    """Fresh executable names in a module, and the executables by name."""

    def __init__(self, module):
        self.block = module.regions[0].blocks[0]
        self.executables = {function_name(op.operation): op.operation for op in self.block.operations if op.operation.name == "flow.executable"}
        self.taken = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value
            for op in self.block.operations if "sym_name" in op.operation.attributes
        }

    def fresh(self, base: str) -> str:
        k = 0
        while f"{base}_remat{k}" in self.taken:
            k += 1
        name = f"{base}_remat{k}"
        self.taken.add(name)
        return name


def _call_own_executable(dispatch: ir.Operation, names: _SymbolNames) -> None:
    """Points a copied dispatch at a copy of its executable, so IREE cannot merge it back. The
    entry point is renamed too: the target's linker puts all entry points in one namespace."""
    executable, entry = symbol_path(ir.ArrayAttr(dispatch.attributes["entry_points"])[0])
    new_name = names.fresh(executable)
    new_entry = f"{entry}_{new_name.rpartition('_')[2]}"
    original = names.executables[executable]
    copy = original.clone(ir.InsertionPoint.after(original))
    copy.attributes["sym_name"] = ir.StringAttr.get(new_name)
    for op in ops_named(copy, "flow.executable.export", "func.func"):
        if function_name(op) == entry:
            op.attributes["sym_name"] = ir.StringAttr.get(new_entry)
            if "function_ref" in op.attributes:  # an export names the function it runs
                op.attributes["function_ref"] = ir.FlatSymbolRefAttr.get(new_entry)
    dispatch.attributes["entry_points"] = ir.ArrayAttr.get([ir.SymbolRefAttr.get([new_name, new_entry])])


# -- what the report keeps ---------------------------------------------------------------------


def record(before: KernelGraph, after: KernelGraph, problem: RematProblem, plan: RematPlan) -> dict:
    recomputed = sorted({problem.candidates[c.candidate].buffer for c in plan.copies})
    labels = {}
    for node in before.nodes:
        for b in node.defines:
            labels.setdefault(b, node.label)
    return {
        "budget_bytes": plan.budget_bytes,
        "feasible": plan.feasible,
        "method": plan.method,
        "candidates": len(problem.candidates),
        "kernels": len(before.kernels),
        "peak_bytes_before": problem_peak(before),
        "peak_bytes_after": after.peak_bytes(after.program_order()),
        "model_peak_bytes": plan.peak_bytes,
        "copies": len(plan.copies) - len(plan.shares),
        "shared_copies": len(plan.shares),
        "kernels_recomputed": plan.kernels,
        "planned_extra_flops": plan.flops,
        "extra_seconds": plan.seconds,
        "recomputed": [{"buffer": b, "label": labels.get(b, ""), "bytes": before.buffers[b].size} for b in recomputed],
    }


SPLIT_FUSIONS_FLAG = "--iree-dispatch-creation-fuse-multi-use=false"

PASS = PassInfo(
    name="remat",
    summary="recompute tensors before late readers to keep live bytes under a budget",
    run=remat,
    options=Options,
    after=("memory-order", "kernel-config"),
    option_flags=lambda options: (SPLIT_FUSIONS_FLAG,) if options.split_fusions else (),
)
