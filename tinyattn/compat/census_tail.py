"""Tensor methods that the census of public teaching code (tests/data/census_names.csv) found missing,
mixed into the Tensor through MethodsMixin: ``bernoulli``/``bernoulli_``, ``unflatten``, ``ravel``,
``take``, ``absolute``, ``diag``, ``addmm``, ``erfinv``, ``multinomial``, ``lerp_``, ``clamp_max_``,
``clamp_min_``, ``get_device`` and ``H``. The torch.* functions of the same names are in
tinyattn/tail_functions.py. Random draws come from ``tinyattn.manual_seed``'s generator (NumPy's
stream, not PyTorch's), as torch.rand's and dropout's.
"""
from __future__ import annotations

import math

import numpy as np

from tinyattn import autograd, checks, defaults, promotion
from tinyattn.autograd import Function
from tinyattn.compat.args import _alpha, _norm_dim
from tinyattn.compat.ops import RepeatInterleave


def _cast(t, dt: np.dtype):
    """An operand of addcmul/addcdiv in the result's dtype: they compute there, not in the operands' own."""
    return t.to(dt) if isinstance(t, autograd.Tensor) and t._data.dtype != dt else t


def _repeat_counts(repeats, n: int) -> np.ndarray:
    """repeat_interleave's counts as an int64 array of 1 or ``n`` entries, checked as PyTorch checks them."""
    r = repeats._data if isinstance(repeats, autograd.Tensor) else np.asarray(checks.nonneg_int("repeats", repeats))
    if r.dtype.kind not in "iu":
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{promotion.torch_name(r)}'")
    if r.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if r.ndim and r.size not in (1, n):
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = {r.size} "
                           f"and input.size(0) = {n}")
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    return r.reshape(-1).astype(np.int64)


class Bernoulli(Function):
    """out ~ Bernoulli(p) elementwise;  dp = 0 (PyTorch records the draw and gives it a zero gradient)"""
    @staticmethod
    def forward(ctx, p, draws):
        return (draws < p).astype(p.dtype)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g)


def check_probabilities(p: np.ndarray) -> None:
    if not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


class Diag(Function):
    """a (n,) -> the (n+|k|, n+|k|) matrix with a on diagonal k; a (m, n) -> its diagonal k.
    The backward of each is the other: da = diag(g, k) read back."""
    @staticmethod
    def forward(ctx, a, k):
        ctx.shape, ctx.k = a.shape, k
        return np.diag(a, k).copy()

    @staticmethod
    def backward(ctx, g):
        if len(ctx.shape) == 1:
            return np.diagonal(g, ctx.k).copy()
        out = np.zeros(ctx.shape, dtype=g.dtype)
        rows = np.arange(g.shape[0]) + max(-ctx.k, 0)  # the diagonal's row and column indices
        out[rows, rows + ctx.k] = g
        return out


_SQRT_PI_2 = math.sqrt(math.pi) / 2


def erfinv_array(x: np.ndarray) -> np.ndarray:
    """The y with erf(y) = x, for x in [-1, 1] (+-inf at +-1, NaN outside): Giles's single-precision
    approximation (2010), then Newton steps on erf, which converge to the dtype's precision."""
    from tinyattn.special import erf_array  # (special.py holds erf; it imports the Tensor, so not at the top)
    x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(defaults.get_default_dtype())
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - x) * (1.0 + x))
        small = w < 5.0
        ws, wl = w - 2.5, np.sqrt(w) - 3.0
        ps = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                         -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], ws)
        pl = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], wl)
        y = np.where(small, ps, pl) * x
        for _ in range(3):  # Newton: y -= (erf(y) - x) / erf'(y)
            finite = np.isfinite(y)
            step = (erf_array(np.where(finite, y, 0)) - x) / (np.exp(-(y * y)) / _SQRT_PI_2)
            y = np.where(finite & (np.abs(x) < 1), y - step, y)
        y = np.where(np.abs(x) == 1, np.copysign(np.inf, x), np.where(np.abs(x) > 1, np.nan, y))
    return y.astype(x.dtype)


class Erfinv(Function):
    """y = erfinv(a);  da = g sqrt(pi)/2 exp(y^2)"""
    @staticmethod
    def forward(ctx, a):
        y = erfinv_array(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * _SQRT_PI_2 * np.exp(y * y)


class CensusTailMixin:
    def bernoulli(self, p=None, *, generator=None):
        """0/1 draws in self's dtype: with probability self per element, or with the float p for every one."""
        probs = self._data if p is None else np.full(self.shape, p, dtype=self.dtype)
        check_probabilities(probs)
        draws = defaults.rng_of(generator).random(self.shape)
        if p is not None:
            return autograd.Tensor._make((draws < probs).astype(self.dtype))
        return Bernoulli.apply(self, draws=draws)

    def bernoulli_(self, p=0.5, *, generator=None):
        """Overwrite self with 0/1 draws, each 1 with probability p (a float, or a tensor of self's shape)."""
        probs = p._data if isinstance(p, autograd.Tensor) else np.asarray(p, dtype=np.float64)
        if not isinstance(p, autograd.Tensor) and not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        check_probabilities(probs)
        draws = defaults.rng_of(generator).random(self.shape)
        return self._inplace("bernoulli_", (draws < probs).astype(self.dtype), region=False)

    def unflatten(self, dim: int, sizes) -> "autograd.Tensor":
        """Split dim into the dims ``sizes`` (one entry may be -1): (B, 6).unflatten(1, (2, 3)) -> (B, 2, 3)."""
        d = _norm_dim(dim, self.ndim, "unflatten")
        sizes = tuple(int(s) for s in sizes)
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        known = math.prod(s for s in sizes if s != -1)
        if sizes.count(-1) > 1 or (-1 not in sizes and known != self.shape[d]) or \
                (-1 in sizes and (known == 0 or self.shape[d] % known)):
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                               f"({self.shape[d]}) in the input tensor")
        return self.reshape(*self.shape[:d], *sizes, *self.shape[d + 1:])  # (..., *sizes, ...)

    def ravel(self) -> "autograd.Tensor":
        return self.reshape(-1)  # (numel,)

    def take(self, index) -> "autograd.Tensor":
        """self read as 1-D at index (any shape; negative counts from the end): out has index's shape."""
        return self.reshape(-1)[index]

    def absolute(self) -> "autograd.Tensor":
        return self.abs()

    def diag(self, diagonal: int = 0) -> "autograd.Tensor":
        """1-D -> a square matrix with self on diagonal ``diagonal``; 2-D -> that diagonal, as a 1-D tensor."""
        if self.ndim not in (1, 2):
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")
        return Diag.apply(self, k=int(diagonal))

    def addmm(self, mat1, mat2, *, beta=1, alpha=1) -> "autograd.Tensor":
        """beta self + alpha (mat1 @ mat2); with beta = 0 self is not read (a NaN in it does not spread)."""
        prod = mat1.mm(mat2)  # (n, k) @ (k, m) -> (n, m)
        prod = prod if alpha == 1 else prod * alpha
        if beta == 0:
            return prod
        return prod + (self if beta == 1 else self * beta)

    def erfinv(self) -> "autograd.Tensor":
        """The inverse of erf elementwise, on [-1, 1] (+-inf at +-1, NaN outside)."""
        x = self if self.dtype.kind == "f" else self.to(defaults.get_default_dtype())
        return Erfinv.apply(x)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None) -> "autograd.Tensor":
        from tinyattn.sampling import multinomial  # (sampling builds on the Tensor)
        return multinomial(self, num_samples, replacement, generator=generator)

    def lerp_(self, end, weight):
        return self.copy_(self.lerp(end, weight))

    def clamp_max_(self, max):  # noqa: A002
        return self.clamp_(max=max)

    def clamp_min_(self, min):  # noqa: A002
        return self.clamp_(min=min)

    def get_device(self) -> int:
        return -1  # PyTorch's answer for a CPU tensor

    @property
    def H(self) -> "autograd.Tensor":
        """The conjugate transpose of a matrix (a 0-d tensor is itself)."""
        if self.ndim == 0:
            return self
        if self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return self.transpose(0, 1).conj()

    # --- in-place forms: computed from a clone, so what the op saves for backward is not the memory it
    # overwrites (PyTorch saves the original for these in-place ops the same way); then copied in
    def _inplace_from(self, name: str, fn):
        if self.requires_grad and self.is_leaf and autograd.is_grad_enabled():
            raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an in-place operation.")
        y = fn(self.clone() if self.requires_grad or autograd.is_grad_enabled() else self)
        promotion.writable(y.dtype, self.dtype)  # (a bool x.addcmul_ of int tensors, an int x.sqrt_() are refused)
        return self.copy_(y)

    def abs_(self): return self._inplace_from("abs_", lambda x: x.abs())
    def neg_(self): return self._inplace_from("neg_", lambda x: -x)
    def sqrt_(self): return self._inplace_from("sqrt_", lambda x: x.sqrt())
    def rsqrt_(self): return self._inplace_from("rsqrt_", lambda x: x.rsqrt())
    def log_(self): return self._inplace_from("log_", lambda x: x.log())
    def sin_(self): return self._inplace_from("sin_", lambda x: x.sin())
    def cos_(self): return self._inplace_from("cos_", lambda x: x.cos())
    def floor_(self): return self._inplace_from("floor_", lambda x: x.floor())
    def ceil_(self): return self._inplace_from("ceil_", lambda x: x.ceil())
    def trunc_(self): return self._inplace_from("trunc_", lambda x: x.trunc())
    def frac_(self): return self._inplace_from("frac_", lambda x: x.frac())
    def reciprocal_(self): return self._inplace_from("reciprocal_", lambda x: x.reciprocal())
    def square_(self): return self._inplace_from("square_", lambda x: x.square())
    def pow_(self, exponent): return self._inplace_from("pow_", lambda x: x.pow(exponent))
    def gcd_(self, other): return self._inplace_binary("gcd_", other, lambda x: x.gcd(other))
    def lcm_(self, other): return self._inplace_binary("lcm_", other, lambda x: x.lcm(other))
    def ldexp_(self, other): return self._inplace_binary("ldexp_", other, lambda x: x.ldexp(other))
    # x //= y, x %= y, x **= y, x &= y, x |= y, x ^= y write into x, as PyTorch's: without these Python falls back to
    # x = x // y, a NEW tensor (a view's base kept its values, an int x //= 0.5 became float, no error was raised)
    def floor_divide_(self, other): return self._inplace_from("floor_divide_", lambda x: x // other)
    def remainder_(self, other): return self._inplace_from("remainder_", lambda x: x % other)
    def fmod_(self, other): return self._inplace_from("fmod_", lambda x: x.fmod(other))
    def bitwise_and_(self, other): return self._inplace_from("bitwise_and_", lambda x: x & other)
    def bitwise_or_(self, other): return self._inplace_from("bitwise_or_", lambda x: x | other)
    def bitwise_xor_(self, other): return self._inplace_from("bitwise_xor_", lambda x: x ^ other)
    def __ifloordiv__(self, o): return self.floor_divide_(o)
    def __imod__(self, o): return self.remainder_(o)
    def __ipow__(self, o): return self.pow_(o)
    def __iand__(self, o): return self.bitwise_and_(o)
    def __ior__(self, o): return self.bitwise_or_(o)
    def __ixor__(self, o): return self.bitwise_xor_(o)

    def _inplace_binary(self, name: str, other, fn):
        """An in-place op of two tensors: other must be one, and (self, other)'s result dtype writable into self's
        (i64.gcd_(a float tensor) is PyTorch's cast error before any kernel's dtype error)."""
        if not isinstance(other, autograd.Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        promotion.writable(promotion.result_type(self, other), self.dtype)
        return self._inplace_from(name, fn)
    def round_(self, *, decimals: int = 0): return self._inplace_from("round_", lambda x: x.round(decimals=decimals))
    def clip_(self, min=None, max=None): return self.clamp_(min, max)  # noqa: A002

    def addcmul(self, tensor1, tensor2, *, value=1) -> "autograd.Tensor":
        """self + value * tensor1 * tensor2 (Adam's second-moment update: v.addcmul_(g, g, value=1 - beta2)).
        value is cast to the tensors' result dtype, as PyTorch's: an integer result truncates 0.5 to 0."""
        dt = promotion.result_type(self, tensor1, tensor2)
        if dt.kind == "b":
            raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
        prod = _cast(tensor1, dt) * _cast(tensor2, dt)  # (computed in the result's dtype: u8 self, bool tensors)
        value = _alpha(int(value), dt) if dt.kind in "iu" else value  # truncated (2.7 -> 2), wrapped for uint8
        return self + (prod if value == 1 else prod * value)

    def addcdiv(self, tensor1, tensor2, *, value=1) -> "autograd.Tensor":
        """self + value * tensor1 / tensor2 (Adam's step: p.addcdiv_(m, v.sqrt() + eps, value=-lr)); integer
        tensors are refused, as PyTorch does."""
        if all(getattr(t, "dtype", np.dtype(float)).kind in "iub" for t in (tensor1, tensor2)):
            raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                               "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
                               "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                               "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                               "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
                               "tensor2), for all dtypes.")
        quot = _cast(tensor1, dt := promotion.result_type(self, tensor1, tensor2)) / _cast(tensor2, dt)
        return self + (quot if value == 1 else quot * value)  # (in self's float64: a value of 1e-8 is no 0 in float16)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        return self._inplace_from("addcmul_", lambda x: x.addcmul(tensor1, tensor2, value=value))

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return self._inplace_from("addcdiv_", lambda x: x.addcdiv(tensor1, tensor2, value=value))

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        return self._inplace_from("addmm_", lambda x: x.addmm(mat1, mat2, beta=beta, alpha=alpha))

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1) -> "autograd.Tensor":
        """beta self + alpha (batch1 @ batch2): (B, n, k) @ (B, k, m) -> (B, n, m); self is not read at beta = 0
        (attention scores as ``torch.baddbmm(bias, q, k.transpose(1, 2), beta=1, alpha=scale)``)."""
        prod = batch1.bmm(batch2)  # (B, n, k) @ (B, k, m) -> (B, n, m)
        prod = prod if alpha == 1 else prod * alpha
        return prod if beta == 0 else prod + (self if beta == 1 else self * beta)

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return self._inplace_from("baddbmm_", lambda x: x.baddbmm(batch1, batch2, beta=beta, alpha=alpha))

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1) -> "autograd.Tensor":
        """beta self + alpha sum_b (batch1[b] @ batch2[b]): (B, n, k) @ (B, k, m) summed over B -> (n, m)."""
        prod = batch1.bmm(batch2).sum(0)  # (B, n, m) -> (n, m)
        prod = prod if alpha == 1 else prod * alpha
        return prod if beta == 0 else prod + (self if beta == 1 else self * beta)

    def mv(self, vec) -> "autograd.Tensor":
        """(n, m) @ (m,) -> (n,)"""
        if self.ndim != 2 or vec.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {self.ndim}, {vec.ndim}")
        return self @ vec

    def addmv(self, mat, vec, *, beta=1, alpha=1) -> "autograd.Tensor":
        prod = mat.mv(vec)  # (n, m) @ (m,) -> (n,)
        prod = prod if alpha == 1 else prod * alpha
        return prod if beta == 0 else prod + (self if beta == 1 else self * beta)

    def addr(self, vec1, vec2, *, beta=1, alpha=1) -> "autograd.Tensor":
        prod = vec1.outer(vec2)  # (n,) x (m,) -> (n, m)
        prod = prod if alpha == 1 else prod * alpha
        return prod if beta == 0 else prod + (self if beta == 1 else self * beta)

    def vdot(self, other) -> "autograd.Tensor":
        return self.conj().dot(other)

    def inner(self, other) -> "autograd.Tensor":
        """The sum over the last dims: (..., d) and (..., d) -> (*self.shape[:-1], *other.shape[:-1])."""
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        rows = self.reshape(-1, self.shape[-1]) @ other.reshape(-1, other.shape[-1]).t()  # (P, d) @ (d, Q) -> (P, Q)
        return rows.reshape(*self.shape[:-1], *other.shape[:-1])

    def dist(self, other, p=2) -> "autograd.Tensor":
        """||self - other||_p over every element (broadcast)."""
        return (self - other).norm(p)

    def kron(self, other) -> "autograd.Tensor":
        """The Kronecker product: each entry of self times all of other, laid out in blocks."""
        nd = max(self.ndim, other.ndim)
        a = self.reshape(*(1,) * (nd - self.ndim), *self.shape)
        b = other.reshape(*(1,) * (nd - other.ndim), *other.shape)
        out_shape = [x * y for x, y in zip(a.shape, b.shape)]
        a = a.reshape(*[s for d in a.shape for s in (d, 1)])  # (a0, 1, a1, 1, ...)
        b = b.reshape(*[s for d in b.shape for s in (1, d)])  # (1, b0, 1, b1, ...)
        return (a * b).reshape(*out_shape)  # block (i, j) = a[i, j] * b

    def logit(self, eps=None) -> "autograd.Tensor":
        """log(p / (1 - p)); with eps, p is first clamped to [eps, 1 - eps]."""
        p = self if self.dtype.kind == "f" else self.to(defaults.get_default_dtype())
        if eps is not None:
            p = p.clamp(eps, 1 - eps)
        return p.log() - (1 - p).log()

    def fliplr(self) -> "autograd.Tensor":
        if self.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self) -> "autograd.Tensor":
        if self.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
        return self.flip(0)

    def movedim(self, source, destination) -> "autograd.Tensor":
        """Move dims source to positions destination (ints or sequences), keeping the others in order."""
        src = [source] if isinstance(source, (int, np.integer)) else list(source)
        dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
        if len(src) != len(dst):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                               f"same number of dims as destination ({dst} dims)")
        src = [_norm_dim(s, self.ndim, "movedim") for s in src]
        dst = [_norm_dim(d, self.ndim, "movedim") for d in dst]
        order = [None] * self.ndim  # order[new position] = old dim
        for s, d in zip(src, dst):
            order[d] = s
        rest = iter(d for d in range(self.ndim) if d not in src)  # the other dims keep their order
        return self.permute(*[next(rest) if o is None else o for o in order])

    moveaxis = movedim

    def tile(self, dims) -> "autograd.Tensor":
        """Repeat self dims[i] times along dim i; fewer dims than self.ndim are padded with 1s in front."""
        dims = tuple(dims)
        if len(dims) < self.ndim:
            dims = (1,) * (self.ndim - len(dims)) + dims
        return self.repeat(*dims)

    def take_along_dim(self, indices, dim=None) -> "autograd.Tensor":
        """gather with broadcasting: self and indices broadcast except along dim; dim=None reads self flattened."""
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        d = _norm_dim(dim, self.ndim, "take_along_dim")
        shape = np.broadcast_shapes(self.shape[:d] + (1,) + self.shape[d + 1:],
                                    indices.shape[:d] + (1,) + indices.shape[d + 1:])
        src = self.expand(*shape[:d], self.shape[d], *shape[d + 1:])
        idx = indices.expand(*shape[:d], indices.shape[d], *shape[d + 1:])
        return src.gather(d, idx)

    def argwhere(self) -> "autograd.Tensor":
        return self.nonzero()  # (count, ndim): the index of every nonzero element

    def repeat_interleave(self, repeats, dim: int | None = None, *, output_size: int | None = None) -> "Tensor":
        """Repeat each element ``repeats`` times along ``dim``: [a, b] -> [a, a, b, b] (GQA uses this on heads);
        ``repeats`` may be an int >= 0 or an integer tensor of one count per element (or one for all)."""
        if dim is None:
            return self.flatten().repeat_interleave(repeats, 0)
        d = _norm_dim(dim, self.ndim, "repeat_interleave")
        if isinstance(repeats, autograd.Tensor) or repeats == 0:  # counts per element: the rows they pick
            n = self.shape[d] if self.ndim else 1
            counts = np.broadcast_to(_repeat_counts(repeats, n), (n,))
            return self.index_select(d, autograd.Tensor._make(np.repeat(np.arange(n), counts)))
        return RepeatInterleave.apply(self, repeats=checks.positive_int("repeats", repeats, "repeat_interleave"), dim=d)

    def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple:
        """n nearly equal parts (the first size % n one longer), or the parts between the given indices, which are
        read as slice bounds (-1 is the last place). A 0-d int64 tensor is a number of parts, a 1-D one indices."""
        d = _norm_dim(dim, self.ndim, "tensor_split")
        n = self.shape[d]
        ios = indices_or_sections
        if isinstance(ios, autograd.Tensor):
            if ios._data.dtype != np.int64:
                raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                                   + promotion.torch_name(ios))
            if ios.ndim > 1:
                raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                                   f"one-dimensional tensor, but got a tensor with {ios.ndim} dims")
            ios = ios.tolist()
        if isinstance(ios, (int, np.integer)):
            k = int(ios)
            if k < 1:
                raise RuntimeError(f"number of sections must be larger than 0, got {k}")
            sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
            bounds = np.cumsum([0] + sizes)
        else:
            bounds = [0] + [min(max(int(i) + (n if i < 0 else 0), 0), n) for i in ios] + [n]
        return tuple(self.narrow(d, int(a), max(int(b) - int(a), 0)) for a, b in zip(bounds[:-1], bounds[1:]))

    def _split_at(self, sections, name: str, dim: int, need: int) -> tuple:
        """hsplit/vsplit: tensor_split along ``dim`` of a tensor of at least ``need`` dims; a number of parts must
        divide that dim (tensor_split's uneven parts are not theirs)."""
        if self.ndim < need:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                               f"{self.ndim} dimensions!")
        if isinstance(sections, (int, np.integer)) and (not sections or self.shape[dim] % sections):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{self.shape[dim]} is not divisible by the split_size {sections}!")
        return self.tensor_split(sections, dim)

    def hsplit(self, sections) -> tuple:
        return self._split_at(sections, "hsplit", 1 if self.ndim > 1 else 0, 1)

    def vsplit(self, sections) -> tuple:
        return self._split_at(sections, "vsplit", 0, 2)

    def nanmean(self, dim=None, keepdim: bool = False) -> "autograd.Tensor":
        """The mean of the non-NaN entries."""
        keep = autograd.Tensor._make(~np.isnan(self._data))
        return self.nansum(dim, keepdim=keepdim) / keep.sum(dim, keepdim=keepdim)

    def is_signed(self) -> bool:
        return self.dtype.kind in "ifc"

    def exponential_(self, lambd: float = 1.0, *, generator=None):
        """Overwrite self with draws of Exp(lambd) (mean 1 / lambd)."""
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        draws = defaults.rng_of(generator).exponential(1.0 / lambd, self.shape)
        return self._inplace("exponential_", draws.astype(self.dtype), region=False)

    def random_(self, from_=0, to=None, *, generator=None):
        """Overwrite self with integers drawn uniformly from [from_, to) (random_(n) draws from [0, n))."""
        lo, hi = (0, from_) if to is None and from_ else (from_, to)
        if hi is None:
            hi = 2 ** 24 if self.dtype == np.float32 else 2 ** 53 if self.dtype.kind == "f" else np.iinfo(self.dtype).max
        if not lo < hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
        draws = defaults.rng_of(generator).integers(lo, hi, self.shape)
        return self._inplace("random_", draws.astype(self.dtype), region=False)

    def fill_diagonal_(self, fill_value, wrap: bool = False):
        """Put fill_value on the main diagonal (all dims of equal length, or a tall matrix)."""
        arr = np.zeros(self.shape, dtype=bool)
        np.fill_diagonal(arr, True, wrap=wrap)
        return self.masked_fill_(autograd.Tensor._make(arr), fill_value)

    def index_add_(self, dim: int, index, source, *, alpha=1):
        return self._inplace_from("index_add_", lambda x: x.index_add(dim, index, source if alpha == 1 else source * alpha))

    def det(self) -> "autograd.Tensor":
        from tinyattn.linalg import det  # (linalg builds on the Tensor)
        return det(self)

    def logdet(self) -> "autograd.Tensor":
        from tinyattn.linalg import logdet
        return logdet(self)

    def inverse(self) -> "autograd.Tensor":
        from tinyattn.linalg import inv
        return inv(self)

    def cholesky_inverse(self, upper: bool = False) -> "autograd.Tensor":
        from tinyattn.linalg import cholesky_inverse
        return cholesky_inverse(self, upper)

    def matrix_exp(self) -> "autograd.Tensor":
        from tinyattn.linalg_eig import matrix_exp
        return matrix_exp(self)

    def cov(self, *, correction: int = 1, fweights=None, aweights=None) -> "autograd.Tensor":
        from tinyattn.signs_and_statistics import cov
        return cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> "autograd.Tensor":
        from tinyattn.signs_and_statistics import corrcoef
        return corrcoef(self)
