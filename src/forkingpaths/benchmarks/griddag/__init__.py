"""griddag: a partially observed grid hiding a task DAG, and a metric of exploration and
exploitation errors.

Paper: "Exploration and Exploitation Errors Are Measurable for Language Model Agents"
(arXiv:2604.13151; text in `explore-exploit-errors.txt`). The observation text and fields the
env, agents and scripted models share are pinned by `docs/dev/griddag-observation-format.md`.
Where each part lives:

- `world.py`: the 2D grid map M, the task DAG with its AND/OR preconditions and unique goal,
  directions and the hidden budget B = alpha x |M| (§3, App. B, App. C.1 Eq. 7).
- `env.py`: `GridDagEnv`, the rules of an episode (observed cells, node states of Eq. 3-4,
  goal, hidden budget; §3, App. B) and the observation wording of App. C.3's example turns.
- `generator.py`: the procedural task generator, DAG presets (easy/medium/hard) and map
  presets (low/medium/high exploration: density, corridor widths), random 4-character names
  (§5 "Task Generation", App. C.1).
- `metric.py`: the error metric: pending tasks and unobserved cells, Table 1's four cases and
  target sets, gain (Eq. 6), progress events, the stale score S_t = c_t + e_t + n_t of the
  no-progress trajectory, err(t) (Eq. 1) and the normalised exploration/exploitation errors
  (§4, §5 "Evaluation", App. B).
- `semantic.py`, `data/semantic/`: the four hand-made pasta-cooking maps and their symbolic
  twins (App. E).
- `agents/`: the ReAct agent with the base/exploration/exploitation/balance prompts and the
  reasoning mode (§5 "Prompts", App. C.2-C.3), the harness's rule-based memory manager (App.
  D), the agent-side knowledge of the map and the DAG, reference agents (frontier, random) and
  the scripted models that stand in for an LLM offline.
- `benchmark.py`: griddag-v1: the main split (3 map presets x 3 DAG presets x seeds 0-2) and
  the semantic split (4 maps x 2 variants x seeds 0-4) of App. C.2, the App. C.1 settings as
  options (`budget_alpha`, the paper's alpha = 3), per-episode metrics and the aggregates of §5
  and Tables 2-3 (success rate, exploration and exploitation error, steps of successful
  episodes).
- `plots.py`: Figure 1(a) (success rate against log exploration error) and per-episode
  trajectory figures with err(t) (App. F).
- `figures.py`: Figures 1(b), 4, 5 and 20 drawn from runs' records, and the numbers they plot
  (exploration steps by episode progress, R² of success on log exploitation error).
- `reproduce.py`, `data/published/`: `forkingpaths reproduce explore-exploit:ITEM` for Tables
  2-3 and Figures 1(b), 4, 5, 20: the runs of each protocol (App. C.2) and the printed numbers.
- `cli.py`: `forkingpaths griddag generate|score`, the generator and the metric as JSON commands.
"""
