"""A TensorBoard ``GraphDef`` of one forward's autograd graph, for ``SummaryWriter.add_graph``."""

from __future__ import annotations

from tensorboardX.proto.attr_value_pb2 import AttrValue
from tensorboardX.proto.graph_pb2 import GraphDef
from tensorboardX.proto.node_def_pb2 import NodeDef
from tensorboardX.proto.versions_pb2 import VersionDef

from ...autograd.grad_mode import enable_grad
from ...tensor import Tensor


def _shape_attr(t) -> dict:
    return {"attr": {"attr": AttrValue(s=f"{t.dtype!r}{list(t.shape)}".encode())}}


def _traced(t):
    """A float input as a leaf that requires grad, so that the graph reaches it."""
    if isinstance(t, Tensor) and t.is_floating_point():
        return t.detach().requires_grad_()
    return t


def graph_def(model, inputs: tuple) -> GraphDef:
    """Run ``model(*inputs)`` with grad on and turn its graph into nodes: ``input/input.i`` and
    ``output/output.i`` (op "IO Node"), each parameter by its dotted name (op "Parameter"), and
    each backward Node as ``<Name>_<k>`` with edges from the nodes it receives gradients from."""
    names = {id(p): n for n, p in model.named_parameters()} if hasattr(model, "named_parameters") \
        else {}
    inputs = tuple(_traced(t) for t in inputs)
    leaves = {id(t): f"input/input.{i}" for i, t in enumerate(inputs) if isinstance(t, Tensor)}
    with enable_grad():
        outputs = model(*inputs)
    outputs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
    nodes: list[NodeDef] = [NodeDef(name=n, op="IO Node", **_shape_attr(t))
                            for t in inputs if isinstance(t, Tensor) for n in [leaves[id(t)]]]
    seen: dict[int, str] = {}
    stack = []

    def node_name(fn) -> str:
        key = id(fn)
        if key not in seen:
            variable = getattr(fn, "variable", None)
            if variable is not None:
                seen[key] = names.get(id(variable)) or leaves.get(id(variable)) or \
                    f"leaf_{len(seen)}"
                if seen[key] not in leaves.values():
                    nodes.append(NodeDef(name=seen[key], op="Parameter", **_shape_attr(variable)))
            else:
                seen[key] = f"{fn.name()}_{len(seen)}"
                stack.append(fn)
        return seen[key]

    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            continue
        source = [node_name(out.grad_fn)] if out.grad_fn is not None else []
        out_node = NodeDef(name=f"output/output.{i}", op="IO Node", input=source,
                           **_shape_attr(out))
        while stack:
            fn = stack.pop()
            edges = [node_name(nxt) for nxt, _ in fn.next_functions if nxt is not None]
            nodes.append(NodeDef(name=seen[id(fn)], op=fn.name(), input=edges))
        nodes.append(out_node)
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
