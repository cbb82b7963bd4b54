"""TurtleSoup-Bench: imaginative reasoning as yes/no questioning about situation puzzles.

Paper: "What to Ask Next? Probing the Imaginative Reasoning of LLMs with TurtleSoup Puzzles"
(TurtleSoup-Bench and the Mosaic-Agent; text in `turtlesoup.txt`). The contract between the
parts is `docs/dev/turtlesoup.md`. Where each part lives:

- `puzzles.py`, `importers.py`: the puzzle corpus, its six categories and Key Clue Libraries,
  and the importers of the paper's release and TurtleBench (§3, App. A); the shipped puzzles
  are in `data/puzzles/`.
- `responder.py`: the responder that answers Yes/No/Unknown and flags key clues (§4.2, App. E.1).
- `agents/`: the baseline questioner and the Mosaic-Agent with its deliberation, metacognition
  and pruning modules (§4.1, §4.3, App. E.2).
- `evaluation.py`: logic accuracy, detail fidelity, conclusion match and the overall score
  (§4.4, App. D.3, App. E.3).
- `benchmark.py`: the dialogue protocol, splits and aggregate tables (§5).
"""
