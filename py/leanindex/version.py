"""The package version, in a module of its own so that every part of the package can name it
without importing the package's `__init__` (which offers `Client`, an adapter)."""

__version__ = "0.1.0"
