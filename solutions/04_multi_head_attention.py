# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="aec7b190"
# # Lesson 4 · Multi-head attention
#
# > MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O, where head_i = Attention(Q W^Q_i, K W^K_i, V W^V_i)  (paper §3.2.2)
#
# Lesson 3 computed one set of attention weights: one way of looking at the sequence. A word often needs several at once. This lesson gives attention learned projections, runs several heads side by side, each in its own small subspace, and merges what they found. Then it trains a tiny model and watches two heads take on two different jobs.
#
# **How to use this notebook.** Run the cells from top to bottom (Shift+Enter). Cells marked ✏️ are yours: replace the part under `# YOUR CODE HERE`, run the cell, then run the `check(...)` cell under it. A check never crashes; it says ✓ **Passed**, ✗ **Not yet** with what looks wrong, or … **Not done yet**. Stuck? `hint("4.4")` shows one hint each time you run it.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor; a function you write returns a number when it computes a count, a rate or a loss, and otherwise PyTorch tensors. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="d1926f91" tags=["nbval-ignore-output"]
import math
import time

import matplotlib.pyplot as plt
import torch
from torch import nn

from course_lib import notebook
from course_lib.attention import MultiHeadAttention
from course_lib.checks import check, hint
from course_lib.experiments import specialised_heads
from course_lib.head_task import head_weights, relation_weights
from course_lib.parameters import count_parameters
from course_lib.widgets import AttentionExample, AttentionExplorer, draw_attention

notebook.start(seed=0)


# %% [markdown] id="7938d9f8"
# ## Learning objectives
#
# By the end of this lesson you can:
#
# 1. write the multi-head formulas and give the shape of the tensors at every stage;
# 2. explain why d_k = d_model/h keeps the cost close to that of a single full-width head;
# 3. trace one head's projections by hand;
# 4. split and merge heads with reshape and transpose, and count the parameters of the layer.

# %% [markdown] id="3b69b1d4"
# ## 1. The idea
#
# **One head, one view.** Take the sentence *"The animal didn't cross the street because it was too tired."* To make sense of "it", a reader uses several relations at the same time:
#
# - **coreference**: "it" is the animal;
# - **the predicate**: "it" is what is *tired*;
# - **the frame**: the "because" clause explains the crossing that did not happen;
# - **ruling out**: "street" is a noun too, but a street cannot be tired.
#
# A single attention head produces one row of weights per word: one mixture of the other words. If that row has to serve coreference and the predicate at once, it ends up as a blur of both. Several heads can each commit to one relation.
#
# **The formulas.** Each head i has its own learned projections W^Q_i, W^K_i (d_model × d_k) and W^V_i (d_model × d_v), and runs the attention of lesson 3 on the projected vectors:
#
# - head_i = Attention(Q W^Q_i, K W^K_i, V W^V_i) = softmax(Q W^Q_i (K W^K_i)ᵀ / √d_k) · V W^V_i
# - MultiHead(Q, K, V) = Concat(head_1, …, head_h) · W^O, with W^O of shape (h·d_v) × d_model.
#
# In self-attention Q = K = V = X, the layer's input. The paper's base model uses h = 8 heads and d_k = d_v = d_model/h = 512/8 = 64; the eight heads of 64 concatenate back to 512, and W^O is 512 × 512.
#
# **The picture** (the paper's Figure 2, right): V, K and Q each pass through h separate linear maps; the h scaled dot-product attentions run in parallel; their outputs are concatenated; one last linear map, W^O, mixes the heads and returns to d_model.
#
# **What it costs.** Nothing extra, almost. Eight heads of 64 dimensions do about the same arithmetic as one head of 512 and use the same number of weights: the width is *divided* among the heads, not multiplied. Section 4 measures this.
#
# **What heads learn.** Trained models show heads that follow syntactic dependencies, resolve coreference, match similar meanings, or simply look a fixed number of positions back. None of this is built in: the heads start out random and specialise only through training. Section 5 trains a small model and watches it happen.

# %% [markdown] id="1f4e8a3f"
# ## 2. The shape at every stage
#
# In code, nobody builds h small matrices. One d_model × d_model map for Q produces all the heads' queries at once, side by side: columns 0..d_k−1 belong to head 1, the next d_k columns to head 2, and so on. Splitting the heads is then a reshape of the last axis, (B, T, d_model) → (B, T, h, d_k), followed by a transpose that puts the heads in front, (B, h, T, d_k), so that one batched matrix product attends in every head at once. Merging reverses both steps. This requires d_model to be divisible by h.
#
# | stage | shape |
# |---|---|
# | input x | (B, T, d_model) |
# | q = x W^Q, all heads side by side | (B, T, d_model) |
# | split: view, then transpose(1, 2) | (B, h, T, d_k) |
# | scores and weights, per head | (B, h, T, T) |
# | heads = weights · v | (B, h, T, d_k) |
# | merge: transpose(1, 2), then reshape | (B, T, h·d_k) = (B, T, d_model) |
# | output = concat · W^O | (B, T, d_model), the shape of the input |
#
# The cell below follows one batch through `course_lib`'s `MultiHeadAttention` with the base model's sizes and records every shape.

# %% id="8cb89408"
def trace_shapes(mha, x):
    """Each stage of mha's self-attention on x, done by hand; returns {stage: shape}."""
    B, T, D = x.shape
    H, Dk = mha.n_heads, mha.d_k
    q, k, v = mha.w_q(x), mha.w_k(x), mha.w_v(x)  # (B, T, D) each
    q_heads, k_heads, v_heads = (
        t.view(B, T, H, Dk).transpose(1, 2) for t in (q, k, v)
    )  # (B, T, D) -> (B, T, H, Dk) -> (B, H, T, Dk)
    scores = q_heads @ k_heads.transpose(-2, -1) / math.sqrt(Dk)  # (B, H, T, T)
    heads = scores.softmax(dim=-1) @ v_heads  # (B, H, T, Dk)
    concat = heads.transpose(1, 2).reshape(B, T, D)  # (B, H, T, Dk) -> (B, T, H, Dk) -> (B, T, D)
    output = mha.w_o(concat)
    torch.testing.assert_close(output, mha(x, x, x)[0])  # the module's own forward agrees
    stages = dict(
        x=x, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat, output=output
    )
    return {name: tuple(t.shape) for name, t in stages.items()}


mha_base = MultiHeadAttention(d_model=512, n_heads=8)
x_base = torch.randn(2, 10, 512)
with torch.no_grad():
    shapes_base = trace_shapes(mha_base, x_base)
for stage, shape in shapes_base.items():
    print(f"{stage:>8}: {shape}")
assert shapes_base["q_heads"] == (2, 8, 10, 64) and shapes_base["scores"] == (2, 8, 10, 10)
assert shapes_base["output"] == shapes_base["x"] == (2, 10, 512)

# %% [markdown] id="478d267f"
# **One big map is h small ones.** Head i's slice of the big W^Q is exactly a d_model × d_k matrix W^Q_i. `nn.Linear` stores its weight as (out, in), so the paper's W^Q is `w_q.weight.T`, and W^Q_i is its columns i·d_k … (i+1)·d_k − 1:

# %% id="2ddcd1d6"
with torch.no_grad():
    q_all = mha_base.w_q(x_base).view(2, 10, 8, 64).transpose(1, 2)  # (B, H, T, Dk)
    W_Q = mha_base.w_q.weight.T  # the paper's W^Q, (d_model, d_model)
    for i in range(8):
        W_Q_i = W_Q[:, i * 64 : (i + 1) * 64]  # (512, 64)
        b_i = mha_base.w_q.bias[i * 64 : (i + 1) * 64]
        torch.testing.assert_close(q_all[:, i], x_base @ W_Q_i + b_i)
print(f"W^Q_i has shape {tuple(W_Q_i.shape)}; head i's queries are x @ W^Q_i for all 8 heads.")

# %% [markdown] id="c0e12d4a"
# ## 3. Worked example: two heads by hand
#
# Two heads, d_model = 4, d_k = d_v = 2, self-attention on two words, so Q = K = V = X:
#
# X = [[1.0, 0.5, −0.5, 0.2], [0.3, −0.1, 0.8, 0.6]]
#
# W^Q_1 = [[0.5, 0.1], [−0.2, 0.4], [0.3, −0.1], [0.1, 0.3]], W^K_1 = [[0.3, −0.2], [0.1, 0.5], [−0.1, 0.2], [0.4, 0.1]]
#
# **Head 1's queries, Q1 = X·W^Q_1**, one entry at a time: each is the dot product of a row of X with a column of W^Q_1, four products added up.

# %% id="485f1846"
X = torch.tensor([[1.0, 0.5, -0.5, 0.2], [0.3, -0.1, 0.8, 0.6]], dtype=torch.float64)
W_Q1 = torch.tensor([[0.5, 0.1], [-0.2, 0.4], [0.3, -0.1], [0.1, 0.3]], dtype=torch.float64)
W_K1 = torch.tensor([[0.3, -0.2], [0.1, 0.5], [-0.1, 0.2], [0.4, 0.1]], dtype=torch.float64)

Q1 = X @ W_Q1  # (2, 4) @ (4, 2) -> (2, 2)
for i in range(2):
    for j in range(2):
        terms = X[i] * W_Q1[:, j]  # the four products of row i of X and column j of W^Q_1
        shown = " + ".join(f"({t:.2f})" for t in terms.tolist())
        print(f"Q1[{i + 1},{j + 1}] = {shown} = {Q1[i, j]:.2f}")
print("Q1 =", Q1.numpy().round(2).tolist())
assert torch.allclose(Q1, torch.tensor([[0.27, 0.41], [0.47, 0.09]], dtype=torch.float64))

# %% [markdown] id="c02e7265"
# > **Errata: Q1 row 2 is [0.47, 0.09], not [0.47, 0.07].** A widely reprinted version of this example prints 0.07 for the second entry of row 2, although it writes out the same four terms, 0.03 − 0.04 − 0.08 + 0.18, whose sum is 0.09 (the line above). The other three entries of Q1 are right. The slip changes head 1's weights for word 2 from [0.5177, 0.4823] to [0.5182, 0.4818]; the cells below compute both.
#
# **Head 1's keys, scores and weights.** K1 = X·W^K_1, then the attention of lesson 3 with d_k = 2:

# %% id="6d6597b8"
K1 = X @ W_K1
scores1 = Q1 @ K1.T  # (2, 2): row = query word, column = key word
scaled1 = scores1 / math.sqrt(2)
weights1 = scaled1.softmax(dim=-1)
print("K1 =", K1.numpy().round(2).tolist())
print("Q1·K1ᵀ =", scores1.numpy().round(4).tolist())
print("÷ √2   =", scaled1.numpy().round(4).tolist())
print("weights =", weights1.numpy().round(4).tolist())
assert torch.allclose(K1, torch.tensor([[0.48, -0.03], [0.24, 0.11]], dtype=torch.float64))
assert torch.allclose(
    scores1, torch.tensor([[0.1173, 0.1099], [0.2229, 0.1227]], dtype=torch.float64), atol=1e-4
)
assert torch.allclose(
    scaled1, torch.tensor([[0.0829, 0.0777], [0.1576, 0.0868]], dtype=torch.float64), atol=1e-4
)
assert torch.allclose(
    weights1, torch.tensor([[0.5013, 0.4987], [0.5177, 0.4823]], dtype=torch.float64), atol=1e-4
)

Q1_reprinted = torch.tensor([[0.27, 0.41], [0.47, 0.07]], dtype=torch.float64)
weights1_reprinted = (Q1_reprinted @ K1.T / math.sqrt(2)).softmax(dim=-1)
print("with the reprinted 0.07, row 2 would be", weights1_reprinted[1].numpy().round(4).tolist())
assert torch.allclose(
    weights1_reprinted[1], torch.tensor([0.5182, 0.4818], dtype=torch.float64), atol=1e-4
)

# %% [markdown] id="e95637a4"
# The weights are almost uniform, about ½ each. Nothing is wrong: the projections are small numbers, so the scores are all close to 0.1, and the softmax of nearly equal scores is nearly flat. In a trained model the projections grow until the scores separate; section 5 shows heads whose weights are close to 0 or 1.
#
# **The rest of the layer, with matrices chosen for this course.** The example as usually printed stops here: it never gives the value projection of head 1, any of head 2's matrices, or W^O. To finish the computation, this course picks them (they come from no paper and no trained model; any small numbers would do):
#
# | matrix | value (chosen for this course) |
# |---|---|
# | W^V_1 | [[0.2, 0.4], [0.1, −0.3], [0.5, 0.1], [−0.2, 0.3]] |
# | W^Q_2 | [[0.1, −0.3], [0.4, 0.2], [−0.2, 0.5], [0.3, 0.1]] |
# | W^K_2 | [[−0.1, 0.2], [0.3, 0.1], [0.2, 0.4], [0.1, −0.2]] |
# | W^V_2 | [[0.3, −0.1], [−0.2, 0.2], [0.1, 0.3], [0.4, 0.1]] |
# | W^O | [[0.5, 0.1, 0, −0.2], [0.1, 0.5, 0.2, 0], [0, −0.1, 0.5, 0.1], [0.2, 0, 0.1, 0.5]] |

# %% id="26220c44"
W_V1 = torch.tensor([[0.2, 0.4], [0.1, -0.3], [0.5, 0.1], [-0.2, 0.3]], dtype=torch.float64)
W_Q2 = torch.tensor([[0.1, -0.3], [0.4, 0.2], [-0.2, 0.5], [0.3, 0.1]], dtype=torch.float64)
W_K2 = torch.tensor([[-0.1, 0.2], [0.3, 0.1], [0.2, 0.4], [0.1, -0.2]], dtype=torch.float64)
W_V2 = torch.tensor([[0.3, -0.1], [-0.2, 0.2], [0.1, 0.3], [0.4, 0.1]], dtype=torch.float64)
W_O = torch.tensor(
    [[0.5, 0.1, 0, -0.2], [0.1, 0.5, 0.2, 0], [0, -0.1, 0.5, 0.1], [0.2, 0, 0.1, 0.5]],
    dtype=torch.float64,
)


def expect(name, got, expected, decimals=4):
    """Print a rounded matrix and assert it matches the expected one to that many decimals."""
    print(f"{name:>8} = {got.numpy().round(decimals).tolist()}")
    assert torch.allclose(
        got, torch.tensor(expected, dtype=torch.float64), atol=0.6 * 10**-decimals
    )


V1 = X @ W_V1
head1 = weights1 @ V1  # (2, 2) @ (2, 2)
expect("V1", V1, [[-0.04, 0.26], [0.33, 0.41]], 2)
expect("head_1", head1, [[0.1445, 0.3348], [0.1384, 0.3323]])

Q2, K2, V2 = X @ W_Q2, X @ W_K2, X @ W_V2
weights2 = (Q2 @ K2.T / math.sqrt(2)).softmax(dim=-1)
head2 = weights2 @ V2
expect("Q2", Q2, [[0.46, -0.43], [0.01, 0.35]], 2)
expect("K2", K2, [[-0.03, 0.01], [0.16, 0.25]], 2)
expect("weights2", weights2, [[0.5028, 0.4972], [0.4848, 0.5152]])
expect("V2", V2, [[0.23, -0.13], [0.43, 0.25]], 2)
expect("head_2", head2, [[0.3294, 0.0589], [0.3330, 0.0658]])

concat = torch.cat([head1, head2], dim=-1)  # (2, 2) and (2, 2) -> (2, 4)
output = concat @ W_O  # (2, 4) @ (4, 4) -> (2, 4): every output feature mixes both heads
expect("concat", concat, [[0.1445, 0.3348, 0.3294, 0.0589], [0.1384, 0.3323, 0.3330, 0.0658]])
expect("output", output, [[0.1175, 0.1489, 0.2376, 0.0335], [0.1156, 0.1467, 0.2396, 0.0385]])

# %% [markdown] id="dbd18fab"
# Each word comes out as a new 4-dimensional vector that combines both heads: W^O is what lets head 1's findings and head 2's flow into every output feature. In a trained model, one head might track syntactic neighbours and the other words of related meaning.
#
# **Cross-check with `course_lib`.** Load these matrices into `MultiHeadAttention(4, 2, bias=False)`: each of its d_model × d_model maps holds head 1's matrix in its first two columns and head 2's in the last two (transposed, because `nn.Linear` stores (out, in)).

# %% id="b7a5c291"
mha_example = MultiHeadAttention(d_model=4, n_heads=2, bias=False).double()
with torch.no_grad():
    mha_example.w_q.weight.copy_(torch.cat([W_Q1, W_Q2], dim=1).T)  # [W^Q_1 | W^Q_2]ᵀ
    mha_example.w_k.weight.copy_(torch.cat([W_K1, W_K2], dim=1).T)
    mha_example.w_v.weight.copy_(torch.cat([W_V1, W_V2], dim=1).T)
    mha_example.w_o.weight.copy_(W_O.T)
    ref_output, ref_weights = mha_example(X[None], X[None], X[None], need_weights=True)
torch.testing.assert_close(ref_output[0], output)
torch.testing.assert_close(ref_weights[0], torch.stack([weights1, weights2]))
print(
    "course_lib.attention.MultiHeadAttention agrees: output",
    ref_output[0].numpy().round(4).tolist(),
)

# %% [markdown] id="82bce889"
# ## 4. Why d_k = d_model / h
#
# Compare two ways of getting h views of the sequence at d_model = 512:
#
# - **split heads** (the paper): h heads of width d_k = 512/h. Each head's W^Q_i, W^K_i, W^V_i are 512 × d_k, so the h heads together have the projections of one head of width 512, whatever h is, and W^O takes back h·d_k = 512 features. Each head's scores cost T²·d_k multiply-adds, so all heads together cost T²·512, as one head of width 512 would.
# - **full-width heads**: h heads of width 512 each. Every projection is h times larger, W^O takes h·512 features instead of 512, and the scores cost h times as much.
#
# The cell counts both for a sentence of T = 50 tokens, as multiples of one head of width 512. (Exercise 4.2 asks for the number of weights itself.)

# %% id="a96fcc6a"
D, T = 512, 50


def cost(h, width):
    """(weights, score multiply-adds) of h heads of the given width at d_model = D."""
    weights = 3 * h * D * width + h * width * D  # W^Q, W^K, W^V of every head, and W^O
    return weights, h * T * T * width  # the scores: Q Kᵀ in every head


one_head = cost(1, D)
print(f"{'':>8} {'split heads':>21} {'full-width heads':>21}")
print(f"{'h':>3} {'d_k':>4} {'weights':>10} {'scores':>10} {'weights':>10} {'scores':>10}")
for h in (1, 2, 4, 8, 16, 32, 64):
    split, full = cost(h, D // h), cost(h, D)
    times = [f"{c / one:g}×" for c, one in zip(split + full, one_head + one_head)]
    print(f"{h:>3} {D // h:>4} " + " ".join(f"{t:>10}" for t in times))
    assert split == one_head and full == (h * one_head[0], h * one_head[1])

# %% [markdown] id="ff7d41b4"
# Splitting keeps both the weights and the score work at those of one head of width 512, for every h; full-width heads pay h times both, 8 times at h = 8. The same dimensions are divided into parallel subspaces instead of new parameters being added. (W^V and the weighted sum of the values, softmax·V, behave the same way.)
#
# The flip side: as h grows, each head gets fewer dimensions. The paper's Table 3 (rows A, English-German development set, with the amount of computation held constant) measured:
#
# | h | d_k | BLEU |
# |---|---|---|
# | 1 | 512 | 24.9 |
# | 4 | 128 | 25.5 |
# | 8 | 64 | 25.8 |
# | 16 | 32 | 25.8 |
# | 32 | 16 | 25.4 |
#
# One head is 0.9 BLEU worse than eight; too many heads hurt as well. Exercise 4.3 asks why.
#
# Other sizes you will meet: d_model = 64 with 8 heads gives heads of 8 (a common tutorial size); GPT-3 uses 96 heads at d_model = 12,288, heads of 128.

# %% [markdown] id="d13a0e10"
# ## 5. Heads that specialise
#
# The heads of a fresh model are random. Do they really take on different jobs when a task needs it? Here is a task that needs two relations at once.
#
# **The task.** Sequences of 8 random symbols from an alphabet of 8, x_0 … x_7. At every position t ≥ 1 the model must output
#
# y_t = (x_0 − 2·x_{t−1}) mod 8,
#
# which needs the **first** symbol and the **previous** one, in a known order. (Position 0 has no previous symbol and is not scored.) One head that spreads its weight evenly over the two positions gets the average of their two values, which is the same for (a, b) and (b, a), so it cannot tell which symbol came first. Two heads, one per relation, solve it cleanly.
#
# **The model.** Token embeddings plus learned position embeddings (attention by itself does not know where a token sits; lesson 5 covers this), one `MultiHeadAttention` with d_model = 32 and 4 heads of d_k = 8, then a small MLP that predicts y_t. There is no residual connection, so everything the prediction needs must travel through attention. `course_lib/head_task.py` holds the data generator, the model and the training loop (Adam, learning rate 0.01, 200 batches of 128 sequences).
#
# First, the model at initialisation: how much weight does each head put on the previous and on the first position? A head that looks everywhere equally would score 1/8 = 0.125 on both.

# %% id="92a6db86"
model = specialised_heads.new_model(seed=0)  # the same model whatever ran before
eval_tokens, eval_targets = specialised_heads.evaluation_batch(seed=0)  # 1,000 sequences
with torch.no_grad():
    weights_init = head_weights(model, eval_tokens)  # (1000, 4, 8, 8): every head's weights
relations_init = relation_weights(weights_init)
before = specialised_heads.measure(model, eval_tokens, eval_targets)
print(f"accuracy at initialisation: {before['accuracy']:.0%} (chance: 1/8 = 12.5%)")

# %% [markdown] id="9a4eebf1"
# Now train it (a few seconds on one CPU thread):

# %% id="0672b560" tags=["nbval-ignore-output"]
start = time.perf_counter()
losses = specialised_heads.train_model(model, seed=0)  # Adam, lr 0.01, 200 batches of 128
seconds = time.perf_counter() - start
print(f"trained in {seconds:.1f} s: loss {losses[0]:.2f} at step 1, {losses[-1]:.2g} at step 200")

# %% id="73aed5ec" tags=["nbval-ignore-output"]
with torch.no_grad():
    weights_trained = head_weights(model, eval_tokens)
relations_trained = relation_weights(weights_trained)
after = specialised_heads.measure(model, eval_tokens, eval_targets)

print("mean weight on          previous   first")
for label, r in (("initialisation", relations_init), ("trained", relations_trained)):
    for h in range(4):
        print(f"{label:>14}, head {h + 1}:   {r['previous'][h]:.2f}      {r['first'][h]:.2f}")
print(f"accuracy after training: {after['accuracy']:.1%}")
looks_back = int(relations_trained["previous"].argmax())
looks_first = int(relations_trained["first"].argmax())
print(
    f"head {looks_back + 1} looks at the previous symbol, head {looks_first + 1} at the first one"
)

# %% id="9c8ecd49"
# Which head takes which job changes from run to run; that two heads specialise does not.
print(specialised_heads.EXPERIMENT.verify(specialised_heads.summarize(before, after)))

# %% [markdown] id="c42d4f08"
# At initialisation no head prefers the previous or the first position: each gets a mean weight between about 0.08 and 0.18 on them (the table above), around 1/8 = 0.125, while some other positions get far more (the top row of maps below). The heads are not flat (random embeddings give some scores a large spread), but their large weights land on arbitrary positions. After training, one head puts almost all its weight on the previous position and another almost all on the first: two relations, two heads, learned from nothing but the loss. The remaining heads need not do anything clean: they may copy one of the two patterns or mix them, since two heads were enough. Which head takes which job depends on the random start; that *some* head does is what the task forces.
#
# The maps, averaged over the 1,000 evaluation sequences: each row is a query position, each column the position it attends to. Top row at initialisation, bottom row after training. A "previous" head shows a line just below the diagonal; a "first" head a bright first column.

# %% id="0205c49d"
fig, axes = plt.subplots(2, 4, figsize=(13, 7.2), layout="constrained")
positions = [f"x{t}" for t in range(8)]
for row, (label, weights) in enumerate(
    (("at initialisation", weights_init), ("after training", weights_trained))
):
    mean_map = weights.mean(dim=0)  # (H, T, T), averaged over the sequences
    for h in range(4):
        mesh = draw_attention(
            axes[row, h],
            mean_map[h],
            positions,
            positions,
            title=f"head {h + 1}, {label}",
            annotate=False,
        )
fig.colorbar(mesh, ax=axes, shrink=0.6, label="mean attention weight")
fig.suptitle("Mean attention per head over 1,000 sequences: random at first, then two specialists")
at_start = max(per_head.max().item() for per_head in relations_init.values())
trained = {relation: per_head.max().item() for relation, per_head in relations_trained.items()}
notebook.show(
    f"Eight heatmaps of mean attention weights over {len(weights_init):,} sequences, query "
    f"position (rows) against key position (columns), {positions[0]} to {positions[-1]}, one per "
    f"head. Top row, the {weights_init.shape[1]} heads at initialisation: none puts a mean weight "
    f"of more than {at_start:.2f} on the previous or the first position. "
    f"Bottom row, after training: one head puts a mean weight of {trained['previous']:.1f} on the "
    "previous position (a line just below the diagonal), another one of "
    f"{trained['first']:.1f} on the first (a bright first column)."
)

# %% [markdown] id="7a1008ff"
# ## 6. Explore: every head, one sequence at a time
#
# The explorer of lesson 3, now with the heads of this lesson. Pick an example, then a head:
#
# - **trained, one sequence**: the first evaluation sequence after training. Step through the four heads; for the "previous" head each row lights up one cell left of the diagonal, for the "first" head the first column.
# - **at initialisation, same sequence**: the same four heads before training: some weights are large already, but on positions with no pattern the task could use.
# - **worked example, 2 heads**: section 3's two heads (d_k = 2). Lower the temperature τ to exaggerate their small differences.
#
# The labels are the symbols of the sequence (a to h), in position order. The model's maps are shown as they are (τ = 1); the √d_k checkbox does not apply to weights a model already computed.

# %% id="f3db662e" tags=["nbval-ignore-output"]
symbols = ["abcdefgh"[s] for s in eval_tokens[0].tolist()]
explorer = AttentionExplorer(
    [
        AttentionExample.from_weights(
            "trained, one sequence", symbols, symbols, weights_trained[0].clamp(min=1e-12)
        ),
        AttentionExample.from_weights(
            "at initialisation, same sequence", symbols, symbols, weights_init[0].clamp(min=1e-12)
        ),
        AttentionExample.from_qk(
            "worked example, 2 heads",
            ["word 1", "word 2"],
            torch.stack([Q1, Q2]).float(),
            torch.stack([K1, K2]).float(),
        ),
    ]
)
explorer

# %% [markdown] id="60e16966"
# ## 7. Exercises
#
# ### ✏️ 4.1 Recall: why split the width?
#
# Why give each head d_k = d_model/h dimensions instead of all d_model?
#
# - **a.** A softmax is only reliable on vectors of at most 64 dimensions, so wider heads must be cut into pieces.
# - **b.** Full-width heads would all learn the same pattern, and they would cost the same as split ones anyway.
# - **c.** It gives each of the h heads more parameters of its own than one full-width head would have.
# - **d.** All h heads together then have the weights and the arithmetic of one full-width head.
#
# Set `answer_4_1` to a letter and run the check.

# %% id="4767627c"
# BEGIN SOLUTION
answer_4_1 = "d"
# END SOLUTION

# %% id="cbedddf0"
check("4.1", answer_4_1)

# %% [markdown] id="7aaaf80c"
# Section 4 compared the two designs as multiples of one head of width 512. Now count the weights themselves.
#
# ### ✏️ 4.2 Apply: count the weights
#
# For d_model = 512 and h = 8, ignoring biases, how many weights do W^Q_i, W^K_i, W^V_i (all heads) and W^O hold together? Put the total in `total_weights`. Then count again with a bias on each of the four projections, as `nn.Linear` has by default: `total_with_bias`. Work it out on paper first.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="6d0cd4c1"
# BEGIN SOLUTION
per_projection = 8 * (512 * 64)  # 8 heads × (d_model × d_k) = 262,144
total_weights = 3 * per_projection + 512 * 512  # W^Q, W^K, W^V, and W^O (512 × 512)
total_with_bias = total_weights + 4 * 512  # a bias of 512 on each of the four projections
# END SOLUTION

# %% id="ade06d58"
check("4.2", total_weights, total_with_bias)

# %% [markdown] id="4c806660"
# ### ✏️ 4.3 Extend: too many heads
#
# With d_model fixed at 512, why does quality drop when h becomes large (h = 32 scored below h = 8 and 16 in the paper)?
#
# - **a.** d_k = d_model/h shrinks as h grows, until each head compares queries and keys in too few dimensions.
# - **b.** Each extra head brings its own projections, so the parameters grow with h and the model overfits.
# - **c.** Every head computes its own T × T score matrix, so the cost grows with h and training gets too slow.
# - **d.** With more heads, each head's softmax gets a smaller share of the total weight, so every head is fainter.

# %% id="a334cef6"
# BEGIN SOLUTION
answer_4_3 = "a"
# END SOLUTION

# %% id="65b8cf2e"
check("4.3", answer_4_3)

# %% [markdown] id="b1058343"
# The head width as h grows at d_model = 512, and the parameter count as a multiple of one head of width 512, as in section 4: it does not move.

# %% id="c0e6d85b"
counts = {}  # the exact count is 4.2's answer: its reference, at the end, prints it
for h in (1, 8, 16, 32, 64):
    counts[h] = count_parameters(MultiHeadAttention(512, h, bias=False))["total"]
    print(f"h = {h:>2}: d_k = {512 // h:>3}, weights {counts[h] / counts[1]:g}×")
assert len(set(counts.values())) == 1
assert (512 // 32, 512 // 64) == (16, 8)


# %% [markdown] id="cc548c89" tags=["free-text"]
# **Your answer:** in two or three sentences, why can a head with d_k = 8 tell apart fewer relations than a head with d_k = 64?
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* With d_model fixed, every extra head takes its dimensions from the others: d_k = 16 at h = 32, 8 at h = 64. A head's compatibility function is a dot product of two d_k-dimensional projections, a matrix of rank at most d_k; at rank 8 or 16 it can only separate a few directions, so it cannot distinguish fine relations. The heads become noisy or redundant, and the fixed budget is spread too thin. The paper reduced d_k and saw quality drop, with h = 32 below h = 8 and 16.
# <!-- END SOLUTION -->

# %% [markdown] id="8f4dc819"
# ## 8. Labs
#
# ### ✏️ 4.4 (L4.A) Split the heads
#
# Write `split_heads(x, n_heads)`: from (B, T, d_model) to (B, n_heads, T, d_k). Each head takes d_k *consecutive* features of every position. Use `view` (or `reshape`) and `transpose`.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="6f8bcae0"
def split_heads(x, n_heads):
    """(B, T, D) -> (B, H, T, D // H): head h gets features h·d_k .. (h+1)·d_k - 1."""
    # BEGIN SOLUTION
    B, T, D = x.shape
    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)  # (B, T, H, Dk) -> (B, H, T, Dk)
    # END SOLUTION


# %% id="751923bc"
check("4.4", split_heads)

# %% [markdown] id="33bd8fb5"
# Why not simply `x.view(B, H, T, Dk)`? It has the right shape, but `view` reads the numbers in memory order: all of position 0's features, then all of position 1's, and so on. Cutting that stream into H blocks hands each "head" whole positions instead of a slice of every position's features. Here is the difference on a tiny tensor whose entries name their position and feature (`course_lib`'s `MultiHeadAttention` splits the right way):

# %% id="829c8d92"
B, T, D, H = 1, 3, 4, 2
# entry = 10·position + feature, shape (B, T, D) = (1, 3, 4)
x_named = (10 * torch.arange(T)[:, None] + torch.arange(D)).float()[None]
right = x_named.view(B, T, H, D // H).transpose(1, 2)
wrong = x_named.view(B, H, T, D // H)
print("x (positions × features):\n", x_named[0].int().numpy())
print("head 1, right (features 0-1 of every position):\n", right[0, 0].int().numpy())
print("head 1, view(B, H, T, Dk) (whole positions, cut anywhere):\n", wrong[0, 0].int().numpy())
assert right[0, 0].tolist() == [[0, 1], [10, 11], [20, 21]]
assert wrong[0, 0].tolist() == [[0, 1], [2, 3], [10, 11]]


# %% [markdown] id="4238e1b1"
# ### ✏️ 4.5 (L4.A) Merge the heads
#
# Write `merge_heads(x)`, the inverse: from (B, H, T, d_k) back to (B, T, H·d_k), with head 1's features first, then head 2's, and so on (the paper's Concat).
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="30f2cc2d"
def merge_heads(x):
    """(B, H, T, Dk) -> (B, T, H·Dk): the heads side by side, the inverse of split_heads."""
    # BEGIN SOLUTION
    B, H, T, Dk = x.shape
    return x.transpose(1, 2).reshape(B, T, H * Dk)  # (B, T, H, Dk) -> (B, T, D)
    # END SOLUTION


# %% id="526cf7b7"
check("4.5", merge_heads)

# %% [markdown] id="c9e39a74"
# A trap here: after `transpose`, the tensor's numbers are no longer stored in the new order, so `.view` refuses (`.reshape` copies when it must, and `.contiguous().view(...)` does the same explicitly). The reference round trip with the right split:

# %% id="668f5d2b"
x_round = torch.randn(2, 10, 64)
heads_round = x_round.view(2, 10, 8, 8).transpose(1, 2)
try:
    heads_round.view(2, 10, 64)
except RuntimeError as error:
    assert "view size is not compatible" in str(error)
    print("view after transpose fails: its memory is no longer in (B, T, H, Dk) order")
merged = heads_round.transpose(1, 2).reshape(2, 10, 64)
assert torch.equal(merged, x_round)
print("split then merge gives x back exactly:", torch.equal(merged, x_round))


# %% [markdown] id="d6099f70"
# ### ✏️ 4.6 (L4.A) The multi-head forward pass
#
# Write `multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads)` for self-attention. The four weights are the paper's matrices of shape (d_model, d_model), applied as `x @ w_q` (no biases). Project, split, attend in all heads at once (scale by √d_k), merge, multiply by W^O. Return `(output, weights)`: output (B, T, d_model) and every head's weights (B, H, T, T). Your `split_heads` and `merge_heads` are the building blocks.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="7e3289b2"
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    """Self-attention with n_heads heads; returns (output (B, T, D), weights (B, H, T, T))."""
    # BEGIN SOLUTION
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))  # (B, H, T, Dk) each
    d_k = q.shape[-1]
    weights = (q @ k.transpose(-2, -1) / math.sqrt(d_k)).softmax(dim=-1)  # (B, H, T, T)
    return merge_heads(weights @ v) @ w_o, weights
    # END SOLUTION


# %% id="e9338c8b"
check("4.6", multi_head_attention)

# %% [markdown] id="7f68b4ed"
# The lab's module: self-attention with dim = 64 and 4 heads (d_k = 16) on a random batch x of shape (2, 10, 64), here `course_lib`'s reference. It returns the output and the weights of every head. For token 0 of the first sequence, each head's three most attended positions:

# %% id="a840d359"
torch.manual_seed(51)
mha_64 = MultiHeadAttention(d_model=64, n_heads=4)
x_64 = torch.randn(2, 10, 64)
with torch.no_grad():
    out_64, weights_64 = mha_64(x_64, x_64, x_64, need_weights=True)
print("output", tuple(out_64.shape), "weights", tuple(weights_64.shape))
assert out_64.shape == (2, 10, 64) and weights_64.shape == (2, 4, 10, 10)
top3 = weights_64[0, :, 0].topk(3, dim=-1)  # batch item 0, every head, query token 0
for h in range(4):
    places = ", ".join(
        f"{i} ({w:.2f})" for i, w in zip(top3.indices[h].tolist(), top3.values[h].tolist())
    )
    print(f"head {h + 1}: positions {places}")
assert len({tuple(t) for t in top3.indices.tolist()}) > 1, "the heads should not all agree"
print(f"largest weight of any head on token 0: {top3.values.max():.2f}")
assert top3.values.max() < 0.5

# %% [markdown] id="1b48a855"
# The heads already disagree before any training, simply because their random projections differ; and none is sharp: no head gives any position half of token 0's weight, where the trained heads of section 5 reached 1.00. Training sharpens and specialises them, as section 5 showed.
#
# ### ✏️ 4.7 (L4.A) "Almost identical"?
#
# A popular tutorial compares the parameters of three `nn.Linear(64, 64)` maps (one head's Q, K and V) with those of its 4-head attention module (dim = 64) and calls the two counts almost identical. Count them: `params_three_linears` and `params_four_heads` (the module has biases on all four of its linear maps, as `nn.Linear` does by default).
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="76bddda6"
# BEGIN SOLUTION
params_three_linears = 3 * (64 * 64 + 64)
params_four_heads = 4 * (64 * 64 + 64)
# END SOLUTION

# %% id="49bc8417"
check("4.7", params_three_linears, params_four_heads)


# %% [markdown] id="b37f1c67"
# ### ✏️ 4.8 (L4.B) Every stage, its shape and its values
#
# Write `walk_stages(x, w_q, w_k, w_v, w_o, n_heads)`: follow x, of shape (B, T, d_model), through multi-head self-attention as in 4.6, and return a dict with the tensor after every stage, under the names `"x"` (the input), `"q"` (after W^Q, before the split), `"q_heads"` (after the split), `"scores"` (QKᵀ/√d_k, before the softmax), `"heads"` (weights times values), `"concat"` (after the merge) and `"output"` (after W^O). The check runs it on seeded inputs at d_model = 12, 64 and 512 and compares every stage's shape and values with the reference. Build it from your own `split_heads` and `merge_heads`. Section 2's `trace_shapes` shows the steps, but on course_lib's `MultiHeadAttention`, the reference the check compares with: an answer that uses course_lib's modules gets no point.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="5bb5054b"
def walk_stages(x, w_q, w_k, w_v, w_o, n_heads):
    """{stage: tensor} for one pass of multi-head self-attention on x (B, T, d_model)."""
    # BEGIN SOLUTION
    d_k = x.shape[-1] // n_heads
    q = x @ w_q  # (B, T, d_model)
    q_heads = split_heads(q, n_heads)  # (B, H, T, d_k)
    k_heads, v_heads = split_heads(x @ w_k, n_heads), split_heads(x @ w_v, n_heads)
    scores = q_heads @ k_heads.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, T, T)
    heads = scores.softmax(dim=-1) @ v_heads  # (B, H, T, d_k)
    concat = merge_heads(heads)  # (B, T, d_model)
    output = concat @ w_o  # (B, T, d_model)
    return dict(x=x, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat, output=output)
    # END SOLUTION


# %% id="3ca14a79"
check("4.8", walk_stages)

# %% [markdown] id="768945ae"
# The reference walk through `course_lib`'s module, for heads of 8 (d_model = 64) and heads of 64 (d_model = 512). The output always has the input's shape, which is what lets the Transformer stack these layers.

# %% id="753602fd"
for d_model, n_heads in ((64, 8), (512, 8)):
    with torch.no_grad():
        shapes = trace_shapes(MultiHeadAttention(d_model, n_heads), torch.randn(2, 10, d_model))
    print(f"d_model = {d_model}, h = {n_heads}: " + " -> ".join(str(s) for s in shapes.values()))
    assert shapes["output"] == shapes["x"] == (2, 10, d_model)
    assert shapes["q_heads"] == (2, n_heads, 10, d_model // n_heads)


# %% [markdown] id="b15eb421"
# ### ✏️ 4.9 (L4.C) Count the parameters of your module
#
# Write `mha_parameter_count(d_model, n_heads, bias)`: the number of parameters of a multi-head attention layer with four d_model × d_model projections, with or without their biases. Expected: 16,640 and 16,384 at d_model = 64; 1,050,624 and 1,048,576 at d_model = 512. Work it out from d_model and bias. Counting the parameters of a module built for the purpose, course_lib's `MultiHeadAttention` (as the cells of this lesson do) or PyTorch's `nn.MultiheadAttention`, is not the formula asked for: such an answer gets no point.
#
# *What you may use:* anything but `course_lib`'s reference code; not `nn.MultiheadAttention`.

# %% id="375a7b4d"
def mha_parameter_count(d_model, n_heads, bias):
    """Parameters of W^Q, W^K, W^V and W^O (plus biases if bias)."""
    # BEGIN SOLUTION
    per_projection = d_model * d_model + (d_model if bias else 0)
    return 4 * per_projection  # n_heads does not change the count
    # END SOLUTION


# %% id="88c9046c"
check("4.9", mha_parameter_count)

# %% [markdown] id="ad29a533"
# The reference counts, taken from the modules themselves:

# %% id="b97d1a51"
expected_counts = {
    (64, True): 16_640,
    (64, False): 16_384,
    (512, True): 1_050_624,
    (512, False): 1_048_576,
}
for (d_model, bias), expected in expected_counts.items():
    counts = {
        count_parameters(MultiHeadAttention(d_model, h, bias=bias))["total"] for h in (1, 4, 8)
    }
    (n,) = counts  # the same for 1, 4 and 8 heads
    print(f"d_model = {d_model:>3}, bias = {bias!s:>5}: {n:>9,}")
    assert n == expected

# %% [markdown] id="658a5d17"
# ## 9. The references
#
# Each exercise's reference, computed with `course_lib` rather than taken from your answers. Each one appears once its exercise's check passes: after you have tried the exercise, run its cell here again.

# %% [markdown] id="d5d1e12f"
# **4.2.** The weights of the layer at d_model = 512 and h = 8, counted on `course_lib`'s module, with full-width heads at h = 8 for comparison.

# %% id="257155bb"
counted = {b: count_parameters(MultiHeadAttention(512, 8, bias=b))["total"] for b in (False, True)}
full_width = 8 * count_parameters(MultiHeadAttention(512, 1, bias=False))["total"]
assert counted == {False: 1_048_576, True: 1_050_624} and full_width == 8_388_608
assert 8 * (512 * 64) == 512 * 512 == 262_144
if check("4.2", total_weights, total_with_bias).passed:
    print("the 8 slices W^Q_i of 512 × 64 hold exactly one 512 × 512 map: 262,144 weights")
    for bias, n in counted.items():
        print(f"bias={bias!s:>5}: {n:,} parameters")
    print(f"full-width heads, h = 8: {full_width:,} weights, eight times one head's")
else:
    print("The reference appears here once 4.2 passes.")

# %% [markdown] id="89f5873c"
# **4.7.** The tutorial's two counts, taken from the modules themselves, with a one-head module beside them.

# %% id="3dbc3f4d"
three_linears = sum(p.numel() for _ in range(3) for p in nn.Linear(64, 64).parameters())
four_heads, one_head = (count_parameters(MultiHeadAttention(64, h))["total"] for h in (4, 1))
assert (three_linears, four_heads, one_head) == (12_480, 16_640, 16_640)
assert four_heads - three_linears == 64 * 64 + 64 == 4_160
if check("4.7", params_three_linears, params_four_heads).passed:
    print(
        f"three nn.Linear(64, 64): {three_linears:,}; 4-head module: {four_heads:,}; "
        f"1-head module: {one_head:,}"
    )
    extra = four_heads - three_linears
    print(f"difference: {extra:,} (+{extra / three_linears:.0%}), one 64 → 64 map with bias")
else:
    print("The reference appears here once 4.7 passes.")

# %% [markdown] id="a7e0c4d2"
# > **Errata: the two counts of the tutorial are not "almost identical".** The comparison sets three bare linear maps against a module that also has its output map W^O: the difference is exactly one 64 → 64 map with bias, a third more parameters. The point the comparison wanted to make does hold when like is compared with like: splitting into heads adds no parameters. With W^O, one head and four heads have the same count, as the cell above shows.

# %% [markdown] id="972e8204"
# ## Recap
#
# - Multi-head attention runs h attentions in parallel, each on its own learned projections: head_i = Attention(QW^Q_i, KW^K_i, VW^V_i); the heads are concatenated and mixed by W^O.
# - d_k = d_model/h: the heads divide the width instead of multiplying it, so the layer has 4·d_model² weights (1,048,576 at 512; 1,050,624 with biases) and about the arithmetic of one full-width head, whatever h is. Too many heads leave each one too few dimensions.
# - In code: one d_model × d_model map per projection, `view(B, T, H, d_k).transpose(1, 2)` to split, `transpose(1, 2).reshape(B, T, d_model)` to merge. The output has the input's shape.
# - Heads specialise only through training: on a task that needs the first and the previous token, one head learned each relation.
# - Errata: in the worked example, Q1 row 2 is [0.47, 0.09] (not 0.07), so head 1's weights for word 2 are [0.5177, 0.4823]; and 12,480 vs 16,640 parameters differ by one output map, W^O, not by the heads.
#
# **Next:** attention itself ignores word order (the model in section 5 needed position embeddings to find "previous" and "first"). Lesson 5 builds the paper's sinusoidal positional encodings.
