"""CreativeBench: creativity of code generation (combinatorial and exploratory).

Paper: Wang, Nguyen et al., "CreativeBench: Benchmarking and Enhancing Machine Creativity via
Self-Evolving Challenges" (text in `creativebench.txt`); the contract every module builds
against is `docs/dev/creativebench.md`. Where each part of the paper lives:

- §3.1-3.3 (the two subsets): `tasks.py` and `data/` hold the Combo (§3.2) and Explore (§3.3)
  task records, the paper's release format and our built-in sets, and `import` validation.
- §3.2-3.5 and App. D (construction, Algorithms 1 and 2, the filters of §3.4 / App. D.1):
  the `construction/` package (`sources.py`, `replies.py`, `harness.py`, `workdir.py`,
  `combo.py`, `explore.py`), with the prompts of App. J-L in `pipeline_prompts.py` and the
  scripted stand-in model in `pipeline_scripted.py`.
- §4.1 (the evaluation protocol): `env.py`, one episode of an instance as an env (the solver's
  program is the action; the env runs it in the sandbox, checks constraints and asks the
  judge); `benchmark.py`, the creativebench-v1 benchmark (tasks, options, seeds 42-44 and
  temperature 0.1 of App. B.2, the aggregates of Table 3).
- §4.2 Quality, "executed and validated inside a sandbox": `sandbox.py`, `sandbox_worker.py`
  (isolated warm workers and their verdicts) and `serve.py` (an AutoCodeBench-style /submit
  service); `references.py` runs a task file's reference solutions against their own tests
  (`import --check`), and `batch.py` runs a file of programs through one warm pool
  (`exec --batch`).
- §4.2 Novelty, Eq. 3-5: `novelty.py` (embedding distance + canonical character 4-gram
  distance, with App. F's canonicalisation; offline and CodeXEmbed-style embedding backends).
- §4.2 constraint compliance, App. B.1 (the judge of Table 10) and App. N (Table 21):
  `constraints.py` (the static AST checker and the LLM judge), `constraint_judge_prompts.py`,
  `judge_scripted.py` (the scripted judge).
- Table 3's cells from the records (Eq. 2 and 4 averaged per trial, then over trials), under
  the paper's averaging or the release's eval_explore.py (`explore_averaging`): `averaging.py`.
- §4.2 Creativity, Eq. 2; App. E.1 (paired t-test and confidence interval); App. F (the
  robustness stress test): `metrics.py`.
- §4.1 and App. M, K, Table 19 (the solvers): `agents/`, the evaluation solver (App. M Table 20
  for Combo, App. K Table 16 for constrained Explore levels, Table 19's plain prompt for level
  0), the reference solver, the evolved-prompt solver and the scripted stand-in.
- §4.1 and App. E.3 (the evolutionary baselines, AlphaEvolve-style island search and GEPA over
  the solver prompt): `evolve.py`, `evolve_prompts.py`.
- §4.3 and App. I (EvoRePE, the creativity steering vector): `evorepe.py`; the `evorepe`
  solver (a steered view of an `hf/` model, the judge left unsteered): `agents/steered.py`.
- Table 3 as a reproduction (`forkingpaths reproduce creativebench:table3`): `reproduce.py`
  and `data/published/table3.yaml`; the AlphaEvolve / GEPA / '+ EvoRePE' rows run from the
  optional inputs `alphaevolve_prompt`, `gepa_prompt`, `evorepe_vector`.
- The run viewer (`forkingpaths view`): `view.py` builds an episode's world view (the task, the
  program beside its novelty baseline, the sandbox's and the constraints' verdicts, the terms of
  Eq. 3-5), drawn by `web/view.js`.
- `cli.py`: `forkingpaths creativebench ...` (import, exec, serve, novelty, robustness, ttest,
  build-combo, build-explore, evolve, evorepe-vector).
"""
