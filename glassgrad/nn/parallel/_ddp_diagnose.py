"""DDP's glass-box diagnostics: where a parameter that got no gradient lost its path to the loss,
and a checksum check that parameters agree across ranks.

Both cost nothing on the training path: the unused-parameter search walks the previous forward's
graph only when PyTorch's "Expected to have finished reduction" error fires, and the checksum
runs only when called.
"""

from __future__ import annotations

import zlib

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing loss. "
    "You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \nIf you "
    "already have done the above, then the distributed data parallel module wasn't able to "
    "locate the output tensors in the return value of your module's `forward` function. Please "
    "include the loss function and the structure of the return value of `forward` of your module "
    "when reporting this issue (e.g. list, dict, iterable)."
)


def output_nodes(output) -> list:
    """The grad_fn of every tensor in a forward's output (nested lists, tuples, dicts)."""
    from ...tensor import Tensor

    nodes, stack = [], [output]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            if item.grad_fn is not None:
                nodes.append(item.grad_fn)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return nodes[::-1]


def reachable_variables(roots) -> set:
    """``id`` of every leaf tensor an ``AccumulateGrad`` node reachable from ``roots`` feeds."""
    seen, found, stack = set(), set(), list(roots)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        stack.extend(edge[0] for edge in (getattr(node, "next_functions", None) or ()))
    return found


def _path_to(root, target):
    """One path of nodes from ``root`` to the ``AccumulateGrad`` of ``target`` (or None)."""
    parent, stack, seen = {id(root): None}, [root], {id(root)}
    while stack:
        node = stack.pop()
        if getattr(node, "variable", None) is target:
            path = [node]
            while parent[id(path[-1])] is not None:
                path.append(parent[id(path[-1])])
            return path[::-1]
        for edge in getattr(node, "next_functions", None) or ():
            nxt = edge[0]
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                parent[id(nxt)] = node
                stack.append(nxt)
    return None


def _where(node) -> str:
    source = getattr(node, "source", None)
    return f"{node.name()} made at {source}" if source else node.name()


def cut_explanation(param, name: str, owner: str, roots) -> str:
    """Why ``param`` got no gradient, read from the previous forward's output graph ``roots``:
    either the graph never reached it (its module did not run, or its result was cut inside
    forward), or it did and backward stopped at the first node it never ran."""
    for k, root in enumerate(roots):
        path = _path_to(root, param)
        if path is None:
            continue
        # backward releases what a node saved once it ran; the cut is below the last such node
        ran = [i for i, node in enumerate(path[:-1]) if getattr(node, "_freed", False)]
        cut = path[ran[-1] + 1] if ran else path[0]
        if cut is path[0] and not ran:
            return (f"{name}: forward output {k}, {_where(path[0])}, leads to it, but backward "
                    "never ran through that output: the loss did not use it, or used it after "
                    ".detach()/.item()/no_grad")
        return (f"{name}: backward stopped at {_where(cut)}, on its path from forward output {k}: "
                "the value that node made reached the loss only through a cut (.detach(), "
                ".item(), no_grad, an integer op) or not at all")
    return (f"{name}: the graph of forward's outputs never reaches it: its module "
            f"{owner or '(the root)'} did not run in forward, or its result was cut inside forward "
            "(.detach(), .item(), no_grad, an integer op) before reaching an output")


def _anomaly_flags():
    from ...autograd.graph import _Hooks

    return _Hooks


def unfinished_reduction_error(reducer, rank: int) -> RuntimeError:
    """PyTorch's error for parameters that got no gradient, plus their names and where each one's
    path to the loss was cut."""
    missing = reducer.unfinished()
    lines = [_UNFINISHED,
             f"Parameter indices which did not receive grad for rank {rank}: "
             + " ".join(str(i) for i in missing),
             f"Parameters which did not receive grad for rank {rank}: "
             + ", ".join(reducer.names[i] for i in missing),
             "glassgrad: where each one's path to the loss was cut"
             + ("" if getattr(_anomaly_flags(), "record_source", False) else
                " (glassgrad.autograd.set_detect_anomaly(True) adds the source lines)") + ":"]
    for i in missing[:8]:
        owner = reducer.names[i].rpartition(".")[0]
        lines.append("  " + cut_explanation(reducer.params[i], reducer.names[i], owner,
                                            reducer.last_outputs))
    if len(missing) > 8:
        lines.append(f"  ... and {len(missing) - 8} more")
    lines.append("Pass find_unused_parameters=True to DistributedDataParallel if some parameters "
                 "are meant to sit out an iteration, or make every output feed the loss.")
    return RuntimeError("\n".join(lines))


def checksums(named_tensors) -> list:
    """Per tensor a CRC-32 of its bytes: equal bits give equal sums, one flipped bit does not."""
    return [zlib.crc32(t.detach().contiguous().numpy().tobytes()) for _, t in named_tensors]
