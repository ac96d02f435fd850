"""Closed-loop materials discovery: environments, oracles, policies and metrics (MADE-style)."""
