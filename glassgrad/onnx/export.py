"""``glassgrad.onnx.export``: run the model once on example inputs and write its ONNX model."""

from __future__ import annotations

import enum
import inspect
import os

from ..autograd.grad_mode import enable_grad
from ..autograd.graph import _Hooks
from ..tensor import Tensor
from . import _patches
from ._builder import GraphBuilder, elem_type, onnx_module
from .errors import OnnxExporterError
from .symbolic import table
from .tracer import Tracer
from .._user_warning import warn_user

DEFAULT_OPSET = 20  # PyTorch 2.13's ONNX_DEFAULT_OPSET
MIN_OPSET, MAX_OPSET = 13, 23  # 13: axes and split sizes as inputs; 23: torch's ONNX_MAX_OPSET
_exporting = [False]


class TrainingMode(enum.IntEnum):
    """The mode a model is exported in (``torch.onnx.TrainingMode``)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export() -> bool:
    """Whether an export is recording a forward now (``torch.onnx.is_in_onnx_export``)."""
    return _exporting[0]


class ONNXProgram:
    """The exported model (``torch.onnx.ONNXProgram``, as far as programs use it):
    ``model_proto`` and ``save(destination)``."""

    def __init__(self, model_proto) -> None:
        self.model_proto = model_proto

    def save(self, destination) -> None:
        """Write the model to a path or a binary file object."""
        _write(self.model_proto, destination)

    def __repr__(self) -> str:
        g = self.model_proto.graph
        return (f"ONNXProgram(inputs={[i.name for i in g.input]}, "
                f"outputs={[o.name for o in g.output]}, nodes={len(g.node)})")


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=None, do_constant_folding=True,
           custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True):
    """Record ``model(*args, **kwargs)`` and write it as an ONNX model to ``f`` (a path or a
    binary file object; ``torch.onnx.export``). Returns an ``ONNXProgram``.

    ``args`` is a tuple (a lone Tensor is wrapped; a trailing dict is keyword arguments, as in
    the TorchScript exporter); tensors nested in tuples and lists become the graph inputs, in
    order, named by ``input_names`` or after forward's parameters. Outputs (a Tensor, or tuples
    and lists of them) are named by ``output_names``. ``dynamic_axes`` maps an input or output
    name to ``{axis: "name"}`` or ``[axis, ...]``: those dims are symbolic in the file. The
    model runs in eval mode (``training=TrainingMode.EVAL``; ``PRESERVE`` keeps its mode,
    ``TRAINING`` puts it in train mode, where dropout is ONNX's Dropout in training mode) under
    grad mode and is put back as it was. PyTorch's two exporters are one here: the arguments
    of either are accepted, and those that tune PyTorch's own machinery (``dynamo``,
    ``external_data``, ``optimize``, ``report``, ``verify``, ``profile``, ``artifacts_dir``,
    ``operator_export_type``, ``do_constant_folding``: constants are always folded) change
    nothing; ``dynamic_shapes`` and ``custom_translation_table`` are not read (use
    ``dynamic_axes``). ``export_params=False`` makes parameters graph inputs without values;
    ``keep_initializers_as_inputs=True`` lists them as inputs too.

    Raises UnsupportedOperatorError naming the op, its PyTorch name and its input shapes when
    the forward runs an op with no ONNX translation (``glassgrad.onnx.SUPPORTED_OPS``), and
    ImportError naming ``glassgrad[onnx]`` without the onnx package.

    >>> import glassgrad as torch, io
    >>> m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    >>> _ = torch.onnx.export(m, (torch.randn(4, 3),), io.BytesIO(), input_names=["x"])
    """
    onnx = onnx_module()
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise RuntimeError(f"Unsupported onnx_opset_version: {opset}\nglassgrad: exports opset "
                         f"{MIN_OPSET} to {MAX_OPSET}; the default is {DEFAULT_OPSET}.")
    g = GraphBuilder(opset)
    constant_names = _constant_names(model)
    tracer = Tracer(g, table(), constant_names)

    names_in = _input_names(model, args, kwargs, input_names)
    flat_in = []
    traced_args = _bind_inputs((args, kwargs), tracer, flat_in, iter(names_in))
    out = _run(model, tracer, training, *traced_args)

    flat_out = []
    _flatten(out, flat_out)
    if not flat_out:
        raise OnnxExporterError("glassgrad: the model returned no Tensor to export")
    names_out = list(output_names or [])
    names_out += [f"output_{i}" if i else "output" for i in range(len(names_out), len(flat_out))]
    outputs = []
    renamed: dict = {}
    for t, name in zip(flat_out, names_out):
        _name_output(g, tracer.value(t), name, {n for _, n in flat_in}, renamed)
        outputs.append((name, t))
    for name, axes in (dynamic_axes or {}).items():
        if not isinstance(axes, dict):
            warn_user("No names were found for specified dynamic axes of provided input."
                      "Automatically generated names will be applied to each dynamic axes "
                      f"of input {name}", UserWarning, stacklevel=2)
    model_proto = _make_model(onnx, g, [(n, t) for t, n in flat_in], outputs,
                              dynamic_axes or {}, constant_names, export_params,
                              keep_initializers_as_inputs)
    if verbose:
        print(onnx.printer.to_text(model_proto.graph))
    if f is not None:
        _write(model_proto, f)
    return ONNXProgram(model_proto)


def _run(model, tracer, training, args, kwargs):
    was = [(m, m.training) for m in model.modules()] if hasattr(model, "modules") else []
    if training != TrainingMode.PRESERVE and hasattr(model, "train"):
        model.train(training == TrainingMode.TRAINING)
    _exporting[0] = True
    _Hooks.trace = tracer
    try:
        with enable_grad(), _patches.installed(tracer):
            return model(*args, **kwargs)
    finally:
        _Hooks.trace = None
        _exporting[0] = False
        for m, training in was:
            m.training = training


def _name_output(g, value: str, name: str, input_names: set, renamed: dict) -> None:
    """Give the graph output ``name`` to ``value``: rename the node output that makes it, or
    (for an input, a constant, or a value already an output) add an Identity."""
    producer = next((n for n in g.nodes if value in n.output), None)
    if value in renamed or producer is None or value in input_names:
        g.nodes.append(g.helper.make_node("Identity", [renamed.get(value, value)], [name],
                                          name=f"/output_{name}"))
        return
    renamed[value] = name
    for node in g.nodes:
        for seq in (node.input, node.output):
            for i, v in enumerate(seq):
                if v == value:
                    seq[i] = name


def _bind_inputs(obj, tracer, flat, names):
    """A copy of the argument structure whose tensors are the traced graph inputs: float ones
    computed from a detached leaf that requires grad, so views and every op on them go through
    ``Primitive.apply`` (NOTE [Tracing ops]); ``flat`` gets ``(tensor, name)`` in order."""
    if isinstance(obj, Tensor):
        t = obj.detach()
        if t.is_floating_point():
            # NOTE: a clone of a leaf, so forward may still write to its input in place
            leaf = t.requires_grad_(True)
            t = leaf.clone()
            tracer.mark_input(leaf)
        name = next(names)
        tracer.bind(t, name)
        tracer.mark_input(t)
        flat.append((t, name))
        return t
    if isinstance(obj, (tuple, list)):
        items = [_bind_inputs(o, tracer, flat, names) for o in obj]
        return type(obj)(items) if isinstance(obj, list) else tuple(items)
    if isinstance(obj, dict):
        return {k: _bind_inputs(v, tracer, flat, names) for k, v in obj.items()}
    return obj


def _input_names(model, args, kwargs, given) -> list:
    """``input_names``, then names after forward's parameters for the tensors they leave."""
    names = list(given or [])
    try:
        params = list(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError, AttributeError):
        params = []
    auto = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"input_{i}"
        _auto_names(a, base, auto)
    for k, v in kwargs.items():
        _auto_names(v, k, auto)
    if len(names) >= len(auto):
        return names[:len(auto)]
    taken = set(names)
    for name in auto[len(names):]:
        while name in taken:
            name += "_"
        taken.add(name)
        names.append(name)
    return names


def _auto_names(obj, base, out) -> None:
    if isinstance(obj, Tensor):
        out.append(base)
    elif isinstance(obj, (tuple, list)):
        for i, o in enumerate(obj):
            _auto_names(o, f"{base}.{i}", out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _auto_names(v, f"{base}.{k}", out)


def _flatten(obj, out) -> None:
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _flatten(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _flatten(o, out)


def _constant_names(model) -> dict:
    names = {}
    if hasattr(model, "named_parameters"):
        for name, p in model.named_parameters():
            names.setdefault(id(p), name)
        for name, b in model.named_buffers():
            names.setdefault(id(b), name)
    return names


def _value_info(helper, name, t, axes) -> object:
    shape = list(t._array.shape)
    named = (axes.items() if isinstance(axes, dict)
             else [(i, f"{name}_dynamic_axes_{k + 1}") for k, i in enumerate(axes or ())])
    for i, sym in named:
        if not 0 <= i < len(shape):  # NOTE: torch's check, naming the symbolic dim
            raise RuntimeError(f"Dynamic shape axis should be no more than the shape dimension "
                               f"for {sym}\nglassgrad: dynamic_axes gives {name!r} axis {i}, "
                               f"but it has {len(shape)} dims ({tuple(shape)}).")
        shape[i] = str(sym)
    return helper.make_tensor_value_info(name, elem_type(t._array.dtype), shape)


def _make_model(onnx, g, inputs, outputs, dynamic_axes, constant_names, export_params,
                keep_initializers_as_inputs):
    helper = onnx.helper
    known = {n for n, _ in inputs} | {n for n, _ in outputs}
    for key in dynamic_axes:
        if key not in known:
            warn_user(f"Provided key {key} for dynamic axes is not a valid input/output "
                      f"name\nglassgrad: the names are {sorted(known)}; the key is ignored.",
                      UserWarning, stacklevel=3)
    graph_inputs = [_value_info(helper, n, t, dynamic_axes.get(n)) for n, t in inputs]
    initializers = list(g.initializers)
    if not export_params or keep_initializers_as_inputs:
        params = set(constant_names.values())
        for init in [i for i in initializers if i.name in params]:
            if not export_params:
                initializers.remove(init)
            graph_inputs.append(helper.make_tensor_value_info(init.name, init.data_type,
                                                              list(init.dims)))
    graph = helper.make_graph(
        g.nodes, "main_graph", graph_inputs,
        [_value_info(helper, n, t, dynamic_axes.get(n)) for n, t in outputs],
        initializer=initializers)
    opsets = [helper.make_opsetid("", g.opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="glassgrad",
                              producer_version=_version())
    # NOTE: the lowest IR version that holds this opset, so older onnxruntimes load the file
    model.ir_version = helper.find_min_ir_version_for(opsets)
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        raise OnnxExporterError(f"glassgrad: the exported model does not check: {exc}") from None
    return model


def _version() -> str:
    from .. import __version__

    return __version__


def _write(model_proto, f) -> None:
    data = model_proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)

