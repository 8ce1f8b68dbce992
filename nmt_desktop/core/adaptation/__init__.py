"""Instant adaptation from the translation memory (issue 45): kNN-MT over a per-sentence datastore.

When a sentence is translated, its best memory matches are force-decoded once to get the decoder's final
hidden state at each of their target positions (the key) and the token that came next (the value); each
decoding step then mixes the model's distribution with one made from the nearest keys (Khandelwal et al.
2021; per-sentence datastores and the distance-adaptive weight as SK-MT, Dai et al. 2023).

This package holds what needs no decoder: the settings (`settings.Adaptation`), the provenance types the
app shows (`memory_use`), the datastore (`datastore`) and the mixture (`mixture`). It sits below
core/decoding (which runs the forced decode and applies the mixture in every search) and never imports the
memory package: a memory is anything with the `MemoryLookup` methods (core/memory/store.TranslationMemory).
"""
