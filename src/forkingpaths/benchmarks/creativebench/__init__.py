"""CreativeBench: creativity of code generation (combinatorial and exploratory).

Paper: "CreativeBench: Benchmarking and Enhancing Machine Creativity via Self-Evolving
Challenges" (text in `creativebench.txt`); the contract every module builds against is
`docs/dev/creativebench.md`. Where each part lives:

- `tasks.py`, `data/`: the Combo (§3.2) and Explore (§3.3) task records, the paper's release
  format and our built-in sets; `import` validation.
- `sandbox.py`, `sandbox_worker.py`, `serve.py`: execution of solutions with verdicts (§4.2
  Quality, "executed and validated inside a sandbox"), and an AutoCodeBench-style /submit service.
- `novelty.py`: Novelty, Eq. 3-5 (embedding distance + canonical character 4-gram distance,
  App. F's canonicalisation) with offline and CodeXEmbed-style embedding backends.
- `constraints.py`, `constraint_judge_prompts.py`, `judge_scripted.py`: Explore constraint
  compliance, a static AST checker and the LLM judge (App. B.1, App. N Table 21).
- `metrics.py`: Quality, Creativity (Eq. 2), the paired t-test and confidence interval (App.
  E.1), App. F's robustness stress test.
- `benchmark.py`: the creativebench-v1 protocol (§4.1-4.2, App. B.2 settings: temperature 0.1,
  seeds 42-44) and its aggregates (Table 3).
- `agents/`: the evaluation solvers (App. M Table 20 for Combo; App. K Table 16 for constrained
  Explore levels, Table 19's plain baseline prompt for level 0), the reference solver, the
  evolved-prompt solver and the scripted stand-in.
- `pipelines.py`, `pipeline_prompts.py`, `pipeline_scripted.py`: the construction pipelines,
  Algorithm 1 (Combo) and Algorithm 2 (Explore) with the filters of §3.4 / App. D (prompts of
  App. J-L).
- `evolve.py`, `evolve_prompts.py`: the evolutionary baselines, AlphaEvolve-style island search
  and GEPA over the solver prompt (§4.1, App. E.3).
- `evorepe.py`: EvoRePE, the creativity steering vector (§4.3, App. I).
- `cli.py`: `forkingpaths creativebench ...` (import, exec, serve, novelty, robustness, ttest,
  build-combo, build-explore, evolve, evorepe-vector).
"""
