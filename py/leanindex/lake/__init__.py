"""Lean-side orchestration: profiles, Lake projects, the extractor process, profile builds."""
