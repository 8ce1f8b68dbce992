"""Test helper: the WCAG 2 contrast ratio of two colours, for tests that check what a person can read.

Imported as `from colour_contrast import contrast` (tests/ is on sys.path: tests/conftest.py's folder)."""

from __future__ import annotations

from PySide6.QtGui import QColor


def contrast(a: str | QColor, b: str | QColor) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    def luminance(c: QColor) -> float:
        parts = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in (c.redF(), c.greenF(), c.blueF())]
        return 0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2]
    high, low = sorted((luminance(QColor(a)), luminance(QColor(b))), reverse=True)
    return (high + 0.05) / (low + 0.05)
