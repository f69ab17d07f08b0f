"""Build the census of the PyTorch names that public attention/transformer teaching code uses.

Two steps, both rerunnable:

  1. export: copy the selected files of each codebase out of local git snapshots into a folder
         python tests/data/build_census.py export --mirrors /work/.mirror --dest /tmp/census_src
     The folder gets one sub-folder per codebase (``owner+name/``) holding the files, plus a
     ``.census_commit`` file with the commit they were read at. Nothing of it is committed.
  2. build: parse every file of such a folder and write the census next to this script
         /path/to/torch-venv/bin/python tests/data/build_census.py build /tmp/census_src
     This step needs PyTorch installed: a name counts only if it resolves in the real ``torch``
     (``torch.nn.functional.softmax``) or, for a method called on any non-module object, if
     ``hasattr(torch.Tensor, name)``.

Outputs (under tests/data/): census_names.csv (name, kind, codebases, total, used_by) and
census_sources.json (repo, commit, files read). No source code is copied into the repository.

Extraction rules (Python via ``ast``; notebooks: code cells with IPython magics and shell lines
dropped; d2l's Markdown chapters: the fenced ``{.python .input}`` blocks of its PyTorch tab):
  * module aliases from every import: ``import torch.nn as nn``, ``from torch import nn``,
    ``from torch.nn import functional as F``, ``import torch.nn.functional as F`` ...;
    ``from torch.utils.data import DataLoader`` binds the name ``DataLoader`` to
    ``torch.utils.data.DataLoader``; an imported name counts once for the import line (the import
    itself fails when the name is missing) and once for each use;
  * an attribute chain rooted at a torch alias is resolved through the real torch and cut at its
    first non-module object: ``nn.init.zeros_(w)`` -> ``torch.nn.init.zeros_``,
    ``torch.float32.itemsize`` -> ``torch.float32``; ``import torch.distributed as dist`` also
    records the module ``torch.distributed``;
  * ``x.m(...)`` on any expression that is not a module alias (a name bound by an import) is a
    Tensor method use when ``hasattr(torch.Tensor, m)`` (kind ``method``); ``x.p`` read without a
    call is a Tensor attribute use when ``torch.Tensor.p`` is a data descriptor such as ``shape``,
    ``grad``, ``T`` (kind ``attribute``);
  * kind ``private``: a name with a component starting with '_' (``torch._utils._rebuild_tensor_v2``,
    ``Tensor._typed_storage``): PyTorch internals, recorded but not part of its public surface;
  * kind ``ambiguous``: see AMBIGUOUS below.
"""
from __future__ import annotations

import argparse
import ast
import collections
import csv
import fnmatch
import importlib
import json
import os
import re
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))

DEFAULT_INCLUDE = ["*.py", "*.ipynb"]
DEFAULT_EXCLUDE = ["setup.py", "*/setup.py", "docs/*conf.py", "tests/*", "test/*", "*/tests/*",
                   "test_*.py", "*/test_*.py", "test.py", "archive/*"]

# (repo, what it is, include patterns relative to the repository root). fnmatch patterns:
# '*' also crosses '/'. A codebase with no pattern list is read whole (minus DEFAULT_EXCLUDE).
SOURCES = [
    ("karpathy/nanoGPT", "GPT-2 from scratch with training script", None),
    ("karpathy/minGPT", "minimal GPT with trainer and demo notebooks", None),
    ("karpathy/ng-video-lecture", "'Let's build GPT' lecture code", None),
    ("karpathy/build-nanogpt", "'Let's reproduce GPT-2' lecture code", None),
    ("karpathy/nn-zero-to-hero", "course notebooks (makemore series)", None),
    ("karpathy/makemore", "character-level models up to a Transformer", None),
    ("karpathy/llama2.c", "Llama 2 model, training and exporter", None),
    ("karpathy/nanochat", "small ChatGPT-style model", ["nanochat/*.py", "scripts/*.py"]),
    ("harvardnlp/annotated-transformer", "The Annotated Transformer", None),
    ("d2l-ai/d2l-en", "Dive into Deep Learning: attention chapter (PyTorch tab) and library",
     ["d2l/torch.py", "chapter_attention-mechanisms-and-transformers/*.md"]),
    ("rasbt/LLMs-from-scratch", "book: Build a Large Language Model (From Scratch), ch. 2-7",
     ["ch0[2-7]/01_main-chapter-code/*"]),
    ("phlippe/uvadlc_notebooks", "UvA DL course: Transformers and Vision Transformer tutorials",
     ["docs/tutorial_notebooks/tutorial6/*", "docs/tutorial_notebooks/tutorial15/*"]),
    ("dataflowr/notebooks", "course notebooks: seq2seq attention, GPT, KV cache, LoRA",
     ["Module12/*", "llm/mingpt/*", "llm/nanogpt/*", "llm/KV_cache_empty.ipynb",
      "llm/Lora_empty.ipynb"]),
    ("Atcold/NYU-DLSP20", "NYU deep learning course: Transformer notebook", ["15-transformer.ipynb"]),
    ("labmlai/annotated_deep_learning_paper_implementations", "annotated transformer variants",
     ["labml_nn/transformers/*"]),
    ("pytorch/examples", "official examples: word language model, translation",
     ["word_language_model/*", "language_translation/*"]),
    ("bentrevett/pytorch-seq2seq", "seq2seq tutorials with attention", None),
    ("spro/practical-pytorch", "seq2seq translation with attention tutorial", ["seq2seq-translation/*"]),
    ("IBM/pytorch-seq2seq", "seq2seq framework with attention", None),
    ("keon/seq2seq", "minimal seq2seq with attention", None),
    ("graykode/nlp-tutorial", "NLP tutorials: seq2seq attention, Transformer, BERT", None),
    ("hyunwoongko/transformer", "Transformer from scratch", None),
    ("jadore801120/attention-is-all-you-need-pytorch", "Transformer from scratch", None),
    ("gordicaleksa/pytorch-original-transformer", "Transformer from scratch with notebook", None),
    ("SamLynnEvans/Transformer", "Transformer from scratch (blog companion)", None),
    ("tunz/transformer-pytorch", "Transformer implementation", None),
    ("hkproj/pytorch-transformer", "Transformer from scratch (video companion)", None),
    ("hkproj/pytorch-llama", "LLaMA from scratch (video companion)", None),
    ("sgrvinod/a-PyTorch-Tutorial-to-Transformers", "Transformer tutorial", None),
    ("sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning", "show, attend and tell tutorial", None),
    ("pbloem/former", "simple transformer (blog companion)", None),
    ("codertimo/BERT-pytorch", "BERT from scratch", None),
    ("affjljoo3581/GPT2", "GPT-2 from scratch", None),
    ("sooftware/attentions", "attention mechanisms collection", None),
    ("lucidrains/vit-pytorch", "Vision Transformer variants", ["vit_pytorch/*", "examples/*"]),
    ("lucidrains/x-transformers", "configurable transformer", ["x_transformers/*", "train_*.py"]),
    ("lucidrains/PaLM-pytorch", "PaLM from scratch", None),
    ("lucidrains/reformer-pytorch", "Reformer", None),
    ("lucidrains/linear-attention-transformer", "linear attention transformer", None),
    ("lucidrains/perceiver-pytorch", "Perceiver", None),
    ("jeonsworld/ViT-pytorch", "Vision Transformer", None),
    ("FrancescoSaverioZuppichini/ViT", "Vision Transformer notebook tutorial", None),
    ("omihub777/ViT-CIFAR", "Vision Transformer on CIFAR", None),
    ("facebookresearch/deit", "DeiT vision transformers", None),
    ("meta-llama/llama", "Llama reference model and generation", None),
    ("naklecha/llama3-from-scratch", "Llama 3 from scratch notebook", None),
    ("Lightning-AI/lit-llama", "LLaMA implementation with LoRA/adapters",
     ["lit_llama/*", "generate.py", "finetune/*", "pretrain/*"]),
    ("jzhang38/TinyLlama", "small Llama pretraining", ["lit_gpt/*", "pretrain/*"]),
    ("mistralai/mistral-inference", "Mistral reference model", ["src/*", "tutorials/*"]),
    ("openai/whisper", "Whisper encoder-decoder transformer", ["whisper/*"]),
    ("openai/CLIP", "CLIP with its text and vision transformers", ["clip/*", "notebooks/*"]),
    ("microsoft/LoRA", "LoRA layers", ["loralib/*"]),
]

# A method or attribute name that Tensor shares with Python's built-in types (str.index, str.split,
# dict.values, list.sort, set.add, int.real) or with most named objects (``.name``): a static read
# cannot tell a Tensor receiver from the far more common built-in one, so such a name is recorded
# with kind "ambiguous" (counts kept, no claim that the code meant a Tensor).
AMBIGUOUS = {"index", "values", "sort", "split", "add", "real", "imag", "name"}

# d2l's Markdown: ```{.python .input} blocks; a '%%tab x, y' (or '#@tab x') line names frameworks.
_FENCE = re.compile(r"```\{\.python \.input[^}]*\}\n(.*?)```", re.S)
_TAB = re.compile(r"^\s*(?:%%tab|#@tab)\s+(.*)$", re.M)


def _git_dir(mirrors, repo):
    base = os.path.join(mirrors, repo.replace("/", "+"), "repo")
    return os.path.join(base, ".git") if os.path.isdir(os.path.join(base, ".git")) else base


def _selected(path, patterns):
    if patterns is None:
        if any(fnmatch.fnmatch(path, p) for p in DEFAULT_EXCLUDE):
            return False
        return any(fnmatch.fnmatch(os.path.basename(path), p) for p in DEFAULT_INCLUDE)
    if any(fnmatch.fnmatch(path, p) for p in DEFAULT_EXCLUDE):
        return False
    ok_ext = path.endswith((".py", ".ipynb", ".md"))
    return ok_ext and any(fnmatch.fnmatch(path, p) for p in patterns)


def export(mirrors, dest):
    """Copy each codebase's selected files from its git snapshot into dest/owner+name/."""
    for repo, _what, patterns in SOURCES:
        git = _git_dir(mirrors, repo)
        if not os.path.isdir(git):
            print(f"missing snapshot: {repo}", file=sys.stderr)
            continue
        run = lambda *a: subprocess.run(["git", "--git-dir", git, *a], check=True,
                                        capture_output=True).stdout
        commit = run("rev-parse", "HEAD").decode().strip()
        files = [f for f in run("ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
                 if _selected(f, patterns)]
        out = os.path.join(dest, repo.replace("/", "+"))
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, ".census_commit"), "w") as fh:
            fh.write(commit + "\n")
        copied = 0
        for f in files:
            try:
                data = run("show", f"{commit}:{f}")
            except subprocess.CalledProcessError:
                print(f"  {repo}: {f} is absent from the snapshot (too large)", file=sys.stderr)
                continue
            target = os.path.join(out, f)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(data)
            copied += 1
        print(f"{repo}: {copied} files at {commit[:12]}")


# ---------------------------------------------------------------- parsing
def _strip_magics(src):
    lines = src.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        cell_magic = lines[0].split()[0]
        if cell_magic in ("%%bash", "%%sh", "%%html", "%%javascript", "%%latex", "%%markdown"):
            return ""
        lines = lines[1:]
    keep = []
    for line in lines:
        s = line.lstrip()
        if s.startswith(("%", "!")) or (s.endswith("?") and not s.startswith("#")):
            keep.append("")          # keep line numbers; drop IPython-only syntax
        else:
            keep.append(line)
    return "\n".join(keep)


def code_chunks(path, text):
    """The Python chunks of one file: the file, a notebook's code cells, d2l's PyTorch blocks."""
    if path.endswith(".ipynb"):
        try:
            nb = json.loads(text)
        except ValueError:
            return []
        cells = nb.get("cells") or [c for w in nb.get("worksheets", []) for c in w.get("cells", [])]
        out = []
        for c in cells:
            if c.get("cell_type") != "code":
                continue
            src = c.get("source", c.get("input", ""))
            out.append(_strip_magics("".join(src) if isinstance(src, list) else src))
        return out
    if path.endswith(".md"):
        out = []
        for block in _FENCE.findall(text):
            tab = _TAB.search(block)
            if tab and not re.search(r"\b(pytorch|all)\b", tab.group(1)):
                continue
            out.append(_strip_magics(_TAB.sub("", block)))
        return out
    return [text]


class FileCensus:
    """Names used by one file (a notebook's cells share one alias table, as its kernel does)."""

    def __init__(self, torch):
        self.torch = torch
        self.alias = {"torch": "torch"}     # local name -> dotted torch path
        self.other_modules = set()          # names bound by imports of other modules
        self.counts = collections.Counter()

    # a dotted torch path cut at its first non-module object; None when it does not resolve
    def resolve(self, dotted):
        parts = dotted.split(".")
        obj, path = self.torch, ["torch"]
        for p in parts[1:]:
            if not isinstance(obj, types.ModuleType):
                break
            nxt = getattr(obj, p, None)
            if nxt is None:
                try:
                    nxt = importlib.import_module(".".join(path + [p]))
                except Exception:
                    return None
            obj = nxt
            path.append(p)
        return ".".join(path), isinstance(obj, types.ModuleType)

    def record(self, dotted, from_import=False):
        r = self.resolve(dotted)
        if r is None:
            return
        name, is_module = r
        if is_module and not from_import:
            return
        kind = "module" if is_module else "torch"
        if any(p.startswith("_") for p in name.split(".")):
            kind = "private"
        self.counts[(kind, name)] += 1

    def scan_imports(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "torch" or a.name.startswith("torch."):
                        if a.asname:
                            self.alias[a.asname] = a.name
                        self.record(a.name, from_import=True)
                    else:
                        self.other_modules.add(a.asname or a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                mod = node.module
                for a in node.names:
                    local = a.asname or a.name
                    if a.name == "*":
                        continue
                    if mod == "torch" or mod.startswith("torch."):
                        dotted = f"{mod}.{a.name}"
                        r = self.resolve(dotted)
                        if r is not None:
                            self.alias[local] = r[0] if r[1] else dotted
                            self.record(dotted, from_import=True)
                    else:
                        self.other_modules.add(local)

    def chain(self, node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return list(reversed(parts))
        return None

    def scan_uses(self, tree):
        inner = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                inner.add(id(node.value))
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and id(node) not in inner and node.id in self.alias \
                    and isinstance(node.ctx, ast.Load) and self.alias[node.id] != "torch":
                self.record(self.alias[node.id])
            if not isinstance(node, ast.Attribute):
                continue
            parts = self.chain(node)
            torch_rooted = parts is not None and parts[0] in self.alias
            if torch_rooted and id(node) not in inner:
                self.record(".".join([self.alias[parts[0]]] + parts[1:]))
            if torch_rooted or (parts is not None and parts[0] in self.other_modules):
                continue
            # a method or attribute of some object that is not a module: Tensor's?
            m = node.attr
            static = _static_attr(self.torch.Tensor, m)
            if static is None or m.startswith("__"):
                continue
            is_data = _is_data(static)
            if id(node) in called and not is_data:
                self.counts[(_tensor_kind(m, "method"), "Tensor." + m)] += 1
            elif id(node) not in called and is_data and isinstance(node.ctx, ast.Load):
                self.counts[(_tensor_kind(m, "attribute"), "Tensor." + m)] += 1

    def scan(self, chunks):
        trees = []
        for src in chunks:
            try:
                trees.append(ast.parse(src))
            except (SyntaxError, ValueError):
                continue                    # Python 2 files, cells of other languages
        for t in trees:
            self.scan_imports(t)
        for t in trees:
            self.scan_uses(t)
        return len(trees)


def _is_data(attr):
    """A property or C getset (``shape``, ``grad``, ``T``) rather than a method."""
    return hasattr(attr, "__get__") and not callable(attr) or isinstance(attr, property)


def _tensor_kind(name, kind):
    if name.startswith("_"):
        return "private"
    if name in AMBIGUOUS:
        return "ambiguous"
    return kind


def _static_attr(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def build(src_dir):
    import torch
    sources, per_name = [], collections.defaultdict(collections.Counter)
    for repo, what, _patterns in SOURCES:
        folder = os.path.join(src_dir, repo.replace("/", "+"))
        if not os.path.isdir(folder):
            print(f"not exported: {repo}", file=sys.stderr)
            continue
        with open(os.path.join(folder, ".census_commit")) as fh:
            commit = fh.read().strip()
        files, parsed = [], []
        for root, _dirs, names in os.walk(folder):
            for n in names:
                if n.endswith((".py", ".ipynb", ".md")):
                    files.append(os.path.relpath(os.path.join(root, n), folder))
        for rel in sorted(files):
            with open(os.path.join(folder, rel), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            fc = FileCensus(torch)
            if fc.scan(code_chunks(rel, text)):
                parsed.append(rel)
            for key, n in fc.counts.items():
                per_name[key][repo] += n
        sources.append({"repo": repo, "what": what, "commit": commit,
                        "url": f"https://github.com/{repo}/tree/{commit}", "files": parsed})
    rows = sorted(((kind, name, len(c), sum(c.values()), ";".join(sorted(c)))
                   for (kind, name), c in per_name.items()),
                  key=lambda r: (-r[2], -r[3], r[1]))
    with open(os.path.join(HERE, "census_names.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["name", "kind", "codebases", "total", "used_by"])
        for kind, name, nrepo, total, used in rows:
            w.writerow([name, kind, nrepo, total, used])
    with open(os.path.join(HERE, "census_sources.json"), "w") as fh:
        json.dump({"torch_version": torch.__version__, "sources": sources}, fh, indent=1)
        fh.write("\n")
    print(f"{len(sources)} codebases, {sum(len(s['files']) for s in sources)} files, "
          f"{len(rows)} names ({sum(r[2] >= 2 for r in rows)} used by 2 or more codebases)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="copy the selected files out of local git snapshots")
    e.add_argument("--mirrors", required=True)
    e.add_argument("--dest", required=True)
    b = sub.add_parser("build", help="parse an exported folder and write the census")
    b.add_argument("src_dir")
    args = ap.parse_args(argv)
    if args.cmd == "export":
        export(args.mirrors, args.dest)
    else:
        build(args.src_dir)


if __name__ == "__main__":
    main()
