"""CPU kernel settings that make this processor compute as other processors do.

PyTorch picks its CPU kernels at run time (``torch.backends.cpu.get_cpu_capability()``) and MKL
picks its own code paths, so the last bits of softmax, layer norm and matrix products differ
between processors. On one x86-64 machine these environment variables, set before torch is
imported, choose the kernels another processor would use:

- ``ATEN_CPU_CAPABILITY=default``, ``avx2``, ``avx512``: PyTorch's own kernels (softmax,
  layer norm, ...). ``avx512`` only takes effect on a processor that has AVX-512.
- ``MKL_CBWR=COMPATIBLE``: MKL's matrix products as on a processor without its newer paths.

Apple silicon and other ARM processors cannot be imitated this way.
"""

import os
import subprocess
import sys

SETTINGS = {
    "default": {"ATEN_CPU_CAPABILITY": "default"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
}

# What torch.backends.cpu.get_cpu_capability() calls the kernels of each ATEN_CPU_CAPABILITY
# value: torch 2.5 names the plain ones "NO AVX", later versions "DEFAULT".
NAMES = {"default": ("DEFAULT", "NO AVX"), "avx2": ("AVX2",), "avx512": ("AVX512",)}


def environment(setting: str) -> dict[str, str]:
    """``os.environ`` with ``setting``'s variables, and no other kernel choice left over."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {sorted(SETTINGS)}; got {setting!r}")
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    return {**env, **SETTINGS[setting]}


def capability(env: dict[str, str] | None = None) -> str:
    """The kernels torch picks under ``env`` (e.g. ``"AVX512"``), asked of a fresh process."""
    code = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def unavailable(setting: str) -> str | None:
    """Why ``setting`` cannot be reproduced on this machine, or None when it can."""
    wanted = SETTINGS[setting].get("ATEN_CPU_CAPABILITY")
    if wanted is None:
        return None
    got = capability(environment(setting))
    if got not in NAMES[wanted]:
        return f"ATEN_CPU_CAPABILITY={wanted} has no effect on this processor (torch uses {got})"
    return None


def describe() -> str:
    """One line naming the kernels in use, for logs: ``"torch kernels AVX512, MKL_CBWR unset"``."""
    import torch

    threads = torch.get_num_threads()
    mkl = os.environ.get("MKL_CBWR", "unset")
    return (
        f"torch kernels {torch.backends.cpu.get_cpu_capability()}, MKL_CBWR {mkl}, "
        f"{threads} thread{'s' if threads != 1 else ''}"
    )


def processor() -> str:
    """The processor's model name as Linux reports it (elsewhere, what Python knows): with the
    kernels and thread count, what decides whether two runs can give the same bits."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            names = [line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line]
        return names[0]
    except (OSError, IndexError):
        import platform

        return platform.processor() or platform.machine()
