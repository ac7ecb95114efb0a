# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="d3400ef2"
# # Project · A Transformer encoder layer in numpy
#
# > LayerNorm(x + Sublayer(x))  (paper §3.1)
#
# Seven lessons took the Transformer apart. This project puts one encoder layer back together with nothing but numpy: positional encoding, single-head self-attention, Add & Norm, a ReLU feed-forward network, and Add & Norm again. The input is the toy sentence "the cat sat"; each of its three words leaves the layer as an 8-dimensional vector that depends on the whole sentence. At the end, PyTorch acts as the referee: given the same weights, its layers must produce the same numbers as yours.
#
# **How to use this notebook.** Run the cells from top to bottom (Shift+Enter). Cells marked ✏️ are yours: replace the part under `# YOUR CODE HERE`, run the cell, then run the `check(...)` cell under it. A check never crashes; it says ✓ **Passed**, ✗ **Not yet** with what looks wrong, or … **Not done yet**. Stuck? `hint("8.2")` shows one hint each time you run it. The cells between the exercises use the course's own numpy reference, so the story goes on even while an exercise is unfinished.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor; a function you write returns a number when it computes a count, a rate or a loss, and otherwise NumPy arrays. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="8d52c67b" tags=["nbval-ignore-output"]
import matplotlib.pyplot as plt
import numpy as np
import torch

from course_lib import notebook
from course_lib import numpy_encoder as ref
from course_lib.attention import MultiHeadAttention, record_attention
from course_lib.checks import check, hint
from course_lib.figure_text import describe_attention
from course_lib.interop import encoder_layers_from_numpy
from course_lib.positional import sinusoidal_encoding
from course_lib.widgets import draw_attention

notebook.start(seed=0)

# %% [markdown] id="ce526f5c"
# ## Learning objectives
#
# By the end of this project you can:
#
# 1. implement every part of a post-norm encoder layer in numpy, vectorised, with the paper's shapes;
# 2. write a softmax that cannot overflow and a layer norm that cannot divide by zero, and say why each trick works;
# 3. check a layer's output against the properties it must have: rows of attention weights that sum to 1, rows of output with mean 0 and variance just below 1;
# 4. copy numpy weights into PyTorch modules (`nn.Linear` computes x Wᵀ) and use PyTorch as a referee.

# %% [markdown] id="dcf6e70c"
# ## 1. The plan
#
# One encoder layer, the paper's post-norm order (§3.1), for T = 3 tokens of width d_model = 8:
#
# | step | computation | shape |
# |---|---|---|
# | 1. position | x = embeddings + PE | (3, 8) |
# | 2. attention | Q = x W_Q, K = x W_K, V = x W_V; A = softmax(QKᵀ/√8); attn = A V | A (3, 3), attn (3, 8) |
# | 3. Add & Norm | x1 = LayerNorm(x + attn) | (3, 8) |
# | 4. feed-forward | hidden = ReLU(x1 W1 + b1); ffn = hidden W2 + b2 | hidden (3, 32), ffn (3, 8) |
# | 5. Add & Norm | out = LayerNorm(x1 + ffn) | (3, 8) |
#
# There is one head, as wide as the model (d_k = d_v = 8), and no output projection W^O. Positions are rows, so every projection is `x @ W` with W of shape (d_in, d_out).
#
# Two rules hold for every function you write: it returns a **new numpy array** (no torch tensors, no lists) and it **never changes its inputs** (`x -= ...` on an argument changes the caller's array too). The checks test both.

# %% [markdown] id="ec4d1877"
# ## 2. The fixed inputs
#
# All the numbers in this notebook follow from these choices. Keep them exactly, or the reference numbers will not reproduce.
#
# | item | value |
# |---|---|
# | random numbers | the legacy global numpy generator, `np.random.seed(42)`, called once |
# | tokens | "the" = 0, "cat" = 1, "sat" = 2 |
# | sizes | d_model = 8, d_ff = 32, d_k = d_v = 8 |
# | token embeddings | standard normal (3 × 8) × 0.5, **drawn first** |
# | weights | Glorot (Xavier) normal: standard normal (fan_in × fan_out) × √(2 / (fan_in + fan_out)) |
# | draw order | W_Q (8×8), W_K (8×8), W_V (8×8), W1 (8×32), W2 (32×8) |
# | biases | b1 = 0 (32), b2 = 0 (8) |
# | LayerNorm | γ = 1, β = 0 for both norms; ε = 1e-5 |

# %% id="ddad29e9"
TOKENS = ["the", "cat", "sat"]
SEQ_LEN, D_MODEL, D_FF = 3, 8, 32

np.random.seed(42)  # once: from here on, the draw order decides every number
embeddings = np.random.randn(SEQ_LEN, D_MODEL) * 0.5  # (T, D), drawn first


def xavier(fan_in, fan_out):
    """Glorot normal: standard normal scaled by sqrt(2 / (fan_in + fan_out))."""
    return np.random.randn(fan_in, fan_out) * np.sqrt(2.0 / (fan_in + fan_out))


W_Q = xavier(D_MODEL, D_MODEL)
W_K = xavier(D_MODEL, D_MODEL)
W_V = xavier(D_MODEL, D_MODEL)
W1 = xavier(D_MODEL, D_FF)
W2 = xavier(D_FF, D_MODEL)
b1, b2 = np.zeros(D_FF), np.zeros(D_MODEL)
gamma1, beta1 = np.ones(D_MODEL), np.zeros(D_MODEL)
gamma2, beta2 = np.ones(D_MODEL), np.zeros(D_MODEL)
params = ref.EncoderParams(W_Q, W_K, W_V, W1, b1, W2, b2, gamma1, beta1, gamma2, beta2)

print("Token embeddings (before positional encoding):")
for word, row in zip(TOKENS, embeddings):
    print(f"  {word!r}: {row.round(3).tolist()}")

assert np.allclose(
    embeddings.round(3),
    [
        [0.248, -0.069, 0.324, 0.762, -0.117, -0.117, 0.79, 0.384],
        [-0.235, 0.271, -0.232, -0.233, 0.121, -0.957, -0.862, -0.281],
        [-0.506, 0.157, -0.454, -0.706, 0.733, -0.113, 0.034, -0.712],
    ],
)

# The same draws, made by course_lib.numpy_encoder.
ref_embeddings, ref_params = ref.project_inputs()
assert np.array_equal(ref_embeddings, embeddings)
for name in ("w_q", "w_k", "w_v", "w1", "w2"):
    assert np.array_equal(getattr(ref_params, name), getattr(params, name)), name
print("course_lib.numpy_encoder.project_inputs() draws the same numbers.")

# %% [markdown] id="6eba1a0b"
# `params` bundles the weights in a `course_lib.numpy_encoder.EncoderParams`, whose fields are `w_q, w_k, w_v, w1, b1, w2, b2, gamma1, beta1, gamma2, beta2`. Your `encoder_layer` in exercise 8.9 reads them from there.
#
# > **Errata: the sample output does not match its own seed.** A widely circulated version of this project prints "the" as [0.248, −0.069, **0.323**, …] and gives "cat" and "sat" embeddings that no seed-42 run produces. The first draw of the seeded code is the one printed above: the third entry of "the" is 0.32384, which rounds to 0.324, and "cat" starts [−0.235, 0.271, −0.232, …].

# %% id="d5f349e2"
print(f"third entry of 'the': {embeddings[0, 2]:.5f} -> {embeddings[0, 2]:.3f}")
print(f"'cat' starts {embeddings[1, :3].round(3).tolist()}")
assert round(embeddings[0, 2], 3) == 0.324 and abs(embeddings[0, 2] - 0.32384) < 5e-6
assert embeddings[1, :3].round(3).tolist() == [-0.235, 0.271, -0.232]


# %% [markdown] id="f5ee9f61"
# ## 3. Step 1: positional encoding
#
# Attention treats its input as a set: nothing in softmax(QKᵀ/√d_k)V knows which token came first. The paper (§3.5) adds a fixed signal to each position's embedding:
#
# PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))
#
# Column 2i holds a sine and column 2i+1 the cosine **of the same angle**; i counts the (sin, cos) pairs. The first pair turns fastest (wavelength 2π positions), the last slowest (wavelength 10000 · 2π).
#
# ### ✏️ 8.1 Positional encoding
#
# Write `encode_positions(seq_len, d_model)`, returning the (seq_len, d_model) table as a float array. No Python loop is needed: a column of positions (seq_len, 1) divided by a row of 10000^(2i/d_model) values (1, d_model/2) broadcasts to every angle at once.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="a205a754"
def encode_positions(seq_len, d_model):
    """(seq_len, d_model) sinusoidal table: sin in the even columns, cos in the odd ones."""
    # BEGIN SOLUTION
    pos = np.arange(seq_len)[:, None]  # (T, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, D/2)
    angle = pos / 10000 ** (two_i / d_model)  # (T, 1) / (1, D/2) -> (T, D/2)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
    # END SOLUTION


# %% id="93eca6d6"
check("8.1", encode_positions)

# %% [markdown] id="2cb4aec1"
# The check compared your table with the reference at two sizes and looked for the usual slips: sin and cos swapped, an exponent of i/d_model or j/d_model instead of 2i/d_model, positions counted from 1. Here is the reference table for the project: row 0 is [0, 1, 0, 1, …] because sin 0 = 0 and cos 0 = 1, and the last columns barely move because their wavelength is thousands of positions.

# %% id="34f59138"
pe = ref.positional_encoding(SEQ_LEN, D_MODEL)
print(pe.round(4))
assert np.array_equal(pe[0], [0, 1, 0, 1, 0, 1, 0, 1])
assert np.allclose(
    pe[1], [0.8415, 0.5403, 0.0998, 0.9950, 0.0100, 1.0000, 0.0010, 1.0000], atol=5e-5
)
assert np.allclose(
    pe[2], [0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 1.0000], atol=5e-5
)

# course_lib's PyTorch table (float32) holds the same numbers.
torch_pe = sinusoidal_encoding(SEQ_LEN, D_MODEL).numpy()
print(
    "same as course_lib.positional.sinusoidal_encoding to 1e-7:",
    np.allclose(pe, torch_pe, atol=1e-7),
)
assert np.allclose(pe, torch_pe, atol=1e-7)

# %% [markdown] id="b81b0fc1"
# Adding the table to the embeddings gives the layer's input x. Row 0 of the table is [0, 1, 0, 1, …], so "the" is its embedding plus 1 at indices 1, 3, 5 and 7.

# %% id="e81f2a0e"
x = embeddings + pe  # (T, D)
print("After adding positional encoding:")
for word, row in zip(TOKENS, x):
    print(f"  {word!r}: {row.round(3).tolist()}")

assert np.allclose(
    x.round(3),
    [
        [0.248, 0.931, 0.324, 1.762, -0.117, 0.883, 0.79, 1.384],
        [0.607, 0.812, -0.132, 0.762, 0.131, 0.043, -0.861, 0.719],
        [0.403, -0.259, -0.255, 0.274, 0.753, 0.887, 0.036, 0.288],
    ],
    atol=1.01e-3,
)
assert np.allclose(x[0] - embeddings[0], [0, 1, 0, 1, 0, 1, 0, 1])

# %% [markdown] id="cd80dfef"
# > **Errata: post-PE vectors that contradict their own embeddings.** The circulated sample adds the table by hand and gets some entries wrong: its "cat" has 0.116 in the third place, and 0.116 + PE(1, 2) = 0.116 + 0.0998 = **0.216**, not the printed 0.126; its "sat" [0.28, 0.567, −0.088, …] plus PE(2) starts [1.189, **0.151, 0.111**], not [1.189, −0.087, −0.078]. The arithmetic, done by the table above:

# %% id="5a79e15e"
sample_cat_third = 0.116 + pe[1, 2]
sample_sat_start = np.array([0.28, 0.567, -0.088]) + pe[2, :3]
print(f"0.116 + PE(1, 2) = {sample_cat_third:.3f}")
print(f"[0.28, 0.567, -0.088] + PE(2)[:3] = {sample_sat_start.round(3).tolist()}")
assert round(sample_cat_third, 3) == 0.216
assert sample_sat_start.round(3).tolist() == [1.189, 0.151, 0.111]

# %% [markdown] id="38d9c491"
# ## 4. Step 2: a softmax that cannot overflow
#
# softmax(z)ᵢ = e^zᵢ / Σⱼ e^zⱼ turns a row of scores into weights that are positive and sum to 1. Written literally, it breaks on large inputs: a float64 holds numbers up to about 1.8e308, so e^1000 is `inf`, and inf / inf is `NaN`. Very negative inputs fail the other way: every e^zⱼ underflows to 0, and 0 / 0 is `NaN` too.
#
# The fix costs one line. Subtracting a constant c from every entry of a row changes nothing, because e^(zᵢ − c) / Σⱼ e^(zⱼ − c) = e^zᵢ / Σⱼ e^zⱼ. With c = the row's maximum, the largest exponent is e⁰ = 1 (no overflow), and the sum is at least 1 (no 0 / 0).

# %% id="242680b5"
big = np.array([[1000.0, 1001.0, 1002.0]])
with np.errstate(over="ignore", invalid="ignore"):  # the naive version warns, then returns NaN
    naive = np.exp(big) / np.exp(big).sum(axis=-1, keepdims=True)
shifted = np.exp(big - big.max(axis=-1, keepdims=True))
stable = shifted / shifted.sum(axis=-1, keepdims=True)
print("naive: ", naive)
print("stable:", stable.round(4), "= softmax([0, 1, 2])")
assert np.isnan(naive).all()
assert np.allclose(stable, ref.softmax(np.array([0.0, 1.0, 2.0])))


# %% [markdown] id="10b2b2ee"
# ### ✏️ 8.2 A numerically stable softmax
#
# Write `softmax(x)` for any 2-D array: one softmax per row (the last axis), each row shifted by **its own** maximum. `keepdims=True` keeps the reduced axis, so a (3, 1) column of row maxima lines up with the rows of a (3, n) array.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="cba4b5a5"
def softmax(x):
    """Row-wise softmax of a 2-D array, shifted by each row's maximum."""
    # BEGIN SOLUTION
    e = np.exp(x - x.max(axis=-1, keepdims=True))  # every exponent <= 0
    return e / e.sum(axis=-1, keepdims=True)
    # END SOLUTION


# %% id="ad0bf2dd"
check("8.2", softmax)

# %% [markdown] id="604a595a"
# The check ran your softmax on the project's scores, on a (2, 5) array (where a softmax over the wrong axis cannot hide), on rows around +1000 and −1000, and on rows spread over 1000 (where a shift by the row's minimum or mean still overflows). A shift by the maximum of the *whole* array passes the first row and fails the second: every entry of [−1000, −1003, …] sits about 2000 below the overall maximum, and e^−2000 underflows to 0. The reference handles both rows:

# %% id="03982e8f"
extreme = np.array([[1000.0, 1001, 1002, 1003], [-1000.0, -1003, -1001, -1002]])
weights_extreme = ref.softmax(extreme)
print(weights_extreme.round(4))
assert np.isfinite(weights_extreme).all()
assert np.allclose(weights_extreme.sum(axis=-1), 1.0)
assert np.allclose(weights_extreme[0], ref.softmax(np.array([0.0, 1, 2, 3])))


# %% [markdown] id="39da0221"
# ## 5. Step 3: self-attention
#
# Lesson 3's five steps, now in numpy: scores S = QKᵀ, one row per query; scale by 1/√d_k; softmax along each row; mix the values with the weights. Nothing in the formula needs as many queries as keys (T_q ≠ T_k in cross-attention), or values as wide as the keys (d_v ≠ d_k).
#
# ### ✏️ 8.3 Scaled dot-product attention
#
# Write `scaled_dot_product_attention(q, k, v)` for q (T_q, d_k), k (T_k, d_k) and v (T_k, d_v). Return the pair `(output, weights)`, with output (T_q, d_v) and weights (T_q, T_k). Use your `softmax`: the check runs 8.2's check on it first.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="4f2df64a"
def scaled_dot_product_attention(q, k, v):
    """softmax(q kᵀ / √d_k) v for 2-D arrays; returns (output, weights)."""
    # BEGIN SOLUTION
    d_k = q.shape[-1]
    weights = softmax(q @ k.T / np.sqrt(d_k))  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)
    return weights @ v, weights  # (T_q, T_k) @ (T_k, d_v) -> (T_q, d_v)
    # END SOLUTION


# %% id="4f79b483"
check("8.3", scaled_dot_product_attention)


# %% [markdown] id="37d1a05b"
# In *self*-attention, the queries, keys and values are three projections of the same x: Q = x W_Q, K = x W_K, V = x W_V, each (T, d_k) here.
#
# ### ✏️ 8.4 Single-head self-attention
#
# Write `self_attention(x, w_q, w_k, w_v)`: project x, then call your `scaled_dot_product_attention` (checked first, as in 8.3). Return `(output, weights)`. The check also feeds it a narrow head (d_k = 3 < d_model = 6): the scale is √d_k, the width of the queries, not √d_model.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="e46de65b"
def self_attention(x, w_q, w_k, w_v):
    """Single-head self-attention of x (T, d_model); returns (output, weights)."""
    # BEGIN SOLUTION
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (T, D) @ (D, d_k) -> (T, d_k)
    return scaled_dot_product_attention(q, k, v)
    # END SOLUTION


# %% id="324dca44"
check("8.4", self_attention)

# %% [markdown] id="4cac5a89"
# The reference on the project's x. First the scaled scores QKᵀ/√8, then the weights, one line per query token. The scores are small (between −0.75 and 0.27), so no row is close to one-hot: every token spreads its attention over all three.

# %% id="2447fd6a"
attn, A = ref.self_attention(x, W_Q, W_K, W_V)
Q, K, V = x @ W_Q, x @ W_K, x @ W_V
scores = Q @ K.T / np.sqrt(D_MODEL)  # (3, 8) @ (8, 3) -> (3, 3)
print("scaled scores:\n", scores.round(4))
print("Attention weights (4 dp):")
for word, row in zip(TOKENS, A):
    print(f"  {word!r} -> " + "  ".join(f"{u} {w:.4f}" for u, w in zip(TOKENS, row)))

assert np.allclose(
    scores,
    [[0.2662, 0.2498, -0.0960], [-0.4399, -0.7415, -0.0254], [0.1941, 0.1731, -0.0609]],
    atol=1e-4,
)
assert np.allclose(
    A, [[0.3732, 0.3671, 0.2598], [0.3074, 0.2274, 0.4653], [0.3631, 0.3556, 0.2814]], atol=1e-4
)
assert np.allclose(A, ref.softmax(scores)) and np.allclose(attn, A @ V)

# %% [markdown] id="491cfd4c"
# What the weights must satisfy, computed rather than read off: every entry strictly between 0 and 1 (without a mask, every token gives some weight to every token), and every row summing to 1 up to rounding.

# %% id="ad408209"
row_error = np.abs(A.sum(axis=1) - 1).max()
print(f"shapes: scores {scores.shape}, weights {A.shape}, attn {attn.shape}")
print(f"all weights strictly between 0 and 1: {bool(((A > 0) & (A < 1)).all())}")
print(f"largest |row sum - 1| below 1e-12: {row_error < 1e-12}")
assert scores.shape == A.shape == (3, 3) and attn.shape == (3, 8)
assert ((A > 0) & (A < 1)).all() and row_error < 1e-12

fig, ax = plt.subplots(figsize=(4.2, 3.6))
draw_attention(ax, A, TOKENS, TOKENS, title='Self-attention weights, "the cat sat"')
notebook.show(describe_attention(A, TOKENS, TOKENS))


# %% [markdown] id="005e72e0"
# "cat" gives almost half its attention (0.47) to "sat" and the least to itself; "the" and "sat" share theirs fairly evenly between "the" and "cat". With random weights, these preferences mean nothing yet: training is what would give them a meaning.
#
# ## 6. Step 4: Add & Norm
#
# **The residual.** The sub-layer's output is *added* to its input, x + attn: the layer only has to learn a correction to x, and gradients flow straight through the addition.
#
# **Layer norm.** Then each position's vector is normalised on its own, with its own mean μ and *population* variance σ² over the d_model features:
#
# LayerNorm(x) = γ · (x − μ) / √(σ² + ε) + β
#
# ε = 1e-5 sits inside the square root so that a constant row (σ² = 0) gives 0 / √ε = 0 instead of 0 / 0. γ and β are learned, per feature; here they start at 1 and 0.
#
# ### ✏️ 8.5 Layer norm
#
# Write `layer_norm(x, gamma, beta, eps=1e-5)` for a 2-D x: normalise each **row** (axis −1), then scale by gamma and shift by beta. The check tries a (4, 6) input with a constant row and a nearly constant one, random gamma and beta, and a different eps: on a (3, 8) input with γ = 1, β = 0, several mistakes would go unnoticed.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="fc5a9642"
def layer_norm(x, gamma, beta, eps=1e-5):
    """gamma * (x - mean) / sqrt(var + eps) + beta, per row, population variance."""
    # BEGIN SOLUTION
    mean = x.mean(axis=-1, keepdims=True)  # (T, 1)
    var = x.var(axis=-1, keepdims=True)  # (T, 1), divides by n
    return gamma * (x - mean) / np.sqrt(var + eps) + beta
    # END SOLUTION


# %% id="9960dfad"
check("8.5", layer_norm)

# %% [markdown] id="e724b0eb"
# The reference on x + attn. Before the norm, the rows have variances 1.016, 1.083 and 0.425; after it, every row has mean 0 and variance just below 1, so every row has length about √8 ≈ 2.828.

# %% id="b0b353f0"
before = x + attn
x1 = ref.layer_norm(before, gamma1, beta1)
print("variances before the first norm:", before.var(axis=1).round(3))
print(
    f"after: largest |mean| below 1e-9: {np.abs(x1.mean(axis=1)).max() < 1e-9}; variances {x1.var(axis=1).round(5)}"
)
print("row lengths:", np.linalg.norm(x1, axis=1).round(3))

assert np.allclose(before.var(axis=1), [1.016, 1.083, 0.425], atol=1.01e-3)
assert np.abs(x1.mean(axis=1)).max() < 1e-9
assert np.all((x1.var(axis=1) > 0.999) & (x1.var(axis=1) <= 1.0))
assert np.allclose(np.linalg.norm(x1, axis=1), np.sqrt(8), atol=1e-4)

# %% [markdown] id="256111ad"
# ### ✏️ 8.6 Recall: why 0.99999 and not 1?
#
# The variances of x1 above are 0.99999, 0.99999 and 0.99998, and those of the final output 0.999993, 0.999992 and 0.999993. Why are they not exactly 1?
#
# - **a.** Float64 rounding errors accumulate over the two sub-layers.
# - **b.** ε sits inside the square root: the output variance is σ²/(σ² + ε), a little below 1.
# - **c.** Layer norm divides by the unbiased variance (n − 1), which makes the result slightly smaller.
# - **d.** It depends on the random seed: with another seed the variances would be exactly 1.
#
# Set `answer_8_6` to a letter and run the check.

# %% id="b0032f1d"
# BEGIN SOLUTION
answer_8_6 = "b"
# END SOLUTION

# %% id="59bbaa3e"
check("8.6", answer_8_6)

# %% [markdown] id="447f9943"
# The formula, checked against the measurement: with γ = 1 and β = 0, the output's variance is exactly σ²/(σ² + ε). The row of "sat", whose variance before the norm is the smallest (0.425), comes out furthest below 1; a row prints as 0.9999 at 4 decimals only when its variance before the norm is about 0.2 or less.

# %% id="06a0546c"
sigma2 = before.var(axis=1)
predicted = sigma2 / (sigma2 + 1e-5)
print("sigma^2/(sigma^2 + eps):", predicted.round(7))
print("measured variance:      ", x1.var(axis=1).round(7))
assert np.allclose(predicted, x1.var(axis=1), atol=1e-12)
assert predicted.argmin() == 2
threshold = 1e-5 * 0.99995 / (1 - 0.99995)  # below this sigma^2, the variance rounds to 0.9999
print(f"a row prints as 0.9999 only if its variance before the norm is below {threshold:.2f}")
assert abs(threshold - 0.2) < 1e-3


# %% [markdown] id="1db089ed"
# ### ✏️ 8.7 Add & Norm
#
# Write `add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5)`, the paper's post-norm step: add first, then normalise. Use your `layer_norm` (checked first), and pass `eps` on: the check also calls it with eps = 0.1, and on a row of x + sublayer_out whose variance is near ε.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="e252f0dc"
def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):
    """Post-norm residual (paper §3.1): LayerNorm(x + sublayer_out)."""
    # BEGIN SOLUTION
    return layer_norm(x + sublayer_out, gamma, beta, eps)
    # END SOLUTION


# %% id="ac709fc3"
check("8.7", add_and_norm)

# %% [markdown] id="1cd98c5c"
# The reference's `add_and_norm` gives the x1 computed above:

# %% id="54ed55cd"
assert np.array_equal(ref.add_and_norm(x, attn, gamma1, beta1), x1)
print("x1 = LayerNorm(x + attn):\n", x1.round(3))


# %% [markdown] id="5bb79ada"
# ## 7. Step 5: the feed-forward network
#
# Each position then goes, on its own, through the same two-layer network (paper §3.3, Eq. 2):
#
# FFN(x) = max(0, x W1 + b1) W2 + b2
#
# It widens each vector from d_model = 8 to d_ff = 32, applies a ReLU, and narrows it back. The ReLU sits *between* the two layers; the output may be negative.
#
# ### ✏️ 8.8 The feed-forward network
#
# Write `feed_forward(x, w1, b1, w2, b2)`. The project's biases are zero, so the check also uses non-zero ones: a forgotten bias cannot hide there.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="982aebb5"
def feed_forward(x, w1, b1, w2, b2):
    """Position-wise FFN: max(0, x w1 + b1) w2 + b2, (T, D) -> (T, d_ff) -> (T, D)."""
    # BEGIN SOLUTION
    hidden = np.maximum(0, x @ w1 + b1)  # (T, D) @ (D, F) -> (T, F)
    return hidden @ w2 + b2  # (T, F) @ (F, D) -> (T, D)
    # END SOLUTION


# %% id="c9d12c77"
check("8.8", feed_forward)

# %% [markdown] id="13a762cf"
# How many of the 96 hidden units (3 tokens × 32) does the ReLU let through? With random weights, roughly half of the pre-activations are positive.

# %% id="ae5e25af"
hidden = ref.relu(x1 @ W1 + b1)  # (3, 32)
ffn = ref.feed_forward(x1, W1, b1, W2, b2)  # (3, 8)
active = (hidden > 0).sum(axis=1)
print(
    f"Active ReLU units: {active.sum()} / {hidden.size} in total (per token: {', '.join(map(str, active))} of {hidden.shape[1]})"
)
assert hidden.shape == (3, 32) and ffn.shape == (3, 8)
assert active.tolist() == [13, 16, 16] and active.sum() == 45
assert np.allclose(ffn, hidden @ W2 + b2)

# %% [markdown] id="5b848969"
# The second Add & Norm closes the layer: out = LayerNorm(x1 + ffn). The variances before it are 1.450, 1.265 and 1.511.

# %% id="44ad6c30"
before2 = x1 + ffn
out = ref.add_and_norm(x1, ffn, gamma2, beta2)
print("variances before the second norm:", before2.var(axis=1).round(3))
print("out:\n", out.round(3))
assert np.allclose(before2.var(axis=1), [1.450, 1.265, 1.511], atol=1.01e-3)
assert out.shape == (3, 8)

# %% [markdown] id="3514b0e1"
# ## 8. The reference output
#
# `course_lib.numpy_encoder.encoder_layer` runs the five steps and keeps every intermediate; `report` prints the project's summary from them. Every number below is computed; the cell then compares the text with the reference output line by line.

# %% id="1466d64a"
trace = ref.encoder_layer(embeddings, params)
report = ref.report(trace, TOKENS)
print(report)

EXPECTED = """\
Token embeddings (before positional encoding):
  'the': [0.248, -0.069, 0.324, 0.762, -0.117, -0.117, 0.79, 0.384]
  'cat': [-0.235, 0.271, -0.232, -0.233, 0.121, -0.957, -0.862, -0.281]
  'sat': [-0.506, 0.157, -0.454, -0.706, 0.733, -0.113, 0.034, -0.712]
After adding positional encoding:
  'the': [0.248, 0.931, 0.324, 1.762, -0.117, 0.883, 0.79, 1.384]
  'cat': [0.607, 0.812, -0.132, 0.762, 0.131, 0.043, -0.861, 0.719]
  'sat': [0.403, -0.259, -0.255, 0.274, 0.753, 0.887, 0.036, 0.288]
Attention weights (4 dp):
  'the' -> the 0.3732  cat 0.3671  sat 0.2598
  'cat' -> the 0.3074  cat 0.2274  sat 0.4653
  'sat' -> the 0.3631  cat 0.3556  sat 0.2814
Active ReLU units: 45 / 96 in total (per token: 13, 16, 16 of 32)
Final encoder output:
  'the': [-1.655, 1.738, -0.143, 1.091, -0.133, -0.494, -0.788, 0.384]
  'cat': [-1.03, 1.969, -0.121, 0.919, -0.305, -0.572, -1.271, 0.411]
  'sat': [-1.295, 1.5, -0.506, 0.942, 0.64, 0.155, -1.573, 0.138]
Verification: every row mean = 0.0000, var = 1.0000 (exact 0.999993 / 0.999992 / 0.999993)"""
assert report == EXPECTED
assert np.array_equal(trace.out, out) and np.array_equal(trace.weights, A)

# %% [markdown] id="8569c8de"
# The properties the printout claims, checked directly on the arrays:

# %% id="e7837af0"
shapes = {
    name: getattr(trace, name).shape
    for name in ("x", "scores", "weights", "attn", "x1", "hidden", "out")
}
print("shapes:", shapes)
for name, y in (("x1", trace.x1), ("out", trace.out)):
    means, variances = y.mean(axis=1), y.var(axis=1)
    print(
        f"{name}: largest |mean| below 1e-9: {np.abs(means).max() < 1e-9}; variances in [0.999, 1]: {bool(np.all((variances > 0.999) & (variances <= 1)))}"
    )
    assert np.abs(means).max() < 1e-9 and np.all((variances > 0.999) & (variances <= 1))
assert all(shapes[n] == (3, 8) for n in ("x", "attn", "x1", "out"))
assert shapes["scores"] == shapes["weights"] == (3, 3) and shapes["hidden"] == (3, 32)
assert 0 <= (trace.hidden > 0).sum() <= 96

# Deterministic: the same inputs give bit-identical outputs.
again = ref.encoder_layer(*ref.project_inputs())
print("a second run gives identical numbers:", np.array_equal(again.out, trace.out))
assert np.array_equal(again.out, trace.out) and np.array_equal(again.weights, trace.weights)

# %% [markdown] id="2d200706"
# > **Errata: the circulated sample output.** The version of this project that circulates widely prints final vectors, attention weights (0.38 / 0.29 / 0.33, …) and "Active ReLU units: 18 / 32" that its own seeded code does not produce; the true values are the ones above (45 of 96 in total; 13, 16 and 16 of 32 per token). It also says that the exact numbers vary from run to run because of random initialisation: with the seed fixed they cannot, as the second run above shows. Worse, its final rows have variances 0.565, 0.558 and 0.470, so they cannot be LayerNorm outputs with γ = 1 and β = 0. Since that variance is σ²/(σ² + ε), a variance of 0.565 would need the input row to have variance ε · 0.565 / 0.435 ≈ 1.3e-5, a row that is constant to three decimals:

# %% id="2d650472"
for v in (0.565, 0.558, 0.470):
    needed = 1e-5 * v / (1 - v)
    print(f"output variance {v}: the input row would need variance {needed:.1e}")
    assert needed < 2e-5
print("actual input variances before the final norm:", before2.var(axis=1).round(3))


# %% [markdown] id="0efb68cf"
# ## 9. PyTorch as the referee
#
# `course_lib`'s PyTorch `EncoderLayer` and PyTorch's own `nn.TransformerEncoderLayer` compute the same layer, once they hold the same weights. Three details make the copy exact:
#
# - `nn.Linear` computes x Wᵀ + b, so a numpy matrix used as `x @ W` goes in as `W.T`.
# - `nn.TransformerEncoderLayer` stacks the three projections into one `in_proj_weight` = [W_Qᵀ; W_Kᵀ; W_Vᵀ], and always has an output projection: set it to the identity, since the project has no W^O.
# - Dropout 0, evaluation mode, one head; the biases the project does not have are set to zero.
#
# `course_lib.interop.encoder_layers_from_numpy(params)` builds both layers that way. They receive x, the embeddings *plus* the positional encoding: neither adds it by itself. `record_attention` keeps the weights each attention computes while the block runs.

# %% id="ac0610e3"
def t(a, dtype=torch.float64):
    return torch.as_tensor(np.ascontiguousarray(a), dtype=dtype)


ours, theirs = encoder_layers_from_numpy(params)  # float64
_, theirs_32 = encoder_layers_from_numpy(params, torch.float32)
with torch.no_grad(), record_attention(ours) as maps:
    ours_out = ours(t(trace.x)[None])  # (1, T, D)
    theirs_out = theirs(t(trace.x)[None])
    theirs_32 = theirs_32(t(trace.x, torch.float32)[None])
ours_weights = maps["self_attn"]  # (1, H, T, T): what the layer's attention computed

gaps = {
    "course_lib EncoderLayer (float64)": np.abs(ours_out[0].numpy() - trace.out).max(),
    "attention weights of EncoderLayer": np.abs(ours_weights[0, 0].numpy() - trace.weights).max(),
    "nn.TransformerEncoderLayer (float64)": np.abs(theirs_out[0].numpy() - trace.out).max(),
}
for name, gap in gaps.items():
    print(f"{name:>38}: largest difference below 1e-10: {gap < 1e-10}")
    assert gap < 1e-10, name
gap_32 = np.abs(theirs_32[0].numpy() - trace.out).max()
print(
    f"{'nn.TransformerEncoderLayer (float32)':>38}: largest difference below 1e-6: {gap_32 < 1e-6}"
)
assert 1e-9 < gap_32 < 1e-6  # float32 keeps about 7 significant digits


# %% [markdown] id="38b4be35"
# In float64 the three implementations agree to rounding error; in float32, PyTorch's default, they agree to a few times 1e-7, float32's precision. The check of the next exercise runs this same comparison on *your* encoder.
#
# ## 10. Your encoder layer
#
# ### ✏️ 8.9 The encoder layer
#
# Write `encoder_layer(embeddings, params)` from your own functions: add the positional encoding, then self-attention, Add & Norm, the feed-forward network and Add & Norm, with the weights from `params` (`params.w_q`, …, `params.gamma2`, `params.beta2`, not the notebook's `W_Q`, …) and the sizes from `embeddings`. Return only the output, shape (T, d_model).
#
# The check compares your layer with `course_lib.numpy_encoder` and, after copying the same weights, with `course_lib`'s `EncoderLayer` and `nn.TransformerEncoderLayer`, as in section 9. It uses two inputs: "the cat sat", and 5 tokens of width 6 whose biases, γ and β are not 0 and 1, so a swapped or forgotten parameter shows. Your earlier functions are checked first: if one does not pass its own check yet, it says which.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="df8dc5e7"
def encoder_layer(embeddings, params):
    """One post-norm encoder layer: embeddings (T, D) -> output (T, D)."""
    # BEGIN SOLUTION
    p = params
    x = embeddings + encode_positions(*embeddings.shape)  # step 1
    attn, _ = self_attention(x, p.w_q, p.w_k, p.w_v)  # step 2
    x1 = add_and_norm(x, attn, p.gamma1, p.beta1)  # step 3
    ffn = feed_forward(x1, p.w1, p.b1, p.w2, p.b2)  # step 4
    return add_and_norm(x1, ffn, p.gamma2, p.beta2)  # step 5
    # END SOLUTION


# %% id="47fca1a1"
check("8.9", encoder_layer)

# %% [markdown] id="a2bd4b36"
# Your layer now computes, in about fifteen lines of numpy, what `nn.TransformerEncoderLayer` computes: the paper's encoder is this layer stacked six times, with d_model = 512, 8 heads and d_ff = 2048.
#
# ## 11. Optional extensions
#
# *Everything below is optional and unchecked. Each part links the project to a lesson; try changing the code.*
#
# ### A. Order matters only through the positional encoding (lesson 5, lab L5.A)
#
# Without positional encoding, self-attention cannot tell positions apart: shuffling the tokens shuffles the outputs in the same way and changes nothing else (the layer is *permutation-equivariant*). With positional encoding, the same token at another position comes out different.

# %% id="40773842"
perm = [2, 0, 1]  # "sat the cat"
for use_pe in (False, True):
    plain = ref.encoder_layer(embeddings, params, use_pe=use_pe).out
    shuffled = ref.encoder_layer(embeddings[perm], params, use_pe=use_pe).out
    gap = np.abs(shuffled - plain[perm]).max()
    print(
        f"PE {'on ' if use_pe else 'off'}: largest change of a token's output after shuffling = {gap:.2f}"
    )
    if use_pe:
        assert abs(gap - 0.94) < 0.01
    else:
        assert gap < 1e-12

# %% [markdown] id="79f5bb61"
# ### B. A causal mask (lesson 3)
#
# A decoder's self-attention may not look ahead. With a lower-triangular mask (`True` = may attend), "the" can only attend to itself, so its row is [1, 0, 0].

# %% id="d4cee6a9"
causal = np.tril(np.ones((SEQ_LEN, SEQ_LEN), dtype=bool))
_, A_causal = ref.self_attention(x, W_Q, W_K, W_V, mask=causal)
print(A_causal.round(4))
assert np.array_equal(np.triu(A_causal, k=1), np.zeros((3, 3)))
assert np.allclose(A_causal[0], [1, 0, 0]) and np.allclose(A_causal.sum(axis=1), 1)

# %% [markdown] id="19e98472"
# ### C. Two heads of width 4, plus W^O (lesson 4)
#
# Split each projection into two heads of width 4 (columns 0–3 and 4–7), attend in each head, concatenate, and mix with an 8×8 output projection W^O. The output keeps its shape, and `course_lib`'s `MultiHeadAttention` with the same weights agrees.

# %% id="04ca3a56"
rng = np.random.default_rng(0)  # a separate generator: the project's draws stay untouched
W_O = ref.xavier_normal(D_MODEL, D_MODEL, rng=rng)
heads = [
    ref.self_attention(
        x, W_Q[:, h * 4 : (h + 1) * 4], W_K[:, h * 4 : (h + 1) * 4], W_V[:, h * 4 : (h + 1) * 4]
    )[0]
    for h in range(2)
]
two_heads = np.concatenate(heads, axis=1) @ W_O  # (3, 4) + (3, 4) -> (3, 8) @ (8, 8) -> (3, 8)
print("output shape with two heads:", two_heads.shape)

mha = MultiHeadAttention(D_MODEL, n_heads=2).double().eval()
with torch.no_grad():
    for linear, w in [(mha.w_q, W_Q), (mha.w_k, W_K), (mha.w_v, W_V), (mha.w_o, W_O)]:
        linear.weight.copy_(t(w.T))
        linear.bias.zero_()
    mha_out = mha(t(x)[None], t(x)[None], t(x)[None])[0][0].numpy()  # (output, weights)
print("course_lib MultiHeadAttention agrees to 1e-10:", np.allclose(mha_out, two_heads, atol=1e-10))
assert two_heads.shape == x.shape and np.allclose(mha_out, two_heads, atol=1e-10)


# %% [markdown] id="7c8334f0"
# ### D. A stack of layers, post-norm and pre-norm (lessons 6 and 7)
#
# Six layers with independent weights. After every post-norm layer the rows still have mean 0 and variance just below 1, so their length stays at √8 ≈ 2.83. The pre-norm variant, x + Sublayer(LayerNorm(x)), normalises only the sub-layers' inputs: the residual stream itself is never normalised, and its length grows with depth.

# %% id="1d817f4b"
def random_params(rng):
    """Independent Glorot weights for one layer; zero biases, gamma 1, beta 0."""
    w = [ref.xavier_normal(*shape, rng=rng) for shape in [(8, 8)] * 3 + [(8, 32), (32, 8)]]
    return ref.EncoderParams(
        *w[:4], np.zeros(32), w[4], np.zeros(8), np.ones(8), np.zeros(8), np.ones(8), np.zeros(8)
    )


def pre_norm_layer(x, p):
    h = x + ref.self_attention(ref.layer_norm(x, p.gamma1, p.beta1), p.w_q, p.w_k, p.w_v)[0]
    return h + ref.feed_forward(ref.layer_norm(h, p.gamma2, p.beta2), p.w1, p.b1, p.w2, p.b2)


stack = [random_params(np.random.default_rng(1 + n)) for n in range(6)]
post, pre = trace.x, trace.x
post_lengths, pre_lengths = [], []
for p in stack:
    post = ref.encoder_layer(post, p, use_pe=False).out  # PE only enters once, before the stack
    pre = pre_norm_layer(pre, p)
    assert np.abs(post.mean(axis=1)).max() < 1e-9 and np.all(
        (post.var(axis=1) > 0.999) & (post.var(axis=1) <= 1)
    )
    post_lengths.append(np.linalg.norm(post, axis=1).mean())
    pre_lengths.append(np.linalg.norm(pre, axis=1).mean())
print("mean row length after each layer")
print("  post-norm:", np.round(post_lengths, 2))
print("  pre-norm: ", np.round(pre_lengths, 2))
assert np.allclose(post_lengths, np.sqrt(8), atol=1e-4)
assert pre_lengths[-1] > pre_lengths[0] > np.sqrt(8)

fig, ax = plt.subplots(figsize=(5, 3.2))
layers = range(1, len(stack) + 1)
ax.plot(layers, post_lengths, "o-", label="post-norm (the paper)")
ax.plot(layers, pre_lengths, "s--", label="pre-norm")
ax.set(
    title="Row length of the residual stream with depth", xlabel="layer", ylabel="mean row length"
)
ax.legend()
notebook.show(
    f"Line chart: the mean row length of the residual stream after each of {len(stack)} layers. "
    f"Post-norm (circles, the paper's order) stays at {post_lengths[0]:.2f}, √8, at every layer; "
    f"pre-norm (squares) grows from {pre_lengths[0]:.2f} after layer 1 to {pre_lengths[-1]:.2f} "
    f"after layer {len(stack)}."
)

# %% [markdown] id="37838a46"
# ### E. How many parameters?
#
# The toy layer has 776: 3 · 64 = 192 in the attention projections, 256 + 32 in the first FFN layer, 256 + 8 in the second, and 4 · 8 = 32 in the two LayerNorms. `course_lib`'s `EncoderLayer`, built as in section 9, has 96 more: the output projection W^O (64 + 8) and the biases of W_Q, W_K and W_V (3 · 8).

# %% id="a945f87e"
n_params = sum(
    getattr(params, f).size
    for f in ("w_q", "w_k", "w_v", "w1", "b1", "w2", "b2", "gamma1", "beta1", "gamma2", "beta2")
)
n_torch = sum(p.numel() for p in encoder_layers_from_numpy(params)[0].parameters())
print(
    f"numpy layer: {n_params} parameters; course_lib EncoderLayer: {n_torch} = {n_params} + 72 (W^O) + 24 (attention biases)"
)
assert n_params == 776 == 3 * 64 + 8 * 32 + 32 + 32 * 8 + 8 + 2 * 16
assert n_torch == n_params + 72 + 24

# %% [markdown] id="bad87758"
# ## Recap
#
# - One encoder layer is five steps: x = embeddings + PE; self-attention; LayerNorm(x + attn); a ReLU FFN; LayerNorm(x1 + ffn).
# - A softmax stays finite when each row is shifted by its own maximum; a layer norm stays finite when ε sits inside the square root. Both tricks change nothing else.
# - The outputs can be checked by their properties: attention rows sum to 1; every LayerNorm output row has mean 0 and variance σ²/(σ² + ε), just below 1, and length √d_model.
# - With the seed fixed, every number is reproducible, and PyTorch's layers, given the same weights, agree to rounding error.
# - Errata: the circulated sample output of this project matches neither its seed nor the layer's properties; the reference output above is the one the code produces.
#
# **Further reading.** Vaswani et al. (2017), "Attention Is All You Need"; Bahdanau, Cho and Bengio (2014) on additive attention; He et al. (2015) on residual networks; Ba, Kiros and Hinton (2016), "Layer Normalization"; Xiong et al. (2020) on pre-norm versus post-norm; Devlin et al. (2018), BERT; Radford et al., GPT-2 and GPT-3; Raffel et al., T5; Dosovitskiy et al. (2020), ViT; Su et al. (RoPE), Press et al. (ALiBi) and Dao et al. (FlashAttention) on what came after sinusoids and quadratic attention.
#
# **Looking ahead.** This layer is the building block of the encoder-only models (BERT and its family); stacked with the decoder of lesson 7 it translates, and pre-trained at scale it becomes the models of today.
