"""`tinyattn gpt2 PATH --text "..."`: a GPT-2 checkpoint's predictions and heads, for one text.

Prints the tokens, the top next-token predictions and a short greedy generation; writes the head view
(HTML) and a grid of every head's attention for the text; then measures previous-token and induction
scores of every head (see ``heads``) and prints the heads that pass the threshold, with their scores.
"""
from __future__ import annotations

import os

import numpy as np

from .. import manual_seed, no_grad
from .gpt2 import load_gpt2
from .heads import attention_weights, induction_scores, previous_token_scores, repeated_random_tokens

THRESHOLD = 0.4  # a head "is" a previous-token / induction head here when its score passes this


def add_arguments(parser, int_at_least) -> None:
    parser.add_argument("path", metavar="PATH", help="a local Hugging Face GPT-2 folder (config.json, "
                                                     "model.safetensors, vocab.json + merges.txt or tokenizer.json)")
    parser.add_argument("--text", required=True, help="the text to look at")
    parser.add_argument("--out", default="gpt2_out", metavar="DIR",
                        help="where head_view.html and heads.png go (default: gpt2_out/)")
    parser.add_argument("--top", type=int_at_least(1), default=5, metavar="K", help="top-K next tokens (default 5)")
    parser.add_argument("--new-tokens", type=int_at_least(0), default=20, metavar="N",
                        help="tokens of greedy generation (default 20)")
    parser.add_argument("--repeat", type=int_at_least(2), default=50, metavar="N",
                        help="length of the random sequence repeated twice for the induction scores (default 50)")
    parser.add_argument("--seed", type=int_at_least(0), default=0, metavar="N",
                        help="seed of the random sequence (default 0)")


def _show(tokens: list[str]) -> str:
    return " ".join(repr(t) for t in tokens)


def _text(tok, ids) -> str:
    """Decoded text; an id past the tokenizer's vocabulary (a config may have more embedding rows) shows as <id N>."""
    ids = [int(i) for i in ids]
    if all(i < tok.vocab_size for i in ids):
        return tok.decode(ids)
    return "".join(tok.decode([i]) if i < tok.vocab_size else f"<id {i}>" for i in ids)


def _report_heads(title: str, scores: np.ndarray, baseline: float) -> None:
    L, H = scores.shape
    order = np.argsort(scores, axis=None)[::-1]  # every (layer, head), best first
    passing = [divmod(int(i), H) for i in order if scores.flat[i] >= THRESHOLD]
    print(f"{title} (score >= {THRESHOLD}; uniform attention would score about {baseline:.3f}):")
    if passing:
        print("  " + ", ".join(f"L{l}.H{h} {scores[l, h]:.2f}" for l, h in passing))
    else:
        print("  none")
    best = [divmod(int(i), H) for i in order[:3]]
    print("  highest: " + ", ".join(f"L{l}.H{h} {scores[l, h]:.2f}" for l, h in best))


def run(args) -> int:
    model, tok = load_gpt2(args.path)
    ids = tok.encode(args.text)
    if not ids:
        raise ValueError("--text gave no tokens: give some text")
    if len(ids) > model.max_len:
        raise ValueError(f"--text is {len(ids)} tokens, more than the model's {model.max_len} positions")
    # The last generated token is never fed back, so a T-token text leaves room for max_len - T + 1 new ones.
    n_new = min(args.new_tokens, model.max_len - len(ids) + 1)
    labels = tok.convert_ids_to_tokens(ids)
    print(f"{len(ids)} tokens ('Ġ' stands for a space): {_show(labels)}")

    with no_grad():
        logits = model(np.array([ids])).numpy()[0, -1].astype(np.float64)  # (V,) after the last token
    p = np.exp(logits - logits.max())
    p /= p.sum()
    print(f"top {args.top} next tokens:")
    for i in np.argsort(p)[::-1][:args.top]:
        print(f"  {_text(tok, [i])!r:>16}  p = {p[i]:.3f}")
    out = model.generate(np.array([ids]), n_new, temperature=0).numpy()[0]
    room = "" if n_new == args.new_tokens else f", all the model's {model.max_len} positions allow"
    print(f"greedy continuation ({n_new} tokens{room}): {_text(tok, out[len(ids):])!r}")

    from ..viz import head_view, plot_attention_grid

    w = attention_weights(model, ids)  # (L, H, T, T)
    os.makedirs(args.out, exist_ok=True)
    html = head_view(w, labels).save(os.path.join(args.out, "head_view.html"))
    png = os.path.join(args.out, "heads.png")
    plot_attention_grid(w, labels, title=f"every head on: {args.text[:60]!r}", path=png)
    print(f"wrote {html} and {png} ({w.shape[0]} layers x {w.shape[1]} heads)")

    if len(ids) >= 2:
        T = len(ids)
        _report_heads("previous-token heads, on the text", previous_token_scores(w),
                      float(np.mean(1.0 / np.arange(2, T + 1))))
    manual_seed(args.seed)
    n = min(args.repeat, (model.max_len - 1) // 2)
    bos = tok.eos_token_id  # GPT-2 saw <|endoftext|> before every document: it makes a natural start
    seq = repeated_random_tokens(min(tok.vocab_size, model.vocab_size), n, bos=bos)
    start = 0 if bos is None else 1
    w_rep = attention_weights(model, seq)
    t = np.arange(start + n, start + 2 * n)
    _report_heads(f"induction heads, on {n} random tokens seen twice (seed {args.seed})",
                  induction_scores(w_rep, n, start=start), float(np.mean(1.0 / (t + 1))))
    return 0
