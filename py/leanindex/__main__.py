"""`python -m leanindex` is the `leanindex` command."""

from .cli import main

main()
