"""The desktop app: the only package that imports PySide6 / pyqtgraph.

It calls `nmt_desktop.core` and never the other way round. Decoding and model loading run in QObject
workers on QThreads (`workers.py`); widgets get plain data through signals.
"""
