"""The Translate tab's model picker: gui/model_picker.py (shared with the Compare view's model B)."""

from __future__ import annotations

from ..model_picker import ModelPicker

__all__ = ["ModelPicker"]
