"""Reference code for the course "Attention Is All You Need", in PyTorch and numpy.

What a lesson imports; everything here needs only the learner's requirements. The
instructors' and maintainers' tools are the separate package ``course_tools``.

The Transformer, one concept per module:
    attention       scaled dot-product and multi-head attention (§3.2); recording attention maps
    attention_speed multi-head attention's CPU speed paths, apart from the paper's version
    masks           causal and padding masks (True = may attend)
    positional      sinusoidal positional encoding (§3.5)
    dropout         dropout (§5.4) with a random mask that is cheap to draw on a CPU
    layers          feed-forward network, residual sub-layer, LayerNorm (§3.1, §3.3)
    model           the encoder-decoder Transformer and its configuration (§3)
    fast_training   the model's CPU training path: the encoder skips the source's padding
    parameters      parameter counts by component
    interop         weights from torch.nn.Transformer and from the numpy project
    training        warmup schedule, label smoothing, a small training loop (§5)
    decoding        greedy decoding and beam search (§6.1)
    evaluation      translate, exact match, BLEU
    devices         the CPU, "cuda" or "mps": where a model computes, and what this machine has

Data and the lessons' own models:
    data            tokens, vocabularies, padded batches, the copy/reverse task
    corpus          a rule-generated English-to-French mini corpus
    numpy_encoder   the numpy reference for the hands-on project
    baselines       recurrent seq2seq baselines (lesson 1)
    head_task       lesson 4's task that needs two heads, and its small model
    pretrained      lesson 7's training recipe and its shipped checkpoint
    typed_input     translating a sentence the learner types
    experiments     the experiments lessons draw conclusions from, with their bars; CPU kernels
    replay          under a grader: the demonstrations' stored results instead of training

Inside the learner's notebook and workspace:
    notebook        start(): the first cell of every lesson; show(): a figure with its alt text
    figure_text     the figures' alt texts, written from the numbers they draw
    checks          exercise checks: check(), hint()
    model_answers   the written questions' model answers, under the learner's own: reveal()
    model_answers_data  those answers, built from solutions/ (a class's release leaves it out)
    widgets         the explorers and the lessons' figures (matplotlib, ipywidgets)
    lesson_format   what a lesson's stubs, prompts and version metadata look like
    choice_history  where multiple-choice options stood in earlier versions of a lesson
    workspace       the learner's working copies of the lessons (make lab, make update)

Every function given a model or tensors computes on their device (the lessons use the CPU).

Conventions: batch-first tensors; the paper's names (d_model, n_heads, d_k, d_ff);
boolean masks where True means "may attend".
"""

__version__ = "0.1.0"
