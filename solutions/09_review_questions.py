# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] id="af751a99"
# # Review · Five questions on the whole paper
#
# > "The Transformer is the first transduction model relying entirely on self-attention to compute representations of its input and output without using sequence-aligned RNNs or convolution." (paper §2)
#
# Five questions that tie the lessons together. Answer each in your own words in the cell marked **Your answer** (double-click it to edit). Then compare your answer with the model answer: the cell under each answer, `reveal("9.w1", ...)` for question 1, shows it once you paste your answer (or its gist) into it. The model answer is one good answer, not the only one. (A class's copy of the course may leave the model answers out: your instructor then reads your answers.) Where a question turns on a number, the notebook computes it, and two exercises, ✏️ 9.1 and ✏️ 9.2, check the numbers you work out yourself (`hint("9.1")` gives a hint when stuck). Each question names the lesson that teaches it; reread that lesson if an answer does not come.
#
# **Answers.** A value you store may be a number, a list, a NumPy array or a tensor. Each ✏️ prompt ends with what you may use, and the check says at once if the grader would not accept an answer (lesson 1 has the details).

# %% id="6e514d33" tags=["nbval-ignore-output"]
import math

import torch

from course_lib import notebook
from course_lib.checks import check, hint

notebook.start(seed=0)

# %% [markdown] id="c73f705a"
# ## Question 1 · The sequential bottleneck
#
# *Taught in [lesson 1](01_sequence_problem.ipynb) and [lesson 3](03_scaled_dot_product_attention.ipynb).*
#
# **Why does the Transformer remove the sequential bottleneck? Compare the maximum path lengths of a recurrent layer and a self-attention layer, and say why they matter.**
#
# The counts for a layer over n tokens: a recurrent layer needs n steps one after another, and a signal from the first token to the last crosses n − 1 of them; self-attention needs one step and connects any two tokens directly, at the price of n² scores.

# %% id="3668e97e"
print(
    f"{'n':>5} {'RNN steps':>10} {'RNN path':>9} {'attention steps':>16} {'path':>5} {'scores':>9}"
)
for n in (5, 50, 1_000):
    recurrent = (n, n - 1)  # h_t needs h_(t-1): n steps; first to last crosses n - 1 hops
    attending = (1, 1)  # every position in one matrix product; one hop between any pair
    print(
        f"{n:>5} {recurrent[0]:>10} {recurrent[1]:>9} {attending[0]:>16} {attending[1]:>5} {n * n:>9,}"
    )
    if n == 5:  # lesson 1's five-token sentence: 5 steps and 4 hops against 1 and 1
        assert recurrent == (5, 4)

# %% [markdown] id="5e61c70d" tags=["free-text"]
# **Your answer:**
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* A recurrent layer computes h_t from h_(t−1), so its n positions take n dependent steps: O(n) sequential operations that no amount of hardware can run side by side. Self-attention computes every position of a layer from the previous layer in one matrix product: O(1) sequential operations, fully parallel on a GPU. The maximum path length between two tokens is O(n) in an RNN (n − 1 hops from the first token to the last) and O(1) in self-attention (one hop between any pair). Short paths matter for learning: the forward signal and the backward gradient between distant tokens pass through fewer transformations, so they fade and vanish less, and a long-range dependency, such as a verb agreeing with a subject 37 tokens earlier, becomes much easier to learn. The price is O(n²) attention work and memory per layer (question 4).
# <!-- END SOLUTION -->

# %% [markdown] id="32e7de70"
# ## Question 2 · Why divide by √d_k?
#
# *Taught in [lesson 2](02_dot_products.ipynb) and [lesson 3](03_scaled_dot_product_attention.ipynb).*
#
# **Why are the scores scaled by √d_k? What happens without the scaling at d_k = 64?**
#
# ### ✏️ 9.1 Apply: the numbers behind question 2
#
# With independent components of mean 0 and variance 1, what is the standard deviation of q·k at d_k = 64 (`std_64`, one number)? And what weights does a softmax give to the unscaled scores [8, 0, −8] (`weights_8`, three numbers)? Compute the weights rather than typing them: the two small ones are the point here, and the course's usual rounding of typed numbers (2 decimals) would turn them into 0, so the check wants them to 5 significant figures.
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="868ebf09"
# BEGIN SOLUTION
std_64 = math.sqrt(64)  # Var(q·k) = d_k
weights_8 = torch.tensor([8.0, 0.0, -8.0]).softmax(dim=-1)
# END SOLUTION

# %% id="d2b08e19"
check("9.1", std_64, weights_8)

# %% [markdown] id="ed66d4e6" tags=["free-text"]
# **Your answer:**
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* With independent unit-variance components, q·k has variance d_k, so at d_k = 64 its standard deviation is 8 and scores of ±8, even ±16, are routine. The softmax of such scores is almost one-hot: [8, 0, −8] gives [0.99966, 0.00034, about 1e−7]. Its Jacobian pᵢ(δᵢⱼ − pⱼ) is then tiny everywhere (at most 3.4e−4 here), so almost no gradient reaches W^Q and W^K, and the model cannot learn to move its attention elsewhere. Dividing by √64 = 8 brings the scores back to unit variance: [1, 0, −1] gives [0.665, 0.245, 0.090], with Jacobian entries up to 0.22, so the weights stay soft and trainable.
# <!-- END SOLUTION -->

# %% [markdown] id="16c0aeeb"
# ## Question 3 · Three kinds of attention
#
# *Taught in [lesson 3](03_scaled_dot_product_attention.ipynb) (masks), [lesson 4](04_multi_head_attention.ipynb) (multi-head attention) and [lesson 7](07_complete_transformer.ipynb) (the encoder and the decoder).*
#
# > "The Transformer uses multi-head attention in three different ways" (paper §3.2.3)
#
# **Name the three. For each, say where its queries, keys and values come from and which positions a query may attend to. Why is only one of the three masked against later positions?**

# %% [markdown] id="872b9db6" tags=["free-text"]
# **Your answer:**
#
# <!-- BEGIN SOLUTION -->
# *Model answer.*
# - **Encoder self-attention.** Queries, keys and values all come from the previous encoder layer (in the first layer, the source embeddings plus positional encodings). Every source position may attend to every source position: the whole source sentence is known before the translation starts, so only padding is hidden. One S × S matrix per head.
# - **Masked decoder self-attention.** Queries, keys and values all come from the previous decoder layer, over the target tokens so far. Position t may attend to positions 1 to t only: the later scores are set to −∞ before the softmax, so their weights are 0. One T × T matrix per head, zero above the diagonal.
# - **Encoder-decoder attention (cross-attention).** Queries come from the previous decoder layer; keys and values come from the encoder's output, the same memory for every decoder layer. Every target position may attend to every source position (only source padding is hidden), as in the attention of earlier sequence-to-sequence models. One T × S matrix per head.
#
# Only the decoder's self-attention reads the sequence being generated. When the model translates, it produces one token at a time, so the tokens after position t do not exist yet when position t is predicted; in training the whole target is fed at once (teacher forcing), and without the mask position t could read token t + 1, the very token it is trained to predict. The mask keeps training as generation will be: the paper's "auto-regressive property". The source, read by the other two, is known in full from the start, so there is nothing in it to hide.
# <!-- END SOLUTION -->

# %% [markdown] id="9c3a7e21"
# The three attentions of `course_lib`'s model, untrained, on one source sentence of four words and a padding position, and the start of its translation: the shape of each attention matrix (queries × keys), the weight on the padding key and the weight on later positions.

# %% id="5b0d4f6e"
from course_lib.data import PAD_ID
from course_lib.model import Attentions, Transformer, TransformerConfig

torch.manual_seed(0)
model = Transformer(TransformerConfig.tiny(src_vocab_size=16, tgt_vocab_size=16)).eval()
src = torch.tensor([[5, 6, 7, 8, PAD_ID]])  # S = 5: four words, then padding
tgt = torch.tensor([[1, 9, 10]])  # T = 3: the start token and two words
with torch.no_grad():
    _, maps = Attentions.of(model, src, tgt)

encoder, decoder, cross = maps.encoder[0][0], maps.decoder_self[0][0], maps.cross[0][0]
# each (H, T_q, T_k): every head of the first layer, for the one sentence


def weight(w):  # the largest of some weights: exactly 0 where a mask hides the keys
    return "0" if w.max().item() == 0 else "more than 0"


def later(w):  # the weights each query gives the keys after its own position
    return w.triu(diagonal=1)


print(
    f"encoder self-attention: {tuple(encoder.shape[1:])}, source × source; "
    f"on the padding key {weight(encoder[..., -1])}; on later words {weight(later(encoder))}"
)
print(
    f"decoder self-attention: {tuple(decoder.shape[1:])}, target × target; "
    f"on later positions {weight(later(decoder))}"
)
print(
    f"       cross-attention: {tuple(cross.shape[1:])}, target × source; "
    f"on the padding key {weight(cross[..., -1])}; from the first target position to the "
    f"last word {weight(cross[:, 0, 3])}"
)

assert maps.encoder[0].shape[-2:] == (5, 5) and maps.decoder_self[0].shape[-2:] == (3, 3)
assert maps.cross[0].shape[-2:] == (3, 5)  # target queries, source keys
assert (maps.encoder[0][..., -1] == 0).all() and (maps.cross[0][..., -1] == 0).all()
assert (maps.decoder_self[0].triu(diagonal=1) == 0).all()  # the causal mask
assert (maps.encoder[0].triu(diagonal=1)[..., :4] > 0).any()  # the encoder sees later words

# %% [markdown] id="c7710da9"
# ## Question 4 · The size of the attention matrix
#
# *Taught in [lesson 3](03_scaled_dot_product_attention.ipynb) (one score per query-key pair) and [lesson 4](04_multi_head_attention.ipynb) (heads); the cost table of [lesson 1](01_sequence_problem.ipynb) compares it with recurrence.*
#
# **For a 512-token sequence with d_model = 512, how many entries does one attention matrix have? And for a 100,000-token document? Why does this limit the Transformer?**
#
# ### ✏️ 9.2 Apply: the numbers behind question 4
#
# Compute the number of entries of one head's attention matrix for 512 tokens (`entries_512`) and for 100,000 tokens (`entries_100k`), and the memory the second one takes in float32, in GB of 10⁹ bytes (`gb_100k`).
#
# *What you may use:* anything but `course_lib`'s reference code.

# %% id="5c617806"
# BEGIN SOLUTION
entries_512 = 512**2
entries_100k = 100_000**2
gb_100k = entries_100k * 4 / 1e9  # float32: 4 bytes per entry
# END SOLUTION

# %% id="fbe042ff"
check("9.2", entries_512, entries_100k, gb_100k)

# %% [markdown] id="6b62921c" tags=["free-text"]
# **Your answer:**
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* One head's attention matrix has one entry per (query, key) pair: 512² = 262,144 entries at 512 tokens, about 1 MiB in float32; the base model's 8 heads make 2,097,152 per layer and its 6 layers 12.6 million per encoder pass. d_model does not change the size of the matrix, but it sets the cost of computing it: n² · d_model ≈ 134 million multiply-adds per layer. At 100,000 tokens a single head's matrix has 10¹⁰ entries, 40 GB in float32 (320 GB for 8 heads), before the memory the backward pass needs. Memory and compute grow with the square of the length while the information in the document grows only linearly, so standard Transformers were held to contexts of 512 to 2,048 tokens. Long documents need sparse, local or linear attention, memory-efficient kernels such as FlashAttention, or chunking.
# <!-- END SOLUTION -->

# %% [markdown] id="aac7a3f2"
# > **Errata: GB and GiB.** A popular table of attention-matrix sizes gives 128,000 tokens as "~64 GB". The entry count, 16,384,000,000, is right, but at 4 bytes each that is 65.5 GB, or 61.0 GiB. Exactly 64 GiB would take 131,072 tokens. The table's other rows (1, 16 and 256 MiB for 512, 2,048 and 8,192 tokens) are exact in binary units, and all of them are for one head, one layer and one sequence. Below, the rows from 2,048 tokens on; 512 tokens is 9.2's own question, and its reference at the end of the lesson checks the 1 MiB.

# %% id="6f97cd90"
FLOAT32, MiB, GB, GiB = 4, 2**20, 10**9, 2**30  # bytes per float32 entry; binary and decimal units
for tokens in (2_048, 8_192, 128_000, 131_072):
    size = tokens**2 * FLOAT32
    print(
        f"{tokens:>7,} tokens: {tokens**2:>14,} entries = {size / GB:7.3f} GB"
        f" = {size / GiB:7.3f} GiB = {size / MiB:>7,.0f} MiB"
    )
assert round(128_000**2 * FLOAT32 / GB, 1) == 65.5 and round(128_000**2 * FLOAT32 / GiB, 1) == 61.0
assert 131_072**2 * FLOAT32 / GiB == 64 and 8_192**2 * FLOAT32 / MiB == 256
assert 2_048**2 * FLOAT32 / MiB == 16


# %% [markdown] id="123ec985"
# ## Question 5 · Beyond translation
#
# *The whole model is assembled in [lesson 7](07_complete_transformer.ipynb); positions come from [lesson 5](05_positional_encoding.ipynb) and multi-head attention from [lesson 4](04_multi_head_attention.ipynb).*
#
# **What makes the Transformer useful beyond translation and parsing? What has to change to use it for text classification, for question answering and for images?**

# %% [markdown] id="82e6f0ce" tags=["free-text"]
# **Your answer:**
#
# <!-- BEGIN SOLUTION -->
# *Model answer.* The architecture assumes very little: it works on any set or sequence of vectors, models every pairwise interaction in one step, parallelises well and keeps improving with more data and compute, and it gets order from a positional scheme that can be swapped.
# - **Text classification:** keep only the encoder, which reads in both directions; pool its outputs or read a [CLS] token's vector into a classification head (as BERT does). The decoder and cross-attention go.
# - **Question answering:** extractive QA feeds the question and the passage to an encoder as one sequence (with segment embeddings) and predicts where the answer starts and ends; generative QA uses an encoder-decoder (T5) or a decoder-only model given a prompt. Long passages run into the n² cost of question 4.
# - **Images:** cut the image into patches (for example 16 × 16 pixels), embed each patch linearly as a token, add 2-D or learned position embeddings and a class token (ViT, 2020). Without the convolution's built-in bias towards local patterns it needs a lot of data or pre-training, and its cost is quadratic in the number of patches.
#
# In every case the task brings its own input embedding, positional scheme and output head, and the model is usually pre-trained at scale and then fine-tuned.
# <!-- END SOLUTION -->

# %% [markdown] id="4b7e1c93"
# ## The references
#
# The references of ✏️ 9.1 and ✏️ 9.2, computed by the course rather than taken from your answers. Read each one after you have tried its exercise: on a first Run All they wait here, below the last question, and print once the exercise passes (run the cell again then).

# %% [markdown] id="8e318998"
# **9.1.** The reference, with the softmax's gradient: its Jacobian ∂pᵢ/∂sⱼ = pᵢ(δᵢⱼ − pⱼ). Scores of [8, 0, −8] are what d_k = 64 produces routinely; divided by √64 = 8 they become [1, 0, −1]. It waits for your answer: once 9.1 passes, run this cell again.

# %% id="f7ebb6f4"
def softmax_jacobian(p):
    """∂p_i/∂s_j = p_i (δ_ij − p_j) for a softmax output p of shape (n,)."""
    return torch.diag(p) - p[:, None] * p[None, :]


results = {}
for label, s in (("unscaled", [8.0, 0.0, -8.0]), ("scaled by 1/8", [1.0, 0.0, -1.0])):
    p = torch.tensor(s, dtype=torch.float64).softmax(dim=-1)
    results[label] = s, p, softmax_jacobian(p).abs().max().item()

if check("9.1", std_64, weights_8).passed:  # the reference, once yours passes
    for label, (s, p, jac) in results.items():
        shown = ", ".join(f"{x:.5g}" for x in p.tolist())
        print(f"{label:>14}: scores {s} -> weights [{shown}], largest Jacobian entry {jac:.5f}")
else:
    print("The reference appears here once 9.1 passes.")

_, p_big, jac_big = results["unscaled"]
_, p_small, jac_small = results["scaled by 1/8"]
assert math.sqrt(64) == 8
assert torch.allclose(p_big, torch.tensor([0.99966, 0.00034, 1e-7], dtype=torch.float64), atol=1e-5)
assert abs(jac_big - 3.4e-4) < 1e-5
assert torch.allclose(p_small, torch.tensor([0.665, 0.245, 0.090], dtype=torch.float64), atol=1e-3)
assert abs(jac_small - 0.22) < 0.005

# %% [markdown] id="74f8d1e7"
# **9.2.** The reference, with the base model's 8 heads and 6 layers, the cost of computing the scores, and binary units beside decimal ones. It waits for your answer: once 9.2 passes, run this cell again.

# %% id="2ea0047d"
n_heads, n_layers, d_model = 8, 6, 512

if check("9.2", entries_512, entries_100k, gb_100k).passed:  # the reference, once yours passes
    n = 512
    entries = n * n
    print(
        f"{n:,} tokens: {entries:,} entries per head = {entries * FLOAT32 / MiB:.0f} MiB in float32"
    )
    print(
        f"  x {n_heads} heads = {entries * n_heads:,} per layer; x {n_layers} layers = {entries * n_heads * n_layers:,} per encoder pass"
    )
    print(f"  computing the scores: n² · d_model = {n * n * d_model:,} multiply-adds per layer")
    n = 100_000
    entries = n * n
    print(
        f"{n:,} tokens: {entries:,} entries per head = {entries * FLOAT32 / GB:.0f} GB ({entries * FLOAT32 / GiB:.1f} GiB); {n_heads} heads: {entries * FLOAT32 * n_heads / GB:.0f} GB"
    )
else:
    print("The reference appears here once 9.2 passes.")

assert 512**2 == 262_144 and 512**2 * FLOAT32 / MiB == 1  # one head: exactly 1 MiB
assert 512**2 * n_heads == 2_097_152 and 512**2 * n_heads * n_layers == 12_582_912
assert 512**2 * d_model == 134_217_728
assert 100_000**2 == 10**10 and 100_000**2 * FLOAT32 / GB == 40
assert 100_000**2 * FLOAT32 * n_heads / GB == 320
