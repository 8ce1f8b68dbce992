"""The Translate tab: `TranslatePanel` (panel.py) built from small parts: the source editor, the decoding
options, the alternatives of a token, the output as rich text and the Qt-free `TranslationDocument`
that holds what is shown."""

from .panel import TranslatePanel

__all__ = ["TranslatePanel"]
