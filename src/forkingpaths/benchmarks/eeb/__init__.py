"""EvoEmpirBench (evoempirbench.txt): maze and match-2 games, metrics, Agent-ExpVer."""
