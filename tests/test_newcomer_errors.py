"""The first errors a newcomer meets say what to run: the missing extra's install line comes first,
and a missing model names both the extra and the download command."""
import subprocess
import sys

import pytest

from tinyattn.pretrained import hub
from tinyattn.pretrained import load_bert, load_gpt2
from tinyattn.pretrained.auto import AutoModel, AutoTokenizer

INSTALL = 'python -m pip install -e ".[pretrained]"'


@pytest.mark.parametrize("blocked", ["safetensors", "tokenizers"])
@pytest.mark.parametrize("load", [load_gpt2, load_bert, AutoModel.from_pretrained, AutoTokenizer.from_pretrained])
def test_a_loader_without_the_pretrained_extra_names_the_install_line_before_anything_else(monkeypatch, tmp_path,
                                                                                          blocked, load):
    monkeypatch.setitem(sys.modules, blocked, None)  # `import blocked` now raises ImportError, as if absent
    for path in ("gpt2", str(tmp_path)):  # a model name not in any cache, and an empty folder: the extra comes first
        with pytest.raises(ImportError) as info:
            load(path)
        assert INSTALL in str(info.value) and blocked in str(info.value), info.value
        assert "hf download" not in str(info.value)


def test_a_model_missing_from_the_cache_names_the_download_and_the_extra_that_brings_hf(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        load_gpt2("distilgpt2")
    text = str(info.value)
    assert hub.download_command("distilgpt2") in text and INSTALL in text
    assert text.index("hf download") < text.index(INSTALL)


def test_the_gpt2_command_without_the_extra_prints_the_install_line(tmp_path):
    code = ("import sys; sys.modules['safetensors'] = None; from tinyattn.cli import main; "
            "sys.exit(main(['gpt2', 'gpt2', '--text', 'hi', '--out', sys.argv[1]]))")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0
    assert INSTALL in run.stderr and "Traceback" not in run.stderr, run.stderr
