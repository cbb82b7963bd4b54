"""The local web app: `forkingpaths view`, a read-only viewer of run directories."""
