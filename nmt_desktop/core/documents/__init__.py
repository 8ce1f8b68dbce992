"""Documents with formatting (docx, odt, pptx, xlsx, html, md, srt, vtt, epub, txt): read into blocks of
styled runs, translated with formatting carried over by alignment, written back with nothing else changed."""
