"""EvoEmpirBench agents (evoempirbench.txt): base LLM agent, truths, reference, scripted, human.

Where the paper lives: App. B.1 prompts -> prompts.py (rendered by base.py); §4.2-4.3 truth
repository M_truth and Eq. 5 (base prompt + truths) -> truths.py and base.py's Training
Knowledge block; §3.1 games played without a model -> reference.py (maze explorer, match-2
greedy, random) and scripted.py (the same players behind the ChatModel protocol, reading the
observation text); §3 human play -> human.py. Agent-ExpVer's learning loop (§4, App. A, B.2)
builds on BaseAgent and TruthRepository.
"""
