"""TurtleSoup-Bench: imaginative reasoning as yes/no questioning about situation puzzles.

Paper: "What to Ask Next? Probing the Imaginative Reasoning of LLMs with TurtleSoup Puzzles"
(TurtleSoup-Bench and the Mosaic-Agent; text in `turtlesoup.txt`). The contract between the
parts is `docs/dev/turtlesoup.md`. Where each section of the paper lives:

- §3, App. A (the benchmark, its six categories, Key Clue Libraries): `puzzles.py` (the Puzzle
  record and our YAML format; the shipped corpus in `data/puzzles/`), `importers.py` (the
  corpus from any source: ours, the paper's release, TurtleBench).
- §4 (the interactive environment) and §5.1 (30 questions, then the summary): `env.py`,
  `TurtleSoupEnv`, the whole protocol with the responder and judge role models it is built
  with; its spec is its docstring.
- §4.1 (the Questioner: deliberation, meta-cognition, action formulation), App. D.2
  (hyperparameters): `agents/mosaic.py`; the five genres of the meta-cognition agent in
  `agents/genres.py`; the App. E.2 prompts as data in `agents/prompts/mosaic.{en,zh}.yaml`,
  rendered by `agents/mosaic_prompts.py`.
- §4.2, App. E.1 (the Responder, "God"): `responder.py` (and its lexical stand-in),
  `responder_prompts.py`.
- §4.3 (the Memory module: Interaction History, Key Clue Records): `dialogue.py`.
- §4.4, App. D.3, App. E.3 (the Automated Evaluation Protocol, Eq. 6): `evaluation.py`,
  `evaluation_prompts.py`.
- §4.5 (the human baseline): `agents/human.py`, `forkingpaths turtlesoup play` (`cli.py`).
- §5.2 Table 2 (scores by category and language): `benchmark.py` (`aggregate`, options,
  metric specs, splits).
- §5.4 Table 3 (ablations): Mosaic's options in `agents/mosaic.py`, "w/o all agents" in
  `agents/baseline.py`, "w/o Key Clue" reaching the env through `benchmark.reset_options`.
- Offline stand-ins of the three models (questioner, responder, judge): `agents/scripted.py`,
  `responder_scripted.py`, `evaluation_scripted.py`; the responder measured on TurtleBench's
  labelled guesses: `responder.judge_accuracy` (`forkingpaths turtlesoup judge-accuracy`).
"""
