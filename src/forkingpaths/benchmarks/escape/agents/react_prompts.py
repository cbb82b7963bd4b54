"""Prompts of the Base and Self-Refine agents: Prompt 1 (system) and Prompt 9 (feasibility check).

Each carries the information, rules and output format of the paper's figure (App. F, Figures 6
and 14) in our own words. Prompt 2 and 3 (the user turn) live in `..observation`.

The example actions of Prompt 1 name objects that occur in no shipped scenario (and none of the
paper's own examples): an example must show the grammar without hinting at a solution.
`tests/benchmarks/escape/test_agent_prompts.py` checks every example of every agent prompt
against all scene, item, tool and move names of the shipped scenarios.
"""

from __future__ import annotations

from string import Template

EXAMPLE_ACTIONS: tuple[str, ...] = (
    "click(grandfather clock)",
    "click(tuning fork)",
    "apply(tuning fork, crystal chandelier)",
    "craft(kite frame, ribbon spool)",
    "input(6153, cipher wheel)",
    "move(observatory)",
)
"""Prompt 1's well-formed actions, one per line in the prompt (one of each kind, two clicks as
in the paper's figure: an item examined and a tool picked up)."""

# Prompt 1: the system prompt shared by Base, Self-Refine, EscapeAgent and ReDNA's base policy.
# Rule 1 and the silent check name Tools in Bag besides Possible Actions (the paper's Prompt 1
# names Possible Actions only): our observation lists bag tools in their own block, not under
# Possible Actions, so without it rule 1 would forbid every apply and craft; Prompts 9 and 10
# name both blocks too.
SYSTEM_TEMPLATE = Template(
    """You act inside a simulated, text-only environment. Your job is to reach the functional \
goal the scenario sets (for instance: make a system safe again, fix a broken device, get \
something running).
IMPORTANT: The goal may be reachable by MORE THAN ONE route. Vary your approach and, where you \
can, look for other ways of reaching it.

You deal with three kinds of interactive things:
- items: objects in the CURRENT SCENE that you can interact with
- tools: tools you have already picked up, kept IN YOUR BAG
- scenes: neighbouring scenes you can go to

Each step you perform exactly ONE of these actions:
- click(<interactable item or visible tool>): inspect an item in the current scene, or pick up a \
tool lying in the current scene and put it into your bag.
- apply(<tool in your bag>, <interactable item in the current scene>): use one of your bag tools \
on an ITEM in the current scene.
- input(string, <interactable item in the current scene>): type or enter a string into an item \
in the current scene.
- move(<interactable scene>): go to a neighbouring scene.
- craft(<base tool in your bag>, <ingredient tool in your bag>): work one bag tool into another \
to change or improve it. Argument order decides the roles: the tool named first is the one that \
gets modified, the tool named second is worked into it, so craft(a, b) and craft(b, a) are \
different actions.

Examples of well-formed actions:
$examples

RULES YOU MUST FOLLOW:
1) Write ONLY names listed under Possible Actions or under Tools in Bag.
2) A tool lying in the scene is NOT yours yet: clicking it moves it into your bag, and only then \
can you apply it or craft with it.
3) craft combines ONLY TWO TOOLS that are both already in your bag; the one named first is \
modified, the one named second is worked into it.
4) The target of apply (its second argument) must be an INTERACTABLE ITEM OF THE CURRENT SCENE, \
one of those under Possible Actions. Tool-on-tool work goes through craft(), never apply().
5) Before an apply or a craft, make sure every tool it names is already in your bag and that an \
apply aims at an item, not at a tool.
6) After a failure, do not go straight back to the idea that just failed: pick another target, \
fetch the tools you are missing, go somewhere else, or change HOW you are trying to bring the \
effect about.
7) Prefer steps that widen what you can do later: visit scenes, examine items you have not \
clicked yet, pick up tools that seem useful, and base your applies and crafts on what you have \
observed.
8) The goal may have several solutions, so do not take it for granted that only one next step is \
right.
9) A craft that has SUCCEEDED is finished: its ingredient is gone, so neither that craft nor the \
same pair in reverse order is worth another try.

AVOIDING LOOPS:
- Never send again, unchanged, an action that has already failed once.
- Never aim apply() at a tool, whether it is in your bag or lying in the scene: combining tools \
is what craft() is for.
- Do not issue a successful craft a second time.
- When repetition brings no progress, leave for another scene or switch strategy.

Check silently before each action:
- Does my target appear among this scene's items?
- Is every tool the action names already in my bag?
- If it is an apply: is its second argument one of the scene's listed items?
- If it is a craft: did this very combination already succeed earlier?
- Is this exact action already in my history as a failure?

Answer in two lines:
Thought: ...
Action: ..."""
)

# Prompt 9: appended to the Base user turn by the Self-Refine agent (App. D.2).
SELF_REFINE_TEMPLATE = Template(
    """FEASIBILITY SELF-CHECK

Test the action you have in mind against these points, silently, before you write it down:
- Would it work physically, given the objects involved?
- Are all its names taken from Possible Actions or Tools in Bag?
- Does it follow the action grammar exactly?
- apply: is the first argument a tool you already carry, and the second an item of this scene?
- craft: are both arguments tools you already carry?
- move: is the argument one of the valid scene names listed?
- Does it bring you closer to the objective in a believable way?
- Does it avoid redoing something the history shows has already failed?

If the action fails a point or is only weakly supported, replace it before answering.
Keep the checks to yourself and output only the action that passed them:

Thought: ...
Action: ..."""
)

RESPONSE_SLOT = "Your Response:"
"""The line that closes Prompt 2; a suffix appended to the user turn goes before it."""


def render_system() -> str:
    """Prompt 1."""
    return SYSTEM_TEMPLATE.substitute(examples="\n".join(EXAMPLE_ACTIONS))


def render_self_refine() -> str:
    """Prompt 9."""
    return SELF_REFINE_TEMPLATE.substitute()
