"""Contracts every benchmark and agent speaks; no benchmark code lives here."""
