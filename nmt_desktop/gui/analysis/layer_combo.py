"""The items of a "which attention" combo (the Forced prefix view's): the last layer or all layers with
their heads averaged, then each layer counted from 1, and the core's `layer` argument for a choice."""

from __future__ import annotations

from nmt_desktop.core.analysis.head_names import layer_name

LAYER_CHOICES = ("Last layer (avg heads)", "All layers (avg)")  # then "L3 (avg heads)", counted from 1


def layer_items(layers: int) -> list[str]:
    """The items of a layer combo read by `layer_choice`."""
    return list(LAYER_CHOICES) + [f"{layer_name(i)} (avg heads)" for i in range(layers)]


def layer_choice(index: int) -> int | None:
    """The `layer` argument of the core's attention averages for a `layer_items` index: -1 (the last layer),
    None (all layers) or a layer."""
    return -1 if index <= 0 else (None if index == 1 else index - 2)
