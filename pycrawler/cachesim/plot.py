"""Miss-rate curves as the paper draws them: miss rate against cache size, log-scale sizes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import SetupError
from .sweep import Row

STYLES = {"lru": ("tab:blue", "-", "o"), "clock": ("tab:orange", "--", "s"), "random": ("tab:green", "-.", "^"),
          "static": ("tab:purple", "-", "v"), "static-cold": ("tab:pink", ":", "<"), "min": ("black", "-", "."),
          "min-bypass": ("tab:brown", "--", "x"), "infinite": ("gray", ":", None)}


def plot_curves(rows: Sequence[Row], path: str | Path, title: str) -> None:
    """Write a PNG of one curve per policy (miss rate in percent, sizes on a log2 axis)."""
    try:
        import matplotlib
    except ImportError:
        raise SetupError("--plot needs matplotlib (pip install matplotlib, or pycrawler's bench extra)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for policy in dict.fromkeys(r.policy for r in rows):
        mine = [r for r in rows if r.policy == policy]
        color, line, marker = STYLES[policy]
        ax.plot([r.size for r in mine], [100 * r.miss_rate for r in mine], color=color, linestyle=line,
                marker=marker, markersize=3.5, linewidth=1.4, label=policy.upper())
    ax.set_xscale("log", base=2)
    ax.set_xlabel("cache size (entries)")
    ax.set_ylabel("miss rate (%)")
    ax.set_ylim(bottom=0)
    ax.axhline(20, color="lightgray", linewidth=0.8, zorder=0)  # the paper's aim: under 20% misses
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
