"""The post-editing desk (issue 44): a bilingual file's segments to confirm one by one, each confirmation
stored in the translation memory and a journal at once (journal.py), so a crash loses none."""
