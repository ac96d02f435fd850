"""The chat web app (``evoskill serve``): sessions over the solve flow, and a skills browser."""
