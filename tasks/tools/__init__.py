"""Tools the agent stages use: the sandbox, package checks, introspection probes."""
