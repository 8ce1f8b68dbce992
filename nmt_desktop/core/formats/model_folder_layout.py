"""What a model folder holds (file names), the caps on what is read from one, and ModelFolderError.

Every reader of a model folder (model_folder_reader.py, safetensors_header.py, weights.py, model_folder.py)
words its failures through `ModelFolderError`, one sentence "<file>: <problem>.", with the small
helpers at the end of this module.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from nmt_desktop.core.tokenizer import TokenizerPair

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"
CARD_FILE = "card.json"
TOKENIZER_FILES = (TokenizerPair.FILE_JOINT, TokenizerPair.FILE_SOURCE, TokenizerPair.FILE_TARGET)

SHARD_PATTERN = re.compile(r"model-\d{5}-of-\d{5}\.safetensors")

CONTENTS = (f"{CONFIG_FILE}, {WEIGHTS_FILE} (or {WEIGHTS_INDEX} and its shards) and "
            f"{TokenizerPair.FILE_JOINT} (or {TokenizerPair.FILE_SOURCE} and {TokenizerPair.FILE_TARGET})")

# Size limits on what is read (bytes).
MiB = 1 << 20
GiB = 1 << 30
MAX_JSON_BYTES = 16 * MiB  # config.json, card.json, the shard index
MAX_TOKENIZER_BYTES = 256 * MiB
MAX_WEIGHTS_BYTES = 64 * GiB  # one safetensors file in a folder (an archive is capped by ZIP_MAX_TOTAL)
MAX_HEADER_BYTES = 100 * MiB  # a safetensors JSON header (the safetensors library's own limit)
MAX_POSITION_ENTRIES = 1 << 26  # max_positions * d_model: the sinusoid table is built, not loaded
ZIP_MAX_TOTAL = 4 * GiB  # sum of the declared uncompressed sizes of all members
ZIP_MAX_MEMBERS = 10_000
ZIP_MAX_RATIO = 200  # uncompressed / compressed, refused above this for members over ZIP_RATIO_MIN_SIZE
ZIP_RATIO_MIN_SIZE = 10 * MiB
INT8_SCALE_SUFFIX = ".scale"  # the per-row float32 scales of an int8 weight NAME are tensor NAME + this
INT8_MAX = 127  # symmetric: q in [-127, 127]


class ModelFolderError(Exception):
    """A model folder or archive is missing, unreadable, inconsistent or hostile.

    `str(err)` is one sentence on one line: "<file name or path>: <problem>."
    """

    def __init__(self, file: str | os.PathLike, problem: str):
        self.file = " ".join(str(file).split())
        self.problem = " ".join(str(problem).split()).rstrip(".")
        super().__init__(f"{self.file}: {self.problem}.")

    def __reduce__(self):  # keep it picklable despite the two-argument constructor
        return (type(self), (self.file, self.problem))


# -- wording of the one-sentence messages -------------------------------------------------------


def error_reason(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0][:200] if text else type(exc).__name__
    return line.rstrip(".")


def count_noun(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def short_json(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def json_error_reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return error_reason(exc)
