"""wordlevel model and trainer (see model.py and trainer.py)."""
