"""Learned skills and memory (documents, the maggma store, compilation to jobflow)."""
