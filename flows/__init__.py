"""Prefect flows of evoskill and its command-line interface."""
