"""Catalogs: building them from a declaration stream, their manifests, and verification."""
