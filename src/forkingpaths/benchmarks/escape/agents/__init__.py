"""MUTATE agents: Base, Self-Refine, EscapeAgent, ReDNA, R-only, reference, human, scripted."""
