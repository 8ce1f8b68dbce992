"""Training: corpora, batching, the training loop, checkpoints and metrics."""
