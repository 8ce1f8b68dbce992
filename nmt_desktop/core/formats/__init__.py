"""Model formats: the model folder (save, load, zip), cards, Marian import, averaging."""
