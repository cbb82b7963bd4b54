"""MUTATE escape rooms and the AUT transfer study: divergent thinking in interactive LLM agents.

Paper: Park, Baek, Park and Lee, "Beyond One Path: Evaluating and Enhancing Divergent Thinking
in Interactive LLM Agents" (the MUTATE benchmark and the ReDNA agent; text in
`mutate-redna.txt`). Two benchmarks live here: `escape-v1` (MUTATE) and `aut-v1` (§5.3).
Where each section of the paper lives:

- §3.1 Task formulation and metrics: `metrics.py` (Metric 1, Path Discovery, and Metric 2,
  Divergence Momentum, from the records; which steps Metric 2 scores); `judge.py` with
  `judge_prompts.py` (the LLM judge of Originality, Elaboration and Groundedness, App. C.2) and
  `judge_scripted.py` (its offline stand-in).
- §3.2 Interactive environment, App. E.1 scenario structure: `schema.py` (the scenario YAML),
  `actions.py` (the action grammar the engine and the agents share), `engine.py` (the rules;
  the contract is `docs/dev/escape-engine.md`), `observation.py` (Prompts 2-3);
  `data/scenarios/` (the ten scenarios, Tables 16-17).
- App. E.2-E.3 solution path catalogue: `metadata.py` (the gold paths), `check.py` (their
  checker), `plots.py` (the per-path table, Tables 18-19).
- §3.3 evaluation protocol: `env.py` (four attempts per scenario, forbidden finish actions,
  step budget, meaningless-action stop), `benchmark.py` (escape-v1: instances, options, the
  judge's step hook, aggregation).
- §4 ReDNA, §5.2 ablation, App. D.1-D.4 and F (baselines and prompts): `agents/` (`react.py`
  Base and Self-Refine, `escapeagent.py` EscapeAgent, `redna.py` ReDNA and R-only, each with
  its `*_prompts.py`; `attempts.py` per-attempt memory; `reference.py` oracle, systematic and
  random floors; `human.py` human play, App. C.1; `scripted.py` the offline stand-in model).
- App. C.2 judge-human agreement (Table 10): `agreement.py`.
- §5.3 and App. D.6, the Alternative Uses Test: `aut.py` (aut-v1) and the `aut_*.py` modules.
- Command line (`forkingpaths escape check|replay|play|agreement`): `cli.py`.
"""
