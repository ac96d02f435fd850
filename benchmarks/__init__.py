"""Benchmarks: task suites, the harness, and pytest-benchmark performance suites."""
