"""tinyattn.nn: Module, Parameter, layers, attention, transformer, RNNs (re-exports only)."""
from .module import Module, ModuleList, Parameter, Sequential  # noqa: F401
from .layers import (  # noqa: F401
    GELU, Dropout, Embedding, Flatten, Identity, LayerNorm, LazyLinear, Linear, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax,
    Tanh,
)
from .containers import ModuleDict, ParameterDict, ParameterList  # noqa: F401
from .loss import CrossEntropyLoss, KLDivLoss, MSELoss, NLLLoss  # noqa: F401
from . import functional, init, parallel, utils  # noqa: F401
from .positional import PositionalEncoding, LearnedPositionalEmbedding, RotaryEmbedding  # noqa: F401
from .rnn import RNN, GRU, LSTM, RNNCell, GRUCell, LSTMCell  # noqa: F401
from .transformer import TransformerBlock, TransformerLM, TransformerClassifier, Seq2SeqTransformer  # noqa: F401
from .attention import Attention, KVCache  # noqa: F401
from .torch_transformer import (  # noqa: F401  (PyTorch's own layers, its layouts and mask meaning)
    MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)
