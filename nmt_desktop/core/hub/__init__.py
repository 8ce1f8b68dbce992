"""Getting models: the Hugging Face Hub client, catalogue search, pulling OPUS-MT models, the installed models."""
