"""tinyattn.nn.utils.rnn: batching sequences of different lengths, as PyTorch's torch.nn.utils.rnn.

``pad_sequence`` stacks sequences into one tensor, filling the short ones with ``padding_value``.
``pack_padded_sequence`` keeps only the real steps, time step by time step (``PackedSequence``);
``pad_packed_sequence`` undoes it. Every one of them is indexing, ``cat`` and ``stack``, so gradients
flow back to the sequences, and padding positions get none.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...functions import cat, stack
from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence", "pad_sequence",
           "unpack_sequence", "unpad_sequence"]


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Sequences of shapes (L_i, *) into one tensor (T, B, *), or (B, T, *) with batch_first, T = max L_i.

    Every sequence takes the first one's dtype; the short ones are filled with ``padding_value`` on
    the right (or the left with ``padding_side='left'``). A tensor is read as the sequence of its rows."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences (pad_sequence needs at least one)")
    for i, s in enumerate(seqs):
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence: sequences[{i}] is a {type(s).__name__}, expected a Tensor (L, *)")
        if s.ndim == 0:
            raise RuntimeError(f"pad_sequence: sequences[{i}] is 0-d; each sequence needs a length dim (L, *)")
        if s.shape[1:] != seqs[0].shape[1:]:
            raise RuntimeError(f"pad_sequence: sequences[{i}] has shape {tuple(s.shape)}, but every sequence must be "
                               f"(L, {', '.join(map(str, seqs[0].shape[1:]))}) after its length, as sequences[0] "
                               f"{tuple(seqs[0].shape)}")
    dtype, T = seqs[0].dtype, max(s.shape[0] for s in seqs)
    rows = []
    for s in seqs:
        s = s.to(dtype)
        pad = Tensor(np.full((T - s.shape[0], *s.shape[1:]), padding_value, dtype=dtype))  # (T - L, *)
        rows.append(cat([s, pad] if padding_side == "right" else [pad, s]))  # (T, *)
    return stack(rows, dim=0 if batch_first else 1)  # (B, T, *) or (T, B, *)


class PackedSequence(NamedTuple):
    """The real steps of a batch of sequences, time step after time step: ``data`` (sum L_i, *) holds
    step 0 of every sequence, then step 1 of those at least 2 long, ...; ``batch_sizes[t]`` says how
    many sequences have a step t. Sequences are ordered longest first; ``sorted_indices`` maps that
    order to the batch's (None when the batch already was)."""
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


def _lengths(lengths, batch: int) -> np.ndarray:
    lens = np.asarray(lengths._data if isinstance(lengths, Tensor) else lengths)
    if lens.ndim != 1 or lens.dtype.kind not in "iu":
        raise TypeError(f"lengths must be a 1-D list or tensor of ints, got {lengths!r}")
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    if (lens <= 0).any():
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           f"that is <= 0: {lens.tolist()}")
    return lens.astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """A padded batch (T, B, *) (or (B, T, *) with batch_first) and each sequence's length into a
    ``PackedSequence``. With ``enforce_sorted`` the lengths must already decrease (longest first)."""
    x = input if batch_first else input.transpose(0, 1)  # (B, T, *)
    lens = _lengths(lengths, x.shape[0])
    if lens.max() > x.shape[1]:
        raise RuntimeError(f"pack_padded_sequence: a length is {lens.max()}, but the input has only {x.shape[1]} "
                           f"time steps (shape {tuple(input.shape)}, batch_first={batch_first})")
    sorted_idx = unsorted_idx = None
    if enforce_sorted:
        if (np.diff(lens) > 0).any():
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               f"to sidestep this requirement (got lengths {lens.tolist()})")
    else:
        order = np.argsort(-lens, kind="stable")  # longest first; ties keep the batch's order
        sorted_idx, unsorted_idx = Tensor(order), Tensor(np.argsort(order))
        x, lens = x[order], lens[order]  # (B, T, *) longest first
    batch_sizes = (lens[None, :] > np.arange(lens[0])[:, None]).sum(1)  # (T_max,): sequences with a step t
    ts, bs = np.nonzero(np.arange(lens[0])[:, None] < lens[None, :])  # the real (t, b), t-major: step by step
    return PackedSequence(x[bs, ts], Tensor(batch_sizes.astype(np.int64)), sorted_idx, unsorted_idx)  # (sum L, *)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """``pack_padded_sequence`` undone: the padded batch (T, B, *) (or (B, T, *)) and the lengths
    (int64, in the batch's original order). ``total_length`` pads to that many steps (at least the
    longest sequence's)."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence expects a PackedSequence, got {type(sequence).__name__}")
    data, sizes = sequence.data, sequence.batch_sizes._data
    T_max, B = len(sizes), int(sizes[0])
    T = T_max if total_length is None else total_length
    if T < T_max:
        raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                         f"but got total_length={total_length} and max sequence length being {T_max}")
    lens = (sizes[None, :] > np.arange(B)[:, None]).sum(1)  # (B,): longest first
    real = np.arange(T)[:, None] < lens[None, :]  # (T, B): True at a real step
    where = np.full((T, B), data.shape[0])  # every padding position reads the padding row, appended below
    where[real] = np.arange(data.shape[0])  # real steps in t-major order, as packed
    pad_row = Tensor(np.full((1, *data.shape[1:]), padding_value, dtype=data.dtype))  # (1, *)
    out = cat([data, pad_row])[where]  # (T, B, *)
    if sequence.unsorted_indices is not None:  # back to the batch's own order
        out, lens = out[:, sequence.unsorted_indices._data], lens[sequence.unsorted_indices._data]
    return (out.transpose(0, 1) if batch_first else out), Tensor(lens.astype(np.int64))  # (B, T, *) or (T, B, *)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """A list of sequences (L_i, *) straight into a ``PackedSequence``."""
    seqs = list(sequences)
    return pack_padded_sequence(pad_sequence(seqs), [s.shape[0] for s in seqs], enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list[Tensor]:
    """``pad_sequence`` undone: the list of sequences, each cut to its length."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)  # (B, T, *)
    return [x[b, :int(n)] for b, n in enumerate(_lengths(lengths, x.shape[0]))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """``pack_sequence`` undone: the list of sequences."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def run_packed(module, packed: PackedSequence, hx=None):
    """nn.RNN/GRU/LSTM on a PackedSequence, as PyTorch runs it: each sequence stops at its own length,
    so h_n is the state after its last real step, and the reverse direction starts there.

    Sequences of one length form one batch with no padding at all; the module runs once per distinct
    length, and the pieces are put back in the batch's order. Returns (PackedSequence of the outputs,
    h_n) — (h_n, c_n) for an LSTM — with h_n in the batch's original order, as PyTorch's."""
    padded, lengths = pad_packed_sequence(packed, batch_first=True)  # (B, T, in), lengths in batch order
    lens = lengths._data
    states = None if hx is None else (list(hx) if isinstance(hx, (tuple, list)) else [hx])  # each (L*D, B, H)
    outs, finals, order = [None] * len(lens), [], []
    for n in np.unique(lens):
        idx = np.flatnonzero(lens == n)  # the sequences n steps long
        x = padded[idx, :int(n)]  # (b, n, in): no padding
        sub = None if states is None else [s[:, idx] for s in states]  # each (L*D, b, H)
        out, h = module(x if module.batch_first else x.transpose(0, 1),
                        None if sub is None else (tuple(sub) if len(sub) > 1 else sub[0]))
        out = out if module.batch_first else out.transpose(0, 1)  # (b, n, D*H)
        for j, b in enumerate(idx):
            outs[b] = out[j]
        finals.append(h if isinstance(h, tuple) else (h,))
        order.extend(idx.tolist())
    back = np.argsort(order)  # the pieces were stacked by length; put the batch's order back
    h_n = tuple(cat([f[i] for f in finals], dim=1)[:, back] for i in range(len(finals[0])))  # each (L*D, B, H)
    out_packed = pack_padded_sequence(pad_sequence(outs, batch_first=True), lens, batch_first=True,
                                      enforce_sorted=packed.sorted_indices is None)
    return out_packed, (h_n if len(h_n) > 1 else h_n[0])
