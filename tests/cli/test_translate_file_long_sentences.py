"""`translate-file` never refuses a document for a sentence longer than the model takes (issue 42: four real
documents were refused for one 256+-token list): the tiny model (64 positions) translates a .docx with a
400-token sentence in pieces and the summary names the line. (A .txt: the .docx writer is being rebuilt
beside this change.)"""

from __future__ import annotations

from pathlib import Path

from cli_runner import run_cli
from tiny_models import SOURCE_WORDS


def test_a_400_token_sentence_is_translated_in_pieces_and_named(tiny_model_dir: Path, tmp_path: Path):
    from nmt_desktop.core.decoding.document import sentence_pieces
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.formats import open_document
    from nmt_desktop.core.documents.translate_document import translate_document

    words = [SOURCE_WORDS[i % len(SOURCE_WORDS)] for i in range(360)]
    long_sentence = " ".join(w + ("," if i % 9 == 8 else "") for i, w in enumerate(words)) + "."
    translator = Translator.load(tiny_model_dir)
    assert len(translator.source_ids(long_sentence)) >= 400 > translator.config.max_positions
    source = tmp_path / "list.txt"
    source.write_text(" ".join(SOURCE_WORDS[:3]) + ".\n" + long_sentence + "\n", encoding="utf-8")
    out = tmp_path / "list.xx.txt"

    done = run_cli("translate-file", str(source), "-m", str(tiny_model_dir), "-o", str(out))

    assert done.returncode == 0, done.stderr
    assert "1 sentence was longer than the model takes and translated in pieces: line 2" in done.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and lines[1].strip()
    result = translate_document(translator, open_document(source))  # in process: every piece has its translation
    pieces = sentence_pieces(long_sentence, translator.source_ids, translator.config.max_positions)
    assert len(pieces) >= 7
    assert len(result.blocks[1].sentences) == len(pieces) and all(t.text.strip() for t in result.blocks[1].sentences)
    assert result.cut_sentences == [("line 2", 1)]
