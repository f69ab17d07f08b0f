"""``SummaryWriter.add_graph`` for tinyattn: the graph of one forward pass, for TensorBoard's Graphs tab.

PyTorch traces the model with TorchScript and writes the traced IR (``aten::linear`` nodes and
TorchScript's own constants). tinyattn has no tracer, but every forward pass that needs gradients
records its graph already: each result's ``grad_fn`` and, through ``next_functions``, the ops and
leaves it came from. This module runs the model once (in eval mode, as PyTorch does) and writes
that graph with PyTorch's conventions, so TensorBoard draws it the same way:

  * ``input/input.<i>`` and ``output/output.<i>`` "IO Node"s with their shapes;
  * each op under the scope of the module whose forward made it, named as PyTorch names scopes:
    ``Net/Linear[fc]/Linear.3`` (the class, then the attribute name in brackets);
  * each parameter under its module's scope (``Net/Linear[fc]/weight/weight``).

A forward hook on every module claims, when that module returns, the ops of its output that no
inner module claimed first; the root claims the rest. The node names differ from PyTorch's (which
come from TorchScript), so the file is not PyTorch's byte for byte; the step stats record is.
"""
from __future__ import annotations

import itertools

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ..autograd import enable_grad, topological_order
from ..tensor import Tensor

__all__ = ["graph"]


def _node(name: str, op: str, inputs=(), shape=None, attr: str = "{}") -> NodeDef:
    attrs = {"attr": AttrValue(s=attr.encode("utf_8"))}
    if shape is not None:
        dims = [TensorShapeProto.Dim(size=int(d)) for d in shape]
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(dim=dims)]))
    return NodeDef(name=name, op=op, input=list(inputs), attr=attrs)


def _tensors(obj) -> list:
    """The tensors in a forward's output (a tensor, or tuples/lists/dicts of them), in order."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    return []


def _walk(roots):
    """Every node reachable from ``roots`` through next_functions, each once."""
    seen, stack = set(), [n for n in roots if n is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(n for n, _ in node.next_functions if n is not None)


def graph(model, args, verbose: bool = False) -> tuple[GraphDef, RunMetadata]:
    """(GraphDef, RunMetadata) of one forward pass of ``model`` on ``args`` (a tensor or a tuple of them)."""
    args = args if isinstance(args, (tuple, list)) else (args,)
    inputs = [a.detach().requires_grad_() if isinstance(a, Tensor) and a.dtype.kind == "f" else a for a in args]
    by_name = dict(model.named_modules())  # "" is the model itself; parents come before their children
    scopes = {model: type(model).__name__}
    for name, m in by_name.items():
        if name:
            parent, _, attr = name.rpartition(".")
            scopes[m] = f"{scopes[by_name[parent]]}/{type(m).__name__}[{attr}]"
    claimed: dict[int, str] = {}  # id(node) -> the scope of the module that made it

    def claim(module, _inputs, output) -> None:
        for node in _walk([t.grad_fn for t in _tensors(output)]):
            claimed.setdefault(id(node), scopes[module])

    handles = [m.register_forward_hook(claim) for m in scopes if m is not model]
    was_training = model.training
    model.train(False)
    try:
        with enable_grad():
            outputs = _tensors(model(*inputs))
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    roots = [t.grad_fn for t in outputs]
    nodes = topological_order([r for r in roots if r is not None])  # each node after every node it reads
    shapes = {id(t.grad_fn): tuple(t.shape) for t in outputs if t.grad_fn is not None}
    for node in nodes:  # an op's output shape is the shape its consumer saw
        for (src, _), shape in zip(node.next_functions, node.shapes or ()):
            if src is not None:
                shapes.setdefault(id(src), tuple(shape))
    params = {id(p): n for n, p in model.named_parameters()}
    names, counter, defs = {}, itertools.count(), []
    for i, a in enumerate(inputs):
        defs.append(_node(f"input/input.{i}", "IO Node", shape=getattr(a, "shape", None), attr=""))
        if isinstance(a, Tensor):
            names[id(a)] = f"input/input.{i}"
    for node in nodes:
        if node.op is None:  # a leaf: an input, a parameter, or another tensor that requires grad
            var = node.variable
            if id(var) in names:
                names[id(node)] = names[id(var)]
                continue
            if id(var) in params:
                owner, _, leaf = params[id(var)].rpartition(".")
                scope = scopes[by_name[owner]]
                names[id(node)] = f"{scope}/{leaf}/{leaf}"  # PyTorch groups a parameter under its own name
                defs.append(_node(names[id(node)], "prim::GetAttr", shape=tuple(var.shape), attr=f"{{ name : {leaf} }}"))
            else:
                names[id(node)] = f"{scopes[model]}/tensor.{next(counter)}"
                defs.append(_node(names[id(node)], "Tensor", shape=tuple(var.shape)))
            continue
        names[id(node)] = f"{claimed.get(id(node), scopes[model])}/{node.op.__name__}.{next(counter)}"
        defs.append(_node(names[id(node)], node.op.__name__, [names[id(n)] for n, _ in node.next_functions
                                                             if n is not None and id(n) in names],
                          shape=shapes.get(id(node))))
    for i, t in enumerate(outputs):
        source = [names[id(t.grad_fn)]] if t.grad_fn is not None else []
        defs.append(_node(f"output/output.{i}", "IO Node", source, shape=tuple(t.shape), attr=""))
    if verbose:
        print("\n".join(f"{d.name} = {d.op}({', '.join(d.input)})" for d in defs))
    stepstats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=defs, versions=VersionDef(producer=22)), stepstats
