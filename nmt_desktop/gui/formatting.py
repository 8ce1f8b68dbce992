"""Human-readable durations and probabilities shared by the panels (training ETA, download ETA, token
tooltips); sizes: core.formats.model_folder.human_size."""

from __future__ import annotations


def format_eta(seconds: float | None) -> str:
    """1:05 or 1:02:03; "unknown" when there is no estimate yet."""
    if seconds is None:
        return "unknown"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"



def format_time_left(seconds: float | None) -> str:
    """"about 12 min 41 s left", "about 1 h 02 min left": a duration that cannot be read as a clock time
    (the Train tab's "ETA 12:41" was); "" when there is no estimate yet."""
    if seconds is None:
        return ""
    s = max(0, int(round(seconds)))
    if s >= 3600:
        return f"about {s // 3600} h {s // 60 % 60:02d} min left"
    if s >= 60:
        return f"about {s // 60} min {s % 60:02d} s left"
    return f"about {s} s left"


def format_prob(p: float) -> str:
    """A probability as a person reads it, never a nonzero one shown as "0%": 62%, 3.2%, 0.4%, <0.1%."""
    if p >= 0.1:
        return f"{p:.0%}"
    if p >= 0.001:
        return f"{p:.1%}"
    return "<0.1%" if p > 0 else "0%"
