"""Pretrained checkpoints in tinyattn's own modules (optional extra: pip install -e ".[pretrained]").

``load_gpt2(path, dtype=None) -> (model, tokenizer)`` reads a local Hugging Face GPT-2 folder;
``heads`` measures previous-token and induction scores of every head.
"""
from .gpt2 import load_gpt2
from .heads import attention_weights, induction_scores, previous_token_scores, repeated_random_tokens

__all__ = ["load_gpt2", "attention_weights", "previous_token_scores", "induction_scores", "repeated_random_tokens"]
