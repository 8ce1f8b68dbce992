"""Tools > Fine-tune on my memory… (issue 45, slow adaptation): the Train form filled to fine-tune the loaded model
on the user's translation memory (the file the desk confirms into), with the model's own training and dev files
as the replay and the general text where its card names them; the Train tab then checks the data, and Start
trains with the progress and time left it shows for any run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from nmt_desktop.core.memory import Pair, TranslationMemory, TranslationMemoryError, default_memory_path
from nmt_desktop.core.training.memory_data import card_data_path

if TYPE_CHECKING:
    from ..window_api import WindowApi
    from .panel import TrainPanel

TITLE = "Fine-tune on my memory"


def fine_tune_on_memory(window: WindowApi, memory: Path | None = None) -> bool:
    """Fill the Train form for the loaded model and `memory` (default: the user's) and show it; False, with one
    sentence saying what to do, when there is no model, no memory or nothing of the model's pair in it."""
    info, panel = window.info, cast("TrainPanel", window.tab("train"))
    path = Path(memory) if memory is not None else default_memory_path()
    if info is None:
        window.show_error("Load the model to fine-tune first (Models tab), then choose Fine-tune on my memory.", TITLE)
        return False
    if panel.controller.busy:
        window.show_error("A training run is in progress on the Train tab: stop it first.", TITLE)
        return False
    if not (info.src_lang and info.tgt_lang):
        window.show_error(f"{info.name} does not say which languages it translates, so its segments in the memory "
                          f"cannot be picked: fill the Train tab's form by hand (Training data: Translation memory).",
                          TITLE)
        return False
    pair = Pair.of(info.src_lang, info.tgt_lang)
    try:
        with TranslationMemory(path, create=False) as tm:
            count = tm.count(pair)
    except TranslationMemoryError as exc:
        window.show_error(f"{exc}: confirm segments in the post-editing desk (File > Post-edit file…) or import a "
                          f"TMX file (nmt-desktop tm import) first.", TITLE)
        return False
    if count < 2:
        window.show_error(f"{path} holds {count} segments of {pair}; fine-tuning needs at least 2 (one to learn "
                          f"from, one to score): confirm more in the post-editing desk first.", TITLE)
        return False
    data = info.card.get("data") if isinstance(info.card.get("data"), dict) else {}
    replay, general = (card_data_path(data.get(key), Path(info.path)) for key in ("train", "dev"))
    panel.form.use_memory(str(path), str(replay) if replay else None, str(general) if general else None)
    window.show_tab("train")
    panel.check_data_now()
    return True
