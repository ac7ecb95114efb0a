"""The numbers behind the positional-encoding explorer (paper §3.5).

Shapes: T positions, D d_model (even: dimensions come in (sin, cos) pairs), i the pair index.

Pair i turns at the angular frequency ω_i = 10000^(-2i / D): pair 0 fastest (wavelength 2π),
the last pair slowest (wavelength close to 10000·2π). Moving k positions turns every pair by
the angle ω_i·k, so PE(pos + k) = R_k · PE(pos), with R_k block-diagonal and free of pos.
"""

import math
from dataclasses import dataclass

import torch

from .. import _validate
from ..figure_text import number
from ..positional import sinusoidal_encoding

BASE = 10000.0  # the paper's base


def _d_model(d_model) -> None:
    _validate.positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even: dimensions come in (sin, cos) pairs; got {d_model}"
        )


def _offset(k) -> None:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int (an offset in positions); got {type(k).__name__}")


def frequencies(d_model: int) -> torch.Tensor:
    """``(D/2,)`` float64: ω_i = 10000^(-2i / d_model), one per (sin, cos) pair."""
    _d_model(d_model)
    return torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(BASE) / d_model))


def wavelength(dim: int, d_model: int) -> float:
    """Positions per full turn of dimension ``dim``: 2π / ω_(dim // 2)."""
    _d_model(d_model)
    if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < d_model:
        raise ValueError(f"dim must be an int in 0 .. {d_model - 1} (d_model - 1); got {dim!r}")
    return 2 * math.pi / frequencies(d_model)[dim // 2].item()


def shift_matrix(k: int, d_model: int) -> torch.Tensor:
    """``(D, D)`` float64 block-diagonal R_k with PE(pos + k) = R_k · PE(pos) for every pos.

    Each (sin, cos) pair gets the 2 x 2 rotation [[cos ω_i k, sin ω_i k], [-sin ω_i k, cos ω_i k]]:
    sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b.
    """
    _offset(k)
    angle = frequencies(d_model) * k  # (D/2,)
    c, s = torch.cos(angle), torch.sin(angle)
    blocks = torch.stack([torch.stack([c, s], -1), torch.stack([-s, c], -1)], -2)  # (D/2, 2, 2)
    return torch.block_diag(*blocks)


def similarity(pe: torch.Tensor) -> torch.Tensor:
    """``(T, T)`` float64: PE_i · PE_j / (D/2), the cosine (each PE has squared norm D/2)."""
    _validate.tensor("pe", pe, ndim=2, floating=True)
    pe = pe.double()
    return pe @ pe.T / (pe.shape[1] / 2)


def diagonal_spread(sim: torch.Tensor) -> float:
    """The largest (max - min) along any diagonal j - i = k >= 0: 0 when only |i - j| matters."""
    _validate.tensor("sim", sim, ndim=2, floating=True)
    T = sim.shape[0]
    if sim.shape[1] != T:
        raise ValueError(f"sim must be square, (T, T); got shape {tuple(sim.shape)}")
    i, j = torch.triu_indices(T, T, device=sim.device)  # every cell on or above the diagonal
    offset, values = j - i, sim[i, j]
    start = {"dtype": values.dtype, "device": values.device}
    high = torch.full((T,), -math.inf, **start).scatter_reduce(0, offset, values, "amax")
    low = torch.full((T,), math.inf, **start).scatter_reduce(0, offset, values, "amin")
    return (high - low).max().item()


def rotation_error(position: int, k: int, d_model: int) -> tuple[torch.Tensor, ...]:
    """``(PE(pos), PE(pos + k), R_k · PE(pos), max |error|)`` from course_lib's float32 table."""
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise ValueError(f"position must be an int >= 0; got {position!r}")
    _offset(k)
    if position + k < 0:
        raise ValueError(f"position + k must be >= 0; got {position} + {k}")
    pe = sinusoidal_encoding(max(position, position + k) + 1, d_model).double()
    here, there = pe[position], pe[position + k]
    rotated = shift_matrix(k, d_model) @ here
    return here, there, rotated, (there - rotated).abs().max()


@dataclass(frozen=True)
class PEView:
    """What a picture shows: ``table`` (T, D); ``similarity`` (T, T) and ``spread``, its
    largest change along a diagonal; ``shifted`` = PE(pos + k), ``rotated`` = R_k · PE(pos)
    and ``error``, the largest difference between them; the ``dims`` drawn as waves."""

    table: torch.Tensor
    similarity: torch.Tensor
    spread: float
    shifted: torch.Tensor
    rotated: torch.Tensor
    error: float
    dims: tuple[int, ...]


def format_wavelength(wavelength: float) -> str:
    """A wavelength for a label: 6.28, 19.9, 628, 60,611."""
    return f"{wavelength:.3g}" if wavelength < 1000 else f"{wavelength:,.0f}"


def pe_readings(view: PEView, position: int, offset: int) -> tuple[str, str, str]:
    """The lines the picture prints with numbers in them: its title, the similarity panel's
    title and the rotation panel's title. The text alternative and the status line repeat
    them word for word (tiny numbers as ``number`` writes them: 3.7e-08, not 0.00)."""
    T, D = view.table.shape
    return (
        f"Positional encoding, d_model = {D}, {T} positions",
        f"PE_i·PE_j/(d_model/2): diagonal spread {number(view.spread)}",
        f"PE({position}+{offset}) vs R_{offset}·PE({position}): error {number(view.error)}",
    )


def describe_pe(view: PEView, position: int, offset: int) -> str:
    """A text alternative of the explorer's picture: the lines it prints (:func:`pe_readings`),
    the waves drawn, the position, and the similarity of that position to the others."""
    T, D = view.table.shape
    title, spread, rotation = pe_readings(view, position, offset)
    waves = "; ".join(
        f"dimension {dim} ({('sin', 'cos')[dim % 2]}, λ = {format_wavelength(wavelength(dim, D))})"
        f": {_two(view.table[position, dim].item())}"
        for dim in view.dims
    )
    row = view.similarity[position]  # (T,)
    distance = (torch.arange(T) - position).abs()
    near = max(row[j].item() for j in (position - 1, position + 1) if 0 <= j < T)
    low = int(row.argmin())
    return (
        f"{title}, position {position} marked. "
        f"Waves drawn ({len(view.dims)}), with their value at position {position}: "
        f"{waves or 'none'}. "
        f"Similarity of position {position} to the others: it peaks at "
        f"{_two(row[position].item())} on itself, {_two(near)} one position away, lowest "
        f"{_two(row[low].item())} at distance {distance[low].item()}; each diagonal is "
        f"constant ({spread}). "
        f"R_{offset} · PE({position}) = PE({position + offset}) up to float32 round-off "
        f"({rotation})."
    )


def _two(x: float) -> str:
    """``x`` to 2 decimals, never "-0.00"."""
    return f"{round(x, 2) + 0.0:.2f}"
