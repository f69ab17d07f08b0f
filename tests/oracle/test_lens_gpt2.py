"""tinyattn's hook points, cache, hooks and patching against TransformerLens 4.3 on the same GPT-2 weights.

transformers writes a small random-weight GPT-2 (LayerNorm weights and every bias perturbed, so the
affine steps and biases are checked too; the matrices scaled up, so heads attend unevenly); load_gpt2
reads it in float64, TransformerLens's bridge in float32 (``TransformerBridge.boot_transformers(path)``,
then ``enable_compatibility_mode``).

Tolerances: TransformerLens computes in float32 (unit roundoff 6e-8). The measured difference is at most
6.2e-7 of the activation's largest magnitude (both sizes); 2e-5 leaves a factor of 30 and is still far
below any real discrepancy (a dropped bias or a wrong scale moves values by 1e-2 or more).
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformer_lens.model_bridge import TransformerBridge
from transformer_lens.utilities import get_act_name as tl_get_act_name

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the tiny BPE vocabulary
from gpt2_tiny import VOCAB, write_bpe_files  # noqa: E402

import tinyattn  # noqa: E402
from tinyattn.lens import get_act_name, patch_head_out, patch_head_pattern, patch_resid_pre  # noqa: E402
from tinyattn.pretrained import load_gpt2  # noqa: E402

RTOL = 2e-5  # of the activation's largest magnitude: float32 (TransformerLens) vs float64 (tinyattn)
SIZES = [dict(n_layer=2, n_embd=64, n_head=4), dict(n_layer=3, n_embd=48, n_head=6)]
# The names the issue lists; both must have every one of them.
PER_LAYER = ["hook_resid_pre", "ln1.hook_scale", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_v",
             "attn.hook_z", "attn.hook_attn_scores", "attn.hook_pattern", "hook_attn_out", "hook_resid_mid",
             "ln2.hook_scale", "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post", "hook_mlp_out",
             "hook_resid_post"]
TOP = ["hook_embed", "hook_pos_embed", "ln_final.hook_scale", "ln_final.hook_normalized"]


def _checkpoint(folder, seed, **size):
    torch.manual_seed(seed)
    hf = GPT2LMHeadModel(GPT2Config(vocab_size=len(VOCAB), n_positions=32, **size)).eval()
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if "ln" in name or name.endswith("bias"):
                p.add_(0.3 * torch.randn_like(p))
            else:
                p.mul_(8.0)  # GPT-2's init (std 0.02) makes every head nearly uniform: give them something to do
    hf.save_pretrained(folder)
    write_bpe_files(folder)
    return hf


@pytest.fixture(scope="module", params=range(len(SIZES)), ids=lambda i: "L{n_layer}-C{n_embd}-H{n_head}".format(
    **SIZES[i]))
def models(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"gpt2_{request.param}")
    hf = _checkpoint(folder, request.param, **SIZES[request.param])
    ours, _ = load_gpt2(str(folder), dtype=tinyattn.float64)
    bridges = {}
    for processing in (False, True):
        b = TransformerBridge.boot_transformers(str(folder), device="cpu")
        b.enable_compatibility_mode(disable_warnings=True, no_processing=not processing)
        bridges[processing] = b
    return ours, bridges, hf, SIZES[request.param]


TOKENS = np.array([[5, 17, 99, 3, 42, 5, 17, 8], [1, 2, 3, 4, 5, 6, 7, 8]])


def _close(ours: np.ndarray, theirs: np.ndarray, name: str) -> None:
    assert ours.shape == theirs.shape, f"{name}: shape {ours.shape} vs TransformerLens {theirs.shape}"
    inf = np.isinf(theirs)
    assert np.array_equal(inf, np.isinf(ours)), f"{name}: the -inf (masked) entries differ"
    assert np.array_equal(theirs[inf], ours[inf]), f"{name}: the masked entries' signs differ"
    scale = max(1.0, float(np.abs(theirs[~inf]).max()))
    np.testing.assert_allclose(ours[~inf], theirs[~inf], rtol=0, atol=RTOL * scale, err_msg=name)


def test_every_shared_hook_has_the_same_shape_and_value(models):
    ours, bridges, _, size = models
    logits, cache = ours.run_with_cache(TOKENS)
    tl_logits, tl_cache = bridges[False].run_with_cache(torch.tensor(TOKENS))
    _close(logits.numpy(), tl_logits.detach().numpy().astype(np.float64), "logits")
    needed = TOP + [f"blocks.{i}.{n}" for i in range(size["n_layer"]) for n in PER_LAYER]
    assert set(needed) <= set(cache.keys()), sorted(set(needed) - set(cache.keys()))
    assert set(needed) <= set(tl_cache.keys()), sorted(set(needed) - set(tl_cache.keys()))
    shared = set(cache.keys()) & set(tl_cache.keys())
    assert shared == set(needed) | {f"blocks.{i}.hook_resid_pre" for i in range(size["n_layer"])}
    for name in sorted(shared):
        _close(cache[name].numpy(), tl_cache[name].detach().numpy().astype(np.float64), name)


def test_with_transformerlens_default_processing_the_names_that_it_does_not_change_still_agree(models):
    """Default compatibility mode folds the LayerNorms and centres the writing weights: q, k, scores, pattern,
    LayerNorm scale and normalized, the MLP's hidden layer are unchanged; the residual stream and what is
    written into it lose their mean over d_model (and the logits their mean over the vocabulary)."""
    ours, bridges, _, size = models
    logits, cache = ours.run_with_cache(TOKENS)
    tl_logits, tl_cache = bridges[True].run_with_cache(torch.tensor(TOKENS))
    centre = lambda a: a - a.mean(axis=-1, keepdims=True)  # noqa: E731
    _close(centre(logits.numpy()), centre(tl_logits.detach().numpy().astype(np.float64)), "logits (centred)")
    same = ["ln1.hook_scale", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_attn_scores",
            "attn.hook_pattern", "ln2.hook_scale", "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post"]
    centred = ["hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_mlp_out", "hook_resid_post"]
    for i in range(size["n_layer"]):
        for n in same:
            name = f"blocks.{i}.{n}"
            _close(cache[name].numpy(), tl_cache[name].detach().numpy().astype(np.float64), name)
        for n in centred:
            name = f"blocks.{i}.{n}"
            _close(centre(cache[name].numpy()), tl_cache[name].detach().numpy().astype(np.float64), name)


def test_a_zero_ablation_hook_gives_the_same_logits(models):
    ours, bridges, _, size = models
    layer, head = size["n_layer"] - 1, 1

    def ours_hook(z, hook):
        arr = z.numpy().copy()
        arr[:, :, head] = 0.0
        return tinyattn.tensor(arr)

    def tl_hook(z, hook):
        z = z.clone()
        z[:, :, head] = 0.0
        return z

    name = f"blocks.{layer}.attn.hook_z"
    got = ours.run_with_hooks(TOKENS, fwd_hooks=[(name, ours_hook)]).numpy()
    want = bridges[False].run_with_hooks(torch.tensor(TOKENS), fwd_hooks=[(name, tl_hook)]).detach().numpy()
    _close(got, want.astype(np.float64), "ablated logits")
    assert np.abs(got - ours(TOKENS).numpy()).max() > 1e-3  # the ablation did change something


def _tl_grid(bridge, corrupted, clean_cache, metric, name, axis, n_layers):
    """The patching loop written with TransformerLens's own hooks, as its users write it."""
    grid = []
    for layer in range(n_layers):
        full = tl_get_act_name(name, layer)
        clean = clean_cache[full]
        row = []
        for i in range(clean.shape[axis]):
            def hook(act, hook, i=i):
                act = act.clone()
                index = (slice(None),) * axis + (i,)
                act[index] = clean[index]
                return act

            with torch.no_grad():
                row.append(float(metric(bridge.run_with_hooks(corrupted, fwd_hooks=[(full, hook)]))))
        grid.append(row)
    return np.array(grid)


@pytest.mark.parametrize("helper,name,axis", [(patch_resid_pre, "resid_pre", 1), (patch_head_out, "z", 2),
                                              (patch_head_pattern, "pattern", 1)])
def test_patching_grids_match_transformerlens(models, helper, name, axis):
    ours, bridges, _, size = models
    clean = np.array([[5, 17, 99, 3, 42, 5, 17, 8]])
    corrupted = np.array([[5, 17, 99, 3, 42, 61, 17, 8]])
    answer = 99

    def metric(logits):  # the log-probability of the clean answer after the last token
        lg = logits.numpy() if hasattr(logits, "numpy") and not torch.is_tensor(logits) else logits.detach().numpy()
        z = lg[0, -1].astype(np.float64)
        return z[answer] - (np.log(np.exp(z - z.max()).sum()) + z.max())

    _, clean_cache = ours.run_with_cache(clean)
    got = helper(ours, corrupted, clean_cache, metric)
    _, tl_clean_cache = bridges[False].run_with_cache(torch.tensor(clean))
    want = _tl_grid(bridges[False], torch.tensor(corrupted), tl_clean_cache, metric, name, axis, size["n_layer"])
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)  # log-probabilities of order 1-10, float32 theirs
    assert np.ptp(want) > 1e-3  # the grid is not flat: the comparison says something


@pytest.mark.parametrize("args", [("pattern", 0), ("resid_pre", 2), ("q", 1), ("scale", 3, "ln1"), ("normalized",),
                                  ("normalized", 2, "ln2"), ("k6",), ("scale4ln1",), ("pre5",), ("attn", 1),
                                  ("attn_logits", 0), ("key", 1, "a"), ("mlp_post", 0), ("resid_post", 1, "b"),
                                  ("embed",), ("hook_embed",), ("blocks.0.attn.hook_q",), ("attn_out", 3),
                                  ("mlp_out", 0, "block"), ("result", 2), ("rot_q", 1), ("z", 0, "attention")])
def test_short_names_follow_transformerlens(args):
    assert get_act_name(*args) == tl_get_act_name(*args)
