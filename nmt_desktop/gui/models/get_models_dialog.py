"""The "Get models…" dialog: search OPUS-MT models by language, download one with progress, speed
and ETA, Cancel, and load it with one click.

Search and download run in `hub_workers` on their own threads. The dialog emits
`modelInstalled(path)` when a model is installed and `loadRequested(path)` when the user asks to
load it; the Models tab refreshes its list and loads the model.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QDialog, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QProgressBar, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from nmt_desktop.core.formats.model_folder import human_size

from ..formatting import format_eta
from .hub_workers import PullWorker, SearchWorker
from ..workers import WorkerThread

COLUMNS = ("Model", "Languages", "Size", "License", "Downloads")
_STAGES = {"resolve": "Asking the Hub for the file list…", "verify": "Checking checksums…",
           "convert": "Converting to an nmt-desktop model…"}


def progress_text(p: Any) -> str:
    """ "12.3 MB of 298.0 MB · 4.2 MB/s · 1:05 left" for a download, the stage's name otherwise."""
    if p.stage != "download":
        return _STAGES.get(p.stage, "Done")
    parts = [f"{human_size(p.done_bytes)} of {human_size(p.total_bytes)}" if p.total_bytes else human_size(p.done_bytes)]
    if p.speed > 0:
        parts.append(f"{human_size(int(p.speed))}/s")
    if p.eta_s is not None:
        parts.append(f"{format_eta(p.eta_s)} left")
    return " · ".join(parts)


class _NumberItem(QTableWidgetItem):
    """Sorts by the number stored under UserRole, not by the text."""

    def __lt__(self, other: QTableWidgetItem) -> bool:  # noqa: D105
        a, b = self.data(Qt.UserRole), other.data(Qt.UserRole)
        return (a if a is not None else -1) < (b if b is not None else -1)


class GetModelsDialog(QDialog):
    modelInstalled = Signal(str)  # path of the installed model folder
    loadRequested = Signal(str)
    _search = Signal(int, str, bool)
    _pull = Signal(int, str, bool)

    def __init__(self, parent: QWidget | None = None, query: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Get models — OPUS-MT from the Hugging Face Hub")
        self.resize(860, 560)
        self._search_id = 0
        self._pull_id = 0
        self.pulling = False
        self.installed_path = ""
        self.models: list[Any] = []

        self.searcher, self.puller = SearchWorker(), PullWorker()
        self._search_thread = WorkerThread(self.searcher, "hub-search")
        self._pull_thread = WorkerThread(self.puller, "hub-pull")
        self._search.connect(self.searcher.search)
        self._pull.connect(self.puller.pull)
        self.searcher.found.connect(self._on_found)
        self.searcher.failed.connect(self._on_search_failed)
        self.puller.progress.connect(self._on_progress)
        self.puller.pulled.connect(self._on_pulled)
        self.puller.cancelled.connect(self._on_cancelled)
        self.puller.failed.connect(self._on_pull_failed)

        self.query = QLineEdit(query)
        self.query.setPlaceholderText("Languages: “en de”, “German”, “fr” (source first, then target)")
        self.query.setToolTip("One language (code or English name) matches either side; two are source then target.")
        self.search_button = QPushButton("Search")
        self.search_button.setToolTip("Search the Helsinki-NLP OPUS-MT models on the Hugging Face Hub")
        self.search_button.clicked.connect(lambda _checked=False: self.search())  # clicked(bool) is not "offline"
        self.status = QLabel("Type a language pair and press Search.")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.table.setSortingEnabled(True)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self.download())

        self.int8 = QCheckBox("Store as int8 (under half the size)")
        self.int8.setToolTip("Keep the weights as 8-bit integers with per-row scales: a much smaller folder, "
                             "near-identical translations")
        self.download_button = QPushButton("Download")
        self.download_button.setToolTip("Download the selected model, check it and install it into your models folder")
        self.download_button.clicked.connect(lambda _checked=False: self.download())  # nor a repo
        self.cancel_button = QPushButton("Cancel download")
        self.cancel_button.setToolTip("Stop the download; nothing is installed")
        self.cancel_button.clicked.connect(self.cancel)
        self.load_button = QPushButton("Load model")
        self.load_button.setToolTip("Open the installed model in the app")
        self.load_button.clicked.connect(self._request_load)
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Close this window (a download goes on in the background)")
        self.close_button.clicked.connect(self.close)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.progress_label = QLabel("")

        for b in (self.download_button, self.cancel_button, self.load_button, self.close_button):
            b.setAutoDefault(False)  # Enter in the query searches; it never starts a download
        self.search_button.setDefault(True)
        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        top.addWidget(self.search_button)
        row = QHBoxLayout()
        row.addWidget(self.int8)
        row.addStretch(1)
        for b in (self.download_button, self.cancel_button, self.load_button, self.close_button):
            row.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addLayout(row)
        note = QLabel("Models are downloaded from the Hugging Face Hub (huggingface.co, or HF_ENDPOINT), checked "
                      "against its checksums and stored in your models folder; they then work offline.")
        note.setObjectName("hint")
        note.setWordWrap(True)
        layout.addWidget(note)
        self._update_buttons()

    # -- search ---------------------------------------------------------------------------------------

    def search(self, offline: bool = False) -> int:
        self._search_id += 1
        self.status.setText("Searching the Hugging Face Hub…")
        self.search_button.setEnabled(False)
        self._search.emit(self._search_id, self.query.text(), bool(offline))
        return self._search_id

    def _on_found(self, request_id: int, result: Any) -> None:
        if request_id != self._search_id:
            return
        self.search_button.setEnabled(True)
        self.models = list(result.models)
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self.models))
        for r, m in enumerate(self.models):
            size = _NumberItem(human_size(m.size_bytes) if m.size_bytes else "—")
            size.setData(Qt.UserRole, m.size_bytes)
            downloads = _NumberItem(f"{m.downloads:,}" if m.downloads is not None else "—")
            downloads.setData(Qt.UserRole, m.downloads)
            cells = [QTableWidgetItem(m.repo), QTableWidgetItem(m.languages), size,
                     QTableWidgetItem(m.license or "—"), downloads]
            cells[0].setData(Qt.UserRole, m.repo)
            for c, item in enumerate(cells):
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)
        if any(m.downloads is not None for m in self.models):
            self.table.sortByColumn(COLUMNS.index("Downloads"), Qt.DescendingOrder)
        else:
            self.table.sortByColumn(0, Qt.AscendingOrder)
        if self.models:
            self.table.selectRow(0)
        n = len(self.models)
        found = f"{n} model{'s' if n != 1 else ''}"
        if result.offline:
            self.status.setText(f"⚠ {result.reason} Showing the catalogue shipped with the app (snapshot "
                                f"{result.snapshot or 'unknown'}): {found}, sizes and licenses unknown.")
        else:
            self.status.setText(f"{found} on the Hugging Face Hub." if n else "No OPUS-MT model matches; try one "
                                "language, or its English name.")
        self._update_buttons()

    def _on_search_failed(self, request_id: int, message: str) -> None:
        if request_id == self._search_id:
            self.search_button.setEnabled(True)
            self.status.setText(f"⚠ {message}")

    # -- download -------------------------------------------------------------------------------------

    def selected_repo(self) -> str:
        rows = self.table.selectionModel().selectedRows()
        item = self.table.item(rows[0].row(), 0) if rows else None
        return str(item.data(Qt.UserRole)) if item is not None else ""

    def download(self, repo: str = "") -> int:
        repo = repo or self.selected_repo()
        if not repo or self.pulling:
            return self._pull_id
        for row in range(self.table.rowCount()):  # show which model is downloading
            if self.table.item(row, 0).data(Qt.UserRole) == repo:
                self.table.selectRow(row)
        self._pull_id += 1
        self.pulling = True
        self.installed_path = ""
        self.progress.setRange(0, 0)  # busy until the first byte count
        self.progress_label.setText(f"{repo}: asking the Hub for the file list…")
        self._update_buttons()
        self._pull.emit(self._pull_id, repo, self.int8.isChecked())
        return self._pull_id

    def cancel(self) -> None:
        if self.pulling:
            self.puller.cancel()
            self.progress_label.setText("Cancelling…")

    def _on_progress(self, request_id: int, p: Any) -> None:
        if request_id != self._pull_id:
            return
        if p.stage == "download" and p.total_bytes:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(p.done_bytes / p.total_bytes, 1.0)))
        elif p.stage in ("verify", "convert", "resolve"):
            self.progress.setRange(0, 0)
        self.progress_label.setText(progress_text(p))

    def _finish(self) -> None:
        self.pulling = False
        self.progress.setRange(0, 1000)
        self._update_buttons()

    def _on_pulled(self, request_id: int, result: Any) -> None:
        self._finish()
        self.progress.setValue(1000)
        self.installed_path = str(result.path)
        self.progress_label.setText(f"Installed {result.name} ({human_size(result.downloaded_bytes)} downloaded, "
                                    f"license {result.license or 'see the model page'}). Click “Load model”.")
        self._update_buttons()
        self.modelInstalled.emit(self.installed_path)

    def _on_cancelled(self, request_id: int) -> None:
        self._finish()
        self.progress.setValue(0)
        self.progress_label.setText("Download cancelled; nothing was installed.")

    def _on_pull_failed(self, request_id: int, message: str) -> None:
        self._finish()
        self.progress.setValue(0)
        self.progress_label.setText(f"⚠ {message}")

    def _request_load(self) -> None:
        if self.installed_path:
            self.loadRequested.emit(self.installed_path)
            self.close()

    def _update_buttons(self) -> None:
        self.download_button.setEnabled(not self.pulling and bool(self.table.selectionModel().selectedRows()))
        self.cancel_button.setEnabled(self.pulling)
        self.load_button.setEnabled(bool(self.installed_path) and not self.pulling)

    # -- lifetime ---------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Cancel a download under way and join both threads (before the app quits)."""
        self.puller.cancel()
        self._search_thread.stop()
        self._pull_thread.stop()
