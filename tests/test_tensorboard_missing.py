"""utils.tensorboard without the tensorboard package: PyTorch's ModuleNotFoundError, plus the install line.
(The package itself is compared with PyTorch's writer in tests/oracle/test_surface_tensorboard.py.)"""
import subprocess
import sys
import textwrap


def test_import_without_tensorboard_raises_pytorchs_error_with_the_install_line():
    code = textwrap.dedent("""
        import sys
        class Hide:  # tensorboard may be installed here: make it missing for this interpreter
            def find_spec(self, name, path=None, target=None):
                if name == "tensorboard" or name.startswith("tensorboard."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, Hide())
        import tinyattn
        try:
            from tinyattn.utils.tensorboard import SummaryWriter
        except ModuleNotFoundError as e:
            print(type(e).__name__, e.name, "|", e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("ModuleNotFoundError tensorboard | No module named 'tensorboard'")
    assert "pip install tensorboard" in out
