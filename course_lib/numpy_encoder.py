"""A one-layer post-norm Transformer encoder in plain numpy: the hands-on project.

The reference for the project notebook: "the cat sat" goes through positional
encoding, single-head self-attention, Add & Norm, a ReLU FFN and Add & Norm again.

Shapes: T sequence length, D d_model, Dk = Dv key/value width, F d_ff.
Masks: boolean, ``True`` = may attend, broadcastable to ``(T, T)``. A row that may attend
to nothing gets all-zero weights and a zero output, never NaN.
"""

from dataclasses import dataclass

import numpy as np

TOKENS = ("the", "cat", "sat")


def _shaped(name: str, a, *dims: int | None) -> np.ndarray:
    """``a`` as an array, after checking its shape against ``dims`` (None = any size)."""
    a = np.asarray(a)
    if a.ndim != len(dims) or any(d not in (None, n) for n, d in zip(a.shape, dims, strict=False)):
        raise ValueError(f"{name} must have shape {dims} (None = any size); got {a.shape}")
    return a


def positional_encoding(seq_len: int, d_model: int) -> np.ndarray:
    """``(seq_len, d_model)`` sinusoidal encodings (paper §3.5), angle pos / 10000^(2i/d_model).

    Column 2i holds sin(angle) and column 2i+1 cos(angle).
    """
    for name, value in (("seq_len", seq_len), ("d_model", d_model)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int; got {type(value).__name__}")
    if seq_len < 1:
        raise ValueError(f"seq_len must be a positive int; got {seq_len}")
    if d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be even and positive: (sin, cos) pairs; got {d_model}")
    pos = np.arange(seq_len)[:, None]  # (T, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, D/2)
    angle = pos / 10000.0 ** (two_i / d_model)  # (T, D/2)
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x) / sum(exp(x)) along ``axis``; subtracting the max first keeps exp from overflowing."""
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, gamma, beta, eps: float = 1e-5) -> np.ndarray:
    """gamma * (x - mean) / sqrt(var + eps) + beta over the last axis, population variance."""
    x = np.asarray(x, dtype=float)
    gamma, beta = _shaped("gamma", gamma, x.shape[-1]), _shaped("beta", beta, x.shape[-1])
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def relu(x) -> np.ndarray:
    return np.maximum(np.asarray(x, dtype=float), 0.0)


def self_attention(x, w_q, w_k, w_v, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Single-head softmax(Q Kᵀ / sqrt(d_k)) V (paper Eq. 1), Q = x W_Q etc., no W^O.

    Args:
        x: ``(T, D)``; w_q, w_k: ``(D, Dk)``; w_v: ``(D, Dv)``.
        mask: optional boolean, ``True`` = may attend, broadcastable to ``(T, T)``.

    Returns:
        ``(output (T, Dv), weights (T, T))``; a row with nothing to attend to is all zeros.
    """
    x = _shaped("x", x, None, None)
    w_q = _shaped("w_q", w_q, x.shape[1], None)
    w_k, w_v = _shaped("w_k", w_k, *w_q.shape), _shaped("w_v", w_v, x.shape[1], None)
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (T, D) @ (D, Dk) -> (T, Dk)
    scores = q @ k.T / np.sqrt(k.shape[1])  # (T, Dk) @ (Dk, T) -> (T, T)
    if mask is None:
        weights = softmax(scores)
    else:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise TypeError(f"mask must be boolean (True = may attend); got dtype {mask.dtype}")
        t = x.shape[0]
        try:
            mask = np.broadcast_to(mask, (t, t))
        except ValueError:
            raise ValueError(
                f"mask must broadcast to (T, T) = {(t, t)}; got {mask.shape}"
            ) from None
        # An all -inf row would give 0/0 = NaN: let such rows see finite scores, then zero them.
        scores = np.where(mask.any(axis=1, keepdims=True), np.where(mask, scores, -np.inf), 0.0)
        weights = softmax(scores) * mask
    return weights @ v, weights  # (T, T) @ (T, Dv) -> (T, Dv)


def feed_forward(x, w1, b1, w2, b2) -> np.ndarray:
    """Position-wise FFN (paper §3.3): relu(x W1 + b1) W2 + b2, ``(T, D) -> (T, F) -> (T, D)``."""
    x = _shaped("x", x, None, None)
    w1 = _shaped("w1", w1, x.shape[1], None)
    w2 = _shaped("w2", w2, w1.shape[1], x.shape[1])
    b1, b2 = _shaped("b1", b1, w1.shape[1]), _shaped("b2", b2, x.shape[1])
    return relu(x @ w1 + b1) @ w2 + b2


def add_and_norm(x, sublayer_out, gamma, beta, eps: float = 1e-5) -> np.ndarray:
    """Post-norm residual (paper §3.1): LayerNorm(x + Sublayer(x))."""
    x, sublayer_out = np.asarray(x), np.asarray(sublayer_out)
    if x.shape != sublayer_out.shape:
        raise ValueError(f"sublayer_out must have x's shape {x.shape}; got {sublayer_out.shape}")
    return layer_norm(x + sublayer_out, gamma, beta, eps)


def xavier_normal(fan_in: int, fan_out: int, rng=np.random) -> np.ndarray:
    """Glorot normal ``(fan_in, fan_out)``: standard normal × sqrt(2 / (fan_in + fan_out)).

    ``rng`` defaults to the legacy global generator so that, after ``np.random.seed``, the
    project's draw order reproduces; a ``np.random.Generator`` works too.
    """
    return rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / (fan_in + fan_out))


@dataclass
class EncoderParams:
    w_q: np.ndarray  # (D, D) query projection
    w_k: np.ndarray  # (D, D) key projection
    w_v: np.ndarray  # (D, D) value projection; one head, no W^O
    w1: np.ndarray  # (D, F) FFN expand
    b1: np.ndarray  # (F,)
    w2: np.ndarray  # (F, D) FFN compress
    b2: np.ndarray  # (D,)
    gamma1: np.ndarray  # (D,) Add & Norm after attention
    beta1: np.ndarray  # (D,)
    gamma2: np.ndarray  # (D,) Add & Norm after the FFN
    beta2: np.ndarray  # (D,)


def project_inputs(
    seed: int = 42, seq_len: int = 3, d_model: int = 8, d_ff: int = 32
) -> tuple[np.ndarray, EncoderParams]:
    """The fixed inputs of course §10.2 as ``(embeddings, params)``.

    Seeds the global RNG once, draws the embeddings (standard normal × 0.5) first, then
    W_Q, W_K, W_V, W1, W2; biases are zero, gamma 1 and beta 0.
    """
    np.random.seed(seed)
    embeddings = np.random.randn(seq_len, d_model) * 0.5
    w_q, w_k, w_v = (xavier_normal(d_model, d_model) for _ in range(3))
    w1, w2 = xavier_normal(d_model, d_ff), xavier_normal(d_ff, d_model)
    b1, b2, ones, zeros = np.zeros(d_ff), np.zeros(d_model), np.ones(d_model), np.zeros(d_model)
    return embeddings, EncoderParams(
        w_q, w_k, w_v, w1, b1, w2, b2, ones, zeros, ones.copy(), zeros.copy()
    )


@dataclass
class EncoderTrace:
    embeddings: np.ndarray  # (T, D) token vectors as given
    pe: np.ndarray  # (T, D) what was added: the PE table, or zeros with use_pe=False
    x: np.ndarray  # (T, D) embeddings + pe
    q: np.ndarray  # (T, Dk)
    k: np.ndarray  # (T, Dk)
    v: np.ndarray  # (T, Dv)
    scores: np.ndarray  # (T, T) Q Kᵀ / sqrt(d_k), before masking
    weights: np.ndarray  # (T, T) attention weights
    attn: np.ndarray  # (T, Dv) weights @ v
    x1: np.ndarray  # (T, D) LayerNorm(x + attn)
    hidden: np.ndarray  # (T, F) after ReLU
    ffn: np.ndarray  # (T, D) hidden @ w2 + b2
    out: np.ndarray  # (T, D) LayerNorm(x1 + ffn)


def encoder_layer(embeddings, params: EncoderParams, *, use_pe: bool = True, mask=None):
    """One post-norm encoder layer (course §10.4); ``trace.out`` is its ``(T, D)`` output."""
    emb = _shaped("embeddings", embeddings, None, None)
    pe = positional_encoding(*emb.shape) if use_pe else np.zeros(emb.shape)
    x = emb + pe
    p = params
    attn, weights = self_attention(x, p.w_q, p.w_k, p.w_v, mask)  # checks shapes and the mask
    q, k, v = x @ p.w_q, x @ p.w_k, x @ p.w_v  # (T, D) @ (D, Dk) -> (T, Dk)
    scores = q @ k.T / np.sqrt(k.shape[1])  # (T, T)
    x1 = add_and_norm(x, attn, p.gamma1, p.beta1)
    ffn = feed_forward(x1, p.w1, p.b1, p.w2, p.b2)  # checks shapes
    hidden = relu(x1 @ p.w1 + p.b1)  # (T, D) @ (D, F) -> (T, F)
    out = add_and_norm(x1, ffn, p.gamma2, p.beta2)
    return EncoderTrace(emb, pe, x, q, k, v, scores, weights, attn, x1, hidden, ffn, out)


def _row(values, dp: int) -> str:
    return str([round(float(v), dp) + 0.0 for v in values])  # + 0.0 turns -0.0 into 0.0


def _dp4(values) -> str:
    """One value if all rows agree to 4 dp (as they should after LayerNorm), else one per row."""
    shown = [f"{round(float(v), 4) + 0.0:.4f}" for v in values]
    return shown[0] if len(set(shown)) == 1 else " / ".join(shown)


def report(trace: EncoderTrace, tokens=TOKENS) -> str:
    """The project's printout (course §10.6), computed from ``trace``."""
    if len(tokens) != trace.x.shape[0]:
        raise ValueError(f"tokens must name {trace.x.shape[0]} positions; got {len(tokens)}")
    active = (trace.hidden > 0).sum(axis=1)

    def vectors(title, rows):
        return [title] + [f"  '{w}': {_row(r, 3)}" for w, r in zip(tokens, rows, strict=True)]

    lines = vectors("Token embeddings (before positional encoding):", trace.embeddings)
    lines += vectors("After adding positional encoding:", trace.x)
    lines.append("Attention weights (4 dp):")
    for w, r in zip(tokens, trace.weights, strict=True):
        row = "  ".join(f"{u} {p:.4f}" for u, p in zip(tokens, r, strict=True))
        lines.append(f"  '{w}' -> {row}")
    lines.append(
        f"Active ReLU units: {active.sum()} / {trace.hidden.size} in total (per token: "
        f"{', '.join(str(n) for n in active)} of {trace.hidden.shape[1]})"
    )
    lines += vectors("Final encoder output:", trace.out)
    mean, var = trace.out.mean(axis=1), trace.out.var(axis=1)
    exact = " / ".join(f"{v:.6f}" for v in var)
    lines.append(f"Verification: every row mean = {_dp4(mean)}, var = {_dp4(var)} (exact {exact})")
    return "\n".join(lines)
