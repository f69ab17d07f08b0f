"""Layers from einops.layers.torch put into tinyattn containers become tinyattn Modules.

einops is not installed here, so a stand-in package gives the two pieces the adoption reads: the
mixins of ``einops.layers`` (pattern, axis lengths, ``_apply_recipe``) and a class in
``einops.layers.torch`` (there a torch.nn.Module; here a plain object, since only its module name and
attributes are read). Its "recipe" swaps the first two axes, so a result shows which layer ran.
(The real einops layers are compared with PyTorch in tests/oracle/test_einops_layers_torch.py.)"""
import subprocess
import sys
import textwrap

LAYERS = '''
class RearrangeMixin:
    def __init__(self, pattern, **axes_lengths):
        super().__init__()
        self.pattern, self.axes_lengths = pattern, axes_lengths
    def _apply_recipe(self, x):
        return x.transpose(0, 1) * self.axes_lengths.get("k", 1)
    def __repr__(self):
        return f"{type(self).__name__}({self.pattern!r})"
class ReduceMixin(RearrangeMixin):
    def __init__(self, pattern, reduction, **axes_lengths):
        super().__init__(pattern, **axes_lengths)
        self.reduction = reduction
    def _apply_recipe(self, x):
        return getattr(x, self.reduction)(dim=0)
'''
TORCH_LAYERS = '''
class Rearrange:
    def __init__(self, pattern, **axes_lengths):
        self.pattern, self.axes_lengths = pattern, axes_lengths
class Reduce:
    def __init__(self, pattern, reduction, **axes_lengths):
        self.pattern, self.reduction, self.axes_lengths = pattern, reduction, axes_lengths
class Unknown:
    pass
'''


def _run(tmp_path, body: str) -> str:
    pkg = tmp_path / "einops"
    (pkg / "layers").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_backends.py").write_text("class AbstractBackend:\n    framework_name = None\n")
    (pkg / "layers" / "__init__.py").write_text(LAYERS)
    (pkg / "layers" / "_einmix.py").write_text("class _EinmixMixin:\n    pass\n")
    (pkg / "layers" / "torch.py").write_text(TORCH_LAYERS)
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_way_into_a_model_adopts_the_layer(tmp_path):
    out = _run(tmp_path, """
        import numpy as np
        import tinyattn
        from tinyattn import nn
        from einops.layers.torch import Rearrange, Reduce

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.swap = Rearrange("a b -> b a", k=3)            # attribute
                self.seq = nn.Sequential(Rearrange("a b -> b a"))   # Sequential
                self.lst = nn.ModuleList([Reduce("a b -> b", "sum")])   # ModuleList.append
                self.dct = nn.ModuleDict({"r": Rearrange("a b -> b a")})  # ModuleDict
                self.add_module("extra", Reduce("a b -> b", "mean"))  # add_module
                self.lst[0] = Reduce("a b -> b", "amax")             # ModuleList.__setitem__

        net = Net()
        kids = dict(net.named_modules())
        print(sorted(k for k, m in kids.items() if type(m).__module__ == "tinyattn.nn.einops_layers"))
        x = tinyattn.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = net.swap(x)
        y.sum().backward()
        print(y.shape, y.numpy()[0].tolist(), x.grad.numpy().tolist())
        print(net.lst[0](x).tolist(), net.extra(x).tolist(), repr(net.seq[0]))
    """)
    names, swapped, pooled = out.strip().splitlines()
    assert names == "['dct.r', 'extra', 'lst.0', 'seq.0', 'swap']"
    # the mixin's recipe ran on tinyattn ops: (2, 3) -> (3, 2) times k=3, gradient 3 everywhere
    assert swapped == "(3, 2) [0.0, 9.0] [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]]"
    assert pooled == "[3.0, 4.0, 5.0] [1.5, 2.5, 3.5] Rearrange('a b -> b a')"


def test_a_layer_with_no_counterpart_is_refused_by_name(tmp_path):
    out = _run(tmp_path, """
        from tinyattn import nn
        from einops.layers.torch import Unknown
        try:
            nn.Sequential(Unknown())
        except TypeError as e:
            print(e)
    """)
    assert out.strip() == "einops.layers.torch.Unknown has no tinyattn counterpart (Rearrange, Reduce and EinMix do)"


def test_other_objects_are_not_touched(tmp_path):
    out = _run(tmp_path, """
        from tinyattn import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = {"a": 1}
        print(M().table, sorted(m for m in sys.modules if m.startswith("einops")))
    """)
    assert out.strip() == "{'a': 1} []"
