"""leanindex: declaration index, bounded search and proof checking for Lean 4 environments."""

__version__ = "0.1.0"
