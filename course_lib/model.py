"""The encoder-decoder Transformer (paper §3, Figure 1).

Shapes: B batch, S source length, T target length, D d_model, V vocabulary size,
H heads. Masks are boolean, ``True`` = may attend (see :mod:`course_lib.masks`), and go to
multi-head attention, so each is 2-D ``(T_q, T_k)`` or 4-D ``(B, H, T_q, T_k)`` (each axis
its full size or 1); a 3-D mask is rejected (see :class:`~course_lib.attention.MultiHeadAttention`).
"""

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from . import _validate, fast_training
from .attention import MultiHeadAttention, record_attention
from .data import PAD_ID
from .layers import PositionwiseFeedForward, ResidualSublayer
from .masks import padding_mask, target_mask
from .parameters import count_parameters  # re-exported
from .positional import PositionalEncoding


@dataclass
class TransformerConfig:
    """Hyper-parameters; the defaults are the paper's base model (Table 3)."""

    src_vocab_size: int = 37_000  # shared BPE vocabulary of WMT 2014 En-De (§5.1)
    tgt_vocab_size: int = 37_000
    d_model: int = 512  # model width (Table 3, base)
    n_heads: int = 8  # h; d_k = d_v = d_model / h = 64
    n_encoder_layers: int = 6  # N
    n_decoder_layers: int = 6  # N
    d_ff: int = 2048  # inner width of the feed-forward networks (§3.3)
    dropout: float = 0.1  # P_drop, on sub-layer outputs and embedding sums (§5.4)
    max_len: int = 5000  # rows of the positional-encoding table
    share_embeddings: bool = True  # one matrix for both embeddings and the pre-softmax layer (§3.4)
    attention_bias: bool = False  # §3.2.2 writes the projections as matrices, without biases
    norm_first: bool = False  # post-norm as in the paper; True gives pre-norm
    final_norm: bool = False  # a LayerNorm after each stack, as nn.Transformer always has
    fast_training: bool = True  # train on a CPU skipping source padding (fast_training.py)

    def __post_init__(self):
        sizes = ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads")
        sizes += ("n_encoder_layers", "n_decoder_layers", "d_ff", "max_len")
        for name in sizes:
            _validate.positive_int(name, getattr(self, name))
        _validate.divisible(self.d_model, self.n_heads)
        if self.d_model % 2:
            raise ValueError(
                "d_model must be even: the positional encoding pairs sin and cos; "
                f"got {self.d_model}"
            )
        _validate.probability("dropout", self.dropout)
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings needs src_vocab_size == tgt_vocab_size; "
                f"got {self.src_vocab_size} and {self.tgt_vocab_size}"
            )

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    @classmethod
    def big(cls, **overrides) -> "TransformerConfig":
        """The paper's big model (Table 3): d_model 1024, d_ff 4096, 16 heads, dropout 0.3."""
        return cls(**{"d_model": 1024, "d_ff": 4096, "n_heads": 16, "dropout": 0.3, **overrides})

    @classmethod
    def tiny(cls, src_vocab_size: int, tgt_vocab_size: int, **overrides) -> "TransformerConfig":
        """A model that trains in seconds on two CPU cores (about 250k parameters)."""
        tiny = dict(
            d_model=64,
            n_heads=4,
            n_encoder_layers=2,
            n_decoder_layers=2,
            d_ff=256,
            max_len=128,
            share_embeddings=False,
            attention_bias=True,
        )
        return cls(
            src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size, **{**tiny, **overrides}
        )


class EncoderLayer(nn.Module):
    """Self-attention, then a feed-forward network, each in a residual sub-layer."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(c.d_model, c.n_heads, c.dropout, c.attention_bias)
        self.ffn = PositionwiseFeedForward(c.d_model, c.d_ff, c.dropout)
        self.residual1 = ResidualSublayer(c.d_model, c.dropout, c.norm_first)
        self.residual2 = ResidualSublayer(c.d_model, c.dropout, c.norm_first)

    def forward(self, x, mask=None):
        x = self.residual1(x, lambda h: self.self_attn(h, h, h, mask)[0])
        return self.residual2(x, self.ffn)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder output, then a feed-forward network."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(c.d_model, c.n_heads, c.dropout, c.attention_bias)
        self.cross_attn = MultiHeadAttention(c.d_model, c.n_heads, c.dropout, c.attention_bias)
        self.ffn = PositionwiseFeedForward(c.d_model, c.d_ff, c.dropout)
        self.residual1 = ResidualSublayer(c.d_model, c.dropout, c.norm_first)
        self.residual2 = ResidualSublayer(c.d_model, c.dropout, c.norm_first)
        self.residual3 = ResidualSublayer(c.d_model, c.dropout, c.norm_first)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self.residual1(x, lambda h: self.self_attn(h, h, h, tgt_mask)[0])
        # Queries from the decoder; keys and values from the encoder output ("memory").
        x = self.residual2(x, lambda h: self.cross_attn(h, memory, memory, memory_mask)[0])
        return self.residual3(x, self.ffn)


class Encoder(nn.Module):
    """A stack of encoder layers, with an optional final LayerNorm. ``(B, S, D) -> (B, S, D)``."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(c) for _ in range(c.n_encoder_layers))
        self.norm = nn.LayerNorm(c.d_model) if c.final_norm else nn.Identity()

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class Decoder(nn.Module):
    """A stack of decoder layers, with an optional final LayerNorm. ``(B, T, D) -> (B, T, D)``."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.n_decoder_layers))
        self.norm = nn.LayerNorm(c.d_model) if c.final_norm else nn.Identity()

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask)
        return self.norm(x)


@dataclass
class Attentions:
    """Per-layer attention weights, each ``(B, H, T_q, T_k)``, for the explorers."""

    encoder: list = field(default_factory=list)  # encoder self-attention, (B, H, S, S)
    decoder_self: list = field(default_factory=list)  # causal self-attention, (B, H, T, T)
    cross: list = field(default_factory=list)  # decoder-to-encoder, (B, H, T, S)

    @classmethod
    def of(
        cls, model: "Transformer", src, tgt, src_mask=None, tgt_mask=None
    ) -> tuple[torch.Tensor, "Attentions"]:
        """Run ``model(src, tgt, src_mask, tgt_mask)``; return its logits and every layer's maps."""
        with record_attention(model) as maps:
            logits = model(src, tgt, src_mask, tgt_mask)
        layers = range(len(model.decoder.layers))
        return logits, cls(
            [maps[f"encoder.layers.{i}.self_attn"] for i in range(len(model.encoder.layers))],
            [maps[f"decoder.layers.{i}.self_attn"] for i in layers],
            [maps[f"decoder.layers.{i}.cross_attn"] for i in layers],
        )


class Transformer(nn.Module):
    """Encoder-decoder Transformer that maps source tokens and shifted target tokens to logits.

    Token embeddings are multiplied by sqrt(d_model) and summed with the positional
    encoding (§3.4, §3.5). With ``share_embeddings`` one matrix serves both embeddings and
    the pre-softmax layer; it is initialised with std d_model^-0.5 so that the scaled
    embeddings start with unit variance.

    Masks default to what the inputs imply, with ``PAD_ID`` as padding: source padding
    for the encoder and for cross-attention; causal and target padding for the decoder.

    Shape:
        src ``(B, S)``, tgt ``(B, T)`` integer ids -> logits ``(B, T, V)``.

        Masks, 2-D or 4-D as in :class:`~course_lib.attention.MultiHeadAttention`:
        ``src_mask`` broadcast to ``(B, H, S, S)``, ``tgt_mask`` to ``(B, H, T, T)`` and
        ``memory_mask`` to ``(B, H, T, S)``; e.g. ``padding_mask(src, PAD_ID)`` ``(B, 1, 1, S)``
        and ``target_mask(tgt, PAD_ID)`` ``(B, 1, T, T)``. ``forward`` reuses ``src_mask`` as
        the memory mask, so there it must hide keys only: ``(B, 1, 1, S)`` or ``(1, S)``.
    """

    def __init__(self, config: TransformerConfig | None = None):
        super().__init__()
        c = self.config = config or TransformerConfig()
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = (
            self.src_embed if c.share_embeddings else nn.Embedding(c.tgt_vocab_size, c.d_model)
        )
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.encoder = Encoder(c)
        self.decoder = Decoder(c)
        self.output_projection = nn.Linear(c.d_model, c.tgt_vocab_size)
        self._reset_parameters()
        if c.share_embeddings:
            self.output_projection.weight = self.tgt_embed.weight

    def _reset_parameters(self):
        for name, p in self.named_parameters():
            if "embed" in name:
                nn.init.normal_(p, std=self.config.d_model**-0.5)
            elif p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def _embed(self, tokens, table, name):
        _validate.token_ids(name, tokens)
        return self.positional(table(tokens) * math.sqrt(self.config.d_model))

    def encode(self, src, src_mask=None):
        """Source ids ``(B, S)`` -> memory ``(B, S, D)``."""
        x = self._embed(src, self.src_embed, "src")
        if src_mask is None:
            src_mask = padding_mask(src, PAD_ID)
        B, S = src.shape
        _validate.head_mask("src_mask", src_mask, (B, self.config.n_heads, S, S))
        return self.encoder(x, src_mask)

    def decode(self, tgt, memory, memory_mask=None, tgt_mask=None):
        """Target ids ``(B, T)`` and memory ``(B, S, D)`` -> logits ``(B, T, V)``.

        ``memory_mask`` is the source padding mask; without it every source position is visible.
        """
        x = self._embed(tgt, self.tgt_embed, "tgt")
        _validate.tensor("memory", memory, ndim=3, floating=True)
        (B, T), (S, width), H = tgt.shape, memory.shape[1:], self.config.n_heads
        if memory.shape[0] != B or width != self.config.d_model:
            raise ValueError(
                f"memory must have shape (B, S, d_model) = ({B}, S, {self.config.d_model}); "
                f"got {tuple(memory.shape)}"
            )
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, PAD_ID)
        _validate.head_mask("tgt_mask", tgt_mask, (B, H, T, T))
        _validate.head_mask("memory_mask", memory_mask, (B, H, T, S))
        return self.output_projection(self.decoder(x, memory, tgt_mask, memory_mask))

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        """Logits ``(B, T, V)``. For the attention maps, see :meth:`Attentions.of`."""
        _validate.token_ids("src", src)
        if fast_training.applies(self, src, src_mask):  # the same logits, less work for padding
            return fast_training.forward(self, src, tgt, tgt_mask)
        if src_mask is None:
            src_mask = padding_mask(src, PAD_ID)
        else:
            self._check_key_mask(src, src_mask)
        return self.decode(tgt, self.encode(src, src_mask), src_mask, tgt_mask)

    def _check_key_mask(self, src, src_mask):
        """``src_mask`` serves two attentions here: the encoder's, whose queries are the S source
        positions, and cross-attention, whose queries are the T target positions. Only a mask
        that hides keys the same way for every query (query axis 1) means the same in both;
        with T == S any other mask would be applied to the wrong queries without an error."""
        B, S = src.shape
        _validate.head_mask("src_mask", src_mask, (B, self.config.n_heads, S, S))
        if src_mask.shape[-2] != 1:
            raise ValueError(
                "src_mask must hide keys only, with shape (B, 1, 1, S) as from "
                "padding_mask(src, PAD_ID) or (1, S): forward also uses it for cross-attention, "
                f"whose queries are the target positions; got {tuple(src_mask.shape)}. For a "
                "mask that differs per query, call model.encode(src, src_mask) and "
                "model.decode(tgt, memory, memory_mask, tgt_mask)."
            )


class TextEncoder(nn.ModuleDict):
    """Embedding, positional encoding and an encoder stack: token ids ``(B, T)`` -> ``(B, T, D)``.

    The parts are reachable by name (``encoder["embedding"]`` or ``encoder.embedding``), so a
    lesson can scale the embeddings itself (§3.4) or read what each part does; ``forward``
    chains them as they are, without the √d_model scale.
    """

    def forward(self, tokens):
        return self["encoder"](self["positional"](self["embedding"](tokens)))


def make_encoder(
    vocab, d_model, n_heads, n_layers, d_ff, dropout=0.1, final_norm=False, max_len=512
) -> TextEncoder:
    """An encoder-only model as tutorials build it, for a text classifier or a parameter count.

    Linear layers with biases (as ``nn.MultiheadAttention``), post-norm layers, its own
    embedding and no output layer. Lessons 1 and 7 time it, count its parameters and probe
    what each position sees.
    """
    c = TransformerConfig(
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        d_model=d_model,
        n_heads=n_heads,
        n_encoder_layers=n_layers,
        d_ff=d_ff,
        dropout=dropout,
        max_len=max_len,
        share_embeddings=False,
        attention_bias=True,
        final_norm=final_norm,
    )
    return TextEncoder(
        {
            "embedding": nn.Embedding(vocab, d_model),
            "positional": PositionalEncoding(d_model, max_len, dropout),
            "encoder": Encoder(c),
        }
    )


class UnmaskedByDefault(Transformer):
    """A model as a popular tutorial writes it: without masks, every position sees every other.

    Lesson 7's errata: its training step passes no masks, so its decoder reads the future.
    """

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        see_all = torch.ones(1, 1, 1, 1, dtype=torch.bool, device=src.device)
        src_mask = see_all if src_mask is None else src_mask
        tgt_mask = see_all if tgt_mask is None else tgt_mask
        return super().forward(src, tgt, src_mask, tgt_mask)


__all__ = [
    "Attentions",
    "Decoder",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "TextEncoder",
    "Transformer",
    "TransformerConfig",
    "UnmaskedByDefault",
    "count_parameters",
    "make_encoder",
    "record_attention",
]
