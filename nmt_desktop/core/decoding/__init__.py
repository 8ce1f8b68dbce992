"""Decoding: the KV cache, step backends, searches and the Translator."""
