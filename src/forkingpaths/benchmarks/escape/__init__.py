"""MUTATE escape rooms: a benchmark of divergent thinking in interactive LLM agents.

Paper: "Beyond One Path: Evaluating and Enhancing Divergent Thinking in Interactive LLM Agents"
(MUTATE benchmark and the ReDNA agent; text in `mutate-redna.txt`). Where each part lives:

- `schema.py`, `engine.py`: the scenario format and its rules (§3.2, App. E.1); the contract is
  `docs/dev/escape-engine.md`.
- `metadata.py`, `check.py`: the solution-path catalogue and its checker (App. E.2).
- `env.py`, `benchmark.py`: one attempt as an environment, the four-attempt protocol and the
  path metrics (§3.1, §3.3).
- `agents/`: the baseline, Self-Refine, EscapeAgent and ReDNA agents (§4, App. D, App. F).
- `judge.py`: the LLM judge of originality, elaboration and groundedness (Metric 2, App. C.2).
- `agreement.py`: judge-human agreement (Table 10).
- `aut.py`: the Alternative Uses Test transfer study (§5.3, App. D.6).
"""
