"""Learned skills and memory (documents, the maggma store, compilation to jobflow)."""

from pathlib import Path

__all__ = ["STARTER_LIBRARY"]

STARTER_LIBRARY = Path(__file__).resolve().parent / "library"
"""The starter library's task files (known-good solutions that ``evoskill learn`` turns into skills)."""
