"""The pretrained-model commands: `tinyattn gpt2 PATH --text "..."` and `tinyattn bert PATH --text "..."`.

gpt2 (a causal decoder): prints the tokens, the top next-token predictions and a short greedy generation;
writes the head view (HTML) and a grid of every head's attention for the text; then measures
previous-token and induction scores of every head (see ``heads``) and prints the heads that pass the
threshold, with their scores.

bert (BERT or DistilBERT, a bidirectional encoder): prints the tokens, the top predictions for each
[MASK] in the text, and with --pair the minimal-pair table (see ``probes``); writes the head view and
the model view (HTML).
"""
from __future__ import annotations

import os

import numpy as np

from .. import manual_seed, no_grad
from .gpt2 import load_gpt2
from .heads import attention_weights, induction_scores, previous_token_scores, repeated_random_tokens

THRESHOLD = 0.4  # a head "is" a previous-token / induction head here when its score passes this


GPT2_HELP = ("GPT-2 (causal) on a text: next-token predictions, head view, measured previous-token and "
             "induction heads")
GPT2_DESCRIPTION = ("Load a Hugging Face GPT-2 checkpoint (a folder, or a model name in the local Hugging Face cache, "
                    "e.g. gpt2); print the text's tokens, the top next-token predictions and a greedy "
                    "continuation; write the head view and a grid of every head; print each head's measured "
                    "previous-token and induction scores. Needs the 'pretrained' extra.")
BERT_HELP = ("BERT or DistilBERT (bidirectional) on a text: fill [MASK], a minimal pair's attention table, head "
             "view and model view")
BERT_DESCRIPTION = ("Load a Hugging Face BERT or DistilBERT checkpoint (a folder, or a model name in the local "
                    "Hugging Face cache, e.g. distilbert-base-uncased); print the text's tokens and the top "
                    "predictions for each [MASK] in it; with --pair, print the attention from --word to the "
                    "words that differ between the two texts, in every layer and head; write the head view "
                    "and the model view (HTML). Needs the 'pretrained' extra.")


def add_commands(sub, int_at_least) -> None:
    """`gpt2` and `bert`, the pretrained-model commands, onto the `tinyattn` subparsers."""
    add_arguments(sub.add_parser("gpt2", help=GPT2_HELP, description=GPT2_DESCRIPTION), int_at_least)
    add_bert_arguments(sub.add_parser("bert", help=BERT_HELP, description=BERT_DESCRIPTION), int_at_least)


def add_arguments(parser, int_at_least) -> None:
    parser.add_argument("path", metavar="PATH", help="a Hugging Face GPT-2 folder (config.json, model.safetensors, "
                                                     "vocab.json + merges.txt or tokenizer.json), or a model "
                                                     "name in the local Hugging Face cache")
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


def add_bert_arguments(parser, int_at_least) -> None:
    parser.add_argument("path", metavar="PATH", help="a Hugging Face BERT or DistilBERT folder (config.json, "
                                                     "model.safetensors, vocab.txt or tokenizer.json), or a "
                                                     "model name in the local Hugging Face cache")
    parser.add_argument("--text", required=True, help="the text to look at; put [MASK] where the model should "
                                                      "predict a word")
    parser.add_argument("--pair", metavar="TEXT", help="a second text differing from --text in a few words (e.g. "
                                                       "two nouns swapped): print the minimal-pair table")
    parser.add_argument("--word", default="she", help="with --pair: the word whose attention is compared "
                                                      "(default: she)")
    parser.add_argument("--candidates", nargs="+", metavar="WORD",
                        help="with --pair: the words it may attend to (default: the words that differ between "
                             "the two texts)")
    parser.add_argument("--out", default="bert_out", metavar="DIR",
                        help="where head_view.html and model_view.html go (default: bert_out/)")
    parser.add_argument("--top", type=int_at_least(1), default=5, metavar="K",
                        help="top-K predictions per [MASK] (default 5)")


def run_command(args) -> int:
    return run(args) if args.command == "gpt2" else run_bert(args)


def _show(tokens: list[str]) -> str:
    return " ".join(repr(t) for t in tokens)


def _token_text(tok, i: int) -> str:
    """A token as shown in a list: its text, quoted; a token that is part of a UTF-8 character (decode would
    show it as \ufffd, as it would every other such token) as its bytes instead, e.g. b'\\xe2\\x80'."""
    if i >= tok.vocab_size:
        return f"<id {i}>"
    raw = tok.token_bytes(i)
    try:
        return repr(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(raw)


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
        print(f"  {_token_text(tok, int(i)):>16}  p = {p[i]:.3f}")
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


def run_bert(args) -> int:
    from .bert import load_bert
    from .probes import differing_words, fill_mask, minimal_pairs

    model, tok = load_bert(args.path)
    inputs = tok(args.text, return_tensors="pt")
    ids = inputs["input_ids"][0]
    if ids.shape[0] > model.max_len:
        raise ValueError(f"--text is {ids.shape[0]} tokens, more than the model's {model.max_len} positions")
    labels = tok.convert_ids_to_tokens(ids)
    print(f"{len(labels)} tokens ('##' joins a piece to the one before): {_show(labels)}")
    if tok.mask_token is not None and tok.mask_token_id in ids.numpy():
        if model.head is None:
            print(f"(the text has {tok.mask_token}, but this checkpoint has no masked-LM head to fill it)")
        else:
            for n, preds in enumerate(fill_mask(model, tok, args.text, top_k=args.top)):
                print(f"{tok.mask_token} #{n + 1}: " + ", ".join(f"{t!r} {p:.3f}" for t, p in preds))
    if args.pair is not None:
        candidates = args.candidates or differing_words(args.text, args.pair)
        if not candidates:
            raise ValueError("--pair: the two texts differ in no word at the same place; name the words to "
                             "compare with --candidates")
        print(minimal_pairs(model, tok, [args.text, args.pair], args.word, candidates).table())

    from ..viz import head_view, model_view

    with no_grad():
        att = model(**inputs, output_attentions=True).attentions  # L of (1, H, T, T)
    w = np.stack([a.numpy()[0] for a in att])  # (L, H, T, T)
    os.makedirs(args.out, exist_ok=True)
    hv = head_view(w, labels).save(os.path.join(args.out, "head_view.html"))
    mv = model_view(w, labels).save(os.path.join(args.out, "model_view.html"))
    print(f"wrote {hv} and {mv} ({w.shape[0]} layers x {w.shape[1]} heads)")
    return 0
