"""Contracts every benchmark and agent speaks; no benchmark code lives here.

The env contract (`Env`, `Observation`, `Step`, the wrappers), the one episode loop
(`play_episode`), agents (`Agent`, `Decision`), benchmarks (`Benchmark`, `Instance`, `AgentSpec`,
`MetricSpec`), the chat-model contract (`ChatModel`, `Message`, `ModelParams`, `Completion`), the
records written to a run directory, and the exception hierarchy.
"""

from forkingpaths.core.agent import Agent, Decision, require_model
from forkingpaths.core.benchmark import (
    AgentSpec,
    Benchmark,
    Instance,
    MetricSpec,
    NoOptions,
    PlotArtifact,
    QuickConfig,
    RecordReader,
    ScoredEpisode,
    check_options,
)
from forkingpaths.core.chat import (
    ChatModel,
    ChatRequest,
    Completion,
    Message,
    ModelParams,
    ScriptedPolicy,
    Usage,
)
from forkingpaths.core.env import (
    Env,
    FormatObservation,
    Observation,
    OrderEnforcing,
    Step,
    TurnLimit,
    Wrapper,
)
from forkingpaths.core.errors import (
    BudgetExhausted,
    ConfigError,
    ContextLengthExceeded,
    ForkingPathsError,
    InvalidFile,
    MissingAPIKey,
    ModelError,
    NameNotFound,
    ResetNeeded,
    SpecMismatch,
)
from forkingpaths.core.protocol import StepHook, play_episode
from forkingpaths.core.records import (
    EpisodeRecord,
    ModelCallRecord,
    ModelOptions,
    RoleModel,
    RunHeader,
    RunOptions,
    RunSpec,
    StepRecord,
)

__all__ = [
    "Agent",
    "AgentSpec",
    "Benchmark",
    "BudgetExhausted",
    "ChatModel",
    "ChatRequest",
    "Completion",
    "ConfigError",
    "ContextLengthExceeded",
    "Decision",
    "Env",
    "EpisodeRecord",
    "ForkingPathsError",
    "FormatObservation",
    "Instance",
    "InvalidFile",
    "Message",
    "MetricSpec",
    "MissingAPIKey",
    "ModelCallRecord",
    "ModelError",
    "ModelOptions",
    "ModelParams",
    "NameNotFound",
    "NoOptions",
    "Observation",
    "OrderEnforcing",
    "PlotArtifact",
    "QuickConfig",
    "RecordReader",
    "ResetNeeded",
    "RoleModel",
    "RunHeader",
    "RunOptions",
    "RunSpec",
    "ScoredEpisode",
    "ScriptedPolicy",
    "SpecMismatch",
    "Step",
    "StepHook",
    "StepRecord",
    "TurnLimit",
    "Usage",
    "Wrapper",
    "check_options",
    "play_episode",
    "require_model",
]
