# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="6931633c"
# # Lesson 5 · Positional encoding
#
# > PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))  (paper §3.5)
#
# Lessons 3 and 4 built attention, and it has a blind spot: it compares every token with every other, but nothing in softmax(QKᵀ/√d_k)V knows *where* a token stands. This lesson shows the blind spot, then fixes it the way the paper does, by adding to each embedding a vector of sines and cosines that encodes its position. Along the way you will see why those particular waves make "three positions back" something a model can learn.
#
# **How to use this notebook.** Run the cells from top to bottom (Shift+Enter). Cells marked ✏️ are yours: replace the part under `# YOUR CODE HERE`, run the cell, then run the `check(...)` cell under it. A check never crashes; it says ✓ **Passed**, ✗ **Not yet** with what looks wrong, or … **Not done yet**. Stuck? `hint("5.2")` shows one hint each time you run it.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor; a function you write returns a number when it computes a count, a rate or a loss, and otherwise PyTorch tensors. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="f2fe8707" tags=["nbval-ignore-output"]
import math

import matplotlib.pyplot as plt
import torch
from torch import nn

from course_lib import notebook
from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import check, hint
from course_lib.positional import PositionalEncoding, sinusoidal_encoding
from course_lib.widgets.pe_data import shift_matrix as reference_shift_matrix
from course_lib.widgets.pe_explorer import PEExplorer

notebook.start(seed=0)

# %% [markdown] id="7938d9f8"
# ## Learning objectives
#
# By the end of this lesson you can:
#
# 1. explain why self-attention on its own cannot see word order: it is permutation-equivariant;
# 2. compute sinusoidal encodings by hand and as one vectorised expression;
# 3. show that PE(pos + k) is a linear function of PE(pos), a rotation that depends on k only;
# 4. compare sinusoidal, learned and relative schemes (RoPE, ALiBi), and say what multiplying the embeddings by √d_model does and when it helps.

# %% [markdown] id="42383af9"
# ## 1. The problem: attention reads a set, not a sequence
#
# A Transformer takes in all the tokens of a sentence at once. The score between two tokens is q·k, computed from their two vectors and nothing else; the output of a token is a weighted sum over the others. No step mentions an index. So "the cat sat on the mat" and "mat the on sat cat the" contain exactly the same pairs of vectors, and so do "dog bites man" and "man bites dog", or "the cat chased the dog" and "the dog chased the cat".
#
# Precisely: if you shuffle the input rows, the output rows come out shuffled in the same way, and each token's own output vector does not change. Self-attention is **permutation-equivariant**. (It is not permutation-*invariant*: the attention pattern is permuted along with the tokens, not left identical.) Below, "dog bites man" and "man bites dog" go through the same attention, with each word's vector fixed.

# %% id="3a88d33b"
words = ["dog", "bites", "man"]
embedding = {w: torch.randn(8) for w in words}  # one random 8-d vector per word


def self_attend(sentence, add_positions=False):
    """Self-attention (Q = K = V = x) over the sentence; returns each word's output vector."""
    x = torch.stack([embedding[w] for w in sentence])  # (T, 8)
    if add_positions:
        x = x + sinusoidal_encoding(len(sentence), 8)
    out, _ = scaled_dot_product_attention(x, x, x)
    return dict(zip(sentence, out))


for add in (False, True):
    a = self_attend(["dog", "bites", "man"], add)
    b = self_attend(["man", "bites", "dog"], add)
    gaps = {w: (a[w] - b[w]).abs().max().item() for w in words}
    if add:
        print("with positions:    ", {w: f"{g:.2f}" for w, g in gaps.items()})
        assert gaps["dog"] > 0.01 and gaps["man"] > 0.01
    else:  # float32 round-off, whose digits differ between processors
        print("without positions: every word's output moves by less than 1e-6")
        assert max(gaps.values()) < 1e-6

# %% [markdown] id="aa8aa659"
# Without positions, "dog" gets the same vector whether it bites or is bitten (the differences are float32 round-off). Adding a position-dependent vector to each embedding breaks the tie. ("bites" stays in the middle in both sentences, so it may barely move.)
#
# **An analogy.** Imagine the pages of a letter arriving all at once, in a heap. To read it in order, each page needs its page number stamped on it. The positional encoding is that stamp: an "address" added to each token that says where it sits, not what it is.
#
# **The mechanism.** The stamp is added, not attached: input_t = embedding_t + PE_t. Both have d_model entries (512 in the paper's base model), so they can simply be summed, and position 0 gets a different pattern from position 1, 2 or 100.
#
# **Why not the position number itself?** Adding 0, 1, 2, ... would grow without bound: at position 500 it would drown any embedding. Sines and cosines stay in [−1, 1] at every position.

# %% [markdown] id="95d9075d"
# ## 2. The formula and its frequencies
#
# Dimensions come in pairs. Pair i (dimensions 2i and 2i+1) turns at the angular frequency ω_i = 1 / 10000^(2i/d_model):
#
# - PE(pos, 2i) = sin(pos · ω_i)
# - PE(pos, 2i+1) = cos(pos · ω_i)
#
# Computed as one expression: ω_i = exp(−2i · ln(10000) / d_model); the even columns hold sin(pos · ω_i) and the odd columns cos(pos · ω_i). The table is computed once for max_len positions (5,000 in many implementations) and stored as a buffer, not a parameter: it has **0 trainable parameters**, and each forward pass adds its first T rows. Implementations usually apply dropout (p = 0.1) after the addition.
#
# **Fast and slow dimensions.** Pair 0 has ω_0 = 1: it completes a turn every 2π ≈ 6.3 positions, so it tells neighbours apart. The frequencies then fall geometrically, and the last pair turns so slowly (wavelength close to 10000·2π ≈ 62,832) that it only says roughly where in a long text we are. **Low dimension indices are the fast ones.** Together they work like the hands of a clock, or the bits of a binary counter: the fast hands pin down the exact position, the slow ones the coarse region, and the combination is different for every position.

# %% [markdown] id="3a609ce8"
# ## 3. Worked example: d_model = 4
#
# Two (sin, cos) pairs. Pair 0 has frequency 1/10000⁰ = 1, pair 1 has 1/10000^(2/4) = 1/100. We compute the encodings of positions 0 and 1 in float64 and assert every number.

# %% id="4ff15c1d"
d_model = 4
pair = torch.arange(d_model // 2, dtype=torch.float64)  # i = 0, 1
omega = 1 / 10000 ** (2 * pair / d_model)  # [1, 0.01]
print("ω_i:", omega.numpy())
assert torch.allclose(omega, torch.tensor([1.0, 0.01], dtype=torch.float64))


def encode(pos, omega):
    """[sin ω_0 pos, cos ω_0 pos, sin ω_1 pos, ...]: sin and cos of each pair, interleaved."""
    angle = pos * omega
    return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten()


pe_0, pe_1 = encode(0, omega), encode(1, omega)
print("PE_0 =", pe_0.numpy().round(3))
print("PE_1 =", pe_1.numpy().round(3), "exactly", pe_1.numpy().round(7))
assert torch.equal(pe_0, torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=torch.float64))
assert pe_1.round(decimals=3).tolist() == [0.841, 0.54, 0.01, 1.0]
assert torch.allclose(
    pe_1, torch.tensor([0.841471, 0.540302, 0.0099998, 0.99995], dtype=torch.float64), atol=1e-6
)

wavelengths = 2 * math.pi / omega
print("wavelengths (positions per turn):", wavelengths.numpy().round(1))
assert round(wavelengths[1].item()) == 628

# %% [markdown] id="53567080"
# Between positions 0 and 1, dimensions 0 and 1 move a lot (by 0.84 and 0.46), while dimensions 2 and 3 barely move: their wavelength is 2π × 100 ≈ 628 positions.
#
# Adding the encoding to an embedding is a plain sum. The embedding [0.2, −0.5, 0.3, 0.1] at position 1 becomes:

# %% id="8d7d80f5"
token = torch.tensor([0.2, -0.5, 0.3, 0.1], dtype=torch.float64)
model_input = token + pe_1
print("embedding + PE_1 =", model_input.numpy().round(3))
assert model_input.round(decimals=3).tolist() == [1.041, 0.04, 0.31, 1.1]

# The same numbers from the course's reference table (float32).
torch.testing.assert_close(
    sinusoidal_encoding(2, 4).double(), torch.stack([pe_0, pe_1]), atol=1e-6, rtol=0
)
print("course_lib.positional.sinusoidal_encoding agrees.")

# %% [markdown] id="4426fd3a"
# The project notebook uses the table for three positions at d_model = 8. With the same function:

# %% id="1d63f0d3"
d_model = 8
pair = torch.arange(d_model // 2, dtype=torch.float64)
omega = 1 / 10000 ** (2 * pair / d_model)  # [1, 0.1, 0.01, 0.001]
table_8 = torch.stack([encode(pos, omega) for pos in range(3)])
print(table_8.numpy().round(4))
expected_8 = torch.tensor(
    [
        [0, 1, 0, 1, 0, 1, 0, 1],
        [0.8415, 0.5403, 0.0998, 0.9950, 0.0100, 1.0000, 0.0010, 1.0000],
        [0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 1.0000],
    ],
    dtype=torch.float64,
)
assert torch.allclose(table_8, expected_8, atol=5e-5)
torch.testing.assert_close(sinusoidal_encoding(3, 8).double(), table_8, atol=1e-6, rtol=0)

# %% [markdown] id="2fa4a172"
# > **Errata: which dimensions are fast.** A popular tutorial says the *first* dimensions of the encoding are the low-frequency ones that change slowly. It is the other way round: pair i turns at 1/10000^(2i/d_model), so pair 0, with frequency 1, is the fastest, and the frequencies fall towards the last dimensions. The cell below measures how much each dimension changes per step, and the wavelengths at the paper's d_model = 512.

# %% id="11b85734"
table_512 = sinusoidal_encoding(200, 512).double()
change = (table_512[1:] - table_512[:-1]).abs().mean(dim=0)  # mean change per step, per dimension
for dim in (0, 1, 2, 64, 256, 510, 511):
    print(f"dimension {dim:3d}: mean change per position {change[dim]:.4f}")
assert change[0] > change[64] > change[256] > change[510]

all_wavelengths = 2 * math.pi * 10000 ** (torch.arange(0, 512, 2, dtype=torch.float64) / 512)
ratios = all_wavelengths[1:] / all_wavelengths[:-1]
print(
    f"wavelengths from {all_wavelengths[0]:.2f} to {all_wavelengths[-1]:,.0f} positions, "
    f"each {ratios[0]:.4f} times the one before"
)
assert abs(all_wavelengths[0] - 2 * math.pi) < 1e-12 and all_wavelengths[-1] < 10000 * 2 * math.pi
assert torch.allclose(ratios, torch.full_like(ratios, 10000 ** (2 / 512)))  # geometric

# %% [markdown] id="00e10546"
# ## 4. Relative position: a shift is a rotation
#
# Each pair (sin ωp, cos ωp) is a point on a circle of radius 1, at angle ωp. Moving k positions forward adds ωk to the angle, whatever p is. By the angle-addition formulas,
#
# - sin(ω(p + k)) = sin(ωp)·cos(ωk) + cos(ωp)·sin(ωk)
# - cos(ω(p + k)) = cos(ωp)·cos(ωk) − sin(ωp)·sin(ωk)
#
# so the new pair is a fixed 2 × 2 matrix times the old one, a rotation by ωk. Stacking one such block per pair gives a block-diagonal matrix R_k with **PE(pos + k) = R_k · PE(pos)** for every position. A linear map can learn R_k once, and "three positions back" then means the same thing at position 8 as at position 103. You will write R_k in exercise 5.3.
#
# The same fact makes the dot product of two encodings depend only on their distance: PE_i · PE_j = Σ over pairs of [sin ωi sin ωj + cos ωi cos ωj] = Σ cos(ω(i − j)), a function of i − j alone, and an even one, so of |i − j|. Lab 5.5 checks it.

# %% [markdown] id="94926261"
# ## 5. Other schemes, and the √d_model factor
#
# **Does it extrapolate?** The paper chose sinusoids partly in the hope that a model would cope with sequences longer than those it was trained on, but it only *hypothesised* this. Learned positional embeddings (a trainable table with one row per position, as in GPT and BERT) gave nearly identical results, and later work found that neither absolute scheme extrapolates well.
#
# > **Paper vs. popular retellings.** It is often said that sinusoids "let the model generalise to longer sequences". The paper states it as a hope, not a result; for the fixed-length data of its experiments, sinusoids work well and add no parameters.
#
# **Relative schemes** change attention itself instead of the input. RoPE rotates the queries and keys by position-dependent angles (the rotation of section 4, applied inside the dot product), so positions enter q·k only through the distance between the two tokens; ALiBi subtracts from each score a penalty proportional to that distance. They cope better with long inputs, and modern large language models mostly use RoPE.
#
# **Embedding scaling.** Before the encoding is added, the token embeddings are multiplied by √d_model. The usual explanation: it keeps the content from being swamped by the position signal. That holds when the embedding weights start small, with standard deviation about 1/√d_model, as when they are shared with the output layer as in the paper. PyTorch's `nn.Embedding` starts at N(0, 1) instead: how large is the scaled content then, next to the position signal? Lab 5.6 measures both cases, and its reference, at the end of the lesson, compares them at two widths.

# %% [markdown] id="5bb4ba96"
# ## 6. Explore: the positional-encoding explorer
#
# Four views of the same table:
# - **top left**, the table itself, one row per position (the white line marks the current position). The left columns flicker, the right ones are almost constant: fast dimensions first.
# - **top right**, the waves you choose drawn over the positions, with their wavelength λ: pick a dimension on the *wave dimension* slider (its readout says sin or cos and the wavelength), then press *add wave* or *remove wave*; every wave drawn is listed under the buttons, at most 6 at a time. The dots are the table's values at whole positions; the circled ones are at the current position.
# - **bottom left**, PE_i · PE_j / (d_model/2) for every pair of positions. Every diagonal is one colour: the similarity depends only on |i − j|. The title prints the largest change along any diagonal.
# - **bottom right**, PE(pos + k) (circles) and R_k · PE(pos) (crosses) in every dimension, with the largest difference printed: float32 round-off, whatever the position, the offset k or d_model.
#
# Try: a small d_model (8) and a large one (512); move the position and watch only the fast waves' circles jump; add dimensions 0 and 1 (a sin and its cos) and a high one. *Save PNG* writes the current picture to this notebook's folder.

# %% id="36e66b60" tags=["nbval-ignore-output"]
explorer = PEExplorer()
explorer

# %% [markdown] id="8bef8685"
# ## 7. Exercises
#
# ### ✏️ 5.1 Recall: why can't attention see order?
#
# Which statement explains best why a Transformer without positional encodings cannot recover word order?
#
# - **a.** The softmax normalises each row of scores to sum to 1, and that normalisation erases where each token stood.
# - **b.** Scores and weighted sums read the vectors only, never their indices: shuffle the inputs and the outputs follow.
# - **c.** Dividing the scores by √d_k rescales every one of them alike, and that rescaling wipes out the order they held.
# - **d.** Self-attention is permutation-invariant: shuffle the inputs and the outputs stay exactly the same, in the same order.
#
# Set `answer_5_1` to a letter, for example `answer_5_1 = "a"`, and run the check. Every option has an explanation.

# %% id="540d9bc1"
# BEGIN SOLUTION
answer_5_1 = "b"
# END SOLUTION

# %% id="b4ec3772"
check("5.1", answer_5_1)

# %% [markdown] id="bdf269aa"
# ### ✏️ 5.2 Apply: position 5
#
# With d_model = 512, compute four numbers at position 5: PE(5, 0) and PE(5, 1), the fastest pair, as `pe_5_0` and `pe_5_1`; then PE(5, 128) and PE(5, 129), as `pe_5_128` and `pe_5_129`. Compare them with position 0. For each dimension, first decide which pair i it belongs to and what that pair's divisor 10000^(2i/d_model) is. Numbers rounded to 2 decimals are accepted, as everywhere in the course (lesson 1), and so are unrounded ones.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="0f36d785"
d_model = 512
# BEGIN SOLUTION
i = 0  # dimensions 0 and 1 form pair i = 0
angle = 5 / 10000 ** (2 * i / d_model)  # the divisor is 10000^0 = 1, so the angle is 5 radians
pe_5_0 = math.sin(angle)  # -0.9589
pe_5_1 = math.cos(angle)  # 0.2837
i = 64  # dimensions 128 and 129 form pair i = 64
angle = 5 / 10000 ** (2 * i / d_model)  # the divisor is 10000^(128/512) = 10: the angle is 0.5
pe_5_128 = math.sin(angle)  # 0.4794
pe_5_129 = math.cos(angle)  # 0.8776
# END SOLUTION

# %% id="0147ee33"
check("5.2", pe_5_0, pe_5_1, pe_5_128, pe_5_129)


# %% [markdown] id="cef122cb"
# ### ✏️ 5.3 Extend: the shift is a rotation
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% [markdown] id="2decd24e" tags=["free-text"]
# **Your answer:** show that sin(ω(p + k)) and cos(ω(p + k)) are linear combinations of sin(ωp) and cos(ωp), and write the 2 × 2 matrix R_k that maps [sin ωp, cos ωp] to [sin ω(p + k), cos ω(p + k)]. Does it depend on p?
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* By the angle-addition formulas, sin(ω(p + k)) = cos(ωk)·sin(ωp) + sin(ωk)·cos(ωp) and cos(ω(p + k)) = −sin(ωk)·sin(ωp) + cos(ωk)·cos(ωp). The coefficients cos(ωk) and sin(ωk) involve k only, so [sin ω(p+k), cos ω(p+k)]ᵀ = R_k·[sin ωp, cos ωp]ᵀ with R_k = [[cos ωk, sin ωk], [−sin ωk, cos ωk]], the same matrix for every p: a rotation of the pair by the angle ωk. With one such block per frequency ω_i on the diagonal, R_k maps the whole vector PE(pos) to PE(pos + k).
# <!-- END SOLUTION -->

# %% [markdown] id="50296ab9"
# Now in code: write `shift_matrix(k, d_model)`, the (d_model, d_model) block-diagonal matrix R_k with `PE(pos + k) = R_k @ PE(pos)`. `torch.block_diag(*blocks)` places a list of 2 × 2 blocks on the diagonal.

# %% id="5d8881a7"
def shift_matrix(k, d_model):
    """(d_model, d_model) block-diagonal R_k with PE(pos + k) = R_k @ PE(pos)."""
    # BEGIN SOLUTION
    pairs = torch.arange(d_model // 2, dtype=torch.float64)
    omega = 10000 ** (-2 * pairs / d_model)  # ω_i, one per (sin, cos) pair
    c, s = torch.cos(omega * k), torch.sin(omega * k)
    blocks = [torch.tensor([[ci, si], [-si, ci]]) for ci, si in zip(c.tolist(), s.tolist())]
    return torch.block_diag(*blocks)
    # END SOLUTION


# %% id="d1f25b68"
check("5.3", shift_matrix)

# %% [markdown] id="f689b759"
# The reference R_k (from `course_lib`), tested on an exact float64 table at the paper's d_model = 512: one matrix serves every position, so the step from position 5 to 8 is the same as from 100 to 103.

# %% id="a5fa200f"
positions = torch.arange(120, dtype=torch.float64)[:, None]
angles = positions * 10000 ** (-torch.arange(0, 512, 2, dtype=torch.float64) / 512)
exact = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)  # (120, 512), float64
for k in (1, 3):
    R = reference_shift_matrix(k, 512)
    error = (exact[k:] - exact[:-k] @ R.T).abs().max().item()
    print(f"k = {k}: max |PE(pos + k) − R_k·PE(pos)| over positions 0..{119 - k}: {error:.1e}")
    assert error < 1e-12
R_3 = reference_shift_matrix(3, 512)
assert torch.allclose(R_3 @ exact[5], exact[8], atol=1e-12)
assert torch.allclose(R_3 @ exact[100], exact[103], atol=1e-12)
print("5 -> 8 and 100 -> 103: the same R_3.")


# %% [markdown] id="dd3a514d"
# ## 8. Labs
#
# ### ✏️ 5.4 (L5.A) Positional encodings break permutation equivariance
#
# A self-attention layer with one head (Q, K and V maps of width 32, scores divided by √32), ten random token vectors `x` of shape (1, 10, 32), and a shuffle `perm` of the ten positions. `run(inputs)` applies the layer. Run the setup cell as it is: the check knows what this seeded layer and input give.
#
# 1. `inverse_perm`: the permutation that undoes `perm` (for each i, the index where `perm` holds i).
# 2. `diff_without_pe`: run the shuffled input, un-shuffle the output with `inverse_perm`, and take the L2 norm (`.norm()`) of its difference from the unshuffled run. One number.
# 3. `diff_with_pe`: the same, but add `pe` to the input of both runs, *after* shuffling: the shuffled tokens get the encodings of their new positions.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="2ab06c1c"
class SelfAttention(nn.Module):
    """One head: Q, K and V maps of width 32, then softmax(QKᵀ/√32)V."""

    def __init__(self, width=32):
        super().__init__()
        self.q, self.k, self.v = (
            nn.Linear(width, width),
            nn.Linear(width, width),
            nn.Linear(width, width),
        )

    def forward(self, x):  # (B, T, width) -> (B, T, width)
        return scaled_dot_product_attention(self.q(x), self.k(x), self.v(x))[0]


torch.manual_seed(0)
layer = SelfAttention()
x = torch.randn(1, 10, 32)
perm = torch.tensor([0, 3, 7, 1, 5, 9, 2, 6, 4, 8])
pe = sinusoidal_encoding(10, 32)  # (10, 32): row t goes to whichever token stands at position t


def run(inputs):
    with torch.no_grad():
        return layer(inputs)  # (1, 10, 32) -> (1, 10, 32)


# %% id="ec228a96"
# BEGIN SOLUTION
inverse_perm = torch.argsort(perm)
diff_without_pe = (run(x[:, perm])[:, inverse_perm] - run(x)).norm().item()
diff_with_pe = (run(x[:, perm] + pe)[:, inverse_perm] - run(x + pe)).norm().item()
# END SOLUTION

# %% id="68bc6dc2"
check("5.4", inverse_perm, diff_without_pe, diff_with_pe)


# %% [markdown] id="7f8c32d8"
# ### ✏️ 5.5 (L5.B) The table, vectorised
#
# Write `positional_encoding(max_len, d_model)` returning the (max_len, d_model) table, with no Python loop: a column of positions times a row of frequencies gives all the angles at once, then sines go to the even columns and cosines to the odd ones.
#
# *What you may use:* anything but `course_lib`'s reference code; no Python loop (`for`, `while` or a comprehension).

# %% id="ce95a6a1"
def positional_encoding(max_len, d_model):
    """(max_len, d_model): PE(pos, 2i) = sin(pos·ω_i), PE(pos, 2i+1) = cos(pos·ω_i)."""
    # BEGIN SOLUTION
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    omega = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))  # (d_model/2,)
    table = torch.zeros(max_len, d_model)
    angle = position * omega  # (max_len, 1) * (d_model/2,) -> (max_len, d_model/2)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table
    # END SOLUTION


# %% id="b64619f4"
check("5.5", positional_encoding)

# %% [markdown] id="c38fc95d"
# The reference module `PositionalEncoding` holds the table for 5,000 positions as a buffer and adds its first rows to its input. At position 0 every sine is 0 and every cosine 1, so the first four features of the first token move by exactly [0, 1, 0, 1]; the module has no parameters.

# %% id="c33da1da"
pe_module = PositionalEncoding(d_model=64, max_len=5000).eval()
tokens = torch.randn(1, 10, 64)
encoded = pe_module(tokens)
print("before:", tokens[0, 0, :4].numpy().round(4))
print("after: ", encoded[0, 0, :4].numpy().round(4))
print("change:", (encoded - tokens)[0, 0, :4].numpy().round(4))
print("trainable parameters:", sum(p.numel() for p in pe_module.parameters()))
assert torch.allclose((encoded - tokens)[0, 0, :4], torch.tensor([0.0, 1.0, 0.0, 1.0]), atol=1e-6)
assert sum(p.numel() for p in pe_module.parameters()) == 0

# %% [markdown] id="371e3a43"
# The table for 100 positions at d_model = 64, and the similarity of every pair of positions. Each diagonal of the right-hand picture is one colour, and the cell below measures it: PE_i · PE_j depends only on |i − j|.

# %% id="866f9dfe"
table_64 = sinusoidal_encoding(100, 64)
similarity_64 = table_64.double() @ table_64.double().T  # (100, 100): PE_i · PE_j

fig, (ax_table, ax_sim) = plt.subplots(1, 2, figsize=(10.5, 4), layout="constrained")
image = ax_table.imshow(table_64, aspect="auto", cmap="cividis", vmin=-1, vmax=1)
ax_table.set(title="Positional encoding, d_model = 64", xlabel="dimension", ylabel="position")
fig.colorbar(image, ax=ax_table, label="PE value")
image = ax_sim.imshow(similarity_64, cmap="cividis")
ax_sim.set(title="PE_i · PE_j: constant along diagonals", xlabel="position j", ylabel="position i")
fig.colorbar(image, ax=ax_sim, label="dot product")
sign_changes = (table_64[1:] * table_64[:-1] < 0).sum(dim=0).tolist()  # down each column
notebook.show(
    f"Two heatmaps. Left: the positional-encoding table, {len(table_64)} positions (rows) by "
    f"{table_64.shape[1]} dimensions (columns), values from -1 to 1, in waves that slow from left "
    f"to right: down the positions the first column changes sign {sign_changes[0]} times, the "
    f"last sine column {sign_changes[-2]} times. Right: PE_i · PE_j for every pair of positions, "
    f"{similarity_64[0, 0]:.0f} on the main diagonal (d_model/2) and constant along every "
    f"diagonal, {similarity_64.min():.1f} at the lowest."
)

spreads = [
    (similarity_64.diagonal(k).max() - similarity_64.diagonal(k).min()).item() for k in range(100)
]
print(
    f"PE_i · PE_i = {similarity_64[0, 0]:.4f} (= d_model/2); largest spread along a diagonal: {max(spreads):.1e}"
)
assert abs(similarity_64[0, 0].item() - 32) < 1e-4 and max(spreads) < 1e-4
assert torch.allclose(similarity_64[3, 10], similarity_64[10, 3]) and torch.allclose(
    similarity_64[3, 10], similarity_64[50, 57]
)

# %% [markdown] id="3e054a1e"
# ### ✏️ 5.6 (L5.C) Embedding scale
#
# At the paper's d_model = 512, measure three root-mean-square values (RMS of a tensor t: `t.pow(2).mean().sqrt()`):
#
# - `rms_pe`: the positional-encoding table for 100 positions;
# - `rms_default`: the embeddings of a fresh `nn.Embedding(n_tokens, d_model)` (PyTorch's default N(0, 1) start), multiplied by √d_model;
# - `rms_small`: embeddings drawn with standard deviation 1/√d_model (variance 1/d_model), multiplied by √d_model.
#
# Each of the three can also be worked out on paper, and the check accepts that value: with 1000 × 512 random entries, a measurement lands within about 0.1% of it (the sampling error), closer than the rounding the course accepts. So typing the value you worked out passes too; measure anyway, because seeing the two scales side by side is the point of the lab, and its reference, at the end of the lesson, shows the measurement at two widths.
#
# *What you may use:* anything, but from `course_lib` only `sinusoidal_encoding`.

# %% id="3be0ee77"
d_model, n_tokens = 512, 1000
torch.manual_seed(0)
# BEGIN SOLUTION
rms_pe = sinusoidal_encoding(100, d_model).pow(2).mean().sqrt().item()
default_embedding = nn.Embedding(n_tokens, d_model)
rms_default = (default_embedding.weight.detach() * math.sqrt(d_model)).pow(2).mean().sqrt().item()
small_weight = torch.randn(n_tokens, d_model) * d_model**-0.5
rms_small = (small_weight * math.sqrt(d_model)).pow(2).mean().sqrt().item()
# END SOLUTION

# %% id="71e8a3b5"
check("5.6", rms_pe, rms_default, rms_small)

# %% [markdown] id="0d46e67c"
# ## 9. The references
#
# Each exercise's reference, computed with `course_lib` rather than taken from your answers. Each one appears once its exercise's check passes: after you have tried the exercise, run its cell here again.

# %% [markdown] id="bf9b66da"
# **5.2.** Position 5 at d_model = 512, read from `course_lib`'s table, with position 0 beside it.

# %% id="9ff1b68d"
row_5 = sinusoidal_encoding(6, 512)[5]
assert torch.allclose(row_5[:4], torch.tensor([-0.9589, 0.2837, -0.9939, 0.1107]), atol=1e-4)
assert torch.allclose(row_5[128:130], torch.tensor([0.4794, 0.8776]), atol=1e-4)
if check("5.2", pe_5_0, pe_5_1, pe_5_128, pe_5_129).passed:
    print(
        "PE(5, 0..3) =",
        row_5[:4].numpy().round(4),
        "  PE(0, 0..3) =",
        sinusoidal_encoding(1, 512)[0, :4].numpy(),
    )
    print("PE(5, 128..129) =", row_5[128:130].numpy().round(4))
    print(f"turns made by pair 0: {5 / (2 * math.pi):.2f}; by pair 64: {0.5 / (2 * math.pi):.2f}")
else:
    print("The reference appears here once 5.2 passes.")

# %% [markdown] id="5c1d7e20"
# Pair 0 does not depend on d_model at all: from (0, 1) at position 0 it has turned five radians, about 0.80 of a turn. The next pair turns a little more slowly, 10000^(−2/512) ≈ 0.965 radians per position, and pair 64, ten times more slowly than pair 0, has turned only 0.5 radians.

# %% [markdown] id="e0949412"
# **5.4.** The inverse permutation, and the two differences for three seeds (three layers and three inputs; seed 0 is the setup cell's).

# %% id="6153c230"
reference_inverse = torch.empty_like(perm)
reference_inverse[perm] = torch.arange(10)
assert reference_inverse.tolist() == [0, 3, 6, 1, 8, 4, 7, 2, 9, 5]
show_reference = check("5.4", inverse_perm, diff_without_pe, diff_with_pe).passed
if show_reference:
    print("inverse permutation:", reference_inverse.tolist())
else:
    print("The reference appears here once 5.4 passes.")

for seed in range(3):
    torch.manual_seed(seed)
    attention_layer = SelfAttention()
    tokens = torch.randn(1, 10, 32)
    with torch.no_grad():
        plain = attention_layer(tokens)
        without = (attention_layer(tokens[:, perm])[:, reference_inverse] - plain).norm().item()
        with_positions = attention_layer(tokens + pe)
        moved = attention_layer(tokens[:, perm] + pe)[:, reference_inverse]  # PE for the new places
    with_pe, output_norm = (moved - with_positions).norm().item(), with_positions.norm().item()
    # `without` is round-off: its digits differ between processors, so only its size is printed
    if show_reference:
        print(
            f"seed {seed}: without PE below 1e-5, with PE {with_pe:.2f} "
            f"(output norm {output_norm:.2f})"
        )
    assert without < 1e-5 and 0.5 < with_pe < 1.5 and 0.08 < with_pe / output_norm < 0.15
    assert with_pe / without > 1e5  # the "ratio" some tutorials print: huge, and meaningless

# %% [markdown] id="0b6f2a3e"
# Without positions the difference is float32 round-off, below 10⁻⁵ (its digits differ from one processor to another, so it is not printed); with them it is roughly a ninth of the output's norm, for every seed: the same token now gets a different vector at a different position. The ratio of the two, which some tutorials print, comes out in the millions and means nothing: its denominator is round-off.

# %% [markdown] id="0857baea"
# **5.6.** The three root-mean-square values, measured at two widths.

# %% id="8696623d"
show_reference = check("5.6", rms_pe, rms_default, rms_small).passed
if show_reference:
    print(f"{'d_model':>8} {'PE':>6} {'N(0,1)':>8} {'N(0,1)·√d':>10} {'small':>7} {'small·√d':>9}")
else:
    print("The reference appears here once 5.6 passes.")
for width in (64, 512):
    pe_rms = sinusoidal_encoding(100, width).pow(2).mean().sqrt().item()
    default_start = torch.randn(1000, width)
    small_start = torch.randn(1000, width) * width**-0.5
    row = [
        default_start.pow(2).mean().sqrt().item(),
        (default_start * math.sqrt(width)).pow(2).mean().sqrt().item(),
        small_start.pow(2).mean().sqrt().item(),
        (small_start * math.sqrt(width)).pow(2).mean().sqrt().item(),
    ]
    if show_reference:
        print(
            f"{width:>8} {pe_rms:>6.3f} {row[0]:>8.3f} {row[1]:>10.2f} {row[2]:>7.3f} {row[3]:>9.3f}"
        )
    assert abs(pe_rms - math.sqrt(0.5)) < 1e-3
    assert abs(row[1] / math.sqrt(width) - 1) < 0.02 and abs(row[3] - 1) < 0.02
    if width == 512 and show_reference:
        print(f"content / position at 512 with N(0, 1): {row[1] / pe_rms:.0f}×")
    assert width != 512 or round(row[1] / pe_rms) == 32

# %% [markdown] id="7d4e9b51"
# The encoding's RMS is always √0.5 ≈ 0.707, because each (sin, cos) pair has sin² + cos² = 1. With the default N(0, 1) start, the scaled content is √d_model times larger than that, 32 times at d_model = 512, the opposite of keeping the two in balance; with a 1/√d_model start the two are comparable at every width.

# %% [markdown] id="b60b6e0c"
# ## Recap
#
# - Self-attention compares contents only, so it is permutation-equivariant: shuffle the tokens and the outputs shuffle with them. Order must be added to the input.
# - The paper adds PE(pos, 2i) = sin(pos/10000^(2i/d_model)) and PE(pos, 2i+1) = cos(pos/10000^(2i/d_model)) to each embedding: no parameters, values in [−1, 1].
# - Low dimension indices turn fastest (wavelength 2π at pair 0); the wavelengths grow geometrically towards 10000·2π. (A popular tutorial has this backwards.)
# - PE(pos + k) = R_k · PE(pos), with R_k block-diagonal rotations that depend on k only; hence PE_i · PE_j depends only on |i − j|.
# - Learned position tables work about as well; relative schemes (RoPE, ALiBi) handle long inputs better. Sinusoids extrapolating to longer inputs was a hope, not a finding.
# - Multiplying embeddings by √d_model balances content and position only when the embeddings start small (std ≈ 1/√d_model); with N(0, 1) weights the content is about 32× larger at d_model = 512.
#
# **Next:** lesson 6 adds the rest of a Transformer layer: the position-wise feed-forward network, residual connections and layer normalisation.
