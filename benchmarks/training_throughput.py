"""Training throughput of course_lib's Transformer relative to torch.nn.Transformer.

Both models get the same embeddings, positional encoding and output layer, the same
configuration (the tiny preset used to train the lesson-7 translator, with attention
biases and final norms so the stacks match exactly), the same batches and the same
optimizer. Steps alternate between the two models; the figure is the ratio of median
steps per second, ours / PyTorch's (goal: >= 0.9).

    python benchmarks/training_throughput.py [--steps 40] [--batch 64] [--length 12]
"""

import argparse
import math
import statistics
import time
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.model import Transformer, TransformerConfig
from course_lib.positional import PositionalEncoding

PAD = 0


class TorchTransformer(nn.Module):
    """nn.Transformer with the same embedding and output layers as course_lib's model."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.c = c
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.transformer = nn.Transformer(
            c.d_model,
            c.n_heads,
            c.n_encoder_layers,
            c.n_decoder_layers,
            c.d_ff,
            c.dropout,
            batch_first=True,
        )
        self.output_projection = nn.Linear(c.d_model, c.tgt_vocab_size)

    def forward(self, src, tgt):
        scale = math.sqrt(self.c.d_model)
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], dtype=torch.bool)
        h = self.transformer(
            self.positional(self.src_embed(src) * scale),
            self.positional(self.tgt_embed(tgt) * scale),
            tgt_mask=causal,  # PyTorch's polarity: True = blocked
            src_key_padding_mask=src == PAD,
            tgt_key_padding_mask=tgt == PAD,
            memory_key_padding_mask=src == PAD,
        )
        return self.output_projection(h)


def random_batch(c, batch, length, generator):
    src = torch.randint(4, c.src_vocab_size, (batch, length), generator=generator)
    tgt = torch.randint(4, c.tgt_vocab_size, (batch, length + 1), generator=generator)
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=generator)
    src[torch.arange(length)[None, :] >= lengths[:, None]] = PAD  # realistic padding
    return src, tgt[:, :-1], tgt[:, 1:]


def train_step(model, optimizer, batch) -> float:
    src, tgt_in, tgt_out = batch
    start = time.perf_counter()
    logits = model(src, tgt_in)
    loss = F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), label_smoothing=0.1, ignore_index=PAD
    )
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return time.perf_counter() - start


def main():
    # nn.Transformer warns about its own internals (nested tensors, mask types); not ours to fix.
    warnings.filterwarnings("ignore", category=UserWarning, module="torch")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--length", type=int, default=12)
    args = parser.parse_args()
    torch.manual_seed(0)
    c = TransformerConfig.tiny(120, 200, attention_bias=True, final_norm=True)
    ours, theirs = Transformer(c).train(), TorchTransformer(c).train()
    n_ours = sum(p.numel() for p in ours.parameters())
    n_theirs = sum(p.numel() for p in theirs.parameters())
    assert n_ours == n_theirs, (n_ours, n_theirs)
    opt_ours = torch.optim.Adam(ours.parameters(), lr=1e-4)
    opt_theirs = torch.optim.Adam(theirs.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(0)
    times_ours, times_theirs = [], []
    for step in range(args.steps + 5):
        batch = random_batch(c, args.batch, args.length, g)
        t_ours, t_theirs = train_step(ours, opt_ours, batch), train_step(theirs, opt_theirs, batch)
        if step >= 5:  # the first steps warm up allocators and kernels
            times_ours.append(t_ours)
            times_theirs.append(t_theirs)
    ms_ours, ms_theirs = statistics.median(times_ours) * 1e3, statistics.median(times_theirs) * 1e3
    ratio = ms_theirs / ms_ours
    print(
        f"Training step, tiny preset ({n_ours:,} parameters), batch {args.batch} x length "
        f"{args.length}, {torch.get_num_threads()} threads, median of {args.steps}"
    )
    print(
        f"  ours {ms_ours:.1f} ms/step  nn.Transformer {ms_theirs:.1f} ms/step  "
        f"throughput ratio {ratio:.2f} (goal >= 0.9: {'meets goal' if ratio >= 0.9 else 'MISSES goal'})"
    )


if __name__ == "__main__":
    main()
