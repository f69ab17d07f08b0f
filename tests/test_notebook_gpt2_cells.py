"""Notebook cells that run only where GPT-2's weights are cached never run in CI, so their code is run here on a
tiny random GPT-2 checkpoint in GPT-2's format, through the same `load_gpt2` call: a learner with the weights
must not be the first to execute them."""
import contextlib
import io
import json
import pathlib

import numpy as np

import gpt2_tiny
import tinyattn.pretrained
from tinyattn.lens import patch_head_out

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"


def _cells_loading_gpt2():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] == "code" and 'load_gpt2("gpt2")' in src:
                yield path.name, src


def test_the_gpt2_patching_cell_runs_on_a_checkpoint_in_gpt2s_format(tmp_path, monkeypatch):
    cells = [c for c in _cells_loading_gpt2() if c[0].startswith("11_")]
    assert len(cells) == 1, "notebook 11 has one cell that loads GPT-2"
    folder, cfg, _ = gpt2_tiny.write_checkpoint(tmp_path / "gpt2", gpt2_tiny.tiny_config(n_positions=96))
    real = tinyattn.pretrained.load_gpt2
    monkeypatch.setattr(tinyattn.pretrained, "load_gpt2", lambda name, **kw: real(folder, **kw))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(cells[0][1], {"np": np, "patch_head_out": patch_head_out})
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("logit difference: clean "), lines
    heads = eval(lines[1].split(":", 1)[1])  # the printed list of the five heads that restore most
    assert len(heads) == 5 and len(set(heads)) == 5
    assert all(0 <= int(h[1:].split("H")[0]) < cfg["n_layer"] and 0 <= int(h.split("H")[1]) < cfg["n_head"]
               for h in heads)
