"""The replay benchmark's chart: each measure against the number of runs seen, every system."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay_stream import SYSTEMS

LABELS = {
    "scarwarden": "Scarwarden (playbook)",
    "scarwarden_rules": "Scarwarden, rules only",
    "raw": "raw episodes, BM25",
    "failures": "failed episodes' corrections, BM25",
    "policy": "policy rules, BM25",
    "none": "no memory",
}
STYLE = {
    "scarwarden": ("#c2410c", "o", "-"),
    "scarwarden_rules": ("#f59e0b", "v", "-"),
    "raw": ("#2563eb", "s", "--"),
    "failures": ("#7c3aed", "D", "--"),
    "policy": ("#16a34a", "^", "-."),
    "none": ("#6b7280", "x", ":"),
}


def _series(points: list[dict[str, Any]], name: str, key: str, sub: str = "rate") -> tuple[list, list]:
    xs, ys = [], []
    for p in points:
        value = p["systems"][name][key]
        value = value.get(sub) if isinstance(value, dict) else value
        if value is not None:
            xs.append(p["runs_seen"])
            ys.append(value)
    return xs, ys


def _panel(ax: Any, points: list[dict[str, Any]], key: str, title: str, rate: bool = True) -> None:
    for name in SYSTEMS:
        xs, ys = _series(points, name, key)
        color, marker, line = STYLE[name]
        ax.plot(
            xs,
            [100 * y for y in ys] if rate else ys,
            line,
            color=color,
            marker=marker,
            markersize=4,
            label=LABELS[name],
        )
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("runs seen")
    ax.set_ylabel("% of tasks" if rate else "tokens")
    if rate:
        ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)


def _router(ax: Any, points: list[dict[str, Any]]) -> None:
    xs = [p["runs_seen"] for p in points]
    lines = (
        ("ASK_HUMAN share", lambda p: p["router"]["shares"]["ASK_HUMAN"], "#7c3aed", "-"),
        ("ACT share", lambda p: p["router"]["shares"]["ACT"], "#c2410c", "--"),
        ("ACT precision", lambda p: p["router"]["act_precision"], "#0f766e", "-."),
    )
    for label, get, color, style in lines:
        pairs = [(x, get(p)) for x, p in zip(xs, points) if get(p) is not None]
        ax.plot(
            [x for x, _ in pairs],
            [100 * y for _, y in pairs],
            style,
            color=color,
            marker="o",
            markersize=4,
            label=label,
        )
    ax.set_title("4. Scarwarden's router (all tasks)", fontsize=10)
    ax.set_xlabel("runs seen")
    ax.set_ylabel("%")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")


def draw(figs: dict[str, Any], png: Path, svg: Path) -> None:
    """Four panels (lesson at the repeat, transfer, reading cost, router) as PNG and SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "scarwarden-replay"  # stable SVG ids between runs
    points = figs["curve"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    _panel(axes[0][0], points, "repeat", "1. Lesson at the repeat (specific), top 3")
    _panel(axes[0][1], points, "transfer", "2. Transfer to tasks never seen (general), top 3")
    _panel(axes[1][0], points, "tokens_per_recall", "3. Tokens read per recall (top 3)", rate=False)
    _router(axes[1][1], points)
    runs = figs["meta"]["runs"]
    for ax in (axes[0][0], axes[0][1], axes[1][0], axes[1][1]):
        ax.set_xlim(-runs * 0.02, runs * 1.02)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=4, fontsize=9, frameon=False
    )
    meta = figs["meta"]
    order = f"task order shuffled with seed {meta['seed']}" if meta.get("seed") is not None else "task order"
    fig.suptitle(f"Replay of tau-airline: {meta['runs']} GPT-4o runs, {order}", y=0.99, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    fig.savefig(svg, metadata={"Date": None})
    plt.close(fig)
