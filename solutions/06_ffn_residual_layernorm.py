# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="a62f513f"
# # Lesson 6 · Feed-forward networks, residual connections and layer normalisation
#
# > FFN(x) = max(0, xW₁ + b₁)W₂ + b₂  (paper §3.3, Eq. 2)
# >
# > The output of each sub-layer is LayerNorm(x + Sublayer(x))  (paper §3.1)
#
# Attention lets every position gather information from the others. This lesson is about the rest of each layer: a small two-layer network that works on every position on its own, and the two pieces of plumbing, the residual connection and layer normalisation, that let six (or sixty) such layers be stacked and still train.
#
# **How to use this notebook.** Run the cells from top to bottom (Shift+Enter). Cells marked ✏️ are yours: replace the part under `# YOUR CODE HERE`, run the cell, then run the `check(...)` cell under it. A check never crashes; it says ✓ **Passed**, ✗ **Not yet** with what looks wrong, or … **Not done yet**. Stuck? `hint("6.2")` shows one hint each time you run it.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor; a function you write returns a number when it computes a count, a rate or a loss, and otherwise PyTorch tensors. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="99c84ca3" tags=["nbval-ignore-output"]
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from course_lib import notebook
from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import check, hint
from course_lib.experiments import deep_stack
from course_lib.layers import LayerNorm, PositionwiseFeedForward, ResidualSublayer
from course_lib.model import DecoderLayer, EncoderLayer, TransformerConfig, count_parameters
from course_lib.widgets.deep_stack import DeepStackExplorer, stack_profile

notebook.start(seed=0)

# %% [markdown] id="be5a88c0"
# ## Learning objectives
#
# By the end of this lesson you can:
#
# 1. compute the position-wise feed-forward network by hand and say why a layer needs it after attention;
# 2. explain what a residual connection does for the signal and for the gradients, and what LayerNorm normalises (the features of one position, not the batch);
# 3. trace one Add & Norm step with numbers;
# 4. compare post-norm (the paper) with pre-norm (most modern models), and count the parameters of an FFN and of a whole encoder block.

# %% [markdown] id="3137f501"
# ## 1. The idea
#
# **Why attention is not enough.** For fixed weights, an attention output is a weighted average of the value vectors: the weights are positive and sum to 1, so every output lies inside the *convex hull* of the values, the region they span. Attention moves and mixes information; it cannot make a feature that is not already a blend of existing ones. Given the weights it is even linear in V, and a stack of linear maps is still one linear map. (The weights themselves come from a softmax of the inputs, so attention as a whole is not linear; but it is linear in what it carries.)
#
# **What the FFN adds.** Each position's vector goes through the same small network, three steps:
#
# 1. **Expand**: multiply by W₁ (d_model × d_ff) and add b₁: 512 numbers become 2048 (d_ff = 4·d_model in the paper).
# 2. **Activate**: ReLU, max(0, ·), zeroes every negative hidden unit. This is the non-linearity, and it makes the hidden layer sparse: for a given input only some units are active, a kind of feature selection.
# 3. **Compress**: multiply by W₂ (d_ff × d_model) and add b₂, back to 512.
#
# *Position-wise* means the same W₁, W₂ at every position of a sentence, with no information crossing between positions; each layer has its own pair. A common way to say it: attention decides *what information moves where*, the FFN decides *what to do with it* at each position. The wide hidden layer is a workspace, and the FFN holds most of each layer's parameters (section 3), which is why it is often described as where much of what a model "knows" is stored.
#
# **Residual connections.** Each sub-layer's output is *added* to its input: x + Sublayer(x). The sub-layer only has to learn a correction to x; if it has nothing to add it can output about 0 and x passes through unchanged. Backwards, the addition gives the gradient a direct path, the identity, around every sub-layer, so it reaches the first layers even when the sub-layers' own gradients are small. The idea comes from ResNet (2015); it plays across depth the role the LSTM's cell state plays across time.
#
# **Layer normalisation.** LayerNorm takes each position's vector on its own, shifts it to mean 0 and scales it to variance 1 *over its d_model features*, then applies a learned scale γ and shift β (2·d_model parameters, 1,024 at d_model = 512):
#
# LN(x) = γ · (x − μ) / √(σ² + ε) + β,   μ and σ² the mean and (population) variance of x's features.
#
# Batch norm, common in CNNs, normalises each feature over the *batch* instead; LayerNorm shares nothing across the batch, so a sentence's output never depends on the other sentences it is batched with. It keeps the activations from drifting in scale from layer to layer.
#
# **Add & Norm, and where to put the norm.** The paper wraps every sub-layer (self-attention, cross-attention, FFN) as LayerNorm(x + Sublayer(x)), with dropout 0.1 on the sub-layer's output before the addition: that is **post-norm**. Most modern models use **pre-norm**, x + Sublayer(LayerNorm(x)), which leaves the residual path untouched from the input to the output and is known to train more stably in deep stacks, with larger learning rates and less need for warm-up. Switching is only a matter of moving the norm (lab 6.4 measures the difference). Recent large models also replace LayerNorm by RMSNorm and ReLU by gated units such as SwiGLU; the ideas of this lesson carry over.
#
# A quick check of the first claim: attention outputs stay between the smallest and the largest value in every column, and scaling or adding value matrices scales or adds the outputs.

# %% id="dfc62776"
torch.manual_seed(0)
q, k = torch.randn(5, 4), torch.randn(5, 4)
v1, v2 = torch.randn(5, 3), torch.randn(5, 3)
out, w = scaled_dot_product_attention(q, k, v1)

inside = (out >= v1.min(dim=0).values - 1e-6) & (out <= v1.max(dim=0).values + 1e-6)
print("every output inside the range of its value column:", bool(inside.all()))
linear = scaled_dot_product_attention(q, k, 2 * v1 + v2)[0]
print(
    "attn(2·V1 + V2) == 2·attn(V1) + attn(V2):",
    torch.allclose(linear, 2 * out + scaled_dot_product_attention(q, k, v2)[0], atol=1e-6),
)
assert inside.all()
assert torch.allclose(linear, 2 * out + scaled_dot_product_attention(q, k, v2)[0], atol=1e-6)

# %% [markdown] id="3a5594a5"
# ## 2. Worked example: one position through FFN, residual and LayerNorm
#
# One position, d_model = 3, d_ff = 6, b₁ = 0:
#
# - x = [0.5, −0.3, 0.8]
# - W₁ = [[0.2, −0.1, 0.3, 0.5, −0.2, 0.1], [0.4, 0.3, −0.2, 0.1, 0.6, −0.3], [−0.1, 0.5, 0.2, −0.3, 0.1, 0.4]]
#
# **Step 1, expand**: each hidden unit is x times one column of W₁. The first is 0.5·0.2 + (−0.3)·0.4 + 0.8·(−0.1) = 0.10 − 0.12 − 0.08 = −0.10.

# %% id="c37faa90"
x = torch.tensor([0.5, -0.3, 0.8], dtype=torch.float64)
W1 = torch.tensor(
    [
        [0.2, -0.1, 0.3, 0.5, -0.2, 0.1],
        [0.4, 0.3, -0.2, 0.1, 0.6, -0.3],
        [-0.1, 0.5, 0.2, -0.3, 0.1, 0.4],
    ],
    dtype=torch.float64,
)
b1 = torch.zeros(6, dtype=torch.float64)

terms = x[:, None] * W1  # (3, 6): column j holds the three products of hidden unit j
for j in range(6):
    shown = " + ".join(f"{t:.2f}" for t in terms[:, j].tolist()).replace("+ -", "− ")
    print(f"unit {j + 1}: {shown} = {terms[:, j].sum():.2f}".replace("-", "−"))
hidden = x @ W1 + b1  # (3,) @ (3, 6) -> (6,)
print("hidden:", hidden.numpy().round(2))
assert torch.allclose(
    hidden, torch.tensor([-0.10, 0.26, 0.37, -0.02, -0.20, 0.46], dtype=torch.float64), atol=1e-9
)

# %% [markdown] id="53a6bcc5"
# **Step 2, activate**: ReLU zeroes the three negative units; the positive ones pass unchanged.

# %% id="eecfb8e7"
activated = torch.relu(hidden)
print("ReLU:", activated.numpy().round(2), f"  active units: {int((activated > 0).sum())} of 6")
assert torch.allclose(
    activated, torch.tensor([0.0, 0.26, 0.37, 0.0, 0.0, 0.46], dtype=torch.float64), atol=1e-9
)
assert int((activated > 0).sum()) == 3

# %% [markdown] id="3c5cb5ec"
# **Step 3, compress.** Here the widely reprinted version of this example gives no W₂ or b₂: it shows an FFN output of [0.21, −0.15, 0.33] as an illustration. To carry the example through with real arithmetic, **this course chose the W₂ below** (b₂ = 0) so that it produces exactly that output. Only rows 2, 3 and 6 matter, because the other three hidden units are 0; the rows of silent units could be anything, as the cell checks by changing them.

# %% id="7b170273"
# W2 chosen by this course (not in the source example): rows 2, 3 and 6 give the output.
W2 = torch.tensor(
    [
        [0.3, 0.2, -0.1],
        [0.1, -0.4, 0.1],
        [0.0, 0.0, 0.2],
        [-0.2, 0.1, 0.4],
        [0.5, -0.3, 0.2],
        [0.4, -0.1, 0.5],
    ],
    dtype=torch.float64,
)
b2 = torch.zeros(3, dtype=torch.float64)
ffn_out = activated @ W2 + b2  # (6,) @ (6, 3) -> (3,)
print("FFN output:", ffn_out.numpy().round(2))
print("= 0.26·[0.1, −0.4, 0.1] + 0.37·[0.0, 0.0, 0.2] + 0.46·[0.4, −0.1, 0.5]")
assert torch.allclose(ffn_out, torch.tensor([0.21, -0.15, 0.33], dtype=torch.float64), atol=1e-9)

other_silent_rows = W2.clone()
other_silent_rows[[0, 3, 4]] = torch.randn(3, 3, dtype=torch.float64)
assert torch.allclose(activated @ other_silent_rows, ffn_out)
print("changing the rows of the three silent units leaves the output unchanged")

# %% [markdown] id="e15345d6"
# **Step 4, residual**: add the input back. **Step 5, LayerNorm** (γ = 1, β = 0, ε = 1e-5): subtract the mean of the three features, divide by their standard deviation. ε only changes the fifth decimal.

# %% id="5dd1fbb9"
residual = x + ffn_out
print("residual x + FFN(x):", residual.numpy().round(2))
assert torch.allclose(residual, torch.tensor([0.71, -0.45, 1.13], dtype=torch.float64), atol=1e-9)

mean = residual.mean()
var = ((residual - mean) ** 2).mean()  # population variance: divide by 3, not 2
normalised = (residual - mean) / torch.sqrt(var + 1e-5)
print(f"mean {mean:.5f}, variance {var:.5f}, std {var.sqrt():.5f}")
print("LayerNorm:", normalised.numpy().round(4))
assert abs(mean - 0.46333) < 1e-5 and abs(var - 0.44649) < 1e-5 and abs(var.sqrt() - 0.66820) < 1e-5
assert torch.allclose(
    normalised, torch.tensor([0.3691, -1.3668, 0.9977], dtype=torch.float64), atol=1e-4
)
without_eps = (residual - mean) / var.sqrt()
print("without ε:", without_eps.numpy().round(5), " with ε:", normalised.numpy().round(5))
assert 1e-6 < (without_eps - normalised).abs().max() < 5e-5  # only the fifth decimal moves

# %% [markdown] id="c2580283"
# The same numbers from `course_lib`: its `PositionwiseFeedForward` holds W₁ and W₂ in `nn.Linear` layers (which store the transposed matrices), and `ResidualSublayer` with its default `norm_first=False` is the paper's post-norm Add & Norm.

# %% id="809d4600"
ffn = PositionwiseFeedForward(d_model=3, d_ff=6).double()
add_norm = ResidualSublayer(d_model=3).double()  # post-norm, LayerNorm with γ = 1, β = 0
with torch.no_grad():
    ffn.w_1.weight.copy_(W1.T)
    ffn.w_1.bias.zero_()
    ffn.w_2.weight.copy_(W2.T)
    ffn.w_2.bias.zero_()
    ref = add_norm(x[None, None], ffn)  # (B, T, D) = (1, 1, 3)
print("course_lib FFN:", ffn(x[None, None]).detach().squeeze().numpy().round(4))
print("course_lib LayerNorm(x + FFN(x)):", ref.squeeze().numpy().round(4))
torch.testing.assert_close(ref.squeeze(), normalised)
torch.testing.assert_close(LayerNorm(3).double()(residual), normalised)

# %% [markdown] id="11469b46"
# ## 3. Where the parameters are, and how sparse the hidden layer is
#
# A popular claim says the FFN holds about two-thirds of a Transformer's parameters. Counting `course_lib`'s layers at the paper's base size (d_model 512, 8 heads, d_ff 2048, with biases in the attention projections as PyTorch's `nn.TransformerEncoderLayer` has):

# %% id="0e575438"
base = TransformerConfig(attention_bias=True)
for name, layer in [("encoder layer", EncoderLayer(base)), ("decoder layer", DecoderLayer(base))]:
    counts = count_parameters(layer)
    share = counts["feed_forward"] / counts["total"]
    print(f"{name}: FFN {counts['feed_forward']:,} of {counts['total']:,} = {share:.1%}")
    if name == "encoder layer":
        assert (counts["feed_forward"], counts["total"]) == (2_099_712, 3_152_384)
        assert round(share, 3) == 0.666
    else:
        assert abs(share - 0.5) < 0.001

# %% [markdown] id="2f6755c3"
# > **Errata: "two-thirds of the parameters".** True for an *encoder* layer, where the FFN holds 2,099,712 of 3,152,384 parameters (66.6%). A decoder layer has a second attention sub-layer (cross-attention), so there the FFN holds about half. Counting a whole model with its embeddings lowers the share further (lesson 7 measures it).
#
# ReLU's sparsity at initialisation: ten positions of random input through a fresh FFN with d_model 64 and d_ff 256. Each row below is one position; a light cell is an active hidden unit. About half the units are active for any one position, and *which* ones changes from position to position.

# %% id="7a6f17ca"
torch.manual_seed(0)
ffn64 = PositionwiseFeedForward(d_model=64, d_ff=256)
positions = torch.randn(10, 64)
with torch.no_grad():
    active = torch.relu(ffn64.w_1(positions)) > 0  # (10 positions, 256 hidden units)

fig, ax = plt.subplots(figsize=(10, 2.6))
ax.imshow(active.numpy(), aspect="auto", cmap="cividis", interpolation="nearest")
ax.set(
    title="Active ReLU units (light) per position",
    xlabel="hidden unit (d_ff = 256)",
    ylabel="position",
)
per_position = active.float().mean(dim=1)
notebook.show(
    f"Grid of {active.shape[0]} positions (rows) by {active.shape[1]} hidden units (columns), "
    f"light where the ReLU unit is active: {active.float().mean():.0%} of the cells, between "
    f"{per_position.min():.0%} and {per_position.max():.0%} per position. Which units are "
    f"active changes from row to row: {int(active.all(dim=0).sum())} units are active at every "
    f"position, {int((~active).all(dim=0).sum())} at none."
)
print("fraction active per position:", per_position.numpy().round(2))
print(
    f"units active at every position: {int(active.all(dim=0).sum())}, at none: {int((~active).all(dim=0).sum())}"
)
assert 0.35 < per_position.mean() < 0.65

# %% [markdown] id="c4765e27"
# ## 4. Residuals and LayerNorm in a deep stack
#
# What do the residual path and the norm buy? Take a stack of 48 FFN sub-layers (d_model 64, d_ff 256, PyTorch's default initialisation), wrap each of them in one of six ways, push 64 random unit-variance vectors through, and back-propagate a random linear read-out of the output. `stack_profile` records the RMS of the activations after every layer and the gradient norm of every layer's weights.

# %% id="e4fd3edb"
print(f"{'each layer':>14} | {'output RMS':>10} | {'grad, layer 1':>13} | {'grad, layer 48':>14}")
profiles = {}
for with_residual in (False, True):
    for norm in ("none", "post", "pre"):
        p = stack_profile(48, with_residual, norm, seed=0)
        profiles[p.label] = p
        print(
            f"{p.label:>14} | {p.activation_rms[-1]:>10.3g} | {p.grad_norm[0]:>13.3g} | {p.grad_norm[-1]:>14.3g}"
        )

plain = profiles["F(x)"]
shrink = (plain.activation_rms[1] / plain.activation_rms[0]) ** 2
print(f"F(x): the first layer multiplies the variance by 1/{1 / shrink:.1f}")
# course_lib/experiments/deep_stack.py holds these conclusions, checked over many seeds and CPUs
print(deep_stack.EXPERIMENT.verify(deep_stack.ffn_measures(seed=0), *deep_stack.FFN_MEASURES))

# %% [markdown] id="28762875"
# Reading the table:
#
# - **F(x), neither residual nor norm.** Each layer shrinks the signal (with PyTorch's default initialisation the first layer multiplies the variance by about 1/17, and later layers keep shrinking it until the biases dominate), and back-propagation shrinks the gradient layer after layer: the first layers receive essentially nothing (in float32 it underflows to exactly 0). This is the vanishing gradient.
# - **x + F(x), the residual alone.** The gradient arrives almost intact at layer 1: the identity path carries it past every layer. The activations grow slowly, because every layer adds its output to the stream.
# - **LN(x + F(x)), post-norm.** Every output is renormalised to RMS 1 (γ = 1 and β = 0 at initialisation), so the scale cannot drift.
# - **x + F(LN(x)), pre-norm.** The stream still grows (nothing renormalises it), but each sub-layer sees a normalised input.
# - **LN(F(x)) and F(LN(x)), a norm without the residual.** Renormalising every layer's input or output also keeps this stack's signal and gradients in range at initialisation. What a norm cannot provide is the identity path: without it a layer cannot leave its input unchanged, and every layer must learn to pass on what the earlier ones computed. The paper uses both.
#
# ## 5. Explore: the deep-stack explorer
#
# Move the depth slider and switch the residual path and the LayerNorm placement. Left: the RMS of the activations after every layer (log scale). Right: the gradient norm of every layer's weights. Things to try:
#
# - Untick the residual path with no LayerNorm and slide from 1 to 48 layers: watch the gradient of the first layers fall to the floor of the plot (▼ marks a gradient below 1e-8, vanished).
# - With the residual path, compare post-norm (flat activations) with pre-norm (a slowly rising stream).
# - At 12 layers, compare the gradients of post- and pre-norm: same order of magnitude. Lab 6.4 takes this up.

# %% id="bb4a9636" tags=["nbval-ignore-output"]
explorer = DeepStackExplorer(depth=12)
explorer

# %% [markdown] id="f7849902"
# ## 6. Exercises
#
# ### ✏️ 6.1 Recall: why an FFN after attention?
#
# Which statement says best why every Transformer layer follows attention with a feed-forward network?
#
# - **a.** Attention only averages the value vectors; the FFN's ReLU and wider hidden layer compute new features at each position.
# - **b.** Attention moves information only along its weights; the FFN lets every position exchange information with all the others.
# - **c.** Attention lets the activations drift in scale from layer to layer; the FFN's two matrices bring every position back to a steady size.
# - **d.** Attention has no learnable parameters of its own, so the FFN's two matrices are the only place where a layer learns.
#
# Set `answer_6_1` to a letter and run the check; every option has an explanation.

# %% id="30905067"
# BEGIN SOLUTION
answer_6_1 = "a"
# END SOLUTION

# %% id="1620f387"
check("6.1", answer_6_1)

# %% [markdown] id="38924f8c"
# ### ✏️ 6.2 Apply: ReLU on five numbers
#
# Apply ReLU to x = [−0.5, 1.2, 0.0, −3.1, 0.7]. Store the result in `relu_output`, the number of units that survive (are non-zero) in `relu_active`, and the fraction of the five that survive in `relu_fraction`. Predict the answer before you compute it.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="74d7580f"
relu_input = torch.tensor([-0.5, 1.2, 0.0, -3.1, 0.7])
# BEGIN SOLUTION
relu_output = torch.relu(relu_input)
relu_active = int((relu_output > 0).sum())
relu_fraction = relu_active / relu_input.numel()
# END SOLUTION

# %% id="0d0a0571"
check("6.2", relu_output, relu_active, relu_fraction)


# %% [markdown] id="cd505e27"
# ### ✏️ 6.3 Extend: how wide should the hidden layer be?
#
# Write `ffn_parameters(d_model, d_ff, bias=True)` returning the number of parameters of one FFN: the weights of W₁ and W₂, plus the biases b₁ and b₂ when `bias` is true. The check tries it on several sizes, among them d_model = 512 with d_ff = 512 (no expansion), 2048 (the paper's 4×) and 8192 (16×). Count from the shapes of the matrices and vectors: the cell after the check counts `course_lib`'s `PositionwiseFeedForward` with `count_parameters`, which is the reference, not an answer.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="c475c42c"
def ffn_parameters(d_model, d_ff, bias=True):
    """Parameters of W_1 (d_model × d_ff), W_2 (d_ff × d_model) and, if bias, b_1 and b_2."""
    # BEGIN SOLUTION
    weights = d_model * d_ff + d_ff * d_model
    return weights + (d_ff + d_model if bias else 0)
    # END SOLUTION


# %% id="729a83a3"
check("6.3", ffn_parameters)

# %% [markdown] id="4c71f6a4"
# The reference counts, from `course_lib`'s module itself:

# %% id="520ed3ab"
print(f"{'d_ff':>5} | {'weights only':>12} | {'with biases':>12}")
for d_ff, weights, total in [
    (512, 524_288, 525_312),
    (2048, 2_097_152, 2_099_712),
    (8192, 8_388_608, 8_397_312),
]:
    n_weights = count_parameters(PositionwiseFeedForward(512, d_ff, bias=False))["total"]
    n_total = count_parameters(PositionwiseFeedForward(512, d_ff))["total"]
    print(f"{d_ff:>5} | {n_weights:>12,} | {n_total:>12,}")
    assert (n_weights, n_total) == (weights, total)


# %% [markdown] id="43a6329d" tags=["free-text"]
# **Your answer:** what do you gain and what do you pay when d_ff goes from 512 to 2048 to 8192?
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* With d_ff = d_model = 512 the hidden layer is no wider than the model: little room for the ReLU to select among features, so the FFN has little capacity. The paper's 4× (2048) quadruples the FFN's parameters and compute. Going to 16× (8192) quadruples them again, to 8.4 M weights per layer: more capacity, but slower training and inference, more memory, a greater risk of overfitting a small data set, and diminishing returns. 4× is the paper's compromise, and most later models kept a ratio near it.
# <!-- END SOLUTION -->

# %% [markdown] id="6eab104c"
# ## 7. Labs
#
# ### ✏️ 6.4 (L6.A) Post-norm and pre-norm
#
# Write the two ways to wrap a sub-layer. Each takes the input `x` (B, T, d_model), the `sublayer` (a function or module) and the `norm` (an `nn.LayerNorm`), and returns a new tensor:
#
# - `post_norm_step`: the paper's Add & Norm, add first, then normalise;
# - `pre_norm_step`: normalise the sub-layer's input, and add its output to the untouched x.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="ff98878e"
def post_norm_step(x, sublayer, norm):
    """LayerNorm(x + sublayer(x)), as in the paper."""
    # BEGIN SOLUTION
    return norm(x + sublayer(x))
    # END SOLUTION


def pre_norm_step(x, sublayer, norm):
    """x + sublayer(LayerNorm(x)), as in most modern models."""
    # BEGIN SOLUTION
    return x + sublayer(norm(x))
    # END SOLUTION


# %% id="e4b5762b"
check("6.4", post_norm_step, pre_norm_step)

# %% [markdown] id="ac2a61d3"
# Now the experiment, with `course_lib`'s encoder layers (self-attention and FFN, each wrapped by `ResidualSublayer`): two stacks of 12 layers, d_model 64, 8 heads, d_ff 256, in eval mode, one post-norm and one pre-norm, built from the same seed, fed the same random input of shape (2, 10, 64). We record the norm of the output after 1, 6 and 12 layers, and the gradient norm of the first layer's parameters for a random linear read-out of the output.

# %% id="b768a120"
from course_lib.experiments.deep_stack import encoder_input, encoder_stack, run_stack

x_in, readout = encoder_input(seed=0)  # (2, 10, 64) each: the input and the read-out direction
stacks = {"post-norm": encoder_stack(False), "pre-norm": encoder_stack(True)}
results = {name: run_stack(layers, x_in, readout) for name, layers in stacks.items()}
print(
    f"{'':>9} | {'|h| after 1':>11} | {'after 6':>7} | {'after 12':>8} | {'grad, layer 1':>13} | {'grad, layer 12':>14}"
)
for name, (norms, grads) in results.items():
    print(
        f"{name:>9} | {norms[0]:>11.1f} | {norms[5]:>7.1f} | {norms[11]:>8.1f} | {grads[0]:>13.0f} | {grads[11]:>14.0f}"
    )

# %% id="63f303f3"
(post_norms, post_grads), (pre_norms, pre_grads) = results.values()
print(f"√(2·10·64) = {(2 * 10 * 64) ** 0.5:.2f}")
ratio = pre_grads[0] / post_grads[0]
print(f"first-layer gradient, pre-norm / post-norm: {ratio:.1f}")
for name, (_, grads) in results.items():
    spread = max(grads) / min(grads)
    print(f"{name}: largest / smallest gradient norm over the 12 layers = {spread:.1f}")

# %% [markdown] id="6f01bc5f"
# What the numbers show:
#
# - **Output norms.** Post-norm gives exactly √(2·10·64) = 35.78 after every layer, because each layer ends in a LayerNorm with γ = 1, β = 0: every one of the 20 positions has RMS 1. Pre-norm's norm grows with depth, because the residual stream accumulates every sub-layer's output and nothing renormalises it (pre-norm models add one final LayerNorm after the stack for that reason). How fast it grows depends on the initialisation: a widely reprinted run of this lab measured about 37, 45 and 52 after 1, 6 and 12 layers. `course_lib` initialises the attention projections with Xavier's scheme, larger than `nn.Linear`'s default, so its stream grows faster; the cell after this list re-initialises them the default way and comes close to the reprinted figures (within 15% for every seed the course's tests try: the exact values depend on the random start).
# - **Gradients at initialisation.** The first layer's gradient is of the same order in both stacks; here pre-norm's is even the larger. At 12 layers and at initialisation, neither stack has a gradient problem to show.

# %% id="1b653e49"
default_norms, _ = run_stack(deep_stack.default_init(encoder_stack(True)), x_in, readout)
print(
    "pre-norm with nn.Linear's default init, |h| after 1, 6, 12 layers:",
    [round(default_norms[i], 1) for i in (0, 5, 11)],
)
measured = deep_stack.encoder_measures(results["post-norm"], results["pre-norm"], default_norms)
print(deep_stack.EXPERIMENT.verify(measured, *deep_stack.ENCODER_MEASURES))

# %% [markdown] id="757c537a"
# > **Errata: "pre-norm gives more stable gradients" is not visible at initialisation.** A popular version of this lab expects the pre-norm stack to show visibly more stable gradients at 12 layers. Measured at initialisation, both are of the same order (the cell above asserts it), and in both the gradient stays within a small factor from the first layer to the last. The deterministic difference is in the output norms. Pre-norm's advantage shows up in *training*, when the learning rate is high and there is no warm-up: the next cell measures that.
#
# A trap when you try this yourself: a loss such as `(h ** 2).sum()` on a post-norm output is a constant (every position has RMS 1 after the final LayerNorm), so its gradient is zero up to the tiny effect of ε. Use a random read-out as above.

# %% id="cc67718f"
layers = stacks["post-norm"]
layers.zero_grad()
h = x_in
for layer in layers:
    h = layer(h)
trap = (h**2).sum()
trap.backward()
trap_grad = torch.cat([p.grad.flatten() for p in layers[0].parameters()]).norm().item()
# The gradient is 0 in exact arithmetic; what remains is round-off, whose digits vary by CPU.
print(
    f"sum(h²) = {trap.item():.1f} (2·10·64 = 1280); first-layer gradient under 1/1000 of the {post_grads[0]:.0f} it gets with the read-out"
)
assert abs(trap.item() - 1280) < 0.1 and trap_grad < 1e-3 * post_grads[0]

# %% [markdown] id="464f68e3"
# **Training at a high learning rate without warm-up.** The same two 12-layer stacks, with an embedding in front and a linear layer behind, learn a small task: each position must output the token at the previous position (the first position wraps around to the last), over 10 symbols, so the chance level of the loss is ln 10 ≈ 2.30. Adam at learning rate 3e-3 from the first step, no warm-up, 60 steps of 16 sequences. `course_lib/experiments/norm_placement.py` holds the model and the loop, so the course's tests can rerun them over many seeds and processors; a single step's loss jumps by tenths from batch to batch, so the comparison uses the mean of the last 20 steps. (A few seconds.)

# %% id="95f2dfae" tags=["nbval-ignore-output"]
from course_lib.experiments import norm_placement

curves = {}
for name, norm_first in [("post-norm", False), ("pre-norm", True)]:
    start = time.perf_counter()
    curves[name] = norm_placement.train_high_lr(norm_first, seed=0)
    print(
        f"{name}: loss {curves[name][0]:.2f} -> {norm_placement.tail(curves[name]):.2f} (mean of the last 20 steps), {time.perf_counter() - start:.1f} s"
    )

fig, ax = plt.subplots(figsize=(6, 3.4))
for (name, losses), style in zip(curves.items(), ("-", "--")):
    ax.plot(losses, style, label=name)
ax.axhline(2.3026, color="gray", linestyle=":", label="chance, ln 10")
ax.set(title="12 layers, lr 3e-3, no warm-up", xlabel="step", ylabel="training loss")
ax.legend()
ends = ", ".join(f"{name} {norm_placement.tail(losses):.2f}" for name, losses in curves.items())
notebook.show(
    f"Line chart: training loss over {len(curves['pre-norm'])} steps of two 12-layer stacks at "
    "learning rate 3e-3 without warm-up, post-norm (solid) and pre-norm (dashed), with the "
    f"chance level ln 10 dotted. Mean loss of the last 20 steps: {ends}."
)

# %% id="bb5f8432"
measured = norm_placement.summarize(curves["post-norm"], curves["pre-norm"])
print(norm_placement.EXPERIMENT.verify(measured))


# %% [markdown] id="7dcdfa56"
# At this learning rate, without warm-up, post-norm stays near chance while pre-norm learns. This is what "pre-norm trains more stably" means in practice. The paper trained its post-norm model with a warm-up of 4,000 steps, during which the learning rate rises slowly from almost 0; pre-norm models tolerate larger learning rates and shorter warm-ups, which is a large part of why deep modern models use it. Lesson 7 trains a whole model with a warm-up schedule.
#
# ### ✏️ 6.5 (L6.B) Parameters of an encoder block
#
# Write `encoder_block_parameters(d_model, n_heads, d_ff)`: the parameters of one encoder block, made of multi-head attention (the four projections W^Q, W^K, W^V, W^O, each d_model × d_model with a bias), the FFN (with biases) and two LayerNorms. You may call your `ffn_parameters` from 6.3 (finish that one first). Count from the shapes, as in 6.3: `course_lib`'s `EncoderLayer` and `count_parameters`, in the cell after the check, are the reference, not an answer.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="dc80f91b"
def encoder_block_parameters(d_model, n_heads, d_ff):
    """Attention (4 projections with biases) + FFN (with biases) + two LayerNorms."""
    # BEGIN SOLUTION
    attention = 4 * (d_model * d_model + d_model)  # the heads split d_model: n_heads adds nothing
    feed_forward = 2 * d_model * d_ff + d_ff + d_model
    norms = 2 * (2 * d_model)  # gamma and beta, twice
    return attention + feed_forward + norms
    # END SOLUTION


# %% id="c45936b4"
check("6.5", encoder_block_parameters)

# %% [markdown] id="f1903b85"
# The reference, counted on `course_lib`'s encoder layer and on PyTorch's own `nn.TransformerEncoderLayer`:

# %% id="9c14ba8f"
small = TransformerConfig(d_model=64, n_heads=8, d_ff=256, attention_bias=True)
ours = count_parameters(EncoderLayer(small))
torch_layer = nn.TransformerEncoderLayer(d_model=64, nhead=8, dim_feedforward=256, batch_first=True)
print({k: f"{v:,}" for k, v in ours.items() if v})
print(
    f"nn.TransformerEncoderLayer(64, 8, 256): {sum(p.numel() for p in torch_layer.parameters()):,}"
)
assert (ours["attention"], ours["feed_forward"], ours["norms"], ours["total"]) == (
    16_640,
    33_088,
    256,
    49_984,
)
assert sum(p.numel() for p in torch_layer.parameters()) == 49_984


# %% [markdown] id="028a9665"
# ### ✏️ 6.6 (L6.C) LayerNorm by hand
#
# Write `layer_norm_by_hand(x, gamma, beta, eps=1e-5)` for a tensor x of any shape (..., d_model): the mean and the population variance of each position over its features (the last axis), then γ·(x − μ)/√(σ² + ε) + β, with torch operations: the built-in layer norm is what you will compare against.
#
# *What you may use:* anything but `course_lib`'s reference code; not `F.layer_norm`, `torch.layer_norm` or `nn.LayerNorm`.

# %% id="1da6dc99"
def layer_norm_by_hand(x, gamma, beta, eps=1e-5):
    """Normalise each position over its last axis; gamma and beta have shape (d_model,)."""
    # BEGIN SOLUTION
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)  # population variance
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta
    # END SOLUTION


# %% id="5863b794"
check("6.6", layer_norm_by_hand)

# %% [markdown] id="cbda8219"
# The reference on the worked example, and LayerNorm against a normalisation over the batch: change the *other* sentence of a batch and see which method notices.

# %% id="d853b6c6"
print(
    "nn.LayerNorm on [0.71, −0.45, 1.13]:",
    nn.LayerNorm(3).double()(residual).detach().numpy().round(4),
)
torch.testing.assert_close(nn.LayerNorm(3).double()(residual), normalised)

torch.manual_seed(0)
batch = torch.randn(2, 4, 8)  # two sentences of 4 positions
changed = batch.clone()
changed[1] = 10 * torch.randn(4, 8)  # replace the second sentence only
layer_norm = LayerNorm(8)


def over_batch(t):  # what batch norm does: statistics of each feature over the batch axis
    return (t - t.mean(dim=0, keepdim=True)) / torch.sqrt(
        t.var(dim=0, keepdim=True, unbiased=False) + 1e-5
    )


with torch.no_grad():
    ln_moved = (layer_norm(changed)[0] - layer_norm(batch)[0]).abs().max().item()
    batch_moved = (over_batch(changed)[0] - over_batch(batch)[0]).abs().max().item()
print(
    f"sentence 1's output moved by {ln_moved:.2f} with LayerNorm, {batch_moved:.2f} with statistics over the batch"
)
assert ln_moved == 0 and batch_moved > 0.1

# %% [markdown] id="a475b692"
# ## 8. The references
#
# Each exercise's reference, computed by the course rather than taken from your answers. Read each one after you have tried its exercise.

# %% [markdown] id="08b84317"
# **6.2.** ReLU on the five numbers, computed by the course. It waits for your answer: once 6.2 passes, run this cell again.

# %% id="ce037cd9"
ref_relu = F.relu(torch.tensor([-0.5, 1.2, 0.0, -3.1, 0.7]))
assert torch.equal(ref_relu, torch.tensor([0.0, 1.2, 0.0, 0.0, 0.7]))
assert int((ref_relu > 0).sum()) == 2
if check("6.2", relu_output, relu_active, relu_fraction).passed:
    print(
        "ReLU:",
        ref_relu.numpy(),
        f"  surviving: {int((ref_relu > 0).sum())} of 5 = {(ref_relu > 0).float().mean():.0%}",
    )
else:
    print("The reference appears here once 6.2 passes.")

# %% [markdown] id="4f2a9c61"
# The positive entries pass unchanged, the negative ones become 0, and the 0.0 entry is 0 either way. How negative a unit was is lost (−0.5 and −3.1 both give 0), but *which* units are active is itself information that the next layer reads.

# %% [markdown] id="c5a90955"
# ## Recap
#
# - The FFN, max(0, xW₁ + b₁)W₂ + b₂, expands each position to d_ff = 4·d_model, applies ReLU, and compresses back. It is position-wise: the same weights at every position, different weights in every layer.
# - Attention only mixes value vectors (a convex combination, linear in V); the FFN's ReLU and wide hidden layer compute new features. The FFN holds two-thirds of an encoder layer's parameters, half of a decoder layer's.
# - Worked example: hidden [−0.10, 0.26, 0.37, −0.02, −0.20, 0.46], ReLU [0, 0.26, 0.37, 0, 0, 0.46]; with the course's W₂ the FFN gives [0.21, −0.15, 0.33], the residual [0.71, −0.45, 1.13], and LayerNorm [0.3691, −1.3668, 0.9977].
# - A residual connection, x + Sublayer(x), gives the gradient an identity path around every sub-layer: a deep stack with neither residuals nor norms gives its first layers no gradient at all.
# - LayerNorm normalises each position over its features with the population variance and ε inside the square root, then applies γ and β; it never mixes the sentences of a batch.
# - Post-norm, LN(x + F(x)), is the paper's; pre-norm, x + F(LN(x)), keeps a clean residual path. At initialisation their gradients are of the same order; the difference shows when training at a high learning rate without warm-up, where post-norm stalls.
# - Parameter counts: FFN 33,088 and encoder block 49,984 at (64, 8, 256); FFN 2,097,152 weights (2,099,712 with biases) at the base size.
#
# **Next:** lesson 7 assembles the whole encoder-decoder and trains it.
