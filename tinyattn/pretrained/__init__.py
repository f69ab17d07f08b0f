"""Pretrained checkpoints in tinyattn's own modules (optional extra: pip install -e ".[pretrained]").

``load_gpt2(path, dtype=None)`` and ``load_bert(path, dtype=None)`` (BERT and DistilBERT) -> (model, tokenizer),
from a local Hugging Face folder or a model name in the local Hugging Face cache (never the network);
``AutoModel`` / ``AutoTokenizer.from_pretrained(path)`` pick the family from config.json; the AutoModelFor<Task>
classes build a task head (task_heads.py: classification and question answering on BERT and DistilBERT).
``heads`` measures previous-token and induction scores of every head; ``probes`` fills masks and
compares minimal pairs.
"""
from .auto import (AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForQuestionAnswering,
                   AutoModelForSequenceClassification, AutoModelForTokenClassification, AutoTokenizer)
from .bert import load_bert
from .gpt2 import load_gpt2
from .heads import attention_weights, induction_scores, previous_token_scores, repeated_random_tokens
from .outputs import BatchEncoding, ModelOutput
from .probes import fill_mask, minimal_pairs

__all__ = ["load_gpt2", "load_bert", "AutoModel", "AutoTokenizer", "AutoModelForCausalLM", "AutoModelForMaskedLM",
           "AutoModelForSequenceClassification", "AutoModelForTokenClassification", "AutoModelForQuestionAnswering", "ModelOutput", "BatchEncoding", "fill_mask",
           "minimal_pairs", "attention_weights", "previous_token_scores", "induction_scores",
           "repeated_random_tokens"]
