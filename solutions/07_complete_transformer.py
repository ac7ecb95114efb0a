# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="598f429e"
# # Lesson 7 · The complete Transformer
#
# > "The Transformer follows this overall architecture using stacked self-attention and point-wise, fully connected layers for both the encoder and decoder." (paper §3)
#
# Lessons 3 to 6 built every part: attention, heads, positions, feed-forward networks, residuals and layer norm. This lesson puts them together into the encoder-decoder of the paper, trains it to translate English into French on your own CPU in well under a minute, decodes with greedy and beam search, and then opens it up to see which words each head looks at.
#
# **How to use this notebook.** Run the cells from top to bottom (Shift+Enter). Cells marked ✏️ are yours: replace the part under `# YOUR CODE HERE`, run the cell, then run the `check(...)` cell under it. A check never crashes; it says ✓ **Passed**, ✗ **Not yet** with what looks wrong, or … **Not done yet**. Stuck? `hint("7.2")` shows one hint each time you run it.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor; a function you write returns a number when it computes a count, a rate or a loss, and otherwise PyTorch tensors. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="e373ef94" tags=["nbval-ignore-output"]
import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from IPython.display import display
from torch import nn

from course_lib import notebook
from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import check, hint
from course_lib.corpus import translation_corpus
from course_lib.data import BOS_ID, EOS_ID, PAD_ID, collate, infinite_batches
from course_lib.decoding import greedy_decode
from course_lib.devices import available, choose
from course_lib.evaluation import corpus_bleu, exact_match, translate
from course_lib.experiments import linear_probe
from course_lib.experiments import translator as translator_claims
from course_lib.figure_text import describe_attention
from course_lib.layers import LayerNorm
from course_lib.masks import causal_mask, padding_mask, target_mask
from course_lib.model import (
    Encoder,
    EncoderLayer,
    Transformer,
    TransformerConfig,
    UnmaskedByDefault,
    count_parameters,
    make_encoder,
)
from course_lib.positional import PositionalEncoding, sinusoidal_encoding
from course_lib.pretrained import RECIPE, load_pretrained, new_model
from course_lib.replay import graded
from course_lib.training import (
    History,
    label_smoothed_cross_entropy,
    train,
    trained,
    warmup_inverse_sqrt,
)
from course_lib.typed_input import translate_typed
from course_lib.widgets import AttentionExplorer, draw_attention
from course_lib.widgets.model_examples import alignment, model_examples, sentence_attention

notebook.start(seed=0)

# %% [markdown] id="0d9daab8"
# ## Learning objectives
#
# By the end of this lesson you can:
#
# 1. assemble the encoder and decoder stacks from the earlier building blocks and name every sub-layer;
# 2. tell apart the three uses of attention: encoder self-attention, masked decoder self-attention and cross-attention;
# 3. describe how the model is trained (shifted targets and teacher forcing, cross-entropy, the warmup schedule, Adam's settings, label smoothing) and how it generates, one token at a time;
# 4. count the parameters of a layer and of a whole model;
# 5. choose between encoder-only, decoder-only and encoder-decoder models for a task, and use PyTorch's own modules.

# %% [markdown] id="92f39514"
# ## 1. The architecture
#
# **Two halves.** The **encoder** reads the whole source sentence at once and turns it into one vector per token, the *memory*. The **decoder** writes the translation one token at a time; at every step it looks at what it has written so far and consults the memory. Think of the encoder as a reader who has fully understood the English sentence and taken notes, and of the decoder as a writer who composes the French word by word, checking the reader's notes before each word.
#
# **The encoder** is a stack of N = 6 identical layers. Each has two sub-layers, (1) multi-head self-attention and (2) a position-wise feed-forward network, each wrapped in a residual connection followed by layer norm (Add & Norm). Every sub-layer outputs d_model = 512 numbers per token. All positions are processed in parallel, and higher layers build more abstract features from the ones below.
#
# **The decoder** is also N = 6 identical layers, with three sub-layers:
#
# 1. **masked** multi-head self-attention over the positions already written;
# 2. **cross-attention** ("encoder-decoder attention"): queries from the decoder, keys and values from the encoder's output. This is the bridge between the two stacks;
# 3. a position-wise feed-forward network.
#
# Like a novelist who, for every sentence, re-reads the chapters already written (masked self-attention), checks the research notes (cross-attention), then thinks hard about what comes next (feed-forward).
#
# **The three uses of attention** differ only in where the queries, keys and values come from, and in the mask:
#
# | Use | Queries | Keys and values | Mask |
# |---|---|---|---|
# | encoder self-attention | encoder layer l−1 | encoder layer l−1 | source padding only |
# | decoder self-attention | decoder layer l−1 | decoder layer l−1 | future positions and target padding |
# | cross-attention | decoder layer l−1 | the final encoder output | source padding only |
#
# **Around the stacks.** Source and target tokens have their own embedding tables, multiplied by √d_model; one sinusoidal positional encoding (lesson 5, with dropout) is added to both. On top of the decoder, a linear layer maps d_model to the target vocabulary, giving one logit per word; the softmax happens inside the loss. The base model uses d_model 512, 8 heads, 6 layers per stack, d_ff 2048 and dropout 0.1. The paper shares one matrix between the two embeddings and the pre-softmax layer (§3.4); `course_lib` does the same when `share_embeddings=True`.

# %% [markdown] id="9c38378f"
# ## 2. Worked example: "I eat" → "Je mange"
#
# A model small enough to follow by hand: d_model = 4, one encoder layer, and identity projections (W^Q = W^K = W^V = I) so that every number can be checked. The paper gives no embedding values for this example, so **the two embeddings below are chosen for this course**; the positional encodings are lesson 5's.
#
# **Step 1: embedding + positional encoding.** emb("I") = [0.5, −0.2, 0.1, 0.3] and emb("eat") = [−0.1, 0.4, 0.3, −0.2], taken as already scaled.

# %% id="625269e4"
emb = torch.tensor([[0.5, -0.2, 0.1, 0.3], [-0.1, 0.4, 0.3, -0.2]], dtype=torch.float64)
pe = sinusoidal_encoding(2, 4).double()  # PE_0 and PE_1 for d_model = 4
x = emb + pe
print("PE:\n", pe.numpy().round(3))
print("encoder input:\n", x.numpy().round(3))
assert torch.allclose(
    pe, torch.tensor([[0, 1, 0, 1], [0.841, 0.540, 0.010, 1.000]], dtype=torch.float64), atol=1e-3
)
assert torch.allclose(
    x,
    torch.tensor([[0.5, 0.8, 0.1, 1.3], [0.741, 0.940, 0.310, 0.800]], dtype=torch.float64),
    atol=1e-3,
)

# %% [markdown] id="37108b99"
# **Step 2: one encoder layer.** "I" and "eat" attend to each other, then the residual connection and layer norm (γ = 1, β = 0). The end of the cell runs the same sub-layer through `course_lib`'s own `EncoderLayer`, given one head and identity projections: it must give the same numbers.
#
# Three of these values lie almost exactly halfway between two 3-decimal numbers (1.05147, −1.39945 and −0.04248). Rounded once, as printed here, they are 1.051, −1.399 and −0.042; rounding a 4-decimal copy a second time would give 1.052, −1.400 and −0.043.

# %% id="684be32a"
scaled = x @ x.T / math.sqrt(4)  # queries = keys = values = x
weights = scaled.softmax(dim=-1)
attended = weights @ x
normed = LayerNorm(4).double()(x + attended)  # Add & Norm
print("scores / √4:\n", scaled.numpy().round(3))
print("weights:\n", weights.numpy().round(3))
print("attention output:\n", attended.numpy().round(3))
print("residual + LayerNorm:\n", normed.detach().numpy().round(3))
assert torch.allclose(
    scaled, torch.tensor([[1.295, 1.097], [1.097, 1.085]], dtype=torch.float64), atol=5e-4
)
assert torch.allclose(
    weights, torch.tensor([[0.549, 0.451], [0.503, 0.497]], dtype=torch.float64), atol=5e-4
)
assert torch.allclose(
    attended,
    torch.tensor([[0.609, 0.863, 0.195, 1.075], [0.620, 0.870, 0.204, 1.051]], dtype=torch.float64),
    atol=5e-4,
)
expected_norm = torch.tensor(
    [[-0.330, 0.398, -1.399, 1.332], [-0.042, 0.792, -1.618, 0.869]], dtype=torch.float64
)
assert torch.allclose(normed, expected_norm, atol=5e-4)

ref_out, ref_w = scaled_dot_product_attention(x, x, x)  # course_lib agrees
torch.testing.assert_close(ref_w, weights)
torch.testing.assert_close(ref_out, attended)
one_head = TransformerConfig(src_vocab_size=1, tgt_vocab_size=1, d_model=4, n_heads=1, d_ff=8)
layer = EncoderLayer(one_head).double().eval()
attention = layer.self_attn
with torch.no_grad():
    for projection in (attention.w_q, attention.w_k, attention.w_v, attention.w_o):
        projection.weight.copy_(torch.eye(4))  # W^Q = W^K = W^V = W^O = I
    first_sublayer = layer.residual1(x[None], lambda h: attention(h, h, h)[0])[0]
torch.testing.assert_close(first_sublayer, normed.detach())
near_halfway = [attended[1, 3].item(), normed[0, 2].item(), normed[1, 0].item()]
assert [round(v, 5) for v in near_halfway] == [1.05147, -1.39945, -0.04248]

# %% [markdown] id="88a1922f"
# The full layer then applies the feed-forward network, another residual and another layer norm, giving the encoder output "enc", one vector per English word.
#
# **Steps 3 and 4: the decoder.** To produce "Je" (position 0), the decoder reads only the start token plus PE_0; its masked self-attention has a single position, which attends to itself with weight 1. Cross-attention scores the two rows of "enc", and a trained model puts most weight on "I". The feed-forward network, the output layer and the softmax then give a distribution over French words, whose largest probability should be "Je". To produce "mange" (position 1), the decoder reads [start, "Je"]; the causal mask makes its self-attention weights [[1, 0], [w, 1 − w]], which for equal scores is:

# %% id="6b6fe729"
_, decoder_weights = scaled_dot_product_attention(
    torch.zeros(2, 4), torch.zeros(2, 4), torch.zeros(2, 4), causal_mask(2)
)
print(decoder_weights.numpy())
assert torch.equal(decoder_weights, torch.tensor([[1.0, 0.0], [0.5, 0.5]]))

# %% [markdown] id="fd742f80"
# In training both positions are computed in one parallel pass (teacher forcing: the decoder reads the true "Je", not its own guess), and the loss is −log P(Je) − log P(mange). At inference the encoder runs once and the decoder emits one token at a time. Section 6 shows a trained model's cross-attention doing exactly what steps 3 and 4 describe.

# %% [markdown] id="adff8fa4"
# ## 3. The model in code, its masks and its size
#
# `course_lib.model.Transformer` is the paper's Figure 1 built from lessons 3 to 6. Here is a tiny one and the masks it builds for a padded batch of two sentences from the course's English-to-French corpus (generated in code: 50,000 training pairs, and 1,000 held-out pairs whose verb-noun-adjective combination never occurs in training).

# %% id="8238ff56"
corpus = translation_corpus(seed=RECIPE.seed)
print(corpus)
print("one pair:", corpus.train[0])
pair = [("i eat the red apple", "je mange la pomme rouge"), ("she reads", "elle lit")]
batch = collate(corpus.encode(pair))
print("src:\n", batch.src.numpy())
print("decoder input (BOS + target):\n", batch.tgt_in.numpy())
print("labels (target + EOS):\n", batch.tgt_out.numpy())
assert batch.src.shape == (2, 5) and batch.tgt_in[0, 0] == BOS_ID and batch.tgt_out[0, -1] == EOS_ID

# %% [markdown] id="0a8bbab9"
# **Shifted targets.** The decoder input is the target shifted right by one (a start token BOS in front), and the labels are the target followed by EOS: at position t the decoder reads tokens 0..t−1 and must predict token t. For a target "BOS I am happy EOS" this means input "BOS I am happy" and labels "I am happy EOS".
#
# **The masks** (True = may attend). The encoder and cross-attention hide padded source positions; the decoder's self-attention hides future positions *and* target padding.

# %% id="7581c851"
src_mask = padding_mask(batch.src, PAD_ID)  # (B, 1, 1, S)
tgt_mask = target_mask(batch.tgt_in, PAD_ID)  # (B, 1, T, T)
print("source padding mask", tuple(src_mask.shape), "\n", src_mask[:, 0, 0].int().numpy())
print("target mask of 'elle lit'", tuple(tgt_mask.shape), "\n", tgt_mask[1, 0].int().numpy())

fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
src_words = ["i", "eat", "the", "red", "apple"]
short_src = ["she", "reads", "<pad>", "<pad>", "<pad>"]
tgt_words = ["<bos>", "je", "mange", "la", "pomme", "rouge"]
short_tgt = ["<bos>", "elle", "lit", "<pad>", "<pad>", "<pad>"]
panels = [
    (src_mask[1, 0].expand(5, 5), short_src, short_src, "encoder: 'she reads' (padding)"),
    (tgt_mask[0, 0], tgt_words, tgt_words, "decoder: causal"),
    (tgt_mask[1, 0], short_tgt, short_tgt, "decoder: causal + padding"),
]
for ax, (mask, rows, cols, title) in zip(axes, panels):
    ax.imshow(mask.float().numpy(), vmin=0, vmax=1)
    ax.set_xticks(range(len(cols)), cols, rotation=90)
    ax.set_yticks(range(len(rows)), rows)
    for i in range(len(rows)):
        for j in range(len(cols)):
            allowed = bool(mask[i, j])
            ax.text(
                j,
                i,
                "✓" if allowed else "×",
                ha="center",
                va="center",
                color="black" if allowed else "white",
            )
    ax.set(title=title, xlabel="key", ylabel="query")
fig.suptitle("Masks: ✓ = may attend, × = hidden")
plt.tight_layout()
allowed_pairs = "; ".join(
    f"{title}, {int(mask.sum())} of {mask.numel()} pairs allowed" for mask, _, _, title in panels
)
notebook.show(
    "Three grids of query (rows) against key (columns), ✓ where a query may attend to a key and "
    f"× where the key is hidden: {allowed_pairs}. Padding hides the columns of <pad> keys, the causal "
    "mask everything right of the diagonal."
)
assert src_mask[1, 0, 0].tolist() == [True, True, False, False, False]
assert torch.equal(tgt_mask[0, 0], causal_mask(6))
assert tgt_mask[1, 0, 2].tolist() == [True, True, True, False, False, False]
assert tgt_mask.any(dim=-1).all()  # every query row may attend to something

# %% [markdown] id="a4e74351"
# No row of these masks is all hidden: a padding query (the last rows of 'elle lit') still sees the real tokens before it, and the loss ignores what it predicts. A row with nothing to attend to, such as a source made only of padding, would give NaN with −∞ and a naive softmax; `course_lib` returns zeros for such rows (lesson 3).
#
# **Counting parameters.** The paper's Table 3 reports **65M** parameters for the base model and 213M for the big one. `count_parameters` sorts them by component. The models are built on PyTorch's `meta` device, which records shapes without allocating memory.

# %% id="4a793132"
with torch.device("meta"):  # shapes only: no memory, no time spent on random numbers
    base = count_parameters(Transformer(TransformerConfig()))
    untied = count_parameters(Transformer(TransformerConfig(share_embeddings=False)))
    big = count_parameters(Transformer(TransformerConfig.big()))
for name, counts in [
    ("base, shared embeddings", base),
    ("base, three matrices", untied),
    ("big, shared", big),
]:
    parts = ", ".join(f"{k} {v:,}" for k, v in counts.items() if k != "total")
    print(f"{name:>24}: {counts['total']:>12,}  ({parts})")
assert base["total"] == 63_082_632 and untied["total"] == 100_970_632
assert big["total"] == 214_208_648
vocab_for_65m = 37_000 + (65_000_000 - base["total"]) / 512  # each token adds one 512-row
print(f"shared vocabulary that would give 65M: about {vocab_for_65m:,.0f} tokens")
assert 40_500 < vocab_for_65m < 41_000

# %% [markdown] id="b934fe35"
# - **Base, shared: 63,082,632**, where the paper says 65M. The paper gives no breakdown. Its vocabulary was "about 37000" tokens: each extra 1,000 tokens adds 512,000 parameters, so about 40,700 tokens (computed above) would give 65M; rounding and counting conventions may also play a part.
# - **Base, three separate matrices: 100,970,632**, what a popular PyTorch version of the model counts, because it does not share the embeddings and the output layer: two 37,000 × 512 embeddings plus a 512 × 37,000 output layer with biases.
# - **Big: 214,208,648**, close to the paper's 213M.
# - Counting an encoder's weight matrices by hand (no biases, no layer norms) is exercise 7.2 below, for one of the paper's variants.
#
# > **Errata: a popular parameter table.** A widely reprinted table gives 4 × 512 × 512 per attention block and 2 × 512 × 2048 per feed-forward network: weights only. The code printed beside it gives its feed-forward networks biases (2,099,712 parameters per block, not 2,097,152) but not its attention, and it builds the base model with separate embeddings and output layer, hence 100,970,632 rather than the paper's 65M.

# %% id="3bc49da5"
from course_lib.layers import PositionwiseFeedForward

ffn_with_biases = sum(p.numel() for p in PositionwiseFeedForward(512, 2048).parameters())
print(
    f"one feed-forward network with biases: {ffn_with_biases:,} (weights only: {2 * 512 * 2048:,})"
)
assert ffn_with_biases == 2_099_712

# %% [markdown] id="c4495e87"
# ## 4. Training
#
# **The loss** is the cross-entropy of the labels, −log P(correct next token), averaged over the positions that are not padding. The logits (B, T, V) are flattened to (B·T, V) for it.
#
# **The learning-rate schedule** (paper §5.3, Eq. 3): lrate = d_model^−0.5 · min(step^−0.5, step · warmup^−1.5) with warmup = 4,000. It rises linearly for 4,000 steps, then falls as 1/√step. Early on, Adam's estimates of the gradients' second moments rest on very few samples, so large steps would be unstable: the warmup keeps the first steps small. Adam uses β₁ = 0.9, β₂ = 0.98, ε = 1e-9, with its base learning rate set to 1.0 so that the schedule's value *is* the learning rate.

# %% id="3c52345b"
table = {
    1: 1.747e-7,
    1000: 1.747e-4,
    2000: 3.494e-4,
    4000: 6.988e-4,
    8000: 4.941e-4,
    16000: 3.494e-4,
    20000: 3.125e-4,
    100000: 1.398e-4,
}
for step, expected in table.items():
    lr = warmup_inverse_sqrt(step, d_model=512, warmup=4000)
    print(f"step {step:>7,}: {lr:.3e}")
    assert abs(lr - expected) < 1e-3 * expected
steps = range(1, 20_001)
paper_lr = [warmup_inverse_sqrt(s, 512, 4000) for s in steps]
lesson_lr = [warmup_inverse_sqrt(s, 64, RECIPE.warmup) for s in steps]
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(steps, paper_lr, label="d_model 512, warmup 4,000")
ax.plot(steps, lesson_lr, "--", label=f"this lesson: d_model 64, warmup {RECIPE.warmup}")
ax.set(title="The warmup schedule (Eq. 3)", xlabel="step", ylabel="learning rate", yscale="log")
ax.legend()
peak = {name: max(zip(lr, steps)) for name, lr in (("paper", paper_lr), ("lesson", lesson_lr))}
notebook.show(
    f"Line chart, log scale: the learning rate of Eq. 3 against step, {steps[0]} to "
    f"{steps[-1]:,}. With d_model 512 and warmup 4,000 it rises to {peak['paper'][0]:.1e} at "
    f"step {peak['paper'][1]:,} and then falls as 1/√step, to {paper_lr[-1]:.1e}. This lesson's "
    f"schedule (d_model 64, warmup {RECIPE.warmup}) peaks at {peak['lesson'][0]:.1e} at step "
    f"{peak['lesson'][1]:,} and falls to {lesson_lr[-1]:.1e}."
)

# %% [markdown] id="f00d4e28"
# The paper's 4,000 warmup steps would not even reach the peak in the few seconds this lesson trains for, so it uses 100; with d_model = 64 the peak is higher too, since it scales as d_model^−0.5 · warmup^−0.5.
#
# **Label smoothing** (ε_ls = 0.1, §5.4): the target puts 1 − ε + ε/K on the true class and ε/K on each of the K classes otherwise. The model is never rewarded for full confidence. The paper notes this hurts perplexity but improves accuracy and BLEU. Lab L7.E does it by hand.
#
# **Training live.** The model is `course_lib`'s tiny preset with one layer per stack: d_model 64, 4 heads, 1 + 1 layers, d_ff 256, about 150,000 parameters (counted below), and dropout 0.05, half the paper's. This small grammar needs no more: two layers per stack reach the same accuracy with steps about twice as slow (`python benchmarks/train_translator.py --layers 2`). The training loop (`course_lib.training.train`) does, for each batch of 128 pairs: forward with both masks, label-smoothed loss, backward, clip the gradient norm at 1.0, Adam step, schedule step. The budget is fixed at 250 steps, about 10 seconds on one CPU thread.
#
# **Checkpoint averaging** (paper §6.1: the base models average their last 5 checkpoints). While the learning rate is still high, each step moves the weights back and forth around a good point, so held-out accuracy goes up and down from one checkpoint to the next. `train(..., average=8)` ends with the mean of the weights at the last 8 checkpoints, taken every 10 steps from step 180 to step 250, which smooths that out.
#
# Set `TRAIN_LIVE = False` to skip training and load the checkpoint that ships with the course instead: it was trained with exactly this recipe (`python -m course_lib.pretrained` regenerates it), so everything below works either way. If you stop the training cell halfway, the cells that need a trained model say so (`trained(history)`) instead of using a half-trained one: run the training cell again, or set `TRAIN_LIVE = False`. **What is reproducible.** Run again on the same kind of processor with the same number of threads (the notebook uses one), training gives the same weights, bit for bit. On another processor, or with another thread count, PyTorch and its math library pick other CPU kernels, the last bits of every sum differ, and after a few hundred steps the weights differ too: the same accuracy, not the same bits. That is why this lesson asserts only what holds with a margin on every processor (checked over several seeds and kernel settings by the course's tests), and why the shipped checkpoint may not match what your own training produces.
#
# **On a GPU.** `DEVICE = "cuda"` (an NVIDIA GPU) or `"mps"` (Apple silicon) trains and translates there; the next cell says which devices this machine has. Everything below works the same, since `course_lib` computes on the device of the model it is given. What changes: the last bits of every result (a GPU sums in another order, and not always in the same order twice, so two runs differ slightly), and probably not the speed: this tiny model's steps are too small to keep a GPU busy, which pays off at the paper's sizes. The lesson stays on the CPU by default, where a run can be repeated bit for bit.

# %% id="a55423be"
TRAIN_LIVE = not graded()  # a grader loads the checkpoint: it grades your answers, not this
DEVICE = "cpu"  # or "cuda" / "mps", where this machine has one (see above)

# %% id="1d808780" tags=["nbval-ignore-output"]
print(f"training on {DEVICE}; this machine has: {', '.join(available())}")
src_vocab, tgt_vocab = corpus.src_vocab, corpus.tgt_vocab
if TRAIN_LIVE:
    # Bound before training starts: if you stop the cell, `history` says how far it got
    # (`trained(history)` is then False), and no earlier run's curves stay behind.
    history = History()
    # the seed fixes the initial weights; they are drawn on the CPU, then moved
    model = new_model(corpus, seed=RECIPE.seed).to(choose(DEVICE))
    train(
        model,
        infinite_batches(corpus.train_ids, RECIPE.batch_size, seed=RECIPE.seed),
        RECIPE.steps,
        warmup=RECIPE.warmup,
        smoothing=RECIPE.smoothing,
        average=RECIPE.average,  # the mean of the weights at steps 180, 190, ..., 250
        average_every=RECIPE.average_every,
        history=history,
    )
    print(
        f"{RECIPE.steps} steps in {history.seconds:.1f} s; last step's loss {history.loss[-1]:.3f}"
    )
else:
    history = None  # no curves: the checkpoint was trained before
    model = load_pretrained(device=DEVICE).model
    print("loaded the pretrained checkpoint")
print(f"{sum(p.numel() for p in model.parameters()):,} parameters")

# %% id="1c19d627" tags=["nbval-ignore-output"]
if history is None:
    print("TRAIN_LIVE is False: no curves (the checkpoint was trained with the same recipe)")
elif trained(history):
    fig, (ax_loss, ax_lr) = plt.subplots(1, 2, figsize=(10, 3.2))
    ax_loss.plot(history.step, history.loss)
    ax_loss.set(title="Training loss", xlabel="step", ylabel="label-smoothed cross-entropy")
    ax_lr.plot(history.step, history.lr)
    ax_lr.set(title="Learning rate", xlabel="step", ylabel="lr")
    plt.tight_layout()
    top_lr, top_step = max(zip(history.lr, history.step))
    notebook.show(
        f"Two line charts against training step, {history.step[0]} to {history.step[-1]}. Left, "
        f"the label-smoothed cross-entropy, from {history.loss[0]:.2f} to {history.loss[-1]:.2f}. "
        f"Right, the learning rate, rising to {top_lr:.1e} at step {top_step} and then decaying."
    )
    losses = translator_claims.loss_measures(history)
    print(translator_claims.EXPERIMENT.verify(losses, *losses))
    K, eps = len(tgt_vocab), RECIPE.smoothing
    best = -(
        (1 - eps + eps / K) * math.log(1 - eps + eps / K) + (K - 1) * eps / K * math.log(eps / K)
    )
    print(
        f"last step's loss {history.loss[-1]:.3f}; the lowest possible with label smoothing over {K} words: {best:.3f}"
    )

# %% [markdown] id="6e79e3d4"
# The loss does not fall to 0: with label smoothing the lowest possible loss is the entropy of the smoothed target (printed above), because even a perfect prediction is scored against a target that spreads ε over every word.
#
# **Does it translate?** Greedy decoding on the 1,000 held-out sentences, none of which occurs in training, then exact match and corpus BLEU (sacrebleu).

# %% id="6d57b86b" tags=["nbval-ignore-output"]
if trained(history):
    sources = [en for en, _ in corpus.test]
    references = [fr for _, fr in corpus.test]
    start = time.perf_counter()
    greedy = translate(model, sources, src_vocab, tgt_vocab)
    accuracy, bleu = exact_match(greedy, references), corpus_bleu(greedy, references)
    print(
        f"held-out exact match {accuracy:.1%}, BLEU {bleu:.1f} ({time.perf_counter() - start:.1f} s)"
    )
    for en, fr, out in list(zip(sources, references, greedy))[:5]:
        print(f"  {en!r} -> {out!r} {'✓' if out == fr else '✗ expected ' + repr(fr)}")

# %% id="2d535bcb"
if trained(history):
    measured = {"exact_match": accuracy, "bleu": bleu}
    print(translator_claims.EXPERIMENT.verify(measured, "exact_match", "bleu"))

# %% [markdown] id="c20e2b48"
# **Greedy versus beam search.** Greedy takes the most probable word at every step; beam search (paper §6.1: 4 beams, length penalty α = 0.6) keeps the 4 best partial translations. On this clean grammar the most probable next word is almost always right, so both should do equally well; on real data, where several wordings compete, the beam usually scores a little higher, which is why the paper used it. Same 100 sentences for both:

# %% id="1a80737f" tags=["nbval-ignore-output"]
if trained(history):
    few_sources, few_references = sources[:100], references[:100]
    for method in ("greedy", "beam"):
        start = time.perf_counter()
        outputs = translate(model, few_sources, src_vocab, tgt_vocab, method=method)
        print(
            f"{method:>6}: exact match {exact_match(outputs, few_references):.0%}, BLEU {corpus_bleu(outputs, few_references):.1f}, {time.perf_counter() - start:.1f} s"
        )
        measured[f"{method}_first_100"] = exact_match(outputs, few_references)

# %% id="1d867c2a"
if trained(history):
    print(translator_claims.EXPERIMENT.verify(measured, "greedy_first_100", "beam_first_100"))

# %% [markdown] id="0a48f50b"
# **Your own sentences.** Type English using the corpus's words (subjects like *i, you, she, my sister, the girls*; verbs like *eat, see, like, buy, read, open*; nouns like *apple, car, book, hat, flower*; colours like *red, green, blue, black, white*). A word the model never saw is reported, with look-alikes when there are some.

# %% id="c7ec73e5" tags=["nbval-ignore-output"]
if trained(history):
    for text in [
        "my sister likes the blue car",
        "we do not buy any yellow hats",
        "they want a red apple and a green bike",
        "i eat the red aple",
        "hello world",
    ]:
        print(translate_typed(model, text, src_vocab, tgt_vocab))

# %% id="9a9a99b1" tags=["nbval-ignore-output"]
your_sentence = "the girls open my black bag"  # change me
if trained(history):
    print(translate_typed(model, your_sentence, src_vocab, tgt_vocab))

# %% [markdown] id="fe9b533d"
# ## 5. Why inference is sequential
#
# In training, the whole target is known, so one masked pass computes every position at once. When generating, token t does not exist until the model has chosen it, and it is an input of step t + 1. Below: the same 100 sentences, generated greedily (one decoder call per output token), and then scored in **one** teacher-forced pass over the generated tokens. The calls are counted with a hook on `model.decode`.

# %% id="d466ef1b"
if trained(history):
    calls = []
    original_decode = model.decode
    model.decode = lambda *args, **kwargs: (
        calls.append(1) or original_decode(*args, **kwargs)
    )  # count, then decode
    src = collate([(s, [0]) for s, _ in corpus.encode(corpus.test[:100])]).src.to(DEVICE)
    start = time.perf_counter()
    generated = greedy_decode(model, src)
    greedy_seconds, greedy_calls = time.perf_counter() - start, len(calls)
    tgt_in = torch.cat([torch.full((100, 1), BOS_ID, device=DEVICE), generated[:, :-1]], dim=1)
    start = time.perf_counter()
    with torch.no_grad():
        logits = model(src, tgt_in)
    forced_seconds = time.perf_counter() - start
    del model.decode  # back to the class's method
    # How many calls depends on how long this model's longest output is; one per token does not.
    print("greedy: one sequential decoder call per output token, up to the longest output")
    print(f"teacher forcing: {len(calls) - greedy_calls} call")
    done = generated != PAD_ID
    assert greedy_calls == generated.shape[1] and len(calls) - greedy_calls == 1
    measured["teacher_forced_agreement"] = translator_claims.agreement(logits, generated, done)
    print(translator_claims.EXPERIMENT.verify(measured, "teacher_forced_agreement"))

# %% id="3056000c" tags=["nbval-ignore-output"]
if trained(history):
    print(
        f"greedy: {greedy_calls} sequential decoder calls for outputs of up to {generated.shape[1]} tokens"
    )
    print(
        f"greedy decoding {greedy_seconds * 1000:.0f} ms vs one teacher-forced pass {forced_seconds * 1000:.0f} ms ({greedy_seconds / forced_seconds:.0f}x)"
    )

# %% [markdown] id="7e6d94e1"
# One pass gives the same tokens as generating them one by one, and it is many times faster: that is why training is parallel. Generation cannot be, because it must wait for each token before computing the next. Work *within* a step still runs in parallel, the encoder runs only once, and real systems cache past keys and values (the KV cache) to avoid recomputing them; but the number of sequential steps equals the output length.

# %% [markdown] id="702ecbb2"
# ## 6. Look inside
#
# **Cross-attention shows the word order change.** English puts the adjective before the noun, French after it. Below, the last decoder layer's cross-attention for "i eat the red apple", averaged over the 4 heads: each row is the French word being written, each column an English word.

# %% id="6a24c5c0" tags=["nbval-ignore-output"]
if trained(history):
    apple = sentence_attention(model, "i eat the red apple", src_vocab, tgt_vocab)
    cross = apple.cross[-1].mean(dim=0)  # (T, S), heads averaged
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    draw_attention(
        ax, cross, apple.written, apple.source, title="Cross-attention, last layer, heads averaged"
    )
    ax.set(xlabel="English source (keys)", ylabel="French being written (queries)")
    what = "the last decoder layer's cross-attention weights, heads averaged"
    notebook.show(describe_attention(cross, apple.written, apple.source, what=what))
    aligned = alignment(apple.cross[-1], apple.written, apple.source)
    print(
        " ".join(apple.written[:-1]),
        "|",
        ", ".join(f"{fr} → {aligned[fr]}" for fr in ("je", "mange", "pomme", "rouge")),
    )

# %% [markdown] id="183fb95d"
# "pomme" looks at "apple" and "rouge" at "red": the attention crosses over, which is the reordering. Just as the worked example predicted, "je" looks at "i" and "mange" at "eat". What the article *la* looks at is counted over many sentences further down.

# %% [markdown] id="8f7fa575"
# One sentence can mislead: where two source words get almost the same weight, the choice between them can flip from one processor to another. So the same reading, over every noun-adjective pair the corpus has ("i see the ADJ NOUN": 22 nouns times 12 adjectives), counting the sentences translated exactly (about 10 s). The cell below checks, together, everything this lesson has concluded from its training run:

# %% id="81b8c963"
if trained(history):
    readings = translator_claims.exact_readings(model, src_vocab, tgt_vocab)  # the exact ones
    measured.update(translator_claims.cross_alignment(model, src_vocab, tgt_vocab, readings))
    # every conclusion this lesson draws from its run, together:
    print(translator_claims.EXPERIMENT.verify(measured, *measured))

# %% [markdown] id="4f0c2a7e"
# **And the articles?** The French article needs its noun, whose gender decides between *le* and *la*. Does its attention go to the English noun, or to "the"? Over the same sentences:

# %% id="9d3b6e51" tags=["nbval-ignore-output"]
if trained(history):
    articles = translator_claims.article_alignment(readings)
    print(
        f"over the {articles['sentences']} sentences translated exactly, the article (le or la) "
        f"looks hardest at 'the' in {articles['the']:.0%} of them, at the English noun in "
        f"{articles['noun']:.0%}, elsewhere in {articles['other']:.0%}"
    )

# %% [markdown] id="6a8e0f14"
# Looking at "the" does not mean ignoring the noun: in the encoder, "the" has already attended to the rest of the sentence, so its vector can carry the noun's gender. The share above is what this model does, on this processor; it is no claim of the lesson's, and it can differ from run to run, since nothing in training asks the article to look at one word rather than the other.

# %% [markdown] id="5188bac1"
# **The worked example's loss, on the trained model.** In training, every position of the translation is scored in one teacher-forced pass: the decoder reads `<bos> je mange la pomme rouge`, and the loss adds −log P of each correct next word, starting with −log P(je) − log P(mange).

# %% id="5df851fe" tags=["nbval-ignore-output"]
if trained(history):
    english, french = "i eat the red apple", "je mange la pomme rouge"
    tf_src = torch.tensor([src_vocab.encode(english)], device=DEVICE)  # (1, S)
    # (1, T): shifted right
    tf_in = torch.tensor([[BOS_ID, *tgt_vocab.encode(french)]], device=DEVICE)
    tf_labels = torch.tensor([*tgt_vocab.encode(french), EOS_ID])  # (T,)
    model.eval()
    with torch.no_grad():
        probs = model(tf_src, tf_in).softmax(dim=-1)[0].cpu()  # (T, V), all positions at once
    p_right = probs[torch.arange(len(tf_labels)), tf_labels]
    print(
        ", ".join(f"P({tgt_vocab.itos[i]}) = {p:.2f}" for i, p in zip(tf_labels.tolist(), p_right))
    )
    print(
        f"-log P(je) - log P(mange) = {-p_right[:2].log().sum():.3f}; whole sentence {-p_right.log().sum():.3f}"
    )
    # the right word is the most probable at every position
    assert torch.equal(probs.argmax(dim=-1), tf_labels)

# %% [markdown] id="61d7f04b"
# **The explorer.** Every map of three sentences: encoder self-attention, decoder self-attention (causal: the upper triangle is empty; on those maps the causal-mask box is ticked and greyed out, since the model's weights are masked already) and cross-attention, in the one layer of each stack; pick a sentence, a kind of attention and a head with the buttons. Compare the heads: some track the previous word, some the noun of the phrase.

# %% id="cc4ea797" tags=["nbval-ignore-output"]
if trained(history):
    examples = model_examples(
        model,
        [
            "i eat the red apple",
            "my sister does not like the green cars",
            "they buy a blue hat and a white dress",
        ],
        src_vocab,
        tgt_vocab,
    )
    last_layer = len(model.decoder.layers)
    explorer = AttentionExplorer(
        examples,
        facets=("sentence", "attention", "layer"),  # the parts of each map's name
        example=f"i eat the red apple · cross-attention · layer {last_layer}",
    )
    display(explorer)

# %% [markdown] id="34e8dd65"
# ## 7. Results of the paper, and the families it started
#
# - The big Transformer reached **28.4 BLEU** on WMT 2014 English→German, more than 2 BLEU above the best earlier systems, ensembles included (BLEU measures n-gram overlap with reference translations; an ensemble averages several models).
# - The base model trained in **12 hours on 8 GPUs**, for **3.3 × 10¹⁸** FLOPs: a small fraction of the training cost of the best earlier models.
# - The same architecture, unchanged, did well at English constituency parsing.
#
# > **Errata: "3-60× cheaper".** A popular summary says the Transformer was "3-60× cheaper" than competing approaches. No such range appears in the paper. Its Table 2 gives training costs from which specific ratios follow, for English→German: ConvS2S 9.6 × 10¹⁸ FLOPs and GNMT+RL 2.3 × 10¹⁹, against 3.3 × 10¹⁸ for the base Transformer.

# %% id="13fd0a8e"
base_flops, convs2s_flops, gnmt_flops = 3.3e18, 9.6e18, 2.3e19  # paper, Table 2, English→German
print(
    f"ConvS2S costs {convs2s_flops / base_flops:.1f}x and GNMT+RL {gnmt_flops / base_flops:.1f}x the base Transformer"
)
assert round(convs2s_flops / base_flops) == 3 and round(gnmt_flops / base_flops) == 7

# %% [markdown] id="ffd3f4be"
# Our exact match over 99% and BLEU over 90 are on a rule-generated language with a few hundred words, not comparable with WMT; they show the machinery working, not state-of-the-art translation.
#
# **Three families** grew from the two halves:
#
# | | Encoder-only (BERT) | Decoder-only (GPT) | Encoder-decoder (T5) |
# |---|---|---|---|
# | attention | bidirectional | causal, left to right | encoder bidirectional, decoder causal |
# | generates text? | no | yes | yes |
# | typical tasks | classification, NER, QA | chat, completion, LLMs | translation, summarisation |
# | pre-training | masked LM | next-token LM | span corruption / seq2seq |
# | cross-attention? | no | no | yes |
#
# The family tree: the Transformer (2017, encoder-decoder, translation); BERT (2018, encoder); GPT-2/3/4 (2019-2023, decoder; scale and few-shot ability, and for the chat models alignment with human feedback, which the base GPT-2 and GPT-3 did not have); T5 (2020, encoder-decoder, every task as text-to-text); ViT (2020, encoder, image patches as tokens); LLaMA and Mistral (2023, decoder, open weights). Modern models swap sinusoids for RoPE, LayerNorm for RMSNorm, ReLU for SwiGLU, share key/value heads across query heads (grouped-query attention) and use I/O-aware kernels such as Flash Attention; the attention operation itself is unchanged.

# %% [markdown] id="8d1deb93"
# ## 8. Exercises
#
# The references of the exercises wait in section 10, after the last one: try each exercise before you read its reference.
#
# ### ✏️ 7.1 Recall: the decoder's sub-layers
#
# Which list gives the decoder's sub-layers in order, and names the one that links the decoder to the encoder?
#
# - **a.** self-attention, feed-forward network, cross-attention; the feed-forward network links the two.
# - **b.** masked self-attention, feed-forward network, cross-attention; the mask opens the path to the encoder.
# - **c.** cross-attention, masked self-attention, feed-forward network; masked self-attention links the two.
# - **d.** masked self-attention, cross-attention, feed-forward network; cross-attention links the two.

# %% id="5a332cb7"
# BEGIN SOLUTION
answer_7_1 = "d"
# END SOLUTION

# %% id="dafd0dbd"
check("7.1", answer_7_1)

# %% [markdown] id="aaa5fa5a"
# ### ✏️ 7.2 Apply: parameters of a wider encoder
#
# The paper's Table 3 also trains variants of the base model. Take the one with a wider feed-forward network, d_ff = 4,096 (row C), and everything else as in the base model: d_model 512, 8 heads with d_k = 64, 6 layers. Count the parameters of one of its encoder layers and of its 6-layer encoder, **ignoring biases and layer norms**. Store the two numbers in `encoder_layer_weights` and `encoder_weights`.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="0919596f"
# BEGIN SOLUTION
attention_weights = 3 * 8 * (512 * 64) + 512 * 512  # W^Q, W^K, W^V for 8 heads, plus W^O
ffn_weights = 512 * 4096 + 4096 * 512  # the variant's wider FFN
encoder_layer_weights = attention_weights + ffn_weights
encoder_weights = 6 * encoder_layer_weights
# END SOLUTION

# %% id="39fba3e2"
check("7.2", encoder_layer_weights, encoder_weights)

# %% [markdown] id="c817f7c2"
# ### ✏️ 7.3 Extend: why is inference sequential?
#
# Why can't generation be parallelised the way training is?
#
# - **a.** The causal mask hides later positions, so one forward pass of the decoder can compute only one position.
# - **b.** Each new token is an input of the next step, so it must be chosen before that step can run.
# - **c.** The encoder must run again after every new token, because its memory changes with each word written.
# - **d.** The activations of a whole output would not fit in memory at once, so positions are computed one by one.

# %% id="b0562e05"
# BEGIN SOLUTION
answer_7_3 = "b"
# END SOLUTION

# %% id="1ca9bcd3"
check("7.3", answer_7_3)

# %% [markdown] id="c0ab967b"
# ## 9. Labs
#
# ### ✏️ 7.4 (L7.A) A parameter-counting tool
#
# A widely used tutorial builds an encoder with vocabulary 10,000, d_model 512, 8 heads, 6 layers and d_ff 2048 (linear layers with biases, two layer norms per block, no final norm) and predicts that the feed-forward networks hold most of its parameters. `make_encoder` (from `course_lib.model`) builds it from the course's pieces: an embedding, the positional encoding and an `Encoder` stack. Write `parameter_breakdown(model)` returning a dict with the keys `"embeddings"`, `"attention"`, `"feed_forward"`, `"norms"` and `"total"`. Every parameter's name says where it lives (print `[n for n, _ in model.named_parameters()][:8]` to see them).
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="a1785745"
tutorial_encoder = make_encoder(10_000, 512, 8, 6, 2048)
print([name for name, _ in tutorial_encoder.named_parameters()][:8])


# %% id="832a7958"
def parameter_breakdown(model):
    """Parameters by component: embeddings, attention, feed_forward, norms and total."""
    # BEGIN SOLUTION
    parts = {"embeddings": "embed", "attention": "attn", "feed_forward": "ffn", "norms": "norm"}
    counts = dict.fromkeys([*parts, "total"], 0)
    for name, p in model.named_parameters():
        for key, word in parts.items():
            if word in name:
                counts[key] += p.numel()
                break
        counts["total"] += p.numel()
    return counts
    # END SOLUTION


# %% id="4e36888e"
check("7.4", parameter_breakdown)


# %% [markdown] id="d6ae3146"
# ### ✏️ 7.5 (L7.B) Every position influences every other
#
# Write `influence(encoder, tokens, zeroed, probe)`: encode `tokens` (B, T) with an encoder from `make_encoder`, then encode them again with the (scaled) embedding of position `zeroed` set to zero **before** the positional encoding is added, and return the L2 distance between the two outputs at position `probe`, one per sequence, shape (B,). Switch dropout off first (`encoder.eval()`), or dropout noise alone makes the outputs differ. The embedding scale is √d_model (§3.4).
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="258aad98"
def influence(encoder, tokens, zeroed, probe):
    """L2 distance at `probe` between encoding `tokens` and encoding them with `zeroed` blanked."""
    # BEGIN SOLUTION
    encoder.eval()
    d_model = encoder["embedding"].embedding_dim
    with torch.no_grad():
        x = encoder["embedding"](tokens) * math.sqrt(d_model)
        original = encoder["encoder"](encoder["positional"](x))
        blanked = x.clone()
        blanked[:, zeroed] = 0.0
        changed = encoder["encoder"](encoder["positional"](blanked))
    return (original - changed)[:, probe].norm(dim=-1)
    # END SOLUTION


# %% id="0f97a87e"
check("7.5", influence)


# %% [markdown] id="15f04c22"
# **A text classifier with a [CLS]-style token.** A popular tutorial classifies sequences by reading the encoder's output at position 0, which it calls the [CLS] token: encoder (vocabulary 5,000, d_model 64, 8 heads, 2 layers, d_ff 128, dropout 0.1, a final layer norm), then Linear(64→32), ReLU, Dropout, Linear(32→2). It trains on 16 random sequences with **random** labels for 5 epochs and shows accuracy rising. Its run, 5 epochs:

# %% id="7fecfb47" tags=["nbval-ignore-output"]
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = make_encoder(5_000, 64, 8, 2, 128, final_norm=True)
        self.head = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))

    def forward(self, tokens):
        x = self.body["embedding"](tokens) * math.sqrt(64)
        h = self.body["encoder"](self.body["positional"](x))  # (B, T, 64)
        return self.head(h[:, 0])  # position 0 only


torch.manual_seed(42)
classifier = Classifier()
n_body = sum(p.numel() for p in classifier.body.parameters())
n_head = sum(p.numel() for p in classifier.head.parameters())
print(f"parameters: encoder {n_body:,} + head {n_head:,} = {n_body + n_head:,}")
assert (n_body, n_head) == (387_072, 2_146)

X, y = torch.randint(0, 5_000, (16, 20)), torch.randint(0, 2, (16,))
optimizer = torch.optim.Adam(classifier.parameters(), lr=1e-3)
for epoch in range(1, 6):
    classifier.train()
    loss = F.cross_entropy(classifier(X), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    classifier.eval()
    with torch.no_grad():
        acc = (classifier(X).argmax(-1) == y).float().mean().item()
    print(f"epoch {epoch:>2}: loss {loss.item():.4f}, accuracy {acc:.2%}")
    assert acc * 16 == round(acc * 16)  # steps of 1/16 = 6.25%


# %% [markdown] id="dd618c0b"
# The labels are random, so there is nothing to learn: rising accuracy here is **memorisation** of 16 examples, a sanity check that gradients flow, not evidence of learning. Accuracy moves in steps of 1/16 = 6.25%. And the "[CLS] token" is simply whatever random token sits at position 0. BERT instead prepends a dedicated [CLS] token to every sequence.

# %% [markdown] id="c3d9a6f2"
# ### ✏️ 7.6 (L7.C) A dedicated [CLS] token
#
# Write `prepend_cls(tokens, cls_id=1)`: for token ids (B, T), return (B, T + 1) with `cls_id` in front of every sequence, as BERT does.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="ce202558"
def prepend_cls(tokens, cls_id=1):
    """(B, T) ids -> (B, T + 1) with cls_id at position 0."""
    # BEGIN SOLUTION
    cls_column = torch.full((tokens.shape[0], 1), cls_id, dtype=tokens.dtype)
    return torch.cat([cls_column, tokens], dim=1)
    # END SOLUTION


# %% id="6f50a842"
check("7.6", prepend_cls)


# %% [markdown] id="03c6b1d1"
# With a reserved id, position 0 holds the same token in every sequence, so what the head reads there is a summary the encoder learns to write, not a random word.

# %% [markdown] id="36a5f773"
# ### ✏️ 7.7 (L7.D) The warmup scheduler
#
# Write `noam_lr(step, d_model=512, warmup=4000)` (steps count from 1) and `make_scheduler(optimizer)` returning a PyTorch scheduler that follows it, for Adam with lr = 1.0. `torch.optim.lr_scheduler.LambdaLR(optimizer, f)` multiplies the base lr by `f(n)`, where n counts from 0 before the first update.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="5412b98e"
def noam_lr(step, d_model=512, warmup=4000):
    """d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), for step >= 1."""
    # BEGIN SOLUTION
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
    # END SOLUTION


def make_scheduler(optimizer):
    """A LambdaLR whose first update uses noam_lr(1)."""
    # BEGIN SOLUTION
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda n: noam_lr(n + 1))
    # END SOLUTION


# %% id="99fe85e4"
check("7.7", noam_lr, make_scheduler)

# %% [markdown] id="6ed92d82"
# ### ✏️ 7.8 (L7.E) Label smoothing by hand
#
# Logits [2.0, 1.0, 0.1, −1.0], true class 0, K = 4 classes. Compute the plain cross-entropy (`plain_loss`) and the cross-entropy against the smoothed target with ε = 0.1 (`smoothed_loss`), by hand from `log_softmax`, not with `label_smoothing=`.
#
# *What you may use:* anything but `course_lib`'s reference code; not `label_smoothing=`.

# %% id="eedaca94"
logits = torch.tensor([2.0, 1.0, 0.1, -1.0])
# BEGIN SOLUTION
log_p = logits.log_softmax(dim=-1)
plain_loss = -log_p[0]
target = torch.full((4,), 0.1 / 4)
target[0] += 1 - 0.1  # 0.925 on the true class, 0.025 elsewhere
smoothed_loss = -(target * log_p).sum()
# END SOLUTION

# %% id="724e55e3"
check("7.8", plain_loss, smoothed_loss)

# %% [markdown] id="cfabd247"
# ### ✏️ 7.9 (L7.F) Choose the family
#
# Fill `families` with `"encoder-only"`, `"decoder-only"` or `"encoder-decoder"` for each task: sentiment classification, named-entity recognition, extractive QA, chatbot, code completion, translation, summarisation, image classification (keep these exact keys). Justify each to yourself with attention direction, whether the task generates text, and cross-attention.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="b159d881"
# BEGIN SOLUTION
families = {
    "sentiment classification": "encoder-only",
    "named-entity recognition": "encoder-only",
    "extractive QA": "encoder-only",
    "chatbot": "decoder-only",
    "code completion": "decoder-only",
    "translation": "encoder-decoder",
    "summarisation": "encoder-decoder",
    "image classification": "encoder-only",
}
# END SOLUTION

# %% id="0e807025"
check("7.9", families)

# %% [markdown] id="f4ee9a50"
# ### ✏️ 7.10 (L7.G) PyTorch's own encoder
#
# Build `library_encoder = nn.TransformerEncoder(...)` from `nn.TransformerEncoderLayer(d_model=512, nhead=8)` with 6 layers, and feed it a random input of shape (10, 32, 512) = (sequence, batch, d_model): `batch_first=False` is the default. Store the output in `library_output`. (Pass `enable_nested_tensor=False` to the encoder to silence a performance warning that only concerns `batch_first=True`.)
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="81603afe"
torch.manual_seed(0)
# BEGIN SOLUTION
library_layer = nn.TransformerEncoderLayer(d_model=512, nhead=8)
library_encoder = nn.TransformerEncoder(library_layer, num_layers=6, enable_nested_tensor=False)
library_output = library_encoder(torch.randn(10, 32, 512))
# END SOLUTION

# %% id="145e6103"
check("7.10", library_encoder, library_output)

# %% [markdown] id="7a7ac0fb"
# The defaults: d_ff 2048, dropout 0.1, ReLU, post-norm (`norm_first=False`) and sequence-first. Beware the mask polarity: in `nn.TransformerEncoder` and `nn.MultiheadAttention`, `True` means *blocked*, the opposite of this course.
#
# **Agreement with `course_lib`.** With the same weights and dropout off, PyTorch's `nn.Transformer` and `course_lib`'s `Transformer` compute the same function. `copy_weights_from_torch` copies one into the other (a small size, so it runs fast):

# %% id="f16b7205"
from course_lib.interop import copy_weights_from_torch

torch.manual_seed(0)
theirs = nn.Transformer(
    d_model=32,
    nhead=4,
    num_encoder_layers=2,
    num_decoder_layers=2,
    dim_feedforward=64,
    dropout=0.0,
    batch_first=True,
)
ours = Transformer(
    TransformerConfig(
        src_vocab_size=20,
        tgt_vocab_size=20,
        d_model=32,
        n_heads=4,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        attention_bias=True,
        final_norm=True,
        share_embeddings=False,
    )
)
copy_weights_from_torch(ours, theirs.eval()).eval()
x_src, x_tgt = torch.randn(2, 7, 32), torch.randn(2, 5, 32)
with torch.no_grad():
    mask = causal_mask(5)
    expected = theirs(x_src, x_tgt, tgt_mask=~mask)  # PyTorch: True = blocked, hence ~
    memory = ours.encoder(x_src)
    got = ours.decoder(x_tgt, memory, tgt_mask=mask)
diff = (got - expected).abs().max().item()
print(f"the two stacks agree to within 1e-5: {diff < 1e-5}")
assert diff < 1e-5


# %% [markdown] id="a5b6e642"
# ### ✏️ 7.11 (L7.H) A complete training step
#
# A popular version of the model trains with `logits = model(src, tgt_in)`, and its model applies **no mask** unless it is given one. So its decoder sees the future target tokens during training. `UnmaskedByDefault` (from `course_lib.model`) behaves like that model, and the check trains one: it hands your function such a model, an optimizer and a scheduler, with gradients left in `.grad` by an earlier step. Write `training_step(model, optimizer, scheduler, src, tgt)` for batches where `tgt` holds BOS ... EOS padded with `PAD_ID`:
#
# 1. shift: decoder input `tgt[:, :-1]`, labels `tgt[:, 1:]`;
# 2. **masks**: `src_mask=padding_mask(src, PAD_ID)` and `tgt_mask=target_mask(tgt_in, PAD_ID)` (causal and padding);
# 3. loss `nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=PAD_ID)` on the logits flattened to (B·T, V);
# 4. zero the gradients, backward, clip the gradient norm at 1.0, optimizer step, scheduler step; return the loss.
#
# *What you may use:* anything, but from `course_lib` only `padding_mask`, `target_mask` and `PAD_ID`.

# %% id="6f70b6e1"
def training_step(model, optimizer, scheduler, src, tgt):
    """One update with shifted targets, both masks, label smoothing and clipping; returns the loss."""
    # BEGIN SOLUTION
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    logits = model(
        src, tgt_in, src_mask=padding_mask(src, PAD_ID), tgt_mask=target_mask(tgt_in, PAD_ID)
    )
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=PAD_ID)
    loss = criterion(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    return loss.item()
    # END SOLUTION


# %% id="0ad33d0e"
check("7.11", training_step)

# %% [markdown] id="604ae2e2"
# > **Errata: the training step that forgets its masks.** The popular version warns that a missing causal mask is among the most common bugs, yet its own training step calls `model(src, tgt_in)` with no target mask and no padding masks, and its model's masks default to `None`. As written, its decoder sees the future target tokens during training. The fix is the step above: a causal + padding target mask and a source padding mask, passed explicitly.
#
# What the missing mask costs, shown on the same untrained model: change every target token from position 2 on, and look at the prediction for position 0, which should depend only on the start token and the source. With the masks it does not move; without them it reads the future. Trained like that, a model learns to copy the token it is asked to predict and then cannot generate, where there is nothing to copy (lesson 3 measured this).

# %% id="fbcf3d7a"
torch.manual_seed(0)
leaky = UnmaskedByDefault(
    TransformerConfig.tiny(len(src_vocab), len(tgt_vocab), dropout=0.0)
).eval()
b = collate(corpus.train_ids[:8])
future = b.tgt_in.clone()
future[:, 2:] = tgt_vocab.stoi["pomme"]  # a different future for every sentence
with torch.no_grad():
    masked = [leaky(b.src, t, b.src_mask, target_mask(t, PAD_ID))[:, 0] for t in (b.tgt_in, future)]
    unmasked = [leaky(b.src, t)[:, 0] for t in (b.tgt_in, future)]
moved_masked = (masked[0] - masked[1]).abs().max().item()
moved_unmasked = (unmasked[0] - unmasked[1]).abs().max().item()
print(
    f"position 0's logits move by {moved_masked:.1f} with the masks, by up to {moved_unmasked:.2f} without"
)
assert moved_masked < 1e-6 and moved_unmasked > 1e-2

# %% [markdown] id="8a2747f0"
# ### ✏️ 7.12 (L7.I) Pretrained models, offline
#
# In practice one rarely trains from scratch. The usual workflow with a model hub: load a tokenizer and a model **by the same name**; fine-tune an encoder model (every weight, plus a new classification head; about 1,000 labelled examples is often enough); first try prompting a decoder model with 3 to 5 examples, and fine-tune only when accuracy is critical and thousands of examples exist. Very large models (7B+) are usually prompted, small ones (125M to 1B) gain more from fine-tuning.
#
# The course downloads nothing, so here is the same workflow on its own checkpoint: load it from disk, reuse its trained encoder under a **freshly initialised** classification head, and fine-tune briefly on a new task: is the English sentence negated? To keep it fast, only the new head learns and the encoder stays frozen (a *linear probe*); fine-tuning every weight is the same loop with all the parameters given to the optimizer. The classifier and the loop are in `course_lib/experiments/linear_probe.py` (`SentenceClassifier`: the encoder's outputs, averaged over the real tokens, into a new `nn.Linear(d_model, 2)`), so that the course's tests can repeat the fine-tuning over several seeds and processors.

# %% id="22748913" tags=["nbval-ignore-output"]
pretrained = load_pretrained()  # weights + configuration + the vocabularies it was trained with
for p in pretrained.model.parameters():
    p.requires_grad_(False)  # keep the pretrained encoder as it is; only the new head learns
assert pretrained.src_vocab == src_vocab  # the golden rule: the model's own vocabulary
ids, labels = linear_probe.negation_data(pretrained, [en for en, _ in corpus.train[:600]])
train_ids, train_y, test_ids, test_y = ids[:400], labels[:400], ids[400:], labels[400:]

torch.manual_seed(0)
negation = linear_probe.SentenceClassifier(pretrained)  # the encoder under a new nn.Linear(64, 2)
before = linear_probe.accuracy(negation, test_ids, test_y)
linear_probe.fit_head(negation, train_ids, train_y)  # 60 Adam steps; only the head's weights move
after = linear_probe.accuracy(negation, test_ids, test_y)
majority = max(test_y.float().mean().item(), 1 - test_y.float().mean().item())
print(
    f"held-out accuracy: new head {before:.0%} (always guessing the majority gives {majority:.0%}), after fine-tuning {after:.0%}"
)

# %% id="d74b9392"
print(linear_probe.EXPERIMENT.verify({"accuracy_after": after}))

# %% [markdown] id="411e88a8"
# Before fine-tuning, the new head is random: its answers mean nothing, even though the encoder beneath it is trained. A popular tutorial falls into this trap when it loads a pretrained BERT with a new 2-label head and reads its untrained predictions as results.
#
# **The golden rule.** Suppose you load a model's weights together with *another* model's tokenizer. What happens?
#
# - **a.** Loading fails with an error saying that the tokenizer's vocabulary does not match the model's.
# - **b.** The library converts each id from one vocabulary to the other, so the outputs stay the same.
# - **c.** It runs without complaint, but each id means another word to the model: the outputs are wrong.
# - **d.** It works and gives the same outputs, only more slowly, since every id is looked up a second time.

# %% id="19673fe8"
# BEGIN SOLUTION
answer_7_12 = "c"
# END SOLUTION

# %% id="119fbdb6"
check("7.12", answer_7_12)

# %% [markdown] id="3e8a4d62"
# ## 10. The references
#
# The references of the exercises above, computed by the course rather than taken from your answers. Read each one after you have tried its exercise: on a first Run All they all appear here, below the last exercise, and those that print an exercise's own numbers wait until it passes (run the cell again then).

# %% [markdown] id="ae48a460"
# **7.1.** Every sub-layer is wrapped in a residual connection and layer norm. In `course_lib.model.DecoderLayer` the order is visible in `forward`: `self_attn`, then `cross_attn(h, memory, memory, ...)`, then `ffn`.

# %% [markdown] id="803e8c50"
# **7.2.** The reference, counted by PyTorch once your count passes: the variant's layer and encoder, weights only. The base model's layer has 3,145,728 weights (its encoder 18,874,368); with biases and the two layer norms, 3,152,384 parameters and an encoder of 18,914,304, exactly what PyTorch's `nn.TransformerEncoderLayer(512, 8)` has (lab L7.G). A base decoder layer has one more attention block: 4,194,304 weights.

# %% id="1104efde"
c = TransformerConfig(attention_bias=True)
wide = TransformerConfig(attention_bias=True, d_ff=4096)  # Table 3, row (C)
with torch.device("meta"):
    enc, wide_enc = Encoder(c), Encoder(wide)
    dec_layer = Transformer(c).decoder.layers[0]
wide_matrices = sum(p.numel() for p in wide_enc.layers[0].parameters() if p.dim() == 2)
wide_encoder_matrices = sum(p.numel() for p in wide_enc.parameters() if p.dim() == 2)
if check("7.2", encoder_layer_weights, encoder_weights).passed:  # the reference, once yours passes
    print(
        f"d_ff = 4096: encoder layer {wide_matrices:,} weights; encoder {wide_encoder_matrices:,}"
    )
else:
    print("(the variant's reference count appears here once 7.2 passes)")
assert wide_encoder_matrices == 6 * wide_matrices == 6 * (4 * 512 * 512 + 2 * 512 * 4096)
assert (wide_matrices, wide_encoder_matrices) == (5_242_880, 31_457_280)
matrices = sum(p.numel() for p in enc.layers[0].parameters() if p.dim() == 2)
everything = sum(p.numel() for p in enc.layers[0].parameters())
decoder_matrices = sum(p.numel() for p in dec_layer.parameters() if p.dim() == 2)
encoder_matrices = sum(p.numel() for p in enc.parameters() if p.dim() == 2)
print(
    f"base encoder layer: {matrices:,} weights, {everything:,} with biases and norms; encoder {6 * everything:,}"
)
print(f"base encoder weight matrices: {encoder_matrices:,}")
assert encoder_matrices == 6 * matrices == 6 * (4 * 512 * 512 + 2 * 512 * 2048) == 18_874_368
print(f"base decoder layer: {decoder_matrices:,} weights")
assert (matrices, everything, 6 * everything, decoder_matrices) == (
    3_145_728,
    3_152_384,
    18_914_304,
    4_194_304,
)

# %% [markdown] id="879d698e"
# **7.3.** Section 5 measured it: the greedy decoder needed one call per output token, and one teacher-forced pass reproduced the same tokens.

# %% [markdown] id="637d1db2"
# **7.4.** The reference, `course_lib.parameters.count_parameters`, on the same encoder, once your function passes:

# %% id="b1d3f0f5"
ref = count_parameters(tutorial_encoder)
if check("7.4", parameter_breakdown).passed:  # the reference, once yours is right
    for key in ("embeddings", "attention", "feed_forward", "norms"):
        print(f"{key:>12}: {ref[key]:>10,}  {ref[key] / ref['total']:6.2%}")
    print(f"{'total':>12}: {ref['total']:>10,}")
else:
    print("(the reference breakdown appears here once 7.4 passes)")
assert (ref["total"], ref["embeddings"], ref["attention"], ref["feed_forward"], ref["norms"]) == (
    24_034_304,
    5_120_000,
    6_303_744,
    12_598_272,
    12_288,
)
share = ref["feed_forward"] / ref["total"]
without_embedding = ref["feed_forward"] / (ref["total"] - ref["embeddings"])
print(f"FFN share {share:.2%}; without the embedding {without_embedding:.1%}")
assert round(share * 100, 2) == 52.42 and round(without_embedding * 100, 1) == 66.6

# %% [markdown] id="a30090f4"
# The feed-forward networks hold 52.42% of the parameters, the largest share, as the tutorial predicts. Its "about two-thirds" is true only per encoder layer without the embedding (66.6%); in a decoder layer, with two attention blocks, the FFN holds half.

# %% [markdown] id="044872fc"
# **7.5.** The reference, on the lab's encoder: vocabulary 5,000, d_model 128, 4 heads, 4 layers (d_ff 512), 1,433,088 parameters, on 3 random sequences of length 15. It zeroes position 3, then position 14, then position 7 itself, and measures at position 7. Every distance is non-zero, and there is no systematic decay with distance: self-attention connects every pair of positions in one step. Exact values depend on the initial weights.

# %% id="0d53dba7"
torch.manual_seed(42)
lab_encoder = make_encoder(5_000, 128, 4, 4, 512).eval()
assert count_parameters(lab_encoder)["total"] == 1_433_088
tokens = torch.randint(4, 5_000, (3, 15))
with torch.no_grad():
    scaled_embedding = lab_encoder["embedding"](tokens) * math.sqrt(128)
    original = lab_encoder["encoder"](lab_encoder["positional"](scaled_embedding))
    print("output shape", tuple(original.shape))
    assert original.shape == (3, 15, 128)
    for zeroed in (3, 14, 7):
        blanked = scaled_embedding.clone()
        blanked[:, zeroed] = 0.0
        changed = lab_encoder["encoder"](lab_encoder["positional"](blanked))
        distances = (original - changed)[:, 7].norm(dim=-1)
        print(f"zero position {zeroed:>2}: distances at position 7 = {distances.numpy().round(2)}")
        assert (distances > 1e-3).all()

# %% [markdown] id="5f2b7c19"
# **7.6.** The reference, with `F.pad`:

# %% id="71067266"
ids = torch.tensor([[5, 6, 7], [8, 9, 10]])
with_cls = F.pad(ids, (1, 0), value=1)
print(with_cls.tolist())
assert with_cls.tolist() == [[1, 5, 6, 7], [1, 8, 9, 10]]

# %% [markdown] id="23715a67"
# **7.7.** The reference `course_lib.training.warmup_scheduler`, driven for 20,000 updates; the table's values are asserted at the updates that use them.

# %% id="c40c9a21"
from course_lib.training import paper_optimizer, warmup_scheduler

opt = paper_optimizer(nn.Linear(2, 2))
sched = warmup_scheduler(opt, d_model=512, warmup=4000)
used = []
for _ in range(20_000):
    used.append(opt.param_groups[0]["lr"])
    opt.step()
    sched.step()
for step in (1, 1000, 2000, 4000, 8000, 16000, 20000):
    print(f"update {step:>6,}: lr {used[step - 1]:.3e}")
    assert abs(used[step - 1] - table[step]) < 1e-3 * table[step]
assert max(range(20_000), key=used.__getitem__) + 1 == 4000

# %% [markdown] id="a7bf0d18"
# **7.8.** The reference, once your losses pass: PyTorch's `label_smoothing=0.1` agrees with `course_lib`'s `label_smoothed_cross_entropy`, and the smallest possible smoothed loss is the entropy of the target, 0.3488: no prediction, however confident, gets below it.

# %% id="07441de4"
example_logits = torch.tensor([2.0, 1.0, 0.1, -1.0])  # 7.8's, whatever `logits` holds now
p = example_logits.softmax(-1)
ref_plain = F.cross_entropy(example_logits[None], torch.tensor([0])).item()
ref_smoothed = F.cross_entropy(example_logits[None], torch.tensor([0]), label_smoothing=0.1).item()
ours = label_smoothed_cross_entropy(
    example_logits[None], torch.tensor([0]), smoothing=0.1, ignore_index=-100
).item()  # class 0 is a real class here, not padding
smooth_target = torch.tensor([0.925, 0.025, 0.025, 0.025])
floor = -(smooth_target * smooth_target.log()).sum().item()
if check("7.8", plain_loss, smoothed_loss).passed:  # the reference, once yours is right
    print(
        f"softmax {p.numpy().round(3)}; plain {ref_plain:.4f}, smoothed {ref_smoothed:.4f} (course_lib {ours:.4f}); lowest possible {floor:.4f}"
    )
else:
    print("(the reference losses appear here once 7.8 passes)")
assert torch.allclose(p, torch.tensor([0.638, 0.235, 0.095, 0.032]), atol=1e-3)
assert (
    round(ref_plain, 4) == 0.4493
    and round(ref_smoothed, 4) == 0.5968
    and abs(ours - ref_smoothed) < 1e-6
)
assert round(floor, 4) == 0.3488
K = 37_000
print(f"K = 37,000: true class {1 - 0.1 + 0.1 / K:.7f}, every other {0.1 / K:.1e}")
assert round(1 - 0.1 + 0.1 / K, 7) == 0.9000027

# %% [markdown] id="73e5c74c"
# **7.9.** Translation and summarisation each have two good answers: the encoder-decoder was built to rewrite one sequence into another, and today's large decoder-only models translate and summarise well too, reading the source as part of the prompt. Image classification is encoder-only: a ViT turns image patches into tokens.

# %% [markdown] id="8d9d9803"
# **7.12.** Our checkpoint shows it. Another tokenizer for the same English words, numbering them by frequency instead of alphabetically, runs without a complaint:

# %% id="a941fee6"
from collections import Counter

from course_lib.data import Vocab, tokenize

counts = Counter(token for en, _ in corpus.train[:2000] for token in tokenize(en))
by_frequency = Vocab(word for word, _ in counts.most_common())  # same words, other ids
sentence = "my sister likes the blue car"
right = translate(pretrained.model, [sentence], pretrained.src_vocab, pretrained.tgt_vocab)[0]
wrong = translate(pretrained.model, [sentence], by_frequency, pretrained.tgt_vocab)[0]
print(
    f"ids: its own vocabulary {pretrained.src_vocab.encode(sentence)}, the other one {by_frequency.encode(sentence)}"
)
print(f"its own vocabulary: {right!r}")
assert len(by_frequency) == len(pretrained.src_vocab) and not by_frequency.unknown_words(sentence)
assert right == "ma sœur aime la voiture bleue" != wrong

# %% id="1acbedf6" tags=["nbval-ignore-output"]
print(f"the other one: {wrong!r}")  # nonsense: which nonsense depends on the last bits

# %% [markdown] id="89053f36"
# ## Recap
#
# - The encoder (N self-attention + FFN layers) reads the source in parallel; the decoder (masked self-attention, cross-attention, FFN) writes one token at a time, consulting the encoder's output through cross-attention.
# - Three uses of attention: encoder self-attention (padding mask), decoder self-attention (causal + padding), cross-attention (queries from the decoder, keys and values from the encoder; source padding).
# - Training uses shifted targets and teacher forcing, label-smoothed cross-entropy, Adam (0.9, 0.98, 1e-9) and the warmup schedule; all positions are computed in one pass. Generation is sequential because each token is an input of the next step.
# - The base model has 63,082,632 parameters with shared embeddings (the paper says 65M); the encoder's weight matrices alone are 18,874,368.
# - A tiny Transformer learns the corpus's grammar in about ten seconds on one CPU thread and, with the paper's checkpoint averaging, translates held-out combinations at over 99% exact match; its cross-attention shows the adjective-noun reordering.
# - Encoder-only models understand, decoder-only models generate, encoder-decoders rewrite one sequence into another.
#
# **Next:** the project builds one encoder layer in numpy, from scratch, and checks every number.
