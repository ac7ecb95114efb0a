"""Reference code for the course "Attention Is All You Need", in PyTorch and numpy.

Modules, one concept each:
    attention       scaled dot-product and multi-head attention (§3.2)
    masks           causal and padding masks (True = may attend)
    positional      sinusoidal positional encoding (§3.5)
    layers          feed-forward network, residual sub-layer, LayerNorm (§3.1, §3.3)
    model           the encoder-decoder Transformer and its configuration (§3)
    parameters      parameter counts by component
    interop         copying weights from torch.nn.Transformer
    training        warmup schedule, label smoothing, a small training loop (§5)
    decoding        greedy decoding and beam search (§6.1)
    evaluation      translate, exact match, BLEU
    data            tokens, vocabularies, padded batches, the copy/reverse task
    corpus          a rule-generated English-to-French mini corpus
    numpy_encoder   the numpy reference for the hands-on project
    baselines       recurrent seq2seq baselines (lesson 1)
    experiments     the experiments lessons draw conclusions from, with their bars; CPU kernels
    checks          exercise checks for the notebooks: check(), hint()
    widgets         the attention-map explorer and the lessons' figures (matplotlib, ipywidgets)
    notebook        start(): the first cell of every lesson
    authoring       generating lessons/ from solutions/ (instructors)
    workspace       the learner's working copies of the lessons

Conventions: batch-first tensors; the paper's names (d_model, n_heads, d_k, d_ff);
boolean masks where True means "may attend".
"""

__version__ = "0.1.0"
