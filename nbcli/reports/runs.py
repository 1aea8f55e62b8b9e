"""Reports of the commands that produce models or files: fit and batch predict."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TrainingReport:
    """What ``nbcli fit`` tells the user (rendered as a table, or JSON)."""

    model_type: str
    hyperparameters: dict
    data: str
    target: str | None
    n_samples: int
    feature_names: list
    classes: list
    class_counts: list
    priors: list
    seconds: float
    training_accuracy: float | None
    n_chunks: int
    output: str | None = None
    notes: list = field(default_factory=list)
    #: Input files with the SHA-256 of their bytes, ``{"data": {"path", "sha256"}, ...}``;
    #: filled in only when the JSON form is asked for (hashing reads the files again).
    inputs: dict | None = None
    #: The reading options as given: chunk_size, config, delimiter, target, features, drop.
    settings: dict = field(default_factory=dict)

    schema = "nbcli.training"
    schema_version = 1

    def to_dict(self) -> dict:
        from nbcli import __version__

        return {
            "schema": self.schema,
            "schema_version": self.schema_version,
            "nbcli_version": __version__,
            "inputs": self.inputs if self.inputs is not None else {"data": {"path": self.data}},
            "settings": self.settings,
            "model": self.model_type,
            "hyperparameters": self.hyperparameters,
            "output": self.output,
            "target": self.target,
            "n_samples": self.n_samples,
            "n_features": len(self.feature_names),
            "feature_names": self.feature_names,
            "classes": [
                {"label": c, "count": n, "prior": p}
                for c, n, p in zip(self.classes, self.class_counts, self.priors)
            ],
            "seconds": self.seconds,
            "training_accuracy": self.training_accuracy,
            "n_chunks": self.n_chunks,
        }


@dataclass
class BatchReport:
    """Outcome of scoring several files: one row per input."""

    rows: list = field(default_factory=list)  # (input, output, n_rows, error or None)
    # Failed inputs whose output from an earlier run is still there (not in the JSON form).
    stale: list = field(default_factory=list)
    inputs: dict | None = None  # the model file (hashed) and the inputs' paths
    settings: dict | None = None

    schema = "nbcli.batch"
    schema_version = 1

    @property
    def n_failed(self) -> int:
        return sum(1 for r in self.rows if r[3] is not None)

    def to_dict(self) -> dict:
        from nbcli import __version__

        return {
            "schema": self.schema,
            "schema_version": self.schema_version,
            "nbcli_version": __version__,
            "inputs": self.inputs
            if self.inputs is not None
            else {"data": {"parts": [r[0] for r in self.rows]}},
            "settings": self.settings,
            "n_files": len(self.rows),
            "n_failed": self.n_failed,
            "files": [
                {"input": i, "output": None if e else o, "rows": None if e else n, "error": e}
                for i, o, n, e in self.rows
            ],
        }
