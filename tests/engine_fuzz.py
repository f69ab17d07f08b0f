"""A differential fuzzer for the engine: random programs over views, in-place writes and autograd state.

Each program is Python text written against PyTorch's API (``torch``, ``F``, ``np``), so the same
text runs with ``torch = tinyattn`` and with real PyTorch. ``generate(seed)`` builds one program,
deterministically from the seed; ``run(program, torch, F)`` executes it statement by statement and
returns what it observed:

- whether a statement raised (which one, the exception's type and a coarse category of its message);
- the value of every loss at its backward, and every gradient a hook saw;
- at the end (or at the raise), for every tensor the program named: its values, dtype, shape,
  requires_grad, is_leaf, is_contiguous(), and its ``.grad`` (leaves, and tensors that retained it).

``compare(a, b)`` lists the differences between two outcomes. The families drawn from: views (basic
slicing, expand, t, transpose, permute, view/reshape, select, diagonal, narrow, unsqueeze, mT, flatten,
split/chunk/unbind, index_select, advanced indexing), in-place writes through views and bases
(add_/mul_/copy_/masked_fill_/setitem/+=/relu_/exp_/sigmoid_/tanh_/clamp_/zero_, overlapping operands),
no_grad regions, hooks, retain_grad, requires_grad_ toggles, ``.data`` writes, detach/detach_, second
backward with retain_graph, torch.autograd.grad, and the NumPy bridge (torch.tensor copies,
from_numpy shares). A program also carries ``fd_ok``: True when nothing in it (detach, no_grad,
.data, a hook that changes a gradient, a toggle, autograd.grad) makes the leaves' ``.grad`` differ
from the derivative of the sum of its backward losses, which finite differences can then check.
"""
from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np

LEAF_SHAPES = [(4,), (3,), (2, 3), (3, 4), (2, 3, 2), (1, 3)]


@dataclasses.dataclass
class Program:
    seed: int
    stmts: list            # [(text, tag)]: tag "loss:<name>" marks a backward whose loss is recorded
    leaves: dict           # name -> (values as nested lists, dtype name)
    names: list            # every tensor name the program binds, in order
    fd_ok: bool
    families: set

    def render(self, leaf_values: dict | None = None) -> list:
        """The statements' text; leaf_values (name -> array) replaces the leaves' initial values."""
        out = []
        for text, _ in self.stmts:
            for name, (vals, dtype) in self.leaves.items():
                key = "{LEAF:%s}" % name
                if key in text:
                    v = vals if leaf_values is None else np.asarray(leaf_values[name]).tolist()
                    text = text.replace(key, repr(v))
            out.append(text)
        return out

    def source(self) -> str:
        return "\n".join(self.render())


def _fmt_shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


class _Gen:
    """The generator's state: the tensors named so far and their shapes."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.stmts: list = []
        self.vars: dict = {}     # name -> {"shape", "kind"}
        self.leaves: dict = {}
        self.fd_ok = True
        self.families: set = set()
        self.n = 0
        self.dtype = "float64" if self.rng.random() < 0.8 else "float32"
        self.backwards = 0
        self.in_nograd = False

    def snapshot(self):
        return (len(self.stmts), {k: dict(v) for k, v in self.vars.items()}, set(self.families), self.fd_ok,
                self.backwards, dict(self.leaves))

    def restore(self, snap) -> None:
        n, self.vars, self.families, self.fd_ok, self.backwards, self.leaves = snap
        del self.stmts[n:]

    # -- helpers ------------------------------------------------------------------------------------
    def r(self, k: int) -> int:
        return int(self.rng.integers(k))

    def pick(self, seq):
        return seq[self.r(len(seq))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, text: str, fam: str, tag: str = "") -> None:
        self.stmts.append((text, tag))
        self.families.add(fam)

    def bind(self, name: str, shape, kind: str, leafy: bool = False) -> str:
        """leafy: a leaf that requires grad or a view of one (in-place writes to them raise, mostly)."""
        self.vars[name] = {"shape": tuple(shape), "kind": kind, "leafy": leafy or kind == "leaf",
                           "rg": kind in ("leaf", "nonleaf", "view") and not self.in_nograd}
        return name

    def inherit(self, name: str, *srcs) -> None:
        """name requires grad (as far as the generator can tell) when one of srcs does."""
        self.vars[name]["rg"] = self.vars[name]["rg"] and any(self.vars[s]["rg"] for s in srcs if s in self.vars)

    def grad_var(self):
        """Mostly a tensor that requires grad (hooks, retain_grad and backward on others raise)."""
        return (self.chance(0.85) and self.var(pred=lambda v: v["rg"])) or self.var()

    def var(self, min_ndim: int = 0, kinds=None, pred=None):
        """A random name among those with at least min_ndim dims, of the kinds, for which pred(var) holds."""
        cands = [n for n, v in self.vars.items() if len(v["shape"]) >= min_ndim
                 and (kinds is None or v["kind"] in kinds) and (pred is None or pred(v))]
        return self.pick(cands) if cands else None

    def values(self, shape):
        mag = self.rng.uniform(0.3, 1.5, size=shape)
        sign = np.where(self.rng.random(shape) < 0.5, -1.0, 1.0)
        return np.round(mag * sign, 2).tolist()

    def dt(self) -> str:
        return f"torch.{self.dtype}"

    def const(self, shape) -> str:
        return f"torch.tensor({self.values(shape)!r}, dtype={self.dt()})"

    def value_of_shape(self, shape) -> str:
        """An expression of the given shape, reading a tensor of the program where one fits."""
        numel = int(np.prod(shape)) if shape else 1
        same = [n for n, v in self.vars.items() if v["shape"] == tuple(shape)]
        if same and self.chance(0.6):
            return self.pick(same) + ("" if self.chance(0.5) else " * 0.5")
        fits = [n for n, v in self.vars.items() if int(np.prod(v["shape"]) if v["shape"] else 1) == numel]
        if fits and self.chance(0.5):
            return f"{self.pick(fits)}.reshape({_fmt_shape(shape)}) * 0.5"
        return self.const(shape)

    # -- statement families ------------------------------------------------------------------------
    def leaf(self) -> str:
        shape = self.pick(LEAF_SHAPES)
        name = f"x{len(self.leaves)}"
        self.leaves[name] = (self.values(shape), self.dtype)
        self.emit(f"{name} = torch.tensor({{LEAF:{name}}}, dtype={self.dt()}, requires_grad=True)", "leaf")
        return self.bind(name, shape, "leaf")

    def compute(self) -> None:
        src = self.var()
        shape = self.vars[src]["shape"]
        name = self.fresh("h")
        choices = ["{s} * 2", "{s}.exp()", "{s}.tanh()", "{s}.sigmoid()", "{s} + 1", "{s} * {s}",
                   "torch.add({s}, {s}, alpha=2)", "{s}.clone()", "{s}.relu()", "F.relu({s})", "{s} * 1.0"]
        fam = "compute"
        if shape and shape[-1] > 1:
            choices += ["F.softmax({s}, -1)"]
        if shape and shape[-1] > 2:  # over 2 elements layer_norm's gradient is ~0 (+-1 outputs): rounding noise
            choices += ["F.layer_norm({s}, ({last},))"]
        if len(shape) >= 2:
            choices += ["F.scaled_dot_product_attention({s}, {s}, {s})"]
        others = [n for n, v in self.vars.items() if v["shape"] == shape and n != src]
        if others:
            choices += ["{s} * {o}", "{s} + {o}", "torch.add({s}, {o}, alpha=-1.5)"]
        expr = self.pick(choices).format(s=src, last=shape[-1] if shape else 1,
                                         o=self.pick(others) if others else src)
        if "layer_norm" in expr:
            fam = "layer_norm"
        elif "scaled_dot" in expr:
            fam = "sdpa"
        elif "alpha" in expr:
            fam = "add_alpha"
        if "relu" in expr:
            self.fd_ok = False   # a kink; keep finite differences away from it
        self.emit(f"{name} = {expr}", fam)
        self.bind(name, shape, "nonleaf")
        self.inherit(name, *[w for w in re.findall(r"\w+", expr) if w in self.vars and w != name])

    def view(self) -> None:
        src = self.var()
        shape = self.vars[src]["shape"]
        nd = len(shape)
        name = self.fresh("v")
        opts = []
        if nd >= 1:
            d = self.r(nd)
            n = shape[d]
            opts += [("slice", f"{src}[{self.r(n)}:]"), ("select", f"{src}.select({d}, {self.r(n)})"),
                     ("index", f"{src}[{self.r(n)}]"), ("narrow", f"{src}.narrow({d}, 0, {max(1, n - 1)})"),
                     ("unsqueeze", f"{src}.unsqueeze({self.r(nd + 1)})"), ("none", f"{src}[None]"),
                     ("expand", f"{src}.unsqueeze(0).expand(2, *{src}.shape)"),
                     ("step", f"{src}[::2]"), ("flatten", f"{src}.flatten()"),
                     ("view", f"{src}.view(-1)"), ("reshape", f"{src}.reshape(-1)"),
                     ("t", f"{src}.t()") if nd <= 2 else ("transpose", f"{src}.transpose(0, -1)"),
                     ("index_select", f"{src}.index_select({d}, torch.tensor({[self.r(n) for _ in range(2)]}))"),
                     ("adv_index", f"{src}[torch.tensor({[self.r(shape[0]) for _ in range(2)]})]"),
                     ("detach", f"{src}.detach()"), ("contiguous", f"{src}.contiguous()")]
            if n >= 2:
                opts += [("split", f"{src}.split(1, {d})[{self.r(n)}]"), ("chunk", f"{src}.chunk(2, {d})[0]"),
                         ("unbind", f"{src}.unbind({d})[{self.r(n)}]")]
        if nd >= 2:
            opts += [("transpose", f"{src}.transpose(0, 1)"), ("permute", f"{src}.permute(*reversed(range({nd})))"),
                     ("diagonal", f"{src}.diagonal()"), ("mT", f"{src}.mT"),
                     ("adv_index", f"{src}[:, {[self.r(shape[1]) for _ in range(2)]}]"),
                     ("index_select", f"{src}.index_select(1, torch.tensor([{self.r(shape[1])}, 0]))"),
                     ("slice", f"{src}[:, 1:]"), ("reshape", f"{src}.reshape({shape[0]}, -1)")]
        if nd == 0:
            opts += [("unsqueeze", f"{src}.unsqueeze(0)"), ("view", f"{src}.view(1)")]
        fam, expr = self.pick(opts)
        leafy = self.vars[src]["leafy"] and fam not in ("detach", "contiguous", "index_select", "adv_index")
        if fam == "detach":
            self.fd_ok = False
        # the result's shape, from NumPy's equivalent on a dummy array (evaluated by the generator only)
        shp = _shape_of(re.sub(rf"\b{src}\b", "A", expr), shape)
        if shp is None or 0 in shp:
            return
        self.emit(f"{name} = {expr}", "view:" + fam)
        self.bind(name, shp, "view", leafy)
        self.inherit(name, src)
        self.vars[name]["multi"] = fam in ("split", "chunk", "unbind") or (
            self.vars[src].get("multi", False) and fam not in ("detach", "contiguous", "index_select", "adv_index"))
        if fam == "detach":
            self.vars[name]["rg"] = False

    def chunk_unpack(self) -> None:
        src = self.var(1, pred=lambda v: v["shape"][0] >= 2)
        if src is None:
            return
        shape, leafy = self.vars[src]["shape"], self.vars[src]["leafy"]
        a, b = self.fresh("s"), self.fresh("s")
        how = self.pick(["chunk", "split", "unbind"])
        if how == "chunk":
            n0 = -(-shape[0] // 2)
            if shape[0] - n0 <= 0:
                return
            self.emit(f"{a}, {b} = {src}.chunk(2)", "view:chunk")
            self.bind(a, (n0,) + shape[1:], "view", leafy)
            self.bind(b, (shape[0] - n0,) + shape[1:], "view", leafy)
        elif how == "split":
            self.emit(f"{a}, {b} = {src}.split([1, {shape[0] - 1}])", "view:split")
            self.bind(a, (1,) + shape[1:], "view", leafy)
            self.bind(b, (shape[0] - 1,) + shape[1:], "view", leafy)
        else:
            if shape[0] != 2:
                return
            self.emit(f"{a}, {b} = {src}.unbind(0)", "view:unbind")
            self.bind(a, shape[1:], "view", leafy)
            self.bind(b, shape[1:], "view", leafy)
        for n in (a, b):
            self.vars[n]["multi"] = True
            self.inherit(n, src)

    def inplace(self, target: str | None = None) -> None:
        # writing a leaf (or a view of one) outside no_grad always raises: do it now and then only
        # so is writing an output of split/chunk/unbind (or a view of one) while grad is recorded
        multi_ok = self.chance(0.3)
        t = target or self.var(pred=None if self.chance(0.1) else
                               lambda v: not v["leafy"] and (multi_ok or not v.get("multi")))
        if t is None:
            self.compute()
            t = list(self.vars)[-1]
        shape = self.vars[t]["shape"]
        nd = len(shape)
        opts = [("add_", f"{t}.add_(1.5)"), ("mul_", f"{t}.mul_(2)"), ("iadd", f"{t} += {self.value_of_shape(shape)}"),
                ("imul", f"{t} *= 3"), ("copy_", f"{t}.copy_({self.value_of_shape(shape)})"),
                ("masked_fill_", f"{t}.masked_fill_({t} > 0.5, 0.25)"), ("self_mul", f"{t}.mul_({t})"),
                ("relu_", f"{t}.relu_()"), ("exp_", f"{t}.exp_()"), ("sigmoid_", f"{t}.sigmoid_()"),
                ("tanh_", f"{t}.tanh_()"), ("clamp_", f"{t}.clamp_(min=-0.5)"), ("zero_", f"{t}.zero_()"),
                ("add_t", f"{t}.add_({self.value_of_shape(shape)})"),
                ("F.relu_inplace", f"_ = F.relu({t}, inplace=True)"),
                ("fill_", f"{t}.fill_(0.75)")]
        if nd >= 1:
            i = self.r(shape[0])
            opts += [("setitem", f"{t}[{i}] = 0."), ("setitem_t", f"{t}[{i}] = {self.value_of_shape(shape[1:])}"),
                     ("setitem_slice", f"{t}[{i}:] = {self.value_of_shape((shape[0] - i,) + shape[1:])}"),
                     ("masked_set", f"{t}[{t} > 0] = 0."),
                     ("setitem_none", f"{t}[None] = {self.value_of_shape((1,) + shape)}")]
            if shape[0] >= 2:
                opts += [("overlap", f"{t}[1:].add_({t}[:-1])"), ("overlap", f"{t}[:-1].mul_({t}[1:])"),
                         ("view_inplace", f"{t}[1:].mul_(3)")]
        if nd >= 2:
            opts += [("setitem_col", f"{t}[:, 0] = {self.value_of_shape((shape[0],) + shape[2:])}")]
        fam, text = self.pick(opts)
        if fam in ("relu_", "clamp_", "masked_fill_", "masked_set", "F.relu_inplace"):
            self.fd_ok = False  # kinks
        self.emit(text, "inplace:" + fam)

    def nograd(self) -> None:
        before = len(self.stmts)
        k = 1 + self.r(2)
        self.in_nograd = True
        for _ in range(k):
            c = self.r(3)
            if c == 0:
                self.view()
            elif c == 1:
                self.inplace(self.var(kinds=("leaf",)) if self.chance(0.5) else None)
            else:
                self.compute()
        self.in_nograd = False
        inner = self.stmts[before:]
        del self.stmts[before:]
        if not inner:
            return
        body = "\n".join("    " + line for text, _ in inner for line in text.split("\n"))
        self.emit("with torch.no_grad():\n" + body, "no_grad")
        self.fd_ok = False

    def hook(self) -> None:
        t = self.grad_var()
        key = self.fresh("k")
        # reading grad_fn first: PyTorch 2.13 segfaults registering a hook on a view whose base was
        # written in place since (its grad_fn not yet regenerated); reading it regenerates it
        pre = f"_ = {t}.grad_fn\n"
        if self.chance(0.5):
            self.emit(pre + f"{t}.register_hook(lambda g: rec({key!r}, g))", "hook")
        else:
            self.emit(pre + f"{t}.register_hook(lambda g: g * 2)", "hook:modify")
            self.fd_ok = False

    def retain(self) -> None:
        t = self.grad_var()
        if self.chance(0.8):
            self.emit(f"{t}.retain_grad()", "retain_grad")
        else:
            self.emit(f"_ = {t}.retains_grad", "retains_grad")

    def toggle(self) -> None:
        t = self.var(kinds=None if self.chance(0.2) else ("leaf", "const"))
        flag = self.pick(["False", "True"])
        self.emit(f"{t}.requires_grad_({flag})", "requires_grad_")
        if self.vars[t]["kind"] in ("leaf", "const"):
            self.vars[t]["rg"] = flag == "True"
        self.fd_ok = False

    def data(self) -> None:
        t = self.var()
        shape = self.vars[t]["shape"]
        c = self.r(3)
        if c == 0:
            self.emit(f"{t}.data = {self.const(shape)}", "data:assign")
        elif c == 1:
            self.emit(f"{t}.data.mul_(0.5)", "data:inplace")
        else:
            self.emit(f"{t}.detach_()", "detach_")
            self.vars[t]["rg"] = False
        self.fd_ok = False

    def peek(self) -> None:
        t = self.var()
        self.emit(self.pick([f"_ = repr({t})", f"_ = {t}.requires_grad", f"_ = {t}.is_leaf",
                             f"_ = {t}.tolist()", f"_ = {t}.grad_fn is None"]), "peek")

    def numpy_bridge(self) -> None:
        shape = self.pick([(3, 4), (2, 3)])
        a, t = self.fresh("a"), self.fresh("n")
        self.emit(f"{a} = np.array({self.values(shape)!r}, dtype=np.{self.dtype})", "numpy")
        how = self.pick(["tensor_slice", "tensor", "from_numpy"])
        if how == "tensor_slice":
            self.emit(f"{t} = torch.tensor({a}[:, 1:])", "numpy:tensor_slice")
            self.bind(t, (shape[0], shape[1] - 1), "const")
        elif how == "tensor":
            self.emit(f"{t} = torch.tensor({a})", "numpy:tensor")
            self.bind(t, shape, "const")
        else:
            self.emit(f"{t} = torch.from_numpy({a})", "numpy:from_numpy")
            self.bind(t, shape, "const")
        self.emit(f"{a}[0, 0] = 7.0", "numpy:write")

    def backward(self, final: bool = False) -> None:
        t = self.grad_var()
        shape = self.vars[t]["shape"]
        loss = self.fresh("loss")
        retain = (not final) and self.chance(0.7)
        self.emit(f"{loss} = ({t} * {self.const(shape)}).sum()", "loss")
        self.bind(loss, (), "nonleaf")
        if self.chance(0.15) and not final:
            leaves = ", ".join(self.leaves)
            self.emit(f"gs = torch.autograd.grad({loss}, [{leaves}], retain_graph=True, allow_unused=True)\n"
                      f"rec('autograd.grad', *gs)", "autograd.grad")
            self.fd_ok = False
            return
        arg = "retain_graph=True" if retain else ""
        self.emit(f"{loss}.backward({arg})", "backward" if self.backwards == 0 else "backward:second",
                  tag=f"loss:{loss}")
        self.backwards += 1
        if self.chance(0.4) and not final:
            self.emit(f"{loss}.backward({arg})", "backward:second", tag=f"loss:{loss}")
            self.backwards += 1

    def motif(self) -> None:
        """The families the independent fuzzer reported, as short sequences the random mix may miss."""
        m = self.r(12)
        x = self.var(kinds=("leaf",))
        shape = self.vars[x]["shape"]
        if m == 0:     # expand is a view: a write into the base is seen through the expansion
            h, e = self.fresh("h"), self.fresh("v")
            self.emit(f"{h} = {x} * 2", "compute")
            self.bind(h, shape, "nonleaf")
            self.emit(f"{e} = {h}.expand(2, *{h}.shape)", "view:expand")
            self.bind(e, (2,) + shape, "view")
            self.inplace(h)
        elif m == 1:   # layer_norm without weight, its output written in place
            if shape[-1] < 3:
                return
            h = self.fresh("h")
            self.emit(f"{h} = F.layer_norm({x} * 1.0, ({shape[-1]},))", "layer_norm")
            self.bind(h, shape, "nonleaf")
            self.emit(self.pick([f"{h}.add_(1)", f"{h}.detach().mul_(2)", f"{h}.mul_(2)"]), "inplace:layer_norm_out")
            if "detach" in self.stmts[-1][0]:
                self.fd_ok = False
        elif m == 2:   # retain_grad, then a write through a view
            h = self.fresh("h")
            self.emit(f"{h} = {x} * 2", "compute")
            self.bind(h, shape, "nonleaf")
            self.emit(f"{h}.retain_grad()", "retain_grad")
            self.emit(f"{h}[{shape[0] - 1}:].mul_(3)" if shape[0] > 1 else f"{h}[0:].mul_(3)", "inplace:view_inplace")
        elif m == 3:   # an optimizer-style update: a row viewed under no_grad, then the leaf updated
            v = self.fresh("v")
            self.emit(f"with torch.no_grad():\n    {v} = {x}[0]\n    {x}.sub_(0.1 * {x})", "no_grad")
            self.bind(v, shape[1:], "view", True)
            self.emit(self.pick([f"_ = repr({v})", f"_ = {v}.requires_grad"]), "peek")
            self.fd_ok = False
        elif m == 4:   # q, k, v = qkv.split(...); q *= scale
            if len(shape) < 2 or shape[-1] < 2:
                return
            h, a, b = self.fresh("h"), self.fresh("s"), self.fresh("s")
            self.emit(f"{h} = {x} * 1.0", "compute")
            self.emit(f"{a}, {b} = {h}.split([1, {shape[-1] - 1}], dim=-1)", "view:split")
            self.bind(h, shape, "nonleaf")
            self.bind(a, shape[:-1] + (1,), "view")
            self.bind(b, shape[:-1] + (shape[-1] - 1,), "view")
            self.emit(f"{a} *= 0.5", "inplace:imul")
        elif m == 5:   # SDPA's output written in place
            if len(shape) < 2:
                return
            h = self.fresh("h")
            self.emit(f"{h} = F.scaled_dot_product_attention({x}, {x} * 0.5, {x})", "sdpa")
            self.bind(h, shape, "nonleaf")
            self.emit(f"{h} += 1", "inplace:iadd")
        elif m == 6:   # requires_grad_(False) after the graph was built
            h = self.fresh("h")
            self.emit(f"{h} = ({x} * {x}).sum()", "compute")
            self.bind(h, (), "nonleaf")
            self.emit(f"{x}.requires_grad_(False)", "requires_grad_")
            self.fd_ok = False
        elif m == 8:   # the tutorial's manual SGD step, then a second forward and backward
            loss = self.fresh("loss")
            self.emit(f"{loss} = ({x} * {x}).sum()\n{loss}.backward()", "backward")
            self.emit(f"with torch.no_grad():\n    {x} -= 0.1 * {x}.grad\n    {x}.grad.zero_()", "no_grad:sgd")
            self.fd_ok = False
        elif m == 9:   # clearing a gradient between steps
            self.emit(self.pick([f"{x}.grad = None", f"if {x}.grad is not None:\n    {x}.grad.zero_()"]), "grad:clear")
            self.fd_ok = False
        elif m == 10:  # a fresh leaf from a tensor: x.detach().clone().requires_grad_(True)
            y = f"x{len(self.leaves)}_"
            self.emit(f"{y} = {x}.detach().clone().requires_grad_(True)", "leaf:detach_clone")
            self.bind(y, shape, "leaf")
            self.fd_ok = False
        elif m == 11:  # nn.ReLU(inplace=True) on an activation
            h = self.fresh("h")
            self.emit(f"{h} = {x} * 1.0", "compute")
            self.bind(h, shape, "nonleaf")
            self.emit(f"_ = torch.nn.ReLU(inplace=True)({h})", "inplace:nn.ReLU_inplace")
            self.fd_ok = False
        else:          # a buffer row written from a (1, n) tensor
            h = self.fresh("h")
            self.emit(f"{h} = {x} * 1.0", "compute")
            self.bind(h, shape, "nonleaf")
            self.emit(f"{h}[None] = {self.value_of_shape((1,) + shape)}", "inplace:setitem_none")


def _shape_of(expr: str, shape):
    """The shape `expr` (with the source named A) gives, using NumPy stand-ins for PyTorch's calls."""
    A = _Dummy(np.zeros(shape))
    try:
        out = eval(expr, {"A": A, "torch": _DummyTorch, "reversed": reversed, "range": range})
    except Exception:
        return None
    return tuple(out.a.shape)


class _DummyTorch:
    @staticmethod
    def tensor(x):
        return np.array(x)


class _Dummy:
    """Just enough of a tensor's view API, on NumPy, for the generator to know result shapes."""

    def __init__(self, a):
        self.a = a

    shape = property(lambda s: s.a.shape)
    mT = property(lambda s: _Dummy(np.swapaxes(s.a, -1, -2)))

    def __getitem__(self, i):
        return _Dummy(self.a[i])

    def select(self, d, i): return _Dummy(np.take(self.a, i, axis=d))
    def narrow(self, d, s, n): return _Dummy(np.take(self.a, range(s, s + n), axis=d))
    def unsqueeze(self, d): return _Dummy(np.expand_dims(self.a, d))
    def expand(self, *s): return _Dummy(np.broadcast_to(self.a, s))
    def flatten(self): return _Dummy(self.a.reshape(-1))
    def view(self, *s): return _Dummy(self.a.reshape(s))
    reshape = view
    def t(self): return _Dummy(self.a.T)
    def transpose(self, a, b): return _Dummy(np.swapaxes(self.a, a, b))
    def permute(self, *p): return _Dummy(np.transpose(self.a, p))
    def diagonal(self): return _Dummy(np.diagonal(self.a))
    def index_select(self, d, i): return _Dummy(np.take(self.a, i, axis=d))
    def detach(self): return self
    contiguous = detach
    def split(self, k, d): return [_Dummy(p) for p in np.split(self.a, self.a.shape[d] // k, axis=d)]
    def chunk(self, n, d):
        size = self.a.shape[d]
        c = -(-size // n)  # PyTorch's chunks: ceil(size / n) each, the last one shorter
        return [_Dummy(np.take(self.a, range(i, min(i + c, size)), axis=d)) for i in range(0, size, c)]
    def unbind(self, d): return [_Dummy(np.take(self.a, i, axis=d)) for i in range(self.a.shape[d])]


def generate(seed: int, n_stmts: int | None = None) -> Program:
    g = _Gen(seed)
    pure = g.chance(0.35)  # keep to steps finite differences can check: reject the others
    if pure:
        g.dtype = "float64"
    g.leaf()
    if g.chance(0.6):
        g.leaf()
    n = n_stmts or 6 + g.r(10)
    steps = [(g.view, 5), (g.compute, 4), (g.inplace, 5), (g.nograd, 1), (g.hook, 1.2), (g.retain, 1),
             (g.toggle, 0.4), (g.data, 0.5), (g.peek, 0.6), (g.chunk_unpack, 0.8), (g.motif, 2.5),
             (g.backward, 1), (g.numpy_bridge, 0.3)]
    w = np.array([s[1] for s in steps])
    for _ in range(n):
        saved = g.snapshot()
        steps[int(g.rng.choice(len(steps), p=w / w.sum()))][0]()
        if pure and not g.fd_ok:
            g.restore(saved)
    g.backward(final=True)
    if g.dtype != "float64":
        g.fd_ok = False  # finite differences need float64
    return Program(seed, g.stmts, g.leaves, list(g.vars), g.fd_ok, g.families)


# ------------------------------------------------------------------------------------------------
# Running a program and comparing outcomes
# ------------------------------------------------------------------------------------------------
CATEGORIES = [  # (category, pattern in the message): PyTorch's wording first, then equivalents
    ("multi_view", r"returns multiple views|multiple views"),
    ("nograd_view", r"created in no_grad mode|created inside a no_grad block|view was created in no_grad"),
    ("leaf_view_inplace", r"view of a leaf Variable"),
    ("leaf_inplace", r"leaf Variable that requires grad|leaf (variable|tensor).*in-?place"),
    ("version", r"modified by an inplace operation|modified in-?place"),
    ("self_overlap", r"more than one element of the written-to tensor"),
    ("overlap", r"refer to a single memory location|overlap"),
    ("second_backward", r"backward through the graph a second time|second time|already been freed"),
    ("no_grad_fn", r"does not require grad|doesn't require grad|does not have a grad_fn"),
    ("detach_view", r"detach views in-?place|detach_"),
    ("view_stride", r"view size is not compatible|not compatible with input tensor's size and stride|use \.reshape"),
    ("nonleaf_flag", r"requires_grad flags of (only )?leaf|only change requires_grad"),
    ("shape", r"must match|shape mismatch|cannot broadcast|broadcast|expanded size|size mismatch|shape"),
    ("index", r"out of (range|bounds)|index"),
    ("missing_api", r"has no attribute|unexpected keyword|got an unexpected|not supported"),
]


def categorize(exc: BaseException) -> str:
    msg = f"{type(exc).__name__}: {exc}"
    for cat, pat in CATEGORIES:
        if re.search(pat, msg, re.IGNORECASE):
            return cat
    return "other"


def _arr(t):
    if t is None:
        return None
    return np.array(t.detach().numpy(), dtype=np.float64, copy=True)


def _dtype(t) -> str:
    return str(t.dtype).replace("torch.", "")


def _describe(t) -> dict:
    """What a program can see of a tensor; a field whose reading raises holds the error instead."""
    fields = {"value": lambda: _arr(t), "dtype": lambda: _dtype(t), "shape": lambda: tuple(t.shape),
              "requires_grad": lambda: bool(t.requires_grad), "is_leaf": lambda: bool(t.is_leaf),
              "contiguous": lambda: bool(t.is_contiguous()), "grad": lambda: _arr(t.grad)}
    d = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, f in fields.items():
            try:
                d[k] = f()
            except Exception as e:  # noqa: BLE001
                d[k] = _Err(f"{type(e).__name__}: {e}"[:200])
    return d


class _Err(str):
    """A field whose reading raised (kept apart from a string value by its type)."""


def run(program: Program | list, torch, F, leaf_values: dict | None = None) -> dict:
    """Execute the program with `torch`/`F` as given; returns the outcome (see the module docstring)."""
    stmts = program.render(leaf_values) if isinstance(program, Program) else list(program)
    tags = [t for _, t in program.stmts] if isinstance(program, Program) else [""] * len(stmts)
    hooks: dict = {}
    losses: list = []

    def rec(key, *gs):
        hooks.setdefault(key, []).append([None if g is None else _arr(g) for g in gs])

    ns = {"torch": torch, "F": F, "np": np, "rec": rec}
    raised = None
    for i, text in enumerate(stmts):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(text, ns)
            if tags[i].startswith("loss:"):
                losses.append(float(ns[tags[i][5:]].item()))
        except Exception as e:  # noqa: BLE001 -- a raise is an outcome to compare
            raised = {"stmt": i, "type": type(e).__name__, "category": categorize(e), "message": str(e)[:300]}
            break
    tensors = {}
    for name, val in ns.items():
        if name.startswith("_") or name in ("torch", "F", "np", "rec"):
            continue
        if isinstance(val, torch.Tensor):
            tensors[name] = _describe(val)
    return {"raised": raised, "losses": losses, "hooks": hooks, "tensors": tensors}


def _close(a, b, dtype: str) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    tol = 1e-9 if dtype == "float64" else 1e-5
    return bool(np.allclose(a, b, rtol=tol * 10, atol=tol, equal_nan=True))


def compare(mine: dict, ref: dict) -> list:
    """Differences of outcome `mine` from `ref`: a list of (kind, detail) strings, empty when they agree.

    kind is one of: raise (one raised, the other computed, or at different statements),
    message (both raised at the same statement, with different message categories), value, grad,
    dtype, shape, flag (requires_grad / is_leaf), contiguous, hook, loss.
    """
    out = []
    ra, rb = mine["raised"], ref["raised"]
    if (ra is None) != (rb is None) or (ra and rb and ra["stmt"] != rb["stmt"]):
        out.append(("raise", f"tinyattn {ra and (ra['stmt'], ra['type'], ra['message'])} | "
                             f"torch {rb and (rb['stmt'], rb['type'], rb['message'])}"))
        return out  # what follows a different raise is not comparable
    if ra and rb and ra["category"] != rb["category"]:
        out.append(("message", f"tinyattn {ra['category']}: {ra['message'][:120]} | "
                               f"torch {rb['category']}: {rb['message'][:120]}"))
    if len(mine["losses"]) != len(ref["losses"]) or not _close(mine["losses"], ref["losses"], "float32"):
        out.append(("loss", f"{mine['losses']} vs {ref['losses']}"))
    if set(mine["hooks"]) != set(ref["hooks"]):
        out.append(("hook", f"hooks fired {sorted(mine['hooks'])} vs {sorted(ref['hooks'])}"))
    else:
        for k in ref["hooks"]:
            ma, mb = mine["hooks"][k], ref["hooks"][k]
            if len(ma) != len(mb) or any(len(x) != len(y) or not all(_close(p, q, "float32") for p, q in zip(x, y))
                                         for x, y in zip(ma, mb)):
                out.append(("hook", f"{k}: {ma} vs {mb}"))
    for name, b in ref["tensors"].items():
        a = mine["tensors"].get(name)
        if a is None:
            out.append(("value", f"{name}: missing in tinyattn"))
            continue
        errs = [k for k in b if isinstance(a.get(k), _Err) or isinstance(b[k], _Err)]
        for k in errs:
            if isinstance(a.get(k), _Err) != isinstance(b[k], _Err):
                out.append(("raise", f"reading {name}.{k}: tinyattn {a.get(k)!s:.150} | torch {b[k]!s:.150}"))
        if "dtype" not in errs and a["dtype"] != b["dtype"]:
            out.append(("dtype", f"{name}: {a['dtype']} vs {b['dtype']}"))
        if "shape" not in errs and tuple(a["shape"]) != tuple(b["shape"]):
            out.append(("shape", f"{name}: {a['shape']} vs {b['shape']}"))
            continue
        dtype = b["dtype"] if "dtype" not in errs else "float32"
        if "value" not in errs and not _close(a["value"], b["value"], dtype):
            out.append(("value", f"{name}: {a['value'].tolist()} vs {b['value'].tolist()}"))
        ga, gb = (None, None) if "grad" in errs else (a["grad"], b["grad"])
        if (ga is None) != (gb is None) or not _close(ga, gb, dtype):
            out.append(("grad", f"{name}.grad: {None if a['grad'] is None else a['grad'].tolist()} vs "
                                f"{None if b['grad'] is None else b['grad'].tolist()}"))
        for flag in ("requires_grad", "is_leaf"):
            if flag not in errs and a[flag] != b[flag]:
                out.append(("flag", f"{name}.{flag}: {a[flag]} vs {b[flag]}"))
        if "contiguous" not in errs and a["contiguous"] != b["contiguous"]:
            out.append(("contiguous", f"{name}.is_contiguous(): {a['contiguous']} vs {b['contiguous']}"))
    return out


def fd_grads(program: Program, torch, F, eps: float = 1e-6) -> dict:
    """Central differences of the sum of the program's backward losses, for every leaf element."""
    base = {n: np.array(v, dtype=np.float64) for n, (v, _) in program.leaves.items()}
    out = {}
    for name, arr in base.items():
        g = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            vals = []
            for s in (1, -1):
                pert = {n: a.copy() for n, a in base.items()}
                pert[name][idx] += s * eps
                vals.append(sum(run(program, torch, F, pert)["losses"]))
            g[idx] = (vals[0] - vals[1]) / (2 * eps)
        out[name] = g
    return out


# ------------------------------------------------------------------------------------------------
# Outcomes to and from JSON (tests/data/engine_fuzz_torch.json holds PyTorch's, for the main suite)
# ------------------------------------------------------------------------------------------------
def _enc(v):
    if isinstance(v, _Err):
        return {"error": str(v)}
    if isinstance(v, np.ndarray):
        return {"array": v.tolist(), "shape": list(v.shape)}
    if isinstance(v, tuple):
        return list(v)
    return v


def _dec(v):
    if isinstance(v, dict) and "error" in v:
        return _Err(v["error"])
    if isinstance(v, dict) and "array" in v:
        return np.array(v["array"], dtype=np.float64).reshape(v["shape"])
    return v


def outcome_to_json(out: dict) -> dict:
    return {"raised": out["raised"], "losses": out["losses"],
            "hooks": {k: [[None if g is None else _enc(g) for g in call] for call in calls]
                      for k, calls in out["hooks"].items()},
            "tensors": {n: {k: _enc(v) for k, v in d.items()} for n, d in out["tensors"].items()}}


def outcome_from_json(js: dict) -> dict:
    return {"raised": js["raised"], "losses": js["losses"],
            "hooks": {k: [[None if g is None else _dec(g) for g in call] for call in calls]
                      for k, calls in js["hooks"].items()},
            "tensors": {n: {k: _dec(v) for k, v in d.items()} for n, d in js["tensors"].items()}}
