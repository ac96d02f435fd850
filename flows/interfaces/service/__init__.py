"""The workspace's resident service: one warm process under the CLI's commands (``server.py``), and its thin client."""
