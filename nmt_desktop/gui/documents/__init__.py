"""File > Translate file…: the dialog (dialog.py) over the core's document translation, its options
(options.py), worker (worker.py), side-by-side table (table.py) and result line (summary.py); the glossary
editor (glossary_editor.py) and where a model's glossary is kept (glossary_store.py)."""
