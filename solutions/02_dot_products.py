# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="8cf1080a"
# # Lesson 2 · Dot products as similarity
#
# > "We compute the dot products of the query with all keys, divide each by √d_k, and apply a softmax function to obtain the weights on the values." (paper §3.2.1)
#
# Attention has to decide, for every word, which other words matter to it. Before any softmax or learned projection, that decision rests on one number per pair of vectors: their dot product. This lesson is about that number: what its sign and size mean, how one matrix product computes all of them at once, and why it grows with the width of the vectors, which is the reason lesson 3 divides by √d_k.
#
# **How to use this notebook.** Run the cells from top to bottom (Shift+Enter). Cells marked ✏️ are yours: replace the part under `# YOUR CODE HERE`, run the cell, then run the `check(...)` cell under it. A check never crashes; it says ✓ **Passed**, ✗ **Not yet** with what looks wrong, or … **Not done yet**. Stuck? `hint("2.2")` shows one hint each time you run it.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor; a function you write returns a number when it computes a count, a rate or a loss, and otherwise PyTorch tensors. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="46f63105" tags=["nbval-ignore-output"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from course_lib import notebook
from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import check, hint
from course_lib.experiments import score_scale
from course_lib.figure_text import matrix_rows
from course_lib.widgets.vectors import VectorExplorer, polar, readout, vector_pair

notebook.start(seed=0)

# %% [markdown] id="8fadbcb1"
# ## Learning objectives
#
# By the end of this lesson you can:
#
# 1. compute a dot product and relate it to |a| |b| cos θ;
# 2. read the sign and size of a dot product as agreement, irrelevance or opposition;
# 3. compute every pairwise similarity at once as QKᵀ and state its shape;
# 4. derive that the dot product of two random unit-variance vectors has variance d_k, and say why that calls for the scaling of lesson 3.

# %% [markdown] id="293e47ef"
# ## 1. The idea
#
# **An analogy.** Think of two vectors as arrows leaving the same point. Arrows that point the same way agree; arrows that point in opposite directions disagree; arrows at a right angle have nothing to do with each other. The dot product turns that picture into one number.
#
# **Two ways to compute the same number.** For vectors a and b of length d:
#
# a·b = a₁b₁ + a₂b₂ + … + a_d b_d = |a| |b| cos θ,
#
# where |a| is the length of a and θ the angle between the arrows. The first form is what a computer does; the second says what the number means:
#
# | angle θ | cos θ | a·b | reading |
# |---|---|---|---|
# | small | close to 1 | large, positive | the vectors agree |
# | near 90° | close to 0 | close to 0 | unrelated |
# | near 180° | close to -1 | large, negative | they oppose each other |
#
# Dividing by the two lengths leaves only the direction: **cosine similarity**, cos θ = a·b / (|a| |b|), always between -1 and 1.
#
# **All pairs at once.** Stack n queries as the rows of Q (n × d) and m keys as the rows of K (m × d). Then QKᵀ is an n × m matrix whose entry (i, j) is query i · key j. A single matrix multiplication scores every query against every key, and matrix multiplication is exactly what GPUs are built to do fast.
#
# **In the Transformer.** How relevant key j is to query i is their dot product: the "MatMul" at the bottom of the paper's Figure 2. Lesson 3 scales these scores, turns them into weights with a softmax and mixes values with them.
#
# **Length matters.** The raw dot product grows with the lengths of the vectors, so a long vector can outscore even a perfect match in direction. The worked example shows it happening.
#
# First, the two formulas give the same number:

# %% id="261e1eed"
a = torch.tensor([3.0, 1.0])
b = torch.tensor([1.0, 2.0])
by_components = (a * b).sum()  # 3·1 + 1·2
theta = math.atan2(b[1], b[0]) - math.atan2(a[1], a[0])  # angle between the arrows, radians
by_lengths = a.norm() * b.norm() * math.cos(theta)
print(
    f"Σ aᵢbᵢ = {by_components:.4f}, |a| |b| cos θ = {by_lengths:.4f}, θ = {math.degrees(theta):.1f}°"
)
assert abs(by_components - 5.0) < 1e-6 and abs(by_lengths - by_components) < 1e-5

# %% [markdown] id="5d334c69"
# ## 2. Worked example: cat, dog and car
#
# Three words, each a hand-picked 2-D vector (a real model learns hundreds of dimensions, but two can be drawn):
#
# | word | vector |
# |---|---|
# | cat | [1.0, 0.5] |
# | dog | [0.9, 0.6] |
# | car | [-0.3, 0.8] |
#
# Each word is both a query and a key, so Q = K = the matrix with these three rows. First every product by hand, one query row at a time:

# %% id="8b9ffe9a"
words = ["cat", "dog", "car"]
Q = torch.tensor([[1.0, 0.5], [0.9, 0.6], [-0.3, 0.8]], dtype=torch.float64)
K = Q  # each word is a query and a key

expected = {  # (query, key): the dot product
    ("cat", "cat"): 1.25, ("cat", "dog"): 1.20, ("cat", "car"): 0.10,
    ("dog", "cat"): 1.20, ("dog", "dog"): 1.17, ("dog", "car"): 0.21,
    ("car", "cat"): 0.10, ("car", "dog"): 0.21, ("car", "car"): 0.73,
}  # fmt: skip


def shown(x):
    """A number as written by hand: negative ones in parentheses."""
    return f"{x:.1f}" if x >= 0 else f"({x:.1f})"


for i, query in enumerate(words):
    for j, key in enumerate(words):
        q, k = Q[i].tolist(), K[j].tolist()
        terms = [q[0] * k[0], q[1] * k[1]]
        print(
            f"{query}·{key} = {shown(q[0])}·{shown(k[0])} + {shown(q[1])}·{shown(k[1])} "
            f"= {terms[0]:.2f} + {terms[1]:.2f} = {sum(terms):.2f}"
        )
        assert abs(sum(terms) - expected[query, key]) < 1e-9
    print()

# %% [markdown] id="44046949"
# The same nine numbers come out of one matrix product, QKᵀ: (3 × 2) times (2 × 3) gives 3 × 3, one row per query and one column per key.

# %% id="81498f1c"
scores = Q @ K.T  # (3, 2) @ (2, 3) -> (3, 3): row i = query i, column j = key j
print("QKᵀ =\n", scores.numpy().round(2))
assert scores.shape == (3, 3)
assert torch.allclose(
    scores,
    torch.tensor([[1.25, 1.20, 0.10], [1.20, 1.17, 0.21], [0.10, 0.21, 0.73]], dtype=torch.float64),
)
assert torch.equal(scores, scores.T)  # symmetric, because Q = K

# The course's attention starts from these very scores: its weights are softmax(QKᵀ/√d_k).
_, ref_weights = scaled_dot_product_attention(Q, K, K)
torch.testing.assert_close(ref_weights, (scores / math.sqrt(2)).softmax(dim=-1))
print("course_lib.attention.scaled_dot_product_attention scores the same pairs.")

# %% [markdown] id="9233fcae"
# **Reading the matrix.** In the cat row, cat scores highest with itself (1.25), almost as high with dog (1.20), and barely at all with car (0.10): the two animals cluster, the vehicle stands apart.
#
# Now read the dog row: dog·cat = 1.20 is *larger* than dog·dog = 1.17. By this measure dog is closer to cat than to itself. Nothing is wrong with the arithmetic; the dot product also counts length, and cat is the longer vector. Cosine similarity divides the length out:

# %% id="352c9c23"
lengths = Q.norm(dim=-1, keepdim=True)  # (3, 1): one length per word
cosines = scores / (lengths * lengths.T)  # entry (i, j) divided by |q_i| |k_j|
print("lengths:", lengths.squeeze().numpy().round(3))
print("cosines =\n", cosines.numpy().round(3))

assert torch.allclose(
    lengths.squeeze(), torch.tensor([1.118, 1.082, 0.854], dtype=torch.float64), atol=5e-4
)
assert scores[1, 0] > scores[1, 1], "dog·cat beats dog·dog"
assert words[scores[1].argmax()] == "cat" and words[cosines[1].argmax()] == "dog"
for (i, j), value in {(0, 1): 0.992, (0, 2): 0.105, (1, 2): 0.227}.items():
    assert abs(cosines[i, j] - value) < 5e-4
torch.testing.assert_close(cosines, F.cosine_similarity(Q[:, None], K[None], dim=-1))

# %% [markdown] id="2796b838"
# With the lengths divided out, every word is most similar to itself (cosine 1) and cat and dog point almost the same way (0.992, an angle of about 7°). The picture: the arrows on the left, the two matrices on the right.

# %% id="11d50da3"
fig, axes = plt.subplots(
    1, 3, figsize=(12, 3.8), layout="constrained", gridspec_kw={"width_ratios": [1.1, 1, 1]}
)
ax = axes[0]
offsets = {
    "cat": (0.06, -0.07, "left"),
    "dog": (-0.04, 0.07, "right"),
    "car": (0.0, 0.08, "center"),
}
for (x, y), word, style in zip(Q.tolist(), words, ("-", "--", ":")):
    colour = "C0" if word != "car" else "C1"
    ax.annotate("", (x, y), (0, 0), arrowprops=dict(arrowstyle="-|>", lw=2, ls=style, color=colour))
    dx, dy, align = offsets[word]  # cat's and dog's tips are close: one label below, one above
    ax.text(x + dx, y + dy, word, ha=align, va="center", fontsize=11, color=colour)
ax.set(xlim=(-0.6, 1.3), ylim=(-0.1, 1.0), aspect="equal", title="The three word vectors")
ax.set(xlabel="first component", ylabel="second component")
for ax, matrix, title in zip(
    axes[1:], (scores, cosines), ("Dot products QKᵀ", "Cosine similarities")
):
    image = ax.imshow(matrix.numpy(), cmap="cividis", vmin=0, vmax=1.25)
    for i in range(3):
        for j in range(3):
            value = matrix[i, j].item()
            ax.text(
                j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                color="black" if value > 0.7 else "white",
            )
    ax.set_xticks(range(3), words)
    ax.set_yticks(range(3), words)
    ax.set(title=title, xlabel="key", ylabel="query")
fig.colorbar(image, ax=axes[1:], shrink=0.8, label="dot product or cosine")
arrows = ", ".join(f"{word} ({x:g}, {y:g})" for word, (x, y) in zip(words, Q.tolist()))
notebook.show(
    f"Three panels. Left: the word vectors {arrows} as arrows from the origin. Middle: heatmap "
    f"of the dot products QKᵀ, query rows against key columns in the order {', '.join(words)}: "
    f"{matrix_rows(scores, words)}. Right: the cosine similarities: {matrix_rows(cosines, words)}. "
    f"In dog's row the largest dot product is with {words[scores[1].argmax()]}, the largest "
    f"cosine with {words[cosines[1].argmax()]}."
)

# %% [markdown] id="d4127bae"
# > **Checked: the matrix as it is often printed.** A widely reprinted version of this example gives QKᵀ = [[1.25, 1.20, 0.10], [1.20, 1.17, 0.21], [0.10, 0.21, 0.73]] and reads its first row: cat is closest to itself. Every entry is right (asserted above). The first row is the flattering one, though: the second row shows that a raw dot product is not a similarity in the everyday sense, because it rewards length as well as direction.

# %% [markdown] id="f49a27cb"
# ## 3. Explore: two arrows
#
# Drag the sliders to change the direction and the length of each vector. The picture shows both arrows, the angle θ between them, and the *shadow* of the second vector on the first (the thick pale segment): the dot product is the length of the first vector times the signed length of that shadow. The numbers are also written out under the sliders.
#
# Things to try:
# - Turn dog until it is perpendicular to cat: the dot product and the cosine fall to 0.
# - Turn it to point the other way: the dot product becomes negative.
# - Keep the angle and stretch one vector: the dot product grows, the cosine does not move.
# - Set both to the same direction and shorten dog below cat's length (1.12): cat·dog is now larger than dog·dog would be, the effect of the dog row above.

# %% id="49f5020d" tags=["nbval-ignore-output"]
explorer = VectorExplorer(Q[0].tolist(), Q[1].tolist(), names=("cat", "dog"))
explorer

# %% [markdown] id="156a9ecc"
# The explorer computes with plain functions, so its numbers can be checked here as well. It starts on cat and dog, set by direction and length:

# %% id="9e6ec582"
cat_dog = vector_pair(*polar(Q[0]), *polar(Q[1]))
print(readout(cat_dog, ("cat", "dog")))
assert abs(cat_dog.dot - 1.20) < 1e-9 and abs(cat_dog.cosine - cosines[0, 1].item()) < 1e-9

# %% [markdown] id="9a877406"
# ## 4. Why dot products grow with d_k
#
# The vectors in a real model are wide: the paper's base model uses d_k = 64 per head. How large are dot products of such vectors? Take q and k with independent components of mean 0 and variance 1, as at initialisation. The paper's footnote 4 puts it in one sentence: "their dot product, q · k = Σ qᵢkᵢ, has mean 0 and variance d_k". The reasoning:
#
# - each term qᵢkᵢ has mean E[qᵢ]E[kᵢ] = 0 and variance E[qᵢ²kᵢ²] − 0 = E[qᵢ²]E[kᵢ²] = 1 (independence lets the expectations split);
# - the d_k terms are independent, so their variances add: Var(q·k) = d_k;
# - the standard deviation is therefore √d_k: 2 for d_k = 4, but 22.6 for d_k = 512, more than 11 times larger.
#
# A measurement with 200,000 random pairs at each width (drawn in chunks to keep the memory small):

# %% id="b3d3a289"
sample_dots = score_scale.sample_dots  # n dot products of random pairs, drawn in chunks
g = torch.Generator().manual_seed(0)  # these draws, whatever ran before
sampled = {d_k: sample_dots(d_k, n=200_000, generator=g) for d_k in (4, 512)}
for d_k, x in sampled.items():
    print(
        f"d_k = {d_k:>3}: mean {x.mean():+.3f}, variance {x.var():7.2f}, standard deviation {x.std():5.2f} (√d_k = {math.sqrt(d_k):.2f})"
    )
sampled_ratio = (sampled[512].std() / sampled[4].std()).item()
print(
    f"the standard deviation at d_k = 512 is {sampled_ratio:.1f}x that at d_k = 4 (√128 = {math.sqrt(128):.1f})"
)
assert abs(sampled_ratio - math.sqrt(128)) < 0.3  # the sampled ratio agrees with the argument

# %% [markdown] id="056fb04b"
# What that spread looks like. Left: the raw scores for both widths on the same axis; at d_k = 512 a score of ±20 is ordinary. Right: the same scores divided by √d_k, where both widths look alike. That division is the "Scale" step of lesson 3.

# %% id="7d5fb2fd"
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for d_k, style in ((4, "-"), (512, "--")):
    x = sampled[d_k].numpy()
    axes[0].hist(
        x,
        bins=120,
        range=(-90, 90),
        density=True,
        histtype="step",
        lw=1.8,
        ls=style,
        label=f"d_k = {d_k}: std {x.std():.1f}",
    )
    axes[1].hist(
        x / math.sqrt(d_k),
        bins=120,
        range=(-5, 5),
        density=True,
        histtype="step",
        lw=1.8,
        ls=style,
        label=f"d_k = {d_k}: std {x.std() / math.sqrt(d_k):.2f}",
    )
axes[0].set(title="Raw dot products q·k", xlabel="score", ylabel="density")
axes[1].set(title="Divided by √d_k (lesson 3)", xlabel="score / √d_k", ylabel="density")
for ax, corner in zip(axes, ("upper right", "upper left")):
    ax.set_ylim(0, 1.4 * ax.get_ylim()[1])  # headroom: the legend clear of the peaks
    ax.legend(loc=corner)
std = {d_k: x.numpy().std() for d_k, x in sampled.items()}  # as in the legends
notebook.show(
    f"Two histograms of {len(sampled[4]):,} random dot products q·k each, for d_k = 4 (solid) "
    f"and d_k = 512 (dashed). Left, the raw scores: standard deviation {std[4]:.1f} at d_k = 4 "
    f"and {std[512]:.1f} at d_k = 512, a curve {std[512] / std[4]:.0f} times as wide. Right, the "
    f"scores divided by √d_k: standard deviations {std[4] / 2:.2f} and "
    f"{std[512] / math.sqrt(512):.2f}, two curves of the same width."
)

beyond_8 = {d_k: (x.abs() > 8).float().mean().item() for d_k, x in sampled.items()}
print(f"scores beyond ±8: {beyond_8[4]:.1%} at d_k = 4, {beyond_8[512]:.1%} at d_k = 512")
spread = score_scale.spread_measures(sampled)  # checked over many seeds by the course's tests
print(score_scale.EXPERIMENT.verify(spread, *spread))

# %% [markdown] id="5a638ea9"
# Scores that large push a softmax to put nearly all the weight on one key, and then its gradient almost vanishes: lesson 3 measures that and fixes it.

# %% [markdown] id="db139851"
# ## 5. Exercises
#
# ### ✏️ 2.1 Recall: why dot products?
#
# Attention could measure closeness in other ways, for instance with the Euclidean distance |q − k|. Why does it use dot products?
#
# - **a.** Euclidean distance is defined only for vectors of two or three components, while q and k have d_k = 64 components each in the base model.
# - **b.** Dot products are never negative, so every score the softmax receives is positive and each key keeps a share of the attention.
# - **c.** A dot product ignores the lengths of q and k and compares only their directions, so a long key cannot outscore a better-aligned one.
# - **d.** One product QKᵀ gives every score at once, fast on GPUs; a distance needs that product plus the lengths, and ranks small as similar.
#
# Set `answer_2_1` to a letter, for example `answer_2_1 = "a"`, and run the check. Every option has an explanation, so the check is worth running even when you are sure.

# %% id="870360d3"
# BEGIN SOLUTION
answer_2_1 = "d"
# END SOLUTION

# %% id="224b30ec"
check("2.1", answer_2_1)

# %% [markdown] id="44decb01"
# ### ✏️ 2.2 Apply: a dot product, its cosine and its angle
#
# Take a = [2, −1, 3] and b = [1, 4, −2]. Compute the dot product `dot_ab`, the cosine similarity `cos_ab` and the angle between them in **degrees**, `angle_ab` (three numbers). Before you run the check, decide what the sign of `dot_ab` says about the two vectors.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="d77362f9"
a = np.array([2.0, -1.0, 3.0])
b = np.array([1.0, 4.0, -2.0])
# BEGIN SOLUTION
dot_ab = a @ b  # 2 - 4 - 6 = -8
cos_ab = dot_ab / (np.linalg.norm(a) * np.linalg.norm(b))  # -8 / (√14·√21)
angle_ab = np.degrees(np.arccos(cos_ab))
# END SOLUTION

# %% id="5b72a899"
check("2.2", dot_ab, cos_ab, angle_ab)


# %% [markdown] id="21c7fd8d"
# ### ✏️ 2.3 Extend: the variance of q·k at two new widths, measured
#
# Section 4 measured d_k = 4 and d_k = 512. Take two widths it did not measure: d_k = 3, as narrow as the vectors of exercise 2.2, and d_k = 768. First predict, in the cell below, what the argument of section 4 says you will find, and carry the argument one step further. Then measure.
#
# A measurement can be repeated, so write it as a function: `dot_variance(d_k, n, seed)` draws n random pairs (q, k) of width d_k with `torch.randn`, from a generator seeded with `seed`, and returns the sample variance of q·k. Store `var_3` and `var_768`, your function's values at d_k = 3 and d_k = 768 with n = 10,000 pairs and seed 0, and `std_ratio`, how many times larger the standard deviation is at 768 than at 3.
#
# The check calls your function again, with other widths, sizes and seeds. A measured variance differs from d_k by its *sampling error*, about d_k·√(2/n): a percent or two with 10,000 pairs, but about half of d_k with 10 pairs, from one seed to the next. Typing the theory's values therefore does not pass; your own measured values do.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% [markdown] id="a27d17a7" tags=["free-text"]
# **Your answer:** before you measure, what values do you expect for `var_3`, `var_768` and `std_ratio`, and about how far from them will a measurement from 10,000 pairs land? And if every component of q and k had variance σ² instead of 1 (still mean 0, still independent), what would Var(q·k) be, and would dividing by √d_k still bring it back to 1?
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* Var(q·k) = d_k predicts about 3 and about 768, so standard deviations of √3 ≈ 1.73 and √768 ≈ 27.7, and `std_ratio` = √(768/3) = √256 = 16; measured from 10,000 pairs, the variances scatter around these by their sampling error, about √(2/10,000) ≈ 1.4% (a little more at d_k = 3, where q·k has heavier tails: 2%). With components of variance σ², each term qᵢkᵢ still has mean 0, and its variance is E[qᵢ²]E[kᵢ²] = σ² · σ² = σ⁴; the d_k independent terms add up to Var(q·k) = σ⁴·d_k, a standard deviation of σ²√d_k. Dividing by √d_k then leaves a variance of σ⁴, which is 1 only when σ = 1: the scaling of lesson 3 assumes components of about unit variance.
# <!-- END SOLUTION -->

# %% id="6888055f"
def dot_variance(d_k, n, seed):
    """The sample variance of q·k over n random pairs (q, k) of width d_k, drawn from seed."""
    # BEGIN SOLUTION
    g = torch.Generator().manual_seed(seed)  # the same seed, the same pairs
    q, k = torch.randn(n, d_k, generator=g), torch.randn(n, d_k, generator=g)
    return (q * k).sum(dim=-1).var().item()  # one dot product per row, then the variance
    # END SOLUTION


# BEGIN SOLUTION
var_3, var_768 = dot_variance(3, 10_000, seed=0), dot_variance(768, 10_000, seed=0)
std_ratio = math.sqrt(var_768 / var_3)
# END SOLUTION

# %% id="b8450d46"
check("2.3", dot_variance, var_3, var_768, std_ratio)

# %% [markdown] id="7d6cf8ff"
# ## 6. Labs
#
# ### ✏️ 2.4 (L2.A) The variance against d_k, on log-log axes
#
# Two widths at a time show that the variance grows; a line through several shows how fast. A power law Var = c·d_kᵖ is a straight line of slope p on log-log axes, since log Var = log c + p·log d_k. Write `measure_variances(dims, n, seed)`, which measures the variance at each d_k of the list `dims` with your `dot_variance` from 2.3 (n pairs each, drawn with `seed`) and returns them in the same order. Store `dot_variances`, its values for `dims` with 10,000 pairs and seed 0 as in 2.3, then fit a line to (log d_k, log variance) and keep its slope, `loglog_slope`. `np.polyfit` fits lines. Which slope does the argument of section 4 predict, and why will yours not be exactly that? As in 2.3, the check calls your function again with other widths, sizes and seeds.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="87e7acc7"
dims = [1, 8, 64, 256]


def measure_variances(dims, n, seed):
    """Var(q·k) measured at each d_k in dims, from n pairs drawn with seed: one per d_k."""
    # BEGIN SOLUTION
    return [dot_variance(d_k, n, seed) for d_k in dims]
    # END SOLUTION


# BEGIN SOLUTION
dot_variances = measure_variances(dims, 10_000, seed=0)
loglog_slope = np.polyfit(np.log(dims), np.log(dot_variances), 1)[0]
# END SOLUTION

# %% id="cad267b2"
check("2.4", measure_variances, dot_variances, loglog_slope)

# %% [markdown] id="27ac0ef6"
# ### ✏️ 2.5 (L2.B) Three new words in one line
#
# Redo section 2 with numpy for three other words, tea, coffee and bread: the cell below puts their vectors in `Q` (K is the same matrix). Compute `qk_scores` = QKᵀ in one line, then the matrix of cosine similarities `qk_cosines`. Both are 3 × 3.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="f1d847ae"
Q = np.array([[0.7, 0.3], [1.2, 0.6], [0.1, 0.9]])  # tea, coffee, bread
K = Q
# BEGIN SOLUTION
qk_scores = Q @ K.T
lengths = np.linalg.norm(Q, axis=-1, keepdims=True)  # (3, 1)
qk_cosines = qk_scores / (lengths * lengths.T)
# END SOLUTION

# %% id="06a2430e"
check("2.5", qk_scores, qk_cosines)

# %% [markdown] id="38611df1" tags=["free-text"]
# **Your answer:** in the tea row, which word gets the highest dot product, and which the highest cosine? Why do they differ, and which would you want attention to use?
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* The dot product ranks coffee first (1.02, against 0.58 for tea itself), because tea·coffee = |tea| |coffee| cos θ and coffee is much longer (1.342 against 0.762) while the angle between them is only about 3°. The cosine divides the lengths out and ranks tea itself first (1.000), then coffee (0.998). Neither is "wrong": the cosine compares directions only, while the dot product lets a vector's length act as emphasis. Attention uses the dot product, and since the vectors are learned, the model can use length on purpose: a longer key is louder, for every query that points its way.
# <!-- END SOLUTION -->

# %% [markdown] id="5e0c2a71"
# ## 7. The references
#
# Each exercise's reference, computed by the course rather than taken from your answers. Read each one after you have tried its exercise: on a first Run All they all appear here, below the last check.

# %% [markdown] id="da73ab7a"
# **2.1.** Why a distance costs more, on the worked example of section 2: the squared distances are the lengths squared minus twice QKᵀ, so a distance costs the same matrix product and then some. The paper adds (§3.2.1) that dot-product attention is faster and more memory-efficient in practice than the older additive attention, because it runs on highly optimised matrix-multiplication code.

# %% id="c012c089"
animals = torch.tensor([[1.0, 0.5], [0.9, 0.6], [-0.3, 0.8]], dtype=torch.float64)  # cat, dog, car
squared_lengths = (animals**2).sum(dim=-1, keepdim=True)  # (3, 1)
via_dots = squared_lengths + squared_lengths.T - 2 * animals @ animals.T  # |q|² + |k|² - 2 q·k
print("squared distances =\n", via_dots.numpy().round(3))
torch.testing.assert_close(via_dots, torch.cdist(animals, animals) ** 2)

# %% [markdown] id="27909267"
# **2.2.** The reference, computed with torch: a·b = 2 − 4 − 6 = −8. The sign is negative, so the two vectors point in broadly opposite directions, an angle of more than 90°: by this measure they are dissimilar.

# %% id="aba71671"
a_t, b_t = torch.tensor([2.0, -1.0, 3.0]), torch.tensor([1.0, 4.0, -2.0])
ref_dot = torch.dot(a_t, b_t).item()
ref_cos = F.cosine_similarity(a_t, b_t, dim=0).item()
ref_angle = math.degrees(math.acos(ref_cos))
print(f"a·b = {ref_dot:.0f}, cos θ = {ref_cos:.3f}, θ = {ref_angle:.1f}°")
assert ref_dot == -8 and abs(ref_cos + 0.467) < 5e-4 and abs(ref_angle - 117.8) < 0.05

# %% [markdown] id="811c033c"
# **2.3.** From the argument alone, the standard deviations are √3 ≈ 1.73 and √768 ≈ 27.7, and their ratio is √(768/3) = √256 = 16. The reference measures it as section 4 did, with 200,000 pairs at each width:

# %% id="c3702366"
g = torch.Generator().manual_seed(1)  # draws of its own, whatever the exercise drew
new_widths = {d_k: sample_dots(d_k, n=200_000, generator=g) for d_k in (3, 768)}
for d_k, x in new_widths.items():
    print(
        f"d_k = {d_k:>3}: variance {x.var():7.2f}, standard deviation {x.std():5.2f} (√d_k = {math.sqrt(d_k):.2f})"
    )
new_ratio = (new_widths[768].std() / new_widths[3].std()).item()
print(f"ratio of the standard deviations {new_ratio:.2f} (√256 = {math.sqrt(256):.0f})")
assert all(abs(x.var().item() / d_k - 1) < 0.03 for d_k, x in new_widths.items())
assert abs(new_ratio - 16) < 0.4  # 16 = √(768 / 3), within many standard errors

# %% [markdown] id="663a5951"
# **2.4.** The reference, at every power of 2 from 1 to 512, with the fitted line. One figure often quoted for d_k = 64 is that its variance is about 64 times that at d_k = 1; the last line checks it.

# %% id="add2458a"
g = torch.Generator().manual_seed(2)  # independent of how the exercise drew its numbers
all_dims = [2**i for i in range(10)]  # 1 ... 512
measured = [sample_dots(width, n=20_000, generator=g).var().item() for width in all_dims]
fit_slope, fit_intercept = score_scale.loglog_fit(all_dims, measured)

fig, ax = plt.subplots(figsize=(5.5, 4))
ax.loglog(all_dims, measured, "o", label="measured, 20,000 pairs each")
line = np.exp(fit_intercept) * np.array(all_dims, dtype=float) ** fit_slope
ax.loglog(all_dims, line, "--", label=f"fitted line, slope {fit_slope:.3f}")
ax.set(
    title="Var(q·k) grows in proportion to d_k",
    xlabel="d_k (log scale)",
    ylabel="variance of q·k (log scale)",
)
ax.set_xticks(all_dims[::3], [str(d) for d in all_dims[::3]])
ax.legend()
notebook.show(
    "Scatter plot on log-log axes: the variance of q·k, each from 20,000 random pairs, against "
    f"d_k = {all_dims[0]}, {all_dims[1]}, {all_dims[2]}, ..., {all_dims[-1]}, with a dashed fitted "
    f"line of slope {fit_slope:.2f}. The points run from {measured[0]:.2f} to {measured[-1]:.0f}: "
    "the variance grows in proportion to d_k."
)

ratio_64 = measured[all_dims.index(64)] / measured[0]
print(f"slope {fit_slope:.3f}; Var at d_k = 64 / Var at d_k = 1 = {ratio_64:.0f}")
growth = score_scale.growth_measures(all_dims, measured)
print(score_scale.EXPERIMENT.verify(growth, *growth))

# %% [markdown] id="099f38b3"
# **2.5.** The reference, computed with torch from the same three vectors:

# %% id="a4f9ccc0"
new_words = ["tea", "coffee", "bread"]
words_t = torch.tensor([[0.7, 0.3], [1.2, 0.6], [0.1, 0.9]], dtype=torch.float64)
reference = words_t @ words_t.T
reference_cosines = F.cosine_similarity(words_t[:, None], words_t[None], dim=-1)
print("QKᵀ =\n", reference.numpy().round(2))
print("cosines =\n", reference_cosines.numpy().round(3))
assert np.allclose(reference, [[0.58, 1.02, 0.34], [1.02, 1.80, 0.66], [0.34, 0.66, 0.82]])
assert (
    new_words[reference[0].argmax()] == "coffee"
    and new_words[reference_cosines[0].argmax()] == "tea"
)
assert abs(reference_cosines[0, 1] - 0.998) < 5e-4
assert abs(math.degrees(math.acos(reference_cosines[0, 1])) - 3.4) < 0.05

# %% [markdown] id="e35a43ff"
# ## Recap
#
# - A dot product a·b = Σ aᵢbᵢ = |a| |b| cos θ is large and positive for vectors that agree, near 0 for unrelated ones, and negative for opposed ones.
# - Cosine similarity divides out the lengths; the raw dot product does not, so a longer vector can outscore a perfect match in direction (dog·cat = 1.20 > dog·dog = 1.17).
# - QKᵀ computes every query-key score in one matrix product: (n × d)(d × m) → n × m.
# - With independent unit-variance components, Var(q·k) = d_k: a line of slope 1 on log-log axes, and a standard deviation of √d_k (22.6 at d_k = 512).
#
# **Next:** lesson 3 divides the scores by √d_k, turns them into weights with a softmax and uses them to mix values: scaled dot-product attention.
