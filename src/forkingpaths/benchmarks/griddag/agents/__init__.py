"""griddag agents: ReAct (App. C.3) with harness (App. D), reference agents, scripted models."""
