"""torch.nn.modules.rnn: recurrent layers, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCell"]

GRU = _nn.GRU
GRUCell = _nn.GRUCell
LSTM = _nn.LSTM
LSTMCell = _nn.LSTMCell
RNN = _nn.RNN
RNNCell = _nn.RNNCell
