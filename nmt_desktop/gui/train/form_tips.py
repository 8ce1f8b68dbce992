"""What each control of the Train form does, as its tooltip (kept apart so the form stays about layout)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

# form attribute -> tooltip
TIPS = {
    "train_kind": "One file with source and target side by side (.tsv, .tmx), or two aligned files",
    "src_lang": "Source language code (e.g. en); written into the model and its card",
    "tgt_lang": "Target language code (e.g. de); written into the model and its card",
    "reverse": "Train the other direction: the data's target side becomes the source",
    "dev_kind": "Sentences the run is scored on: held out from the training data, or a separate file",
    "dev_percent": "Share of the training pairs held out as the dev set",
    "seed": "Random seed for the hold-out split, the data order and the weights",
    "check_button": "Read the data and show its first pairs and counts, before training",
    "finetune_radio": "Continue training the loaded model on this data (its vocabulary and size are kept)",
    "scratch_radio": "Train a new model with a new tokenizer learnt from this data",
    "preset": "Model size: width, heads and layers (hover an entry for its numbers)",
    "vocab_size": "Subword vocabulary size of the new tokenizer",
    "device": "Where training runs: a GPU is much faster than the CPU",
    "precision": "Number format of the training arithmetic: bf16 and fp16 are faster on GPUs that have them",
    "threads": "CPU threads torch may use (0: torch's default)",
    "lr": "Peak learning rate, reached after the warmup steps",
    "batch_tokens": "Target tokens per training batch",
    "limit_value": "How long to train, in the unit chosen beside it",
    "limit_kind": "Count the training length in optimizer steps or in passes over the data (epochs)",
    "warmup": "Steps over which the learning rate rises from 0 to its peak",
    "label_smoothing": "Probability mass spread over other tokens in the loss (0: none)",
    "dropout": "Dropout while training (at the lowest value: the preset's or the loaded model's own)",
    "eval_every": "Steps between evaluations on the dev set (loss, BLEU, chrF, checkpoint)",
    "eval_sentences": "Dev sentences decoded for BLEU and chrF at each evaluation (0: all)",
    "patience": "Stop after this many evaluations without a better dev score (0: never)",
    "log_every": "Steps between progress reports (the curves and the ETA)",
    "probe_edit": "A sentence whose attention is drawn at each evaluation (Probe view)",
    "reset_button": "Put the defaults for training from scratch or fine-tuning back",
    "out_edit": "Folder for the run's checkpoints, logs and best model (empty: a new folder under your runs)",
    "save_button": "Save the form as a training config (.toml) for `nmt-desktop train --config`",
    "load_button": "Fill the form from a training config (.toml)",
}
PATH_ROWS = ("train_file", "train_src", "train_tgt", "dev_file", "dev_src", "dev_tgt")


def apply_tips(form: QWidget) -> None:
    """Set the tooltips on the Train form's controls, found by attribute name (the form calls it, so this
    module does not import the form back)."""
    for name, tip in TIPS.items():
        getattr(form, name).setToolTip(tip)
    for name in PATH_ROWS:
        row = getattr(form, name)
        row.edit.setToolTip(f"{row.title}: {row.edit.placeholderText()}")
        row.button.setToolTip(f"Choose the {row.title.lower()} file")
