"""Human-readable durations shared by the panels (training ETA, download ETA); sizes: core.model_dir.human_size."""

from __future__ import annotations


def format_eta(seconds: float | None) -> str:
    """1:05 or 1:02:03; "unknown" when there is no estimate yet."""
    if seconds is None:
        return "unknown"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"

