"""Real arithmetic only: the confinement of the exercises that ask for a derived backward (ex02, ex05, ex06, ex10).

A complex step (`f(x + ih).imag / h`) or dual numbers give a gradient exact to rounding without deriving it, and
one that perturbs a position of every row at once costs no more than an honest backward: no cost limit can tell
them apart. What they need is a value that is not a real number (a complex number, an object array of duals).
In these exercises the learner's code runs where no such array can be made, by a whitelist, not a list of tricks:

* the language (checked in the judge, before any of the code runs, `problems`): no name or attribute that
  begins with an underscore but __name__, __doc__, __all__, __init__, __repr__ and __str__ (no way into
  classes, globals or builtins), no attribute of the interpreter's frames, code, generators, tracebacks or cells
  (INTROSPECTION, read from the interpreter itself), no complex literal, no builtin outside SAFE_BUILTINS;
* the builtins (in the learner's process): exactly SAFE_BUILTINS, with an `__import__` that gives numpy, the
  standard modules in STDLIB (their public names that are not modules) and the learner's own helper files;
* numpy (in the learner's process): a module holding only NUMPY_NAMES (and linalg's LINALG_NAMES), each checked
  on the way out: an array or scalar whose dtype is not bool, integer or float raises NotReal; every array the
  learner's code can hold is a RealArray, which raises NotReal as soon as a new one (a view, `astype`, a ufunc's
  result, `.view(dtype)`, `.dtype = ...`) would hold anything else; `ndarray` is RealArray.

The judge reports NotReal as the failed check's mistake `not_real` (the part earns nothing). What is left is
Python's own scalar arithmetic (`(-1.0) ** 0.5` is a Python complex): it can not enter an array, so a complex step
on it runs at Python speed, one scalar at a time, and the cost check (checkkit.call_derived) stops it.

This file runs in two places: the judge imports it (`problems`), and the learner's process executes its text
(`runtime`), so it imports nothing but the standard library and NumPy.
"""
import ast
import builtins
import types

REAL_KINDS = "biuf"                 # bool, signed and unsigned integers, floats
RULE = ("This exercise runs confined to real arithmetic, so its gradient can only be derived: no complex numbers or "
        "object arrays (no 1j, no complex or object dtype); imports: numpy, math, itertools, functools, collections, "
        "random, time, typing, sys (its streams and exit) and your own helper files (not another exercise's); no name or attribute that begins with an underscore (but __name__ and __init__); no eval, exec, "
        "getattr, open or type.")
ALLOWED_DUNDERS = frozenset({"__name__", "__doc__", "__all__", "__init__", "__repr__", "__str__"})
SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "callable", "chr", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "ord",
    "pow", "print", "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip",
    "True", "False", "None", "Ellipsis", "NotImplemented",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "FloatingPointError", "IndexError",
    "KeyError", "LookupError", "NotImplementedError", "OverflowError", "RuntimeError", "StopIteration", "TypeError",
    "ValueError", "ZeroDivisionError"})
STDLIB = {"math": None, "itertools": None, "__future__": None, "collections": None, "random": None, "time": None,
          "numpy.typing": ("NDArray", "ArrayLike", "DTypeLike"),
          "functools": ("reduce", "partial", "lru_cache", "cache"),
          "typing": ("Any", "Optional", "Union", "Tuple", "List", "Dict", "Sequence", "Iterable", "Callable",
                     "TYPE_CHECKING")}
NUMPY_NAMES = (
    # array makers and shape
    "array", "asarray", "ascontiguousarray", "copy", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
    "empty_like", "full_like", "arange", "linspace", "eye", "identity", "tri", "tril", "triu", "diag", "diagflat",
    "diagonal", "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
    "broadcast_arrays", "broadcast_shapes", "concatenate", "stack", "vstack", "hstack", "split", "array_split",
    "tile", "repeat", "flip", "roll", "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size",
    "take", "take_along_axis", "put_along_axis", "where", "nonzero", "argwhere", "indices", "unravel_index",
    "ravel_multi_index", "ndindex", "meshgrid", "pad", "trace", "outer", "inner", "dot", "vdot",
    "tensordot", "einsum", "kron", "cross",
    # reductions and comparisons
    "sum", "prod", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod", "var", "std",
    "all", "any", "allclose", "isclose", "array_equal", "sort", "argsort", "clip", "nan_to_num", "count_nonzero",
    "unique", "diff", "errstate", "result_type", "promote_types",
    # ufuncs
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "negative", "positive", "power",
    "float_power", "remainder", "mod", "fmod", "abs", "absolute", "fabs", "sign", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "square", "cbrt", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos",
    "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "maximum", "minimum", "fmax",
    "fmin", "logaddexp", "logaddexp2", "hypot", "floor", "ceil", "trunc", "rint", "round", "around", "matmul",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_not", "logical_xor", "isfinite", "isinf", "isnan", "signbit", "copysign", "heaviside",
    # scalar types and constants (real ones only)
    "float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "intp", "bool_",
    "inf", "nan", "pi", "e", "euler_gamma", "newaxis")
# where a listed NumPy function takes a function it calls back with its own arrays: (position, keyword)
CALLBACKS = {"pad": (2, "mode")}
LINALG_NAMES = ("norm", "inv", "solve", "det", "slogdet", "pinv", "matrix_power", "multi_dot", "eigh", "eigvalsh",
                "qr", "svd", "cholesky", "lstsq", "matrix_rank")


def _introspection() -> frozenset:
    """The public attributes of the interpreter's own objects (frames, code, generators, coroutines, tracebacks,
    cells, functions): the way from a value back to a frame's globals, read from the interpreter itself, less the
    names ordinary values also have (list.clear, str.replace)."""
    import sys

    def gen():
        yield

    async def coro():
        pass

    async def agen():
        yield
    c = coro()
    try:
        raise ValueError
    except ValueError as e:
        tb = e.__traceback__
    cell = (lambda: c).__closure__[0]
    kinds = [sys._getframe(), gen.__code__, gen(), c, agen(), tb, cell, gen, gen().__iter__, types.SimpleNamespace]
    c.close()
    names = {n for k in kinds for n in dir(k) if "_" in n[1:] and not n.startswith("_")}     # f_back, gi_frame
    ordinary = {n for t in (list, dict, set, str, bytes, float, int, tuple) for n in dir(t)}
    # and the ways from a value to a class NumPy would make a plain ndarray with: a dtype's .type (the scalar
    # class) and a class's .mro() (np.ndarray here is the confined class; its .mro()[1] the plain one)
    return frozenset(names - ordinary) | {"type", "mro"}


INTROSPECTION = _introspection()


def problems(source: str, filename: str = "<submission>") -> list[str]:
    """Every breach of the language rules in `source`, as 'line N: why' (empty when none).

    Raises SyntaxError when the source does not parse."""
    tree = ast.parse(source, filename=filename)
    bound = set()                                   # names the learner binds: they may shadow a builtin
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    found: set[tuple[int, str]] = set()

    def flag(node, why):
        found.add((getattr(node, "lineno", 0), why))

    def underscore(name: str) -> bool:
        return name.startswith("_") and name not in ALLOWED_DUNDERS
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, complex):
            flag(node, f"{node.value!r}: a complex number (only real arithmetic here)")
        elif isinstance(node, ast.Attribute):
            if underscore(node.attr):
                flag(node, f".{node.attr}: no attribute that begins with an underscore here")
            elif node.attr in INTROSPECTION:
                flag(node, f".{node.attr}: the interpreter's own objects (frames, code, generators) are out of reach")
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
                flag(node, f"{node.id}: no name that begins with two underscores here")
            elif (isinstance(node.ctx, ast.Load) and node.id not in bound and hasattr(builtins, node.id)
                  and node.id not in SAFE_BUILTINS):
                flag(node, f"{node.id}: not one of the builtins available here")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and underscore(node.name) \
                and node.name.startswith("__"):
            flag(node, f"{node.name}: no method that begins with two underscores but __init__, __repr__, __str__")
        elif isinstance(node, ast.alias) and any(p.startswith("_") for p in node.name.split(".") if p != "__future__"):
            flag(node, f"{node.name}: no module or name that begins with an underscore here")
        # every other place the language names a module, binds a name or reads an attribute, without an ast.Name
        # or ast.Attribute: `from __main__ import sys`, `import f as __add__`, `case Callable(__globals__=g)`
        if isinstance(node, ast.ImportFrom) and any(p.startswith("_") for p in (node.module or "").split(".")
                                                    if p != "__future__"):
            flag(node, f"from {node.module}: no module that begins with an underscore here")
        for name in _bound(node):
            if name.startswith("__") and name not in ALLOWED_DUNDERS:
                flag(node, f"{name}: no name that begins with two underscores here")
        for attr in getattr(node, "kwd_attrs", ()) if isinstance(node, ast.MatchClass) else ():
            if underscore(attr) or attr in INTROSPECTION:
                flag(node, f"{attr}=: no attribute that begins with an underscore, nor of the interpreter's own "
                           "objects, here")
    return [f"line {line}: {why}" for line, why in sorted(found)]


def _bound(node) -> list:
    """The names a node binds or passes that are not an ast.Name: `import m as NAME`, `except E as NAME`, a match
    pattern's capture, a parameter, a keyword argument, `global NAME`."""
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    field = {ast.alias: "asname", ast.ExceptHandler: "name", ast.MatchAs: "name", ast.MatchStar: "name",
             ast.MatchMapping: "rest", ast.arg: "arg", ast.keyword: "arg"}.get(type(node))
    name = getattr(node, field, None) if field else None
    return [name] if isinstance(name, str) else []


class Annotation:
    """numpy.typing's names in the confinement (NDArray, ArrayLike, DTypeLike): they annotate (subscripted, joined with
    `|`, inside typing's Optional), and that is all. NumPy's own NDArray is an alias of the plain ndarray, and calling
    an alias calls its class: NDArray(shape, "complex128") was a plain complex array, out of the RealArray's reach."""

    def __init__(self, name):
        self.name = name

    def __getitem__(self, item):
        return self

    def __or__(self, other):
        return self
    __ror__ = __or__

    def __call__(self, *args, **kwargs):
        raise TypeError(f"numpy.typing.{self.name} is an annotation here: make arrays with np.zeros, np.array, ...")

    def __repr__(self):
        return f"numpy.typing.{self.name}"


def runtime(np, files: dict, exec_file, forbidden=ImportError):
    """(builtins for the learner's modules, to_learner(value), from_learner(value)) in the learner's process.

    files: the submission's sources by relative path; exec_file(name, source, builtins) runs one of them as the
    module `name` and returns it (the learner's own imports)."""

    class NotReal(TypeError):
        """A value that is not a real number was about to exist (ex02, ex05, ex06, ex10 are real arithmetic)."""

    def refuse(dtype):
        raise NotReal(f"{np.dtype(dtype).name} values: this exercise is real arithmetic only (no complex numbers, "
                      "no object arrays); derive the backward with real arrays")

    def asked(dtype):
        """Refuse a dtype argument before NumPy makes the array. __array_finalize__ refuses too, but only from
        inside NumPy's C code, which before NumPy 2.4 leaks a reference to the refused dtype each time: a few
        dozen refusals there freed complex128's descriptor and crashed the learner's process."""
        if dtype is None or isinstance(dtype, type) and issubclass(dtype, np.ndarray):  # view(type): no dtype
            return
        try:
            kind = np.dtype(dtype).kind
        except TypeError:                        # not a dtype: NumPy says what it is
            return
        if kind not in REAL_KINDS:
            refuse(dtype)

    held = np.ndarray.dtype.__get__               # the dtype an array holds, read from NumPy itself: never `x.dtype`,
    #                                               which a learner's subclass can redefine (`dtype = float64` made the
    #                                               checks below pass a complex array made by .getfield("complex128"))

    class RealArray(np.ndarray):
        """An ndarray that can only ever hold bool, integer or float values, and hands out nothing else: every
        method's result, an index's and a ufunc's (a scalar too) is a RealArray (0-d for a scalar) or plain Python."""

        def __new__(cls, shape, dtype=float, *args, **kwargs):
            asked(dtype)
            return np.ndarray.__new__(cls, shape, dtype, *args, **kwargs)

        def __array_finalize__(self, obj):      # the last line: every way to a non-real array not listed here
            if held(self).kind not in REAL_KINDS:
                refuse(held(self))

        def __array_wrap__(self, out, context=None, return_scalar=False):
            return real(out)                     # a 0-d result stays an array: a NumPy scalar has array methods

        def __getitem__(self, index):
            return real(np.ndarray.__getitem__(self, index))

        def view(self, *args, **kwargs):
            asked(kwargs.get("dtype", args[0] if args else None))
            return real(np.ndarray.view(self, *args, **kwargs))

        @property
        def dtype(self):
            return held(self)

        @dtype.setter
        def dtype(self, value):
            if np.dtype(value).kind not in REAL_KINDS:
                refuse(value)
            np.ndarray.dtype.__set__(self, value)

        base = property(lambda self: None)       # the array a view was taken from: a plain ndarray

        @property
        def ctypes(self):
            raise AttributeError("ctypes is not available here")

        @property
        def flat(self):
            raise AttributeError("flat is not available here: use .ravel()")

    def method(name):
        f = getattr(np.ndarray, name)

        def call(self, *args, **kwargs):
            asked(kwargs.get("dtype", args[0] if args and name == "astype" else None))
            return real(f(self, *args, **kwargs))
        call.__name__ = name
        return call
    for name in dir(np.ndarray):                 # every public method: its result checked and kept a RealArray
        if not name.startswith("_") and name not in vars(RealArray) and callable(getattr(np.ndarray, name)):
            setattr(RealArray, name, method(name))

    def real(out):
        if isinstance(out, np.ndarray):
            if held(out).kind not in REAL_KINDS:
                refuse(held(out))
            return out if isinstance(out, RealArray) else np.ndarray.view(out, RealArray)
        if isinstance(out, np.generic):
            if out.dtype.kind not in REAL_KINDS:
                refuse(out.dtype)
            return np.ndarray.view(np.asarray(out), RealArray)
        if isinstance(out, tuple):
            items = [real(v) for v in out]
            return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
        if isinstance(out, list):
            return [real(v) for v in out]
        return out

    def guarded(f):
        where = CALLBACKS.get(getattr(f, "__name__", ""))

        def call(*args, **kwargs):
            asked(kwargs.get("dtype"))
            if where is not None:             # a function of the learner's that NumPy calls with its own arrays
                at, key = where
                if len(args) > at and callable(args[at]):
                    args = (*args[:at], handed_real(args[at]), *args[at + 1:])
                if callable(kwargs.get(key)):
                    kwargs[key] = handed_real(kwargs[key])
            return real(f(*args, **kwargs))
        call.__name__ = call.__qualname__ = getattr(f, "__name__", "function")
        call.__doc__ = getattr(f, "__doc__", None)
        return call

    def handed_real(fn):
        """The learner's `fn`, called by NumPy: the arrays NumPy hands it are RealArray views (the same memory: np.pad's
        mode function writes its padding into them), never NumPy's plain arrays, whose methods nothing guards."""
        def call(*args, **kwargs):
            return fn(*real(list(args)), **kwargs)
        return call

    class Ufunc:
        """A NumPy ufunc whose results (and those of reduce, outer, ...) are checked; the ufunc itself is only in
        the closure of its methods (out of reach: no attribute leads to it)."""

    def ufunc(f):
        methods = {m: staticmethod(guarded(getattr(f, m))) for m in ("reduce", "accumulate", "outer", "reduceat", "at")
                   if hasattr(f, m)}
        methods.update(nin=f.nin, nout=f.nout, identity=f.identity, __call__=lambda self, *a, **k: asked(k.get("dtype")) or real(f(*a, **k)))
        return type(f.__name__, (Ufunc,), methods)()

    class ScalarType:
        """np.float64 and the other real scalar types: a dtype argument (NumPy reads its .dtype), and callable
        (np.float64(2.0)), its result a 0-d RealArray; not the class itself, whose call on an array makes a
        plain ndarray."""

        def __init__(self, t):
            self.dtype = np.dtype(t)

        def __call__(self, *args):
            return real(self.dtype.type(*args))

    def wrap(value):
        if isinstance(value, np.ufunc):
            return ufunc(value)
        if isinstance(value, type) and issubclass(value, np.generic):
            return ScalarType(value)
        if callable(value):
            return guarded(value)
        return value

    def module(name, names, source):
        m = types.ModuleType(name)
        for n in names:
            if hasattr(source, n):
                setattr(m, n, wrap(getattr(source, n)))
        return m

    numpy = module("numpy", NUMPY_NAMES, np)
    numpy.ndarray = RealArray
    numpy.linalg = module("numpy.linalg", LINALG_NAMES, np.linalg)
    modules = {"numpy": numpy, "numpy.linalg": numpy.linalg}
    for name, names in STDLIB.items():
        import importlib
        source = importlib.import_module(name)
        keep = names or [n for n in dir(source) if not n.startswith("_")
                         and not isinstance(getattr(source, n), types.ModuleType)]
        m = types.ModuleType(name)
        for n in keep:
            setattr(m, n, getattr(source, n))
        modules[name] = m
    for n in STDLIB["numpy.typing"]:             # annotations only: NumPy's own NDArray is a GenericAlias of the
        setattr(modules["numpy.typing"], n, Annotation(n))   # plain ndarray, and calling it made a complex one
    numpy.typing = modules["numpy.typing"]
    import sys as real_sys                       # print(..., file=sys.stderr), sys.exit(): not sys.modules
    modules["sys"] = types.ModuleType("sys")
    for n in ("stdout", "stderr", "exit", "float_info", "maxsize", "version_info"):
        setattr(modules["sys"], n, getattr(real_sys, n))
    own: dict = {}

    def own_module(full):
        """The learner's own module `full` (a file, or a folder with __init__.py), run once; None if no such file."""
        if full in own:
            return own[full]
        parent = full.rpartition(".")[0]
        if parent and own_module(parent) is None:
            return None
        rel = full.replace(".", "/")
        for path, package in ((rel + "/__init__.py", full), (rel + ".py", parent)):
            if path in files:
                m = own[full] = types.ModuleType(full)
                m.__package__ = package
                if package == full:
                    m.__path__ = []
                exec_file(m, files[path], safe)
                if parent:
                    setattr(own[parent], full.rpartition(".")[2], m)
                return m
        return None

    def learner_import(name, globals=None, locals=None, fromlist=(), level=0):
        if isinstance(fromlist, list):
            # NumPy's C code importing its own private modules while a learner frame runs (fromlist a list): an
            # import statement passes None or a tuple, and can name no such module (`problems`)
            return real_import(name, globals, locals, fromlist, level)
        if any(p.startswith("_") for p in name.split(".") if p != "__future__"):
            raise forbidden(f"import {name}: " + RULE)   # (`from __main__ import sys` was the real sys)
        if level:                                 # from . import x, from .core import y: in the learner's package
            package = (globals or {}).get("__package__") or ""
            base = package.rsplit(".", level - 1)[0] if level > 1 else package
            if not base:
                raise forbidden(f"relative import of {name!r} outside a package of your own files")
            name = f"{base}.{name}" if name else base
        elif name in modules:
            return modules[name] if fromlist or "." not in name else modules[name.split(".")[0]]
        module = own_module(name)
        if module is None:
            raise forbidden(f"import {name}: " + RULE)
        for item in fromlist or ():
            own_module(f"{name}.{item}")          # from package import submodule
        return module if fromlist else own[name.split(".")[0]]

    real_import = builtins.__import__
    safe = {n: getattr(builtins, n) for n in SAFE_BUILTINS}
    safe.update(__import__=learner_import, __build_class__=builtins.__build_class__, __name__="builtins")

    def to_learner(value):
        if isinstance(value, np.ndarray) and value.dtype.kind in REAL_KINDS:
            return value.view(RealArray)
        if isinstance(value, (list, tuple)):
            return type(value)(to_learner(v) for v in value)
        if isinstance(value, dict):
            return {k: to_learner(v) for k, v in value.items()}
        return value

    def from_learner(value):
        if isinstance(value, RealArray):
            return np.ndarray.view(value, np.ndarray)
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(from_learner(v) for v in value)
        return value

    return safe, to_learner, from_learner, NotReal
