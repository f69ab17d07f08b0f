"""The einops backend is registered without importing einops, whichever is imported first.

einops is not installed here, so a stand-in package with einops' discovery rule (subclasses of
``_backends.AbstractBackend`` whose ``framework_name`` is an imported module) shows that the backend
appears exactly when ``einops._backends`` is loaded and that its operations keep gradients.
(The real einops is compared with PyTorch in tests/oracle/test_einops_*.py.)"""
import subprocess
import sys
import textwrap

STAND_IN = '''
import sys
class AbstractBackend:
    framework_name = None
def get_backend(tensor):
    todo = AbstractBackend.__subclasses__()
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.framework_name in sys.modules and cls().is_appropriate_type(tensor):
            return cls()
    raise RuntimeError(f"Tensor type unknown to einops {type(tensor)}")
'''


def _run(tmp_path, body: str) -> str:
    pkg = tmp_path / "einops"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("from . import _backends\n")
    (pkg / "_backends.py").write_text(STAND_IN)
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_import_tinyattn_does_not_import_einops(tmp_path):
    out = _run(tmp_path, """
        import tinyattn
        print(sorted(m for m in sys.modules if m.split('.')[0] == 'einops'))
    """)
    assert out.strip() == "[]"


def test_backend_found_whether_einops_comes_first_or_second(tmp_path):
    for first, second in (("tinyattn", "einops"), ("einops", "tinyattn")):
        out = _run(tmp_path, f"""
            import {first}, {second}
            from einops._backends import get_backend
            x = tinyattn.randn(2, 6, dtype=tinyattn.float64, requires_grad=True)
            b = get_backend(x)
            print(type(b).__name__, b.framework_name)
            y = b.transpose(b.reshape(x, (2, 3, 2)), (2, 0, 1))  # 'b (h d) -> d b h'
            z = b.add_axes(b.reduce(y, 'max', (0,)), 3, {{2: 4}})
            from tinyattn.gradcheck import gradcheck
            print(tuple(y.shape), tuple(z.shape), gradcheck(lambda x: b.add_axes(b.reduce(
                b.transpose(b.reshape(x, (2, 3, 2)), (2, 0, 1)), 'mean', (0,)), 3, {{2: 4}}), x))
            print(sum(type(f).__name__ == '_EinopsFinder' for f in sys.meta_path))
        """)
        assert out.split("\n")[:3] == ["TinyattnBackend tinyattn", "(2, 2, 3) (2, 3, 4) True", "0"]
