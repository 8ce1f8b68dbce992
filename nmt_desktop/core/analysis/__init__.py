"""Attention analysis: head statistics, ablation, alignments and coverage."""
