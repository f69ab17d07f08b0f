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
# convolution, pooling, batch norm (the functional forms are in nn/functional_conv.py)
from .conv import Conv1d, Conv2d, Conv3d, LazyConv1d, LazyConv2d, LazyConv3d  # noqa: F401,E402
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d  # noqa: F401,E402
from .resize import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401,E402
from .batchnorm import (  # noqa: F401,E402
    BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, SyncBatchNorm,
)
from .parallel import DataParallel  # noqa: F401  (torch.nn.DataParallel: calls the module itself on one CPU)
from .activations import (  # noqa: F401,E402
    CELU, ELU, GLU, PReLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6,
    Softmin, Softplus, Softshrink, Softsign, Tanhshrink, Threshold,
)
from .fold import Fold, Unfold  # noqa: F401,E402
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, RMSNorm  # noqa: F401,E402
from .pixel_shuffle import PixelShuffle, PixelUnshuffle  # noqa: F401,E402
from .channels_and_local import AlphaDropout, ChannelShuffle, FeatureAlphaDropout, LocalResponseNorm  # noqa: F401,E402
from .bilinear import Bilinear  # noqa: F401,E402
from .stochastic import Dropout1d, Dropout2d, Dropout3d  # noqa: F401,E402
from .more_losses import (  # noqa: F401,E402
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CosineSimilarity, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss,
    L1Loss, MarginRankingLoss, MultiLabelSoftMarginLoss, PairwiseDistance, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
)
from .shape_layers import (  # noqa: F401,E402
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, Unflatten, ZeroPad1d,
    ZeroPad2d, ZeroPad3d,
)
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401,E402
from .more_pooling import (  # noqa: F401,E402
    AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool3d, MaxPool3d,
)
from . import reset  # noqa: F401,E402  (reset_parameters of the standard layers)
from . import modules  # noqa: F401,E402  (torch.nn.modules.linear.Linear & co.: PyTorch's file paths, last)
from .count_and_margin_losses import (  # noqa: F401,E402
    MultiLabelMarginLoss, MultiMarginLoss, PoissonNLLLoss, TripletMarginWithDistanceLoss,
)
from .rrelu_and_lp_pool import LPPool1d, LPPool2d, RReLU  # noqa: F401,E402
