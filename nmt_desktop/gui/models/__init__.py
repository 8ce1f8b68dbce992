"""The Models tab (panel.py) and what it is made of: the model picker, model names, cards as pages, the
"Get models…" dialog and its Hub workers."""
