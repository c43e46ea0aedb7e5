"""membench: benchmark how well agent-memory systems retrieve the right piece of an agent's past."""

__version__ = "0.1.0"
