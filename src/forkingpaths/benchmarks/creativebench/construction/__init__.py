"""CreativeBench construction pipelines (§3.2 Algorithm 1, §3.3 Algorithm 2; filters of §3.4 and
App. D; prompts of App. J-L in `pipeline_prompts.py`).

- `sources.py`: the inputs, Combo's source components (the k solutions from distinct domains a
  fusion combines) and Explore's seeds (a base problem, its solution and tests).
- `replies.py`: reading the models' replies (fusions, inputs, statements, audits, constraints)
  and `ask`, which repeats a request with a corrective turn until its reply can be read.
- `harness.py`: the reference solution's outputs on generated inputs, the assert-based test
  functions built from them, what a failed sandbox run says.
- `workdir.py`: the resumable output directory (settings, state, rows, call log, report) and
  the models a pipeline is built with.
- `combo.py`: Algorithm 1 (fusion, sandbox repair, tests, statement; difficulty, quality audit
  and diversity filters) and `run_combo_pipeline` (`creativebench build-combo`).
- `explore.py`: Algorithm 2 (constraint stacking, Eq. 1's refinement against sandbox, static
  checker and judge) and `run_explore_pipeline` (`creativebench build-explore`).
"""
