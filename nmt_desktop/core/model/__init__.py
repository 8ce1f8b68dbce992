"""The Transformer itself: layers and the encoder-decoder model (no decoding fast paths)."""
