# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="12b2c2f3"
# # Lesson 3 · Scaled dot-product attention
#
# > Attention(Q, K, V) = softmax(QKᵀ / √d_k) · V  (paper §3.2.1, Eq. 1)
#
# Lesson 2 showed that a dot product measures how well two vectors line up. This lesson turns that measurement into a mechanism: every position asks a question, every position offers an answer, and the dot products decide who listens to whom. It is the one equation the whole Transformer is built on.
#
# **How to use this notebook.** Run the cells from top to bottom (Shift+Enter). Cells marked ✏️ are yours: replace the part under `# YOUR CODE HERE`, run the cell, then run the `check(...)` cell under it. A check never crashes; it says ✓ **Passed**, ✗ **Not yet** with what looks wrong, or … **Not done yet**. Stuck? `hint("3.2")` shows one hint each time you run it.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor; a function you write returns a number when it computes a count, a rate or a loss, and otherwise PyTorch tensors. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="90d96cdd" tags=["nbval-ignore-output"]
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from course_lib import notebook
from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import check, hint
from course_lib.experiments import score_scale
from course_lib.figure_text import describe_attention
from course_lib.masks import causal_mask, padding_mask, target_mask
from course_lib.widgets import AttentionExplorer, draw_attention, lesson3_examples

notebook.start(seed=0)

# %% [markdown] id="9a75a953"
# ## Learning objectives
#
# By the end of this lesson you can:
#
# 1. say what queries, keys and values are and where they come from;
# 2. compute softmax(QKᵀ/√d_k)V by hand and in code, including masking;
# 3. explain why the scores are divided by √d_k, in terms of softmax saturation and gradients;
# 4. build a causal mask and explain why the decoder cannot do without it.

# %% [markdown] id="adabadff"
# ## 1. The idea
#
# **An analogy.** Picture writing a report on a book with the whole book open on a very large desk. For each sentence you write, you sweep your eyes over everything, read a few passages closely, skim some, and ignore most. Which passages get your attention depends on what the sentence you are writing needs. Attention does this for every position of a sequence at once.
#
# **Queries, keys and values.** Each position turns its input vector into three vectors, using three learned matrices (lesson 4 adds them):
#
# | vector | the question it answers | used for |
# |---|---|---|
# | **query** q | *What am I looking for?* | compared with every key |
# | **key** k | *What do I offer to whoever is searching?* | compared with every query |
# | **value** v | *What do I hand over if I am attended to?* | mixed into the output |
#
# In *self*-attention all three come from the same sequence, so Q, K and V have one row per position. The key and the value of a position are deliberately different vectors: what makes a word *relevant* is not the same as what it should *contribute*.
#
# **Five steps** (the paper's Figure 2, left: MatMul → Scale → Mask → SoftMax → MatMul):
#
# 1. **Score** every query against every key: S = QKᵀ, one row per query.
# 2. **Scale**: divide by √d_k, where d_k is the length of a key (section 3 explains why).
# 3. **Mask** (optional): set the scores of forbidden pairs to −∞, so they get weight exactly 0.
# 4. **Softmax** along each row: the scores become weights that are positive and sum to 1.
# 5. **Mix**: multiply the weights by V; each position receives a weighted average of the values.
#
# **Shapes.** With a batch dimension B and, later, H heads: Q is (B, H, T_q, d_k), K is (B, H, T_k, d_k), V is (B, H, T_k, d_v); the scores and weights are (B, H, T_q, T_k) and the output is (B, H, T_q, d_v). Nothing in the formula needs T_q = T_k: in the decoder's cross-attention the queries come from the target and the keys from the source.

# %% [markdown] id="e0b1dccf"
# ## 2. Worked example: "the cat sat"
#
# Three words, d_k = d_v = 2, with small hand-picked vectors (no learning yet):
#
# | word | query | key | value |
# |---|---|---|---|
# | the | [1, 0] | [1, 0] | [0.1, 0.9] |
# | cat | [0, 1] | [0, 1] | [0.8, 0.2] |
# | sat | [1, 1] | [0.5, 0.5] | [0.5, 0.5] |
#
# We go through the five steps in float64, printing every intermediate, and assert each number.

# %% id="e9cea26b"
tokens = ["the", "cat", "sat"]
Q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
K = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], dtype=torch.float64)
V = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]], dtype=torch.float64)
d_k = Q.shape[-1]

# Step 1: every query against every key.
scores = Q @ K.T  # (3, 2) @ (2, 3) -> (3, 3): row i = query i, column j = key j
print("scores QKᵀ:\n", scores.numpy())
assert torch.equal(
    scores, torch.tensor([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [1.0, 1.0, 1.0]], dtype=torch.float64)
)

# Step 2: scale by 1/sqrt(d_k) = 1/sqrt(2) ≈ 0.7071.
scaled = scores / math.sqrt(d_k)
print("scaled:\n", scaled.numpy().round(3))
assert torch.allclose(
    scaled[0], torch.tensor([0.7071, 0.0, 0.3536], dtype=torch.float64), atol=1e-4
)

# %% [markdown] id="ac18c93f"
# Step 3 (the mask) is skipped: every word may look at every other. Step 4 is the softmax, written out: exponentiate, then divide each row by its sum.

# %% id="3c3f2f40"
exps = scaled.exp()
row_sums = exps.sum(dim=-1, keepdim=True)
weights = exps / row_sums  # Step 4: softmax along each row
print("e^scaled:\n", exps.numpy().round(4))
print("row sums:", row_sums.squeeze().numpy().round(4))
print("weights:\n", weights.numpy().round(4))

assert torch.allclose(exps[0], torch.tensor([2.0281, 1.0, 1.4241], dtype=torch.float64), atol=1e-4)
assert torch.allclose(
    row_sums.squeeze(), torch.tensor([4.4522, 4.4522, 6.0843], dtype=torch.float64), atol=1e-4
)
assert torch.allclose(
    weights[0], torch.tensor([0.4555, 0.2246, 0.3199], dtype=torch.float64), atol=1e-4
)
assert torch.allclose(
    weights[1], torch.tensor([0.2246, 0.4555, 0.3199], dtype=torch.float64), atol=1e-4
)
assert torch.allclose(weights[2], torch.full((3,), 1 / 3, dtype=torch.float64))
assert torch.allclose(weights.sum(dim=-1), torch.ones(3, dtype=torch.float64))

# %% id="1e614193"
output = weights @ V  # Step 5: (3, 3) @ (3, 2) -> (3, 2)
print("output:\n", output.numpy().round(4))
assert torch.allclose(
    output,
    torch.tensor([[0.3852, 0.6148], [0.5468, 0.4532], [0.4667, 0.5333]], dtype=torch.float64),
    atol=1e-4,
)

# The same numbers from the course's reference implementation.
ref_output, ref_weights = scaled_dot_product_attention(Q, K, V)
torch.testing.assert_close(ref_weights, weights)
torch.testing.assert_close(ref_output, output)
print("course_lib.attention.scaled_dot_product_attention agrees.")

# %% [markdown] id="5a81dbd4"
# Output row 1 is the weighted sum of the three values: for "the", 0.4555·[0.1, 0.9] + 0.2246·[0.8, 0.2] + 0.3199·[0.5, 0.5] = [0.3852, 0.6148].
#
# **Reading the result.**
# - "the" gives the most weight to itself (0.456), then to "sat" (0.320), then to "cat" (0.225): its query [1, 0] lines up best with its own key [1, 0].
# - "cat" is the mirror image: its query [0, 1] favours its own key.
# - "sat" spreads its attention evenly (⅓ each) because its three scaled scores are equal.
# - Every output row is a blend of the whole sentence, weighted by relevance.

# %% id="0bff6673"
fig, ax = plt.subplots(figsize=(4.2, 3.6))
draw_attention(ax, weights, tokens, tokens, title='Attention weights for "the cat sat"')
notebook.show(describe_attention(weights, tokens, tokens))

# %% [markdown] id="1aad31e8"
# > **Errata: rounded weights, shifted outputs.** A widely reprinted version of this example gives the outputs of "the" and "cat" as [0.386, 0.615] and [0.547, 0.454]. The exact values round to **[0.385, 0.615]** and **[0.547, 0.453]**. The printed ones come from multiplying the 3-decimal weights, which sum to 1.001 rather than 1, by V. The cell below reproduces both.

# %% id="70bd5285"
rounded = weights.round(decimals=3)
print("3-decimal weights of 'the':", rounded[0].numpy(), "sum:", round(rounded[0].sum().item(), 3))
print("from rounded weights:", (rounded @ V)[:2].numpy().round(3).tolist())
print("exact, then rounded: ", output[:2].numpy().round(3).tolist())
assert (rounded @ V)[:2].round(decimals=3).tolist() == [[0.386, 0.615], [0.547, 0.454]]
assert output[:2].round(decimals=3).tolist() == [[0.385, 0.615], [0.547, 0.453]]

# %% [markdown] id="41762a06"
# ## 3. Why divide by √d_k?
#
# Suppose the components of q and k are independent with mean 0 and variance 1. Then q·k = Σᵢ qᵢkᵢ is a sum of d_k terms, each with mean 0 and variance 1, so **q·k has mean 0 and variance d_k**. For d_k = 64 its standard deviation is 8, so scores of ±8 are common. Dividing by √d_k brings the variance back to 1 whatever d_k is. A quick measurement:

# %% id="46ee5d93"
g = torch.Generator().manual_seed(0)  # these draws, whatever ran before
sampled = {dk: score_scale.sample_dots(dk, n=20_000, generator=g) for dk in (4, 16, 64, 256)}
print(f"{'d_k':>5} {'Var(q·k)':>10} {'Var(q·k/√d_k)':>15}")
for dk, dots in sampled.items():
    raw, unit = dots.var().item(), (dots / math.sqrt(dk)).var().item()
    print(f"{dk:>5} {raw:>10.1f} {unit:>15.2f}")
variance = score_scale.variance_measures(sampled)  # checked over many seeds by the course's tests
print(score_scale.EXPERIMENT.verify(variance, *variance))

# %% [markdown] id="cffbfbc7"
# Why do large scores hurt? The softmax exaggerates differences exponentially. Scores of [8, 0, −8] give weights of about [0.9997, 0.0003, 0.0000001]: one key takes everything. The gradient of the softmax is its Jacobian, ∂pᵢ/∂sⱼ = pᵢ(δᵢⱼ − pⱼ), and when one pᵢ is almost 1 and the others almost 0, every entry is almost 0. Almost no gradient flows back to the queries and keys, so they barely learn.

# %% id="20b21796"
softmax_jacobian = score_scale.softmax_jacobian  # diag(p) − p pᵀ: ∂p_i/∂s_j = p_i (δ_ij − p_j)


for s in ([8.0, 0.0, -8.0], [1.0, 0.0, -1.0]):
    p = torch.tensor(s, dtype=torch.float64).softmax(dim=-1)
    largest = softmax_jacobian(p).abs().max().item()
    shown = ", ".join(f"{x:.5g}" for x in p.tolist())
    print(f"scores {s}: weights [{shown}], largest Jacobian entry {largest:.5f}")

p_big = torch.tensor([8.0, 0.0, -8.0], dtype=torch.float64).softmax(dim=-1)
p_small = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64).softmax(dim=-1)
assert torch.allclose(
    p_big, torch.tensor([0.99966, 0.00034, 1.1e-7], dtype=torch.float64), atol=1e-5
)
assert abs(softmax_jacobian(p_big).abs().max().item() - 0.00034) < 1e-5
assert torch.allclose(p_small, torch.tensor([0.665, 0.245, 0.090], dtype=torch.float64), atol=1e-3)
assert abs(softmax_jacobian(p_small).abs().max().item() - 0.22) < 0.005

# %% [markdown] id="af802abf"
# The same effect as d_k grows: for one query against 10 random keys, the left panel shows how much weight the favourite key gets on average, the right panel how large the softmax's gradient is (the Frobenius norm of its Jacobian). Without scaling, attention collapses onto one key and the gradient fades; with scaling, both stay roughly level at every d_k.

# %% id="0f4e3cc5"
dims = [2**i for i in range(11)]  # d_k = 1 ... 1024
curves = {"unscaled, QKᵀ": [], "scaled, QKᵀ/√d_k": []}
g = torch.Generator().manual_seed(1)
scores = {
    dk: score_scale.one_query_ten_keys(dk, generator=g) for dk in dims
}  # (2000 queries, 10 keys)
for dk, dots in scores.items():
    for label, s in zip(curves, (dots, dots / math.sqrt(dk))):
        curves[label].append(score_scale.softmax_profile(s))  # mean largest weight, gradient norm

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
for (label, values), style in zip(curves.items(), ("o-", "s--")):
    for ax, column in zip(axes, zip(*values)):
        ax.plot(dims, column, style, label=label)
for ax, ylabel in zip(axes, ("mean largest weight (of 10 keys)", "mean softmax gradient norm")):
    ax.set(xscale="log", xlabel="d_k (log scale)", ylabel=ylabel)
    ax.set_xticks(dims[::2], [str(d) for d in dims[::2]])
    ax.legend()
axes[0].set_title("Unscaled scores collapse onto one key")
axes[1].set_title("...and the gradient vanishes")
# each curve as (mean largest weights, mean gradient norms), one number per d_k
(unscaled_max, unscaled_grad), (scaled_max, scaled_grad) = (zip(*v) for v in curves.values())
notebook.show(
    f"Two line charts against d_k from {dims[0]} to {dims[-1]:,} (log scale), one query and 10 "
    "random keys, unscaled (circles) and scaled by 1/√d_k (squares). Left, the mean largest "
    f"softmax weight: unscaled from {unscaled_max[0]:.2f} to {unscaled_max[-1]:.2f}, scaled "
    f"almost level, within {max(scaled_max) - min(scaled_max):.2f} across the widths. Right, the mean "
    f"softmax gradient norm: unscaled from {unscaled_grad[0]:.2f} to {unscaled_grad[-1]:.2f}, "
    f"scaled between {min(scaled_grad):.2f} and {max(scaled_grad):.2f}."
)

at_64 = dims.index(64)
unscaled_64, scaled_64 = curves["unscaled, QKᵀ"][at_64], curves["scaled, QKᵀ/√d_k"][at_64]
print(f"d_k = 64: softmax gradient norm {unscaled_64[1]:.2f} unscaled vs {scaled_64[1]:.2f} scaled")
saturation = score_scale.saturation_measures(scores[64])
# The largest weights at d_k = 64 are exercise 3.5's numbers: its reference, at the end, verifies them.
print(score_scale.EXPERIMENT.verify(saturation, "gradient_ratio_64"))

# %% [markdown] id="61857bf3"
# ## 4. Masks
#
# A mask says which (query, key) pairs are allowed. **This course uses one convention everywhere: a boolean mask where `True` means *may attend*.** It is the convention of `torch.nn.functional.scaled_dot_product_attention`. Beware: `nn.MultiheadAttention` and `nn.Transformer` use the opposite polarity (`True` = blocked), so pass them `~mask`.
#
# Masking happens *before* the softmax: forbidden scores become −∞, and e^−∞ = 0, so those keys get exactly zero weight while the remaining weights still sum to 1.
#
# The encoder needs no causal mask: it reads a sentence that is already complete, so every position may look at every other (only padding is hidden).
#
# **The causal mask.** When the decoder predicts word t, it must not see words t+1, t+2, ...: at generation time they do not exist yet. Query i may attend to keys 0..i, a lower-triangular pattern.

# %% id="4bb6b3c2"
mask = causal_mask(4)
print(mask.int().numpy())

tokens4 = ["je", "mange", "une", "pomme"]
q4, k4, v4 = torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8)
_, causal_weights_ref = scaled_dot_product_attention(q4, k4, v4, mask)
print("weights:\n", causal_weights_ref.numpy().round(3))
assert torch.all(causal_weights_ref.triu(diagonal=1) == 0)
assert torch.allclose(causal_weights_ref.sum(dim=-1), torch.ones(4))

# PyTorch's fused kernel uses the same polarity: True = may attend.
fused = F.scaled_dot_product_attention(q4, k4, v4, attn_mask=mask)
torch.testing.assert_close(fused, scaled_dot_product_attention(q4, k4, v4, mask)[0])

fig, ax = plt.subplots(figsize=(4.2, 3.6))
draw_attention(
    ax,
    causal_weights_ref,
    tokens4,
    tokens4,
    masked=~mask,
    title="Causal self-attention (× = masked)",
)
notebook.show(describe_attention(causal_weights_ref, tokens4, tokens4, masked=~mask))

# %% [markdown] id="e3ff24c7"
# **The padding mask.** Sentences in a batch have different lengths, so the short ones are padded with a pad token (id 0 here). Pad tokens carry no meaning and must get no attention. The mask depends on the *key* only, so it has shape (B, 1, 1, T) and broadcasts over heads and queries. The decoder combines both masks with `&`: a key is visible if it is in the past **and** is not padding.

# %% id="4f3d0fe7"
batch = torch.tensor([[5, 7, 9, 0, 0], [4, 2, 8, 6, 0]])  # two sentences, padded to length 5
pad = padding_mask(batch, pad_id=0)
print("padding mask", tuple(pad.shape), "\n", pad.squeeze().int().numpy())

q5, k5, v5 = (
    torch.randn(2, 1, 5, 8),
    torch.randn(2, 1, 5, 8),
    torch.randn(2, 1, 5, 8),
)  # (B, H, T, d_k)
_, w = scaled_dot_product_attention(q5, k5, v5, pad)
print(
    "weights on the padding keys:",
    w[0, 0, :, 3:].abs().max().item(),
    "and",
    w[1, 0, :, 4:].abs().max().item(),
)
assert torch.all(w[0, 0, :, 3:] == 0) and torch.all(w[1, 0, :, 4:] == 0)

dec = target_mask(batch, pad_id=0)
print("decoder mask", tuple(dec.shape), "for sentence 1:\n", dec[0, 0].int().numpy())

# %% [markdown] id="9fa5d010"
# **A trap: a row with nothing to attend to.** If every key of a query is masked, its scores are all −∞ and the softmax computes 0/0 = NaN. One NaN spreads to every position in the next layer (0 × NaN is NaN). `course_lib` returns an all-zero row instead, like PyTorch's fused kernel:

# %% id="78880d18"
all_hidden = torch.zeros(1, 3, dtype=torch.bool)
naive = torch.zeros(1, 3).masked_fill(~all_hidden, float("-inf")).softmax(dim=-1)
_, safe = scaled_dot_product_attention(
    torch.randn(1, 4), torch.randn(3, 4), torch.randn(3, 4), all_hidden
)
print("naive softmax:", naive.numpy(), "  course_lib:", safe.numpy())
assert torch.isnan(naive).all() and torch.equal(safe, torch.zeros(1, 3))

# %% [markdown] id="0cf89758"
# ## 5. Explore: the attention-map explorer
#
# Four examples to play with (hand-built, so that each shows one idea clearly; lesson 4 shows heads a model learned):
# - **the cat sat**: the worked example. Lower the temperature τ and watch "the" and "cat" commit to themselves; raise it and every row flattens towards ⅓.
# - **random vectors, d_k = 64**: untick *divide by √d_k* and the rows become nearly one-hot, the saturation of section 3. The figure reports the mean largest weight.
# - **two hand-built heads**, on the sentence "the animal didn't cross the street because it was too tired": one head looks at the previous word, the other makes "it" look for the noun it refers to. Switch heads, and turn on the causal mask to see what a decoder would be allowed to use.
# - **cross-attention, fr → en**, "je ne mange pas de pommes" attending to "i do not eat apples". The queries come from the French being written and the keys from the English source, so the map is 6 × 5 and the causal mask does not apply. "ne" and "pas" both look at "not"; no French word needs "do".
#
# *Save PNG* writes the current picture to this notebook's folder.

# %% id="1b7144a9" tags=["nbval-ignore-output"]
explorer = AttentionExplorer(lesson3_examples())
explorer

# %% [markdown] id="dab2c3f4"
# ## 6. Exercises
#
# ### ✏️ 3.1 Recall: why divide by √d_k?
#
# Which statement explains the 1/√d_k factor best?
#
# - **a.** It keeps the scores within float16's range: the dot products of d_k-dimensional vectors overflow half precision for large d_k.
# - **b.** It makes each row of weights sum to 1 at every d_k; without it the softmax's rows would sum to more than 1 as d_k grows.
# - **c.** q·k has standard deviation √d_k, so unscaled scores saturate the softmax as d_k grows and its gradients almost vanish.
# - **d.** It divides each score by the lengths of q and k, so attention compares directions only, like a cosine similarity in [−1, 1].
#
# Set `answer_3_1` to a letter, for example `answer_3_1 = "a"`, and run the check. Every option has an explanation, so the check is worth running even when you are sure.

# %% id="b54861a5"
# BEGIN SOLUTION
answer_3_1 = "c"
# END SOLUTION

# %% id="f472fcbc"
check("3.1", answer_3_1)

# %% [markdown] id="30af41d7"
# ### ✏️ 3.2 Apply: one query, two keys
#
# Take one query q = [1, 0], two keys K = [[1, 0], [0, 1]], one-dimensional values V = [[5], [3]], and d_k = 2. Compute the two attention weights (`apply_weights`, shape (2,)) and the output (`apply_output`, one number). Try it on paper first, then in code.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="75b97bb8"
q_apply = torch.tensor([1.0, 0.0])
K_apply = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
V_apply = torch.tensor([[5.0], [3.0]])
# BEGIN SOLUTION
scores_apply = K_apply @ q_apply / math.sqrt(2)  # [0.7071, 0]
apply_weights = scores_apply.softmax(dim=-1)  # [0.6698, 0.3302]
apply_output = apply_weights @ V_apply  # 0.6698·5 + 0.3302·3 = 4.3395
# END SOLUTION

# %% id="89ad1997"
check("3.2", apply_weights, apply_output)

# %% [markdown] id="2887f537"
# ### ✏️ 3.3 Extend: the causal weight pattern
#
# Four tokens whose scores are all zero, with the causal mask applied. What are the 4 × 4 attention weights? Predict them first, then compute `causal_weights` with torch.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="4d67939a"
# BEGIN SOLUTION
zero_scores = torch.zeros(4, 4)
future = ~torch.ones(4, 4, dtype=torch.bool).tril()
causal_weights = zero_scores.masked_fill(future, float("-inf")).softmax(dim=-1)
# END SOLUTION

# %% id="269fcf9d"
check("3.3", causal_weights)


# %% [markdown] id="4ef50439" tags=["free-text"]
# **Your answer:** why does a decoder need this mask when it *generates* text, and what goes wrong if it is trained without it?
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* At generation time the decoder produces one token at a time, so the tokens after position t do not exist yet when position t is predicted. Training has to recreate that situation: without the mask, position t can read token t+1, which is exactly the answer it is asked to predict. The training loss then falls quickly because the model learns to copy, and the model fails at generation, where there is nothing to copy. Lab 3.8 below measures this.
# <!-- END SOLUTION -->

# %% [markdown] id="cb172272"
# ## 7. Labs
#
# ### ✏️ 3.4 (L3.A) Write the attention function
#
# Write `attention(q, k, v, mask=None)` that returns `(output, weights)`. It must work for any number of leading dimensions, (T, d_k), (B, T, d_k) and (B, H, T, d_k) alike, so build it with `@` and `transpose(-2, -1)` rather than `torch.bmm` or `.T`, which only fit one rank. The mask, if given, is boolean with `True` = may attend.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="66e7b0df"
def attention(q, k, v, mask=None):
    """softmax(q kᵀ / √d_k) v; returns (output, weights). mask: True = may attend."""
    # BEGIN SOLUTION
    d_k = q.shape[-1]
    scores = (
        q @ k.transpose(-2, -1) / math.sqrt(d_k)
    )  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights
    # END SOLUTION


# %% id="5824bf5b"
check("3.4", attention)

# %% [markdown] id="ead94c85"
# The check tried your function on the shapes of three well-known tutorials, (1, 4, 8), (1, 1, 4, 16) and (1, 1, 4, 8), plus a causal mask and the worked example. Here is the reference on those shapes. The rows of weights sum to 1 only up to rounding: in float32 a sum can come out as 0.99999994, so compare with a tolerance (`torch.allclose`), never with `==`.

# %% id="c8d8c1e9"
for shape in [(1, 4, 8), (1, 1, 4, 16), (1, 1, 4, 8)]:
    q, k, v = torch.randn(shape), torch.randn(shape), torch.randn(shape)
    out, w = scaled_dot_product_attention(q, k, v)
    sums = w.sum(dim=-1)
    print(
        f"q, k, v {shape} -> output {tuple(out.shape)}, weights {tuple(w.shape)}; row sums within 1e-6 of 1: {torch.allclose(sums, torch.ones_like(sums), atol=1e-6)}"
    )
    assert out.shape == shape and w.shape == (*shape[:-1], shape[-2])


# %% [markdown] id="69721207"
# ### ✏️ 3.5 (L3.B) Saturation, measured
#
# How peaked does the softmax get without the scaling? Unscaled scores at d_k = 64 have standard deviation 8; divided by √64 they have standard deviation 1. Measure it: write `mean_max_weight(std, n, seed)`, which draws `n` rows of 10 random scores with standard deviation `std` from a generator seeded with `seed` (`torch.Generator().manual_seed(seed)`), takes the softmax of each row over its 10 scores, and returns the mean of the rows' largest weights, one number. Try it on std 8 and std 1.
#
# A measurement comes with a sampling error: a mean of n rows lands within about σ/√n of the exact value, where σ is the spread of one row's largest weight. So the check runs your function itself, for several standard deviations, seeds and sample sizes, and compares its results with the exact values, allowing for that error. A number typed in cannot pass, and a function that draws too few rows shows in how much its results scatter from seed to seed.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="c8d69b74"
def mean_max_weight(std, n=10_000, seed=0):
    """Mean, over n rows of 10 random scores of standard deviation std, of each row's largest
    softmax weight; the draws come from a generator seeded with seed."""
    # BEGIN SOLUTION
    g = torch.Generator().manual_seed(seed)  # the same seed, the same draws
    scores = std * torch.randn(n, 10, generator=g)  # (n, 10): n rows of 10 scores
    return scores.softmax(dim=-1).max(dim=-1).values.mean().item()
    # END SOLUTION


# %% id="e2beff4d"
check("3.5", mean_max_weight)


# %% [markdown] id="d746c708"
# ### ✏️ 3.6 (L3.C) A causal mask
#
# Write `make_causal_mask(T)`: a (T, T) boolean tensor, `True` where query i may attend to key j.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="691d0089"
def make_causal_mask(T):
    """(T, T) boolean, True on and below the diagonal."""
    # BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool).tril()
    # END SOLUTION


# %% id="faf2c851"
check("3.6", make_causal_mask)


# %% [markdown] id="efd17af6"
# ### ✏️ 3.7 (L3.C) A padding mask
#
# Write `make_padding_mask(tokens, pad_id)`: for token ids of shape (B, T), a boolean mask of shape (B, 1, 1, T) that is `True` for real tokens. The two extra axes let it broadcast over the heads and the query positions of the scores (B, H, T_q, T_k).
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="7e2d803b"
def make_padding_mask(tokens, pad_id):
    """(B, T) token ids -> (B, 1, 1, T) boolean, True where the token is not padding."""
    # BEGIN SOLUTION
    return (tokens != pad_id)[:, None, None, :]
    # END SOLUTION


# %% id="cc8e69f5"
check("3.7", make_padding_mask)

# %% [markdown] id="46ee84c9"
# ### ✏️ 3.8 (L3.C) Find the bug
#
# A popular tutorial trains its Transformer with a step like this:
#
# ```python
# logits = model(src, tgt_in)      # no target mask!
# loss = criterion(logits.reshape(-1, vocab_size), tgt_out.reshape(-1))
# ```
#
# Its model applies no mask unless given one, so during training every target position can see the whole target sequence. `course_lib`'s `Transformer` builds the right mask by default; to reproduce the bug we hand it a mask that allows everything. First, the leak itself: change the *last* target token and see whether the predictions at *earlier* positions move.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="a9236e68"
from course_lib.model import Transformer, TransformerConfig

torch.manual_seed(0)
model = Transformer(TransformerConfig.tiny(src_vocab_size=14, tgt_vocab_size=14)).eval()
src = torch.tensor([[4, 5, 6, 7, 8]])
tgt_in = torch.tensor([[1, 8, 7, 6, 5]])
changed = tgt_in.clone()
changed[0, -1] = 9
see_all = torch.ones(5, 5, dtype=torch.bool)

with torch.no_grad():
    for name, mask in [("no mask (the bug)", see_all), ("causal mask", causal_mask(5))]:
        before = model(src, tgt_in, tgt_mask=mask)
        after = model(src, changed, tgt_mask=mask)
        moved = (after - before)[0, :-1].abs().max().item()
        print(f"{name:>18}: earlier predictions moved by up to {moved:.2f}")
        assert (moved > 1e-3) if mask is see_all else (moved < 1e-6)


# %% [markdown] id="ef54f1ce"
# Now the fix. Write `make_decoder_mask(tgt_in, pad_id)` returning the mask the decoder's self-attention needs: causal **and** not padding, shape (B, 1, T, T). Your two functions above are the building blocks.

# %% id="645a23c3"
def make_decoder_mask(tgt_in, pad_id):
    """(B, T) target ids -> (B, 1, T, T) boolean: causal & not padding."""
    # BEGIN SOLUTION
    T = tgt_in.shape[1]
    return make_padding_mask(tgt_in, pad_id) & make_causal_mask(T)
    # END SOLUTION


# %% id="08cce2eb"
check("3.8", make_decoder_mask)

# %% [markdown] id="ce0c5db8"
# What the bug does to training, measured. Two identical tiny Transformers learn to reverse sequences of 8 symbols for 200 steps, one with the buggy all-visible mask, one with `course_lib`'s `target_mask` (the reference for your function). Then both translate 200 unseen sequences by greedy decoding, one token at a time, where there is no future to peek at.
#
# The experiment lives in `course_lib/experiments/leaky_decoder.py`, so that the course's tests can rerun it over many seeds and on the CPU kernels of other processors. Its training step is the tutorial's, plus a 50-step warm-up of the learning rate and gradient clipping, which keep every seed's run from diverging early; the two models differ only in the mask:
#
# ```python
# logits = model(b.src, b.tgt_in, tgt_mask=decoder_mask(b.tgt_in))  # the line the bug is in
# loss = F.cross_entropy(logits.flatten(0, 1), b.tgt_out.flatten(), ignore_index=PAD_ID)
# ```
#
# One run's final loss says little (it jumps from batch to batch, and its last digits differ between processors), so the losses below are the mean of the last 50 steps. (About 15 s.)

# %% id="b406d946" tags=["nbval-ignore-output"]
import time

from course_lib.experiments import leaky_decoder

start = time.perf_counter()
measured = leaky_decoder.run(seed=0)  # trains both decoders
for name, label in [("leaky", "no mask (bug)"), ("masked", "target_mask (fix)")]:
    print(
        f"{label:>18}: training loss {measured[name + '_loss']:.3f} (last 50 steps), "
        f"exact match when generating {measured[name + '_generates']:.0%}"
    )
print(f"({time.perf_counter() - start:.0f} s)")

# %% id="21fa8484"
print(leaky_decoder.EXPERIMENT.verify(measured))

# %% [markdown] id="6fef6098"
# A training loss near zero, yet the leaky decoder cannot generate: with the whole target in view, the cheapest way to predict position t + 1 was to read it from the input, and when generating that input does not exist yet. The training loss alone would never have told you.

# %% [markdown] id="45ac298b"
# ## 8. The references
#
# Each exercise's reference, computed with `course_lib` rather than taken from your answers. Each one appears once its exercise's check passes: after you have tried the exercise, run its cell here again.

# %% [markdown] id="db2b1753"
# **3.2.** One query against two keys, with `course_lib`'s `scaled_dot_product_attention`. An attention output is always a weighted *average* of the values: it lies between them, nearer the value of the key that matches the query better.

# %% id="a9b17dee"
if check("3.2", apply_weights, apply_output).passed:  # the reference, once yours passes
    ref_apply_output, ref_apply_weights = scaled_dot_product_attention(
        q_apply[None], K_apply, V_apply
    )
    shown = ref_apply_weights.squeeze().numpy().round(4)
    print(f"weights {shown}, output {ref_apply_output.item():.4f}")
    assert torch.allclose(ref_apply_weights.squeeze(), torch.tensor([0.6698, 0.3302]), atol=1e-4)
    assert abs(ref_apply_output.item() - 4.3395) < 1e-4
else:
    print('The reference appears here once check("3.2", ...) passes.')

# %% [markdown] id="6b6de5f4"
# **3.3.** The causal pattern of four equal scores: each row shares its weight equally among the tokens it may see.

# %% id="0f154ae2"
if check("3.3", causal_weights).passed:  # the reference, once yours passes
    _, ref_causal = scaled_dot_product_attention(
        torch.zeros(4, 1), torch.zeros(4, 1), torch.zeros(4, 1), causal_mask(4)
    )
    print(ref_causal.numpy().round(3))
    expected_pattern = torch.tensor(
        [[1, 0, 0, 0], [1 / 2, 1 / 2, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0], [1 / 4] * 4]
    )
    assert torch.allclose(ref_causal, expected_pattern)
else:
    print('The reference appears here once check("3.3", causal_weights) passes.')

# %% [markdown] id="8112da0f"
# **3.5.** The distribution behind the lab's two means, drawn afresh with the course's reference code: unscaled rows are almost always close to one-hot, while scaled rows share their weight. Each mean is a sample, printed beside the exact value (from 10 million rows) and its sampling error. Below them, section 3's gradient measure for the same two cases, and section 3's own experiment at d_k = 64 (one query against 10 random keys), whose figure drew the same two means.

# %% id="8671ef12"
if check("3.5", mean_max_weight).passed:  # shown once your measurement passes
    rows = torch.randn(10_000, 10, generator=torch.Generator().manual_seed(2))  # not yours
    largest = {std: (std * rows).softmax(dim=-1).max(dim=-1).values for std in (8.0, 1.0)}
    exact = {8.0: 0.866, 1.0: 0.320}  # the mean largest weight, from 10 million rows
    grad_norm = {
        std: softmax_jacobian((std * rows).softmax(dim=-1)).flatten(-2).norm(dim=-1).mean().item()
        for std in (8.0, 1.0)
    }

    fig, ax = plt.subplots(figsize=(6, 3.4))
    for (std, values), hatch in zip(largest.items(), ("//", "")):
        ax.hist(
            values.numpy(),
            bins=40,
            range=(0, 1),
            alpha=0.6,
            hatch=hatch,
            label=f"std {std:g}: mean {values.mean():.3f}",
        )
    ax.set(title="Largest of 10 softmax weights", xlabel="largest weight in the row", ylabel="rows")
    ax.legend()
    above = {std: (values > 0.9).float().mean().item() for std, values in largest.items()}
    notebook.show(
        f"Two histograms of the largest of 10 softmax weights in each of {len(rows):,} rows of "
        f"random scores. Scores of standard deviation 8 (hatched): mean {largest[8.0].mean():.3f}, "
        f"and {above[8.0]:.0%} of the rows above 0.9. Standard deviation 1: mean "
        f"{largest[1.0].mean():.3f}, and {above[1.0]:.0%} of the rows above 0.9."
    )
    for std, values in largest.items():
        error = values.std().item() / math.sqrt(len(values))  # σ/√n
        print(
            f"std {std:g}: mean largest weight {values.mean():.3f} from {len(values):,} rows "
            f"(exact {exact[std]:.3f}, sampling error ±{error:.3f})"
        )
    print(
        f"mean softmax gradient norm: {grad_norm[8.0]:.2f} (std 8) vs {grad_norm[1.0]:.2f} (std 1)"
    )
    largest_weights = score_scale.largest_weight_measures(rows)
    score_scale.EXPERIMENT.verify(largest_weights, *largest_weights)  # raises if not as above
    print(
        f"section 3, one query against 10 random keys at d_k = 64: largest weight "
        f"{unscaled_64[0]:.3f} unscaled vs {scaled_64[0]:.3f} scaled"
    )
    print(
        score_scale.EXPERIMENT.verify(
            saturation, "largest_weight_unscaled_64", "largest_weight_scaled_64_error"
        )
    )
else:
    print('The distribution appears here once check("3.5", mean_max_weight) passes.')

# %% [markdown] id="8fe21423"
# ## Recap
#
# - Attention scores each query against every key with a dot product, scales by 1/√d_k, masks, takes a row-wise softmax, and mixes the values with the weights: softmax(QKᵀ/√d_k)V.
# - Queries ask, keys advertise, values deliver; in self-attention all three come from the same sequence.
# - Without the scaling, scores have variance d_k, the softmax saturates and its gradient vanishes; with it, the variance is 1 at every d_k.
# - Masks set forbidden scores to −∞ *before* the softmax. In this course `True` means *may attend*; `nn.MultiheadAttention` uses the opposite polarity.
# - The decoder needs the causal mask: without it, training "succeeds" by copying and generation fails.
# - Errata: the worked example's outputs are [0.385, 0.615] and [0.547, 0.453]; the often printed [0.386, 0.615] and [0.547, 0.454] come from rounded weights.
#
# **Next:** lesson 4 gives attention learned projections and several heads that look at the sequence in different ways at the same time.
