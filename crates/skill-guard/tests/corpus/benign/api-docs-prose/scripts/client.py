"""A small client for the chat service."""
import os


def complete(messages, system_prompt=None, temperature=0.2):
    """Send one completion request.

    Args:
        messages: The conversation so far, as role/content dicts.
        system_prompt: Optional override for the system prompt.
        temperature: Sampling temperature.
    """
    password = os.environ["CHAT_PASSWORD"]
    return {"messages": messages, "system": system_prompt, "auth": bool(password)}
