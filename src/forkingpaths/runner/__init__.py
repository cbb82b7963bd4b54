"""Turns a RunSpec into EpisodeRecords: executors, run directory, budgets, progress."""
