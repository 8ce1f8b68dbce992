"""LibreTranslate's own server, offline, on our weights: `libretranslate` with one change, the sentence splitter.

Run with the Python of the separate LibreTranslate venv (benchmarks/argos_package.py says how to make it and
the packages), with the packages installed under $HOME:

    HOME=/tmp/lt-home ARGOS_BEAM_SIZE=1 ARGOS_INTRA_THREADS=1 \
        /tmp/lt-venv/bin/python benchmarks/libretranslate_offline.py --load-only en,de --port 5055 --disable-web-ui

Why the change: argos-translate-lt 1.12.1 splits every text into sentences with MiniSBD before translating
(argostranslate/translate.py PackageTranslation, the default chunk type), and MiniSBD downloads its model
(en.onnx) from github.com/LibreTranslate/MiniSBD's releases on first use (minisbd/models.py get_model_file):
offline, every /translate answers 500. The other splitters (stanza, spacy) need downloaded models too, and
ARGOS_CHUNK_TYPE=NONE raises NotImplementedError. So the splitter here returns the text as one sentence:
exact for serve_load.py, which sends one sentence per request. Everything else is LibreTranslate 1.9.6 as
installed (waitress, its /translate, argos' CTranslate2 translator).
"""

import sys

import argostranslate.sbd as sbd

sbd.MiniSBDSentencizer.split_sentences = lambda self, text: [text]  # one sentence in, one sentence out

from libretranslate.main import main  # noqa: E402  (after the patch: the app builds its translators lazily)

if __name__ == "__main__":
    sys.argv[0] = "libretranslate"
    sys.exit(main())
