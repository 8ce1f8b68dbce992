"""File > Translate text file…: the dialog (dialog.py), the file read and written without Qt (file.py) and
the side-by-side table (table.py)."""
