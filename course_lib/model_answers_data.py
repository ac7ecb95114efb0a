# ruff: noqa: E501
"""The model answers of the written questions, by id; :mod:`course_lib.model_answers` shows them.

Generated from ``solutions/`` by ``python -m course_tools.authoring lessons``: do not edit
(``python -m course_tools.authoring check`` fails while it disagrees with the solutions).
"""

ANSWERS = {
    "1.w1": {
        "cell": "l1-49",
        "markdown": r"""
Not on this CPU: the BiLSTM is several times *faster* than the Transformer encoder at 500 tokens (see the table above). The claim is about a GPU, where the Transformer's matrix products run on thousands of cores at once while the LSTM must still take its 500 steps in order, each too small to fill the device. On a CPU with one thread there is almost no parallelism to exploit, so what counts is the amount of arithmetic, and six layers of attention and feed-forward networks over 500 positions are more arithmetic than two layers of LSTM steps. The sequential-steps argument is about wall-clock time on parallel hardware, not about operation counts.
""",
        "html": r"""
<p>Not on this CPU: the BiLSTM is several times <em>faster</em> than the Transformer encoder at 500 tokens (see the table above). The claim is about a GPU, where the Transformer's matrix products run on thousands of cores at once while the LSTM must still take its 500 steps in order, each too small to fill the device. On a CPU with one thread there is almost no parallelism to exploit, so what counts is the amount of arithmetic, and six layers of attention and feed-forward networks over 500 positions are more arithmetic than two layers of LSTM steps. The sequential-steps argument is about wall-clock time on parallel hardware, not about operation counts.</p>
""",
    },
    "2.w1": {
        "cell": "a27d17a7",
        "markdown": r"""
Var(q·k) = d_k predicts about 3 and about 768, so standard deviations of √3 ≈ 1.73 and √768 ≈ 27.7, and `std_ratio` = √(768/3) = √256 = 16; measured from 10,000 pairs, the variances scatter around these by their sampling error, about √(2/10,000) ≈ 1.4% (a little more at d_k = 3, where q·k has heavier tails: 2%). With components of variance σ², each term qᵢkᵢ still has mean 0, and its variance is E[qᵢ²]E[kᵢ²] = σ² · σ² = σ⁴; the d_k independent terms add up to Var(q·k) = σ⁴·d_k, a standard deviation of σ²√d_k. Dividing by √d_k then leaves a variance of σ⁴, which is 1 only when σ = 1: the scaling of lesson 3 assumes components of about unit variance.
""",
        "html": r"""
<p>Var(q·k) = d_k predicts about 3 and about 768, so standard deviations of √3 ≈ 1.73 and √768 ≈ 27.7, and <code>std_ratio</code> = √(768/3) = √256 = 16; measured from 10,000 pairs, the variances scatter around these by their sampling error, about √(2/10,000) ≈ 1.4% (a little more at d_k = 3, where q·k has heavier tails: 2%). With components of variance σ², each term qᵢkᵢ still has mean 0, and its variance is E[qᵢ²]E[kᵢ²] = σ² · σ² = σ⁴; the d_k independent terms add up to Var(q·k) = σ⁴·d_k, a standard deviation of σ²√d_k. Dividing by √d_k then leaves a variance of σ⁴, which is 1 only when σ = 1: the scaling of lesson 3 assumes components of about unit variance.</p>
""",
    },
    "2.w2": {
        "cell": "38611df1",
        "markdown": r"""
The dot product ranks coffee first (1.02, against 0.58 for tea itself), because tea·coffee = |tea| |coffee| cos θ and coffee is much longer (1.342 against 0.762) while the angle between them is only about 3°. The cosine divides the lengths out and ranks tea itself first (1.000), then coffee (0.998). Neither is "wrong": the cosine compares directions only, while the dot product lets a vector's length act as emphasis. Attention uses the dot product, and since the vectors are learned, the model can use length on purpose: a longer key is louder, for every query that points its way.
""",
        "html": r"""
<p>The dot product ranks coffee first (1.02, against 0.58 for tea itself), because tea·coffee = |tea| |coffee| cos θ and coffee is much longer (1.342 against 0.762) while the angle between them is only about 3°. The cosine divides the lengths out and ranks tea itself first (1.000), then coffee (0.998). Neither is &quot;wrong&quot;: the cosine compares directions only, while the dot product lets a vector's length act as emphasis. Attention uses the dot product, and since the vectors are learned, the model can use length on purpose: a longer key is louder, for every query that points its way.</p>
""",
    },
    "3.w1": {
        "cell": "4ef50439",
        "markdown": r"""
At generation time the decoder produces one token at a time, so the tokens after position t do not exist yet when position t is predicted. Training has to recreate that situation: without the mask, position t can read token t+1, which is exactly the answer it is asked to predict. The training loss then falls quickly because the model learns to copy, and the model fails at generation, where there is nothing to copy. Lab 3.8 below measures this.
""",
        "html": r"""
<p>At generation time the decoder produces one token at a time, so the tokens after position t do not exist yet when position t is predicted. Training has to recreate that situation: without the mask, position t can read token t+1, which is exactly the answer it is asked to predict. The training loss then falls quickly because the model learns to copy, and the model fails at generation, where there is nothing to copy. Lab 3.8 below measures this.</p>
""",
    },
    "4.w1": {
        "cell": "cc548c89",
        "markdown": r"""
With d_model fixed, every extra head takes its dimensions from the others: d_k = 16 at h = 32, 8 at h = 64. A head's compatibility function is a dot product of two d_k-dimensional projections, a matrix of rank at most d_k; at rank 8 or 16 it can only separate a few directions, so it cannot distinguish fine relations. The heads become noisy or redundant, and the fixed budget is spread too thin. The paper reduced d_k and saw quality drop, with h = 32 below h = 8 and 16.
""",
        "html": r"""
<p>With d_model fixed, every extra head takes its dimensions from the others: d_k = 16 at h = 32, 8 at h = 64. A head's compatibility function is a dot product of two d_k-dimensional projections, a matrix of rank at most d_k; at rank 8 or 16 it can only separate a few directions, so it cannot distinguish fine relations. The heads become noisy or redundant, and the fixed budget is spread too thin. The paper reduced d_k and saw quality drop, with h = 32 below h = 8 and 16.</p>
""",
    },
    "5.w1": {
        "cell": "2decd24e",
        "markdown": r"""
By the angle-addition formulas, sin(ω(p + k)) = cos(ωk)·sin(ωp) + sin(ωk)·cos(ωp) and cos(ω(p + k)) = −sin(ωk)·sin(ωp) + cos(ωk)·cos(ωp). The coefficients cos(ωk) and sin(ωk) involve k only, so [sin ω(p+k), cos ω(p+k)]ᵀ = R_k·[sin ωp, cos ωp]ᵀ with R_k = [[cos ωk, sin ωk], [−sin ωk, cos ωk]], the same matrix for every p: a rotation of the pair by the angle ωk. With one such block per frequency ω_i on the diagonal, R_k maps the whole vector PE(pos) to PE(pos + k).
""",
        "html": r"""
<p>By the angle-addition formulas, sin(ω(p + k)) = cos(ωk)·sin(ωp) + sin(ωk)·cos(ωp) and cos(ω(p + k)) = −sin(ωk)·sin(ωp) + cos(ωk)·cos(ωp). The coefficients cos(ωk) and sin(ωk) involve k only, so [sin ω(p+k), cos ω(p+k)]ᵀ = R_k·[sin ωp, cos ωp]ᵀ with R_k = [[cos ωk, sin ωk], [−sin ωk, cos ωk]], the same matrix for every p: a rotation of the pair by the angle ωk. With one such block per frequency ω_i on the diagonal, R_k maps the whole vector PE(pos) to PE(pos + k).</p>
""",
    },
    "6.w1": {
        "cell": "43a6329d",
        "markdown": r"""
With d_ff = d_model = 512 the hidden layer is no wider than the model: little room for the ReLU to select among features, so the FFN has little capacity. The paper's 4× (2048) quadruples the FFN's parameters and compute. Going to 16× (8192) quadruples them again, to 8.4 M weights per layer: more capacity, but slower training and inference, more memory, a greater risk of overfitting a small data set, and diminishing returns. 4× is the paper's compromise, and most later models kept a ratio near it.
""",
        "html": r"""
<p>With d_ff = d_model = 512 the hidden layer is no wider than the model: little room for the ReLU to select among features, so the FFN has little capacity. The paper's 4× (2048) quadruples the FFN's parameters and compute. Going to 16× (8192) quadruples them again, to 8.4 M weights per layer: more capacity, but slower training and inference, more memory, a greater risk of overfitting a small data set, and diminishing returns. 4× is the paper's compromise, and most later models kept a ratio near it.</p>
""",
    },
    "9.w1": {
        "cell": "5e61c70d",
        "markdown": r"""
A recurrent layer computes h_t from h_(t−1), so its n positions take n dependent steps: O(n) sequential operations that no amount of hardware can run side by side. Self-attention computes every position of a layer from the previous layer in one matrix product: O(1) sequential operations, fully parallel on a GPU. The maximum path length between two tokens is O(n) in an RNN (n − 1 hops from the first token to the last) and O(1) in self-attention (one hop between any pair). Short paths matter for learning: the forward signal and the backward gradient between distant tokens pass through fewer transformations, so they fade and vanish less, and a long-range dependency, such as a verb agreeing with a subject 37 tokens earlier, becomes much easier to learn. The price is O(n²) attention work and memory per layer (question 4).
""",
        "html": r"""
<p>A recurrent layer computes h_t from h_(t−1), so its n positions take n dependent steps: O(n) sequential operations that no amount of hardware can run side by side. Self-attention computes every position of a layer from the previous layer in one matrix product: O(1) sequential operations, fully parallel on a GPU. The maximum path length between two tokens is O(n) in an RNN (n − 1 hops from the first token to the last) and O(1) in self-attention (one hop between any pair). Short paths matter for learning: the forward signal and the backward gradient between distant tokens pass through fewer transformations, so they fade and vanish less, and a long-range dependency, such as a verb agreeing with a subject 37 tokens earlier, becomes much easier to learn. The price is O(n²) attention work and memory per layer (question 4).</p>
""",
    },
    "9.w2": {
        "cell": "ed66d4e6",
        "markdown": r"""
With independent unit-variance components, q·k has variance d_k, so at d_k = 64 its standard deviation is 8 and scores of ±8, even ±16, are routine. The softmax of such scores is almost one-hot: [8, 0, −8] gives [0.99966, 0.00034, about 1e−7]. Its Jacobian pᵢ(δᵢⱼ − pⱼ) is then tiny everywhere (at most 3.4e−4 here), so almost no gradient reaches W^Q and W^K, and the model cannot learn to move its attention elsewhere. Dividing by √64 = 8 brings the scores back to unit variance: [1, 0, −1] gives [0.665, 0.245, 0.090], with Jacobian entries up to 0.22, so the weights stay soft and trainable.
""",
        "html": r"""
<p>With independent unit-variance components, q·k has variance d_k, so at d_k = 64 its standard deviation is 8 and scores of ±8, even ±16, are routine. The softmax of such scores is almost one-hot: [8, 0, −8] gives [0.99966, 0.00034, about 1e−7]. Its Jacobian pᵢ(δᵢⱼ − pⱼ) is then tiny everywhere (at most 3.4e−4 here), so almost no gradient reaches W^Q and W^K, and the model cannot learn to move its attention elsewhere. Dividing by √64 = 8 brings the scores back to unit variance: [1, 0, −1] gives [0.665, 0.245, 0.090], with Jacobian entries up to 0.22, so the weights stay soft and trainable.</p>
""",
    },
    "9.w3": {
        "cell": "872b9db6",
        "markdown": r"""
- **Encoder self-attention.** Queries, keys and values all come from the previous encoder layer (in the first layer, the source embeddings plus positional encodings). Every source position may attend to every source position: the whole source sentence is known before the translation starts, so only padding is hidden. One S × S matrix per head.
- **Masked decoder self-attention.** Queries, keys and values all come from the previous decoder layer, over the target tokens so far. Position t may attend to positions 1 to t only: the later scores are set to −∞ before the softmax, so their weights are 0. One T × T matrix per head, zero above the diagonal.
- **Encoder-decoder attention (cross-attention).** Queries come from the previous decoder layer; keys and values come from the encoder's output, the same memory for every decoder layer. Every target position may attend to every source position (only source padding is hidden), as in the attention of earlier sequence-to-sequence models. One T × S matrix per head.

Only the decoder's self-attention reads the sequence being generated. When the model translates, it produces one token at a time, so the tokens after position t do not exist yet when position t is predicted; in training the whole target is fed at once (teacher forcing), and without the mask position t could read token t + 1, the very token it is trained to predict. The mask keeps training as generation will be: the paper's "auto-regressive property". The source, read by the other two, is known in full from the start, so there is nothing in it to hide.
""",
        "html": r"""
<ul>
<li><strong>Encoder self-attention.</strong> Queries, keys and values all come from the previous encoder layer (in the first layer, the source embeddings plus positional encodings). Every source position may attend to every source position: the whole source sentence is known before the translation starts, so only padding is hidden. One S × S matrix per head.</li>
<li><strong>Masked decoder self-attention.</strong> Queries, keys and values all come from the previous decoder layer, over the target tokens so far. Position t may attend to positions 1 to t only: the later scores are set to −∞ before the softmax, so their weights are 0. One T × T matrix per head, zero above the diagonal.</li>
<li><strong>Encoder-decoder attention (cross-attention).</strong> Queries come from the previous decoder layer; keys and values come from the encoder's output, the same memory for every decoder layer. Every target position may attend to every source position (only source padding is hidden), as in the attention of earlier sequence-to-sequence models. One T × S matrix per head.</li>
</ul>
<p>Only the decoder's self-attention reads the sequence being generated. When the model translates, it produces one token at a time, so the tokens after position t do not exist yet when position t is predicted; in training the whole target is fed at once (teacher forcing), and without the mask position t could read token t + 1, the very token it is trained to predict. The mask keeps training as generation will be: the paper's &quot;auto-regressive property&quot;. The source, read by the other two, is known in full from the start, so there is nothing in it to hide.</p>
""",
    },
    "9.w4": {
        "cell": "6b62921c",
        "markdown": r"""
One head's attention matrix has one entry per (query, key) pair: 512² = 262,144 entries at 512 tokens, about 1 MiB in float32; the base model's 8 heads make 2,097,152 per layer and its 6 layers 12.6 million per encoder pass. d_model does not change the size of the matrix, but it sets the cost of computing it: n² · d_model ≈ 134 million multiply-adds per layer. At 100,000 tokens a single head's matrix has 10¹⁰ entries, 40 GB in float32 (320 GB for 8 heads), before the memory the backward pass needs. Memory and compute grow with the square of the length while the information in the document grows only linearly, so standard Transformers were held to contexts of 512 to 2,048 tokens. Long documents need sparse, local or linear attention, memory-efficient kernels such as FlashAttention, or chunking.
""",
        "html": r"""
<p>One head's attention matrix has one entry per (query, key) pair: 512² = 262,144 entries at 512 tokens, about 1 MiB in float32; the base model's 8 heads make 2,097,152 per layer and its 6 layers 12.6 million per encoder pass. d_model does not change the size of the matrix, but it sets the cost of computing it: n² · d_model ≈ 134 million multiply-adds per layer. At 100,000 tokens a single head's matrix has 10¹⁰ entries, 40 GB in float32 (320 GB for 8 heads), before the memory the backward pass needs. Memory and compute grow with the square of the length while the information in the document grows only linearly, so standard Transformers were held to contexts of 512 to 2,048 tokens. Long documents need sparse, local or linear attention, memory-efficient kernels such as FlashAttention, or chunking.</p>
""",
    },
    "9.w5": {
        "cell": "82e6f0ce",
        "markdown": r"""
The architecture assumes very little: it works on any set or sequence of vectors, models every pairwise interaction in one step, parallelises well and keeps improving with more data and compute, and it gets order from a positional scheme that can be swapped.
- **Text classification:** keep only the encoder, which reads in both directions; pool its outputs or read a [CLS] token's vector into a classification head (as BERT does). The decoder and cross-attention go.
- **Question answering:** extractive QA feeds the question and the passage to an encoder as one sequence (with segment embeddings) and predicts where the answer starts and ends; generative QA uses an encoder-decoder (T5) or a decoder-only model given a prompt. Long passages run into the n² cost of question 4.
- **Images:** cut the image into patches (for example 16 × 16 pixels), embed each patch linearly as a token, add 2-D or learned position embeddings and a class token (ViT, 2020). Without the convolution's built-in bias towards local patterns it needs a lot of data or pre-training, and its cost is quadratic in the number of patches.

In every case the task brings its own input embedding, positional scheme and output head, and the model is usually pre-trained at scale and then fine-tuned.
""",
        "html": r"""
<p>The architecture assumes very little: it works on any set or sequence of vectors, models every pairwise interaction in one step, parallelises well and keeps improving with more data and compute, and it gets order from a positional scheme that can be swapped.</p>
<ul>
<li><strong>Text classification:</strong> keep only the encoder, which reads in both directions; pool its outputs or read a [CLS] token's vector into a classification head (as BERT does). The decoder and cross-attention go.</li>
<li><strong>Question answering:</strong> extractive QA feeds the question and the passage to an encoder as one sequence (with segment embeddings) and predicts where the answer starts and ends; generative QA uses an encoder-decoder (T5) or a decoder-only model given a prompt. Long passages run into the n² cost of question 4.</li>
<li><strong>Images:</strong> cut the image into patches (for example 16 × 16 pixels), embed each patch linearly as a token, add 2-D or learned position embeddings and a class token (ViT, 2020). Without the convolution's built-in bias towards local patterns it needs a lot of data or pre-training, and its cost is quadratic in the number of patches.</li>
</ul>
<p>In every case the task brings its own input embedding, positional scheme and output head, and the model is usually pre-trained at scale and then fine-tuned.</p>
""",
    },
}
