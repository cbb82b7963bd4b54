"""Where `core/registry.py` still finds `scripted/eeb-expver`; the policy is `expver.scripted`."""

from __future__ import annotations

from forkingpaths.benchmarks.eeb.expver.scripted import ExpVerScriptedPolicy

__all__ = ["ExpVerScriptedPolicy"]
