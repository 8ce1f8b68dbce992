"""Headless runs of the app: the `gui` command's steps and PNG (gui_command.py) and the Analysis view
screenshots (screenshot.py); what every headless wait shares is gui/waiting.py."""
