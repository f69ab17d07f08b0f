"""load_bert's hook points against TransformerLens 4.3's BERT bridge, on one random-weight BertForMaskedLM.

tinyattn names the post-LayerNorm encoder's activations as TransformerLens's HookedEncoder did:
hook_attn_out is the attention's output, hook_resid_mid = hook_resid_pre + hook_attn_out (what ln1
normalises), hook_resid_post = ln1's output + hook_mlp_out (what ln2 normalises), hook_embed the word
embeddings. TransformerLens 4.3's bridge (measured here) hooks Hugging Face's modules instead, so five
names mean something else there: its hook_embed is the embeddings' LayerNorm output, its hook_attn_out
is ln1's output (Hugging Face's BertAttention ends with the residual and the LayerNorm), its
hook_resid_mid is tinyattn's hook_resid_post, and its hook_resid_post is ln2's output. Its
hook_attn_scores also differ from tinyattn's (scaled q.k, whose softmax is the pattern) by up to 0.1
while the two patterns agree to 3e-8; that was measured, not explained, so scores are not compared.
This test checks every other shared name for equality, and the four renamed ones for the relation just
stated, so a change on either side shows. Tolerance: as test_lens_gpt2.py (float32 there).
"""
import sys
from pathlib import Path

import numpy as np
import torch
from transformers import BertConfig, BertForMaskedLM
from transformer_lens.model_bridge import TransformerBridge

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the tiny WordPiece vocabulary
import bert_tiny  # noqa: E402

import tinyattn  # noqa: E402
from tinyattn.pretrained import load_bert  # noqa: E402

RTOL = 2e-5
SAME = ["attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_z", "attn.hook_pattern", "ln1.hook_scale",
        "ln1.hook_normalized", "ln2.hook_scale", "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post",
        "hook_mlp_out", "hook_resid_pre"]


def _close(ours, theirs, name):
    assert ours.shape == theirs.shape, f"{name}: {ours.shape} vs {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=RTOL * max(1.0, float(np.abs(theirs).max())),
                               err_msg=name)


def test_bert_hook_points_against_the_bridge(tmp_path):
    torch.manual_seed(0)
    hf = BertForMaskedLM(BertConfig(vocab_size=len(bert_tiny.VOCAB), hidden_size=64, num_hidden_layers=2,
                                    num_attention_heads=4, intermediate_size=128, max_position_embeddings=32)).eval()
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if "LayerNorm" in name or name.endswith("bias"):
                p.add_(0.3 * torch.randn_like(p))
    hf.save_pretrained(tmp_path)
    bert_tiny.write_vocab(tmp_path)
    ours, _ = load_bert(str(tmp_path), dtype=tinyattn.float64)
    bridge = TransformerBridge.boot_transformers(str(tmp_path), device="cpu")
    bridge.enable_compatibility_mode(disable_warnings=True, no_processing=True)
    toks = np.array([[2, 5, 7, 9, 11, 3], [2, 8, 6, 4, 10, 3]])
    out, cache = ours.run_with_cache(input_ids=toks)
    tl_out, tl_cache = bridge.run_with_cache(torch.tensor(toks))
    tl = {k: v.detach().numpy().astype(np.float64) for k, v in tl_cache.items()}
    c = {k: v.numpy() for k, v in cache.items()}
    _close(out.logits.numpy(), tl_out.detach().numpy().astype(np.float64), "logits")
    for name in ["hook_pos_embed", "embed_ln.hook_scale", "embed_ln.hook_normalized", "ln_final.hook_scale",
                 "ln_final.hook_normalized"]:
        _close(c[name], tl[name], name)

    def affine(ln, normalized):  # a LayerNorm's output from its hook_normalized
        return normalized * ln.weight.numpy() + ln.bias.numpy()

    _close(affine(ours.embeddings.norm, c["embed_ln.hook_normalized"]), tl["hook_embed"], "hook_embed (theirs)")
    for i, layer in enumerate(ours.layers):
        b = f"blocks.{i}."
        for name in SAME:
            _close(c[b + name], tl[b + name], b + name)
        _close(affine(layer.ln1, c[b + "ln1.hook_normalized"]), tl[b + "hook_attn_out"], b + "hook_attn_out (theirs)")
        _close(c[b + "hook_resid_post"], tl[b + "hook_resid_mid"], b + "hook_resid_mid (theirs)")
        _close(affine(layer.ln2, c[b + "ln2.hook_normalized"]), tl[b + "hook_resid_post"],
               b + "hook_resid_post (theirs)")
        # ours: resid_mid = resid_pre + attn_out, the sum ln1 normalises
        np.testing.assert_allclose(c[b + "hook_resid_mid"], c[b + "hook_resid_pre"] + c[b + "hook_attn_out"],
                                   atol=1e-12)
        # ours: the pattern is the softmax of the scores (theirs is not checked: see the top)
        s = c[b + "attn.hook_attn_scores"]
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        np.testing.assert_allclose(e / e.sum(axis=-1, keepdims=True), c[b + "attn.hook_pattern"], atol=1e-12)
