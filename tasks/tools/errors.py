"""The error a tool raises when it is misused: what went wrong, how to use it, and what to try next."""

from __future__ import annotations

__all__ = ["ToolError"]


class ToolError(ValueError):
    """A tool could not do what was asked; ``hint`` reminds of correct use and suggests the next tool."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f" Hint: {self.hint}" if self.hint else "")
