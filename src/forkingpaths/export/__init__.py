"""Exports of run directories to the formats researchers already use: Inspect logs, Parquet, W&B."""
