"""nmt-desktop: a desktop app and headless core for encoder-decoder Transformer NMT."""

__version__ = "0.1.0"
