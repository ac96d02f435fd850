"""Agent stages of evoskill, each a Prefect task with typed input and output, and their tools."""
