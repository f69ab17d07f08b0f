"""Where the checks get their expected values and the known-wrong variants' outputs.

The checks never import `references.py` or `wrong.py` directly; they write `ref.softmax(x, -1)`
or `wrong.attention_variants(...)` through the two proxies below, which have two back ends:

* **live** (the instructor's repository): the call runs the real function, for any seed.
* **fixtures** (the student release, which ships neither file): the answer is looked up in
  `fixtures/exNN.npz`, recorded at release time by running every check at `FIXTURE_SEEDS`.
  Each recorded call is keyed by WHERE it is made: the session's seed, the check it is made in
  (``Session.check`` tells ``enter``), the function and how many calls of it that check made
  before. Not by the arguments' bits: an argument the check computes (``dC @ B.T``, ``y / y.sum()``)
  comes out a few ulps apart on another CPU, another BLAS kernel or another thread count, and a
  student grading on a Classroom runner must find the answers recorded on the instructor's laptop.
  The arguments are still checked, to a tolerance far above rounding (``_fingerprint``): inputs that
  differ (another NumPy drawing other numbers for the seed) fail loudly, never with another call's answer.

A `wrong.*` call never raises: a variant that can not be computed on these inputs matches
nothing (None). Checks compute every oracle value before judging (not only on a failure path),
so one run of the solutions records everything a failing submission can ask for.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import secrets
from pathlib import Path
from typing import Any

import numpy as np

FIXTURE_DIR = Path(__file__).with_name("fixtures")
FIXTURE_SEEDS = (11, 22, 33)        # the seeds a student release can grade with


class FixtureMissing(LookupError):
    """The student fixtures hold no recorded answer for this call (inputs from an unrecorded seed)."""


@functools.lru_cache(maxsize=None)
def live() -> bool:
    """True when the reference implementation is installed (the instructor's repository)."""
    return importlib.util.find_spec(f"{__package__}.references") is not None


def recorded_seed(seed: int | None, env: str = "") -> int | None:
    """In a student release: the seed to grade with (`seed`, else `env`, else one of FIXTURE_SEEDS at
    random), ValueError for a seed without recorded answers. None where the references are installed."""
    if live():
        return None
    if seed is None and env.strip():
        try:
            seed = int(env)
        except ValueError:
            raise ValueError(f"the grading seed must be an integer, got {env!r}") from None
    if seed is None:
        return secrets.choice(FIXTURE_SEEDS)
    if int(seed) not in FIXTURE_SEEDS:
        raise ValueError(f"this copy of tinyattn grades with answers recorded for the seeds "
                         f"{', '.join(map(str, FIXTURE_SEEDS))}; got seed {seed}")
    return int(seed)


# ---- (de)serialisation without pickle ----------------------------------------------------------------

def _encode(obj: Any, arrays: list[np.ndarray]) -> Any:
    """A JSON skeleton of obj; arrays go to `arrays` and are referenced by index."""
    if isinstance(obj, (np.ndarray, np.generic)):
        arrays.append(np.asarray(obj))
        return {"a": len(arrays) - 1}
    if isinstance(obj, tuple):
        return {"t": [_encode(o, arrays) for o in obj]}
    if isinstance(obj, list):
        return [_encode(o, arrays) for o in obj]
    if isinstance(obj, dict):
        return {"d": {str(k): _encode(v, arrays) for k, v in obj.items()}}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"an oracle result can not hold a {type(obj).__name__}")


def _decode(skel: Any, arrays) -> Any:
    if isinstance(skel, list):
        return [_decode(s, arrays) for s in skel]
    if isinstance(skel, dict):
        if "a" in skel:
            return arrays(skel["a"])
        if "t" in skel:
            return tuple(_decode(s, arrays) for s in skel["t"])
        return {k: _decode(v, arrays) for k, v in skel["d"].items()}
    return skel


# ---- the back ends ---------------------------------------------------------------------------------

class _State:
    recording: dict[str, Any] | None = None      # key -> {"out": result, "args": fingerprint}, while `record` runs
    tables: dict[str, Any] = {}                  # exercise id -> opened npz (fixtures mode)
    exercise: str | None = None                  # whose fixtures a lookup reads
    place: tuple = ("", "start")                 # (the session's seed, the check being run): see `enter`
    calls: dict = {}                             # (place, function) -> calls made there so far


def begin(rng) -> None:
    """A new session (one exercise at one seed): its seed is read from its generator's seed sequence."""
    seeds = getattr(getattr(rng, "bit_generator", None), "seed_seq", None)  # ([seed, exercise] for a grading)
    _State.place, _State.calls = (repr(getattr(seeds, "entropy", None)), "start"), {}


def enter(label: str) -> None:
    """The oracle calls that follow are made in the check (or after the check) called `label`."""
    _State.place = (_State.place[0], label)


def _place_key(function: str) -> str:
    """The key of this call: where it is made, and how many calls of `function` were made there before."""
    n = _State.calls[_State.place, function] = _State.calls.get((_State.place, function), -1) + 1
    h = hashlib.sha256(f"{function}|{_State.place[0]}|{_State.place[1]}|{n}".encode())
    return h.hexdigest()[:24]


def _fingerprint(obj: Any) -> Any:
    """What an argument must still be at lookup: an array's shape, dtype, largest |x|, sum of |x| and its first
    and last 8 entries; a number or a string itself (compared by `_same`, to a tolerance far above rounding)."""
    if isinstance(obj, (np.ndarray, np.generic)):
        a = np.asarray(obj)
        flat = a.reshape(-1).astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        finite = np.where(np.isfinite(flat), np.abs(flat), 0.0) if flat.size else np.zeros(1)
        return {"shape": list(a.shape), "dtype": a.dtype.str,
                "v": np.concatenate([[finite.max(), finite.sum()], flat[:8], flat[-8:]])}
    if isinstance(obj, (tuple, list)):
        return [_fingerprint(o) for o in obj]
    if isinstance(obj, dict):
        return {str(k): _fingerprint(v) for k, v in sorted(obj.items())}
    return obj if obj is None or isinstance(obj, (bool, int, float, str)) else repr(obj)


def _same(now: Any, then: Any) -> bool:
    """Whether fingerprints agree: exactly in shapes, dtypes, ints and strings; within 1e-8 of the largest |x|
    (and of themselves) in values, NaN as NaN. Rounding on another CPU is ~1e-16; other inputs differ at ~1."""
    if isinstance(now, dict) and isinstance(then, dict) and "v" in now and "v" in then:
        v, w = np.asarray(now["v"]), np.asarray(then["v"])
        return (now["shape"] == list(then["shape"]) and now["dtype"] == then["dtype"] and v.shape == w.shape
                and bool(np.allclose(v, w, rtol=1e-8, atol=1e-8 * float(np.abs(w[0])), equal_nan=True)))
    if isinstance(now, (list, tuple)) and isinstance(then, (list, tuple)):
        return len(now) == len(then) and all(_same(a, b) for a, b in zip(now, then))
    if isinstance(now, dict) and isinstance(then, dict):
        return now.keys() == then.keys() and all(_same(now[k], then[k]) for k in now)
    if isinstance(now, float) and isinstance(then, (int, float)) and not isinstance(then, bool):
        return bool(np.isclose(now, then, rtol=1e-12, atol=0.0, equal_nan=True))
    return now == then


def use_exercise(ex_id: str) -> None:
    """Tell the fixture back end which exercise's file to read (the runner calls this)."""
    _State.exercise = ex_id


def _lookup(key: str, what: str, args: Any) -> Any:
    ex = _State.exercise
    if ex not in _State.tables:
        path = FIXTURE_DIR / f"{ex}.npz"
        if not path.is_file():
            raise FixtureMissing(f"no fixture file {path.name}: this copy of tinyattn has neither the reference "
                                 "answers nor the recorded ones")
        _State.tables[ex] = np.load(path, allow_pickle=False)
    table = _State.tables[ex]
    if f"{key}.json" not in table.files:
        raise FixtureMissing(f"the recorded answers hold no {what} for these inputs (grade with one of the "
                             f"recorded seeds: {', '.join(map(str, FIXTURE_SEEDS))})")
    skel, names = json.loads(bytes(table[f"{key}.json"]).decode())
    entry = _decode(skel, lambda i: table[f"b.{names[i]}"])
    if not _same(_fingerprint(args), entry["args"]):
        raise FixtureMissing(f"the inputs of {what} differ from the recorded ones (more than rounding): this copy "
                             "of NumPy draws other numbers for the seed than the one the answers were recorded with")
    return entry["out"]


class _Proxy:
    """`ref.name(...)` / `wrong.name(...)`: live call, recorded call, or fixture lookup."""

    def __init__(self, module: str, never_raises: bool):
        self._module, self._never_raises = module, never_raises

    def _live(self, name: str, args, kwargs):
        fn = getattr(importlib.import_module(f"{__package__}.{self._module}"), name)
        if not self._never_raises:
            return fn(*args, **kwargs)
        try:
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - a variant that only fits other shapes matches nothing
            return None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            if _State.recording is None and live():
                return self._live(name, args, kwargs)
            key = _place_key(f"{self._module}.{name}")
            if _State.recording is not None:
                out = self._live(name, args, kwargs)
                _State.recording[key] = {"out": out, "args": _fingerprint([list(args), kwargs])}
                return out
            return _lookup(key, f"{self._module}.{name}", [list(args), kwargs])

        call.__name__ = name
        return call


ref = _Proxy("references", never_raises=False)
wrong = _Proxy("wrong", never_raises=True)


# ---- recording (release time) -------------------------------------------------------------------

class record:
    """`with record() as calls:` every oracle call in the block is run live and kept in `calls`."""

    def __enter__(self) -> dict[str, Any]:
        _State.recording = {}
        return _State.recording

    def __exit__(self, *exc) -> None:
        _State.recording = None


def save(calls: dict[str, Any], path: Path) -> None:
    """Write recorded calls as one compressed .npz (no pickles: plain arrays and JSON skeletons)."""
    out: dict[str, np.ndarray] = {}
    for key, result in calls.items():
        arrays: list[np.ndarray] = []
        skel = json.dumps(_encode(result, arrays))
        names = []
        for a in arrays:  # each distinct array once: checks ask for the same answer at many places
            h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode() + np.ascontiguousarray(a).tobytes()).hexdigest()[:24]
            out[f"b.{h}"] = a
            names.append(h)
        out[f"{key}.json"] = np.frombuffer(json.dumps([json.loads(skel), names]).encode(), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **out)
