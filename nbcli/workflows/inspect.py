"""``nbcli inspect``: read a model file and describe it."""

from __future__ import annotations

from nbcli.io.modelfile import load_model
from nbcli.io.sources import file_sha256
from nbcli.reports.model import MIN_DF, ModelReport, build_model_report


def inspect_model(
    path, *, top: int = 10, min_df: float = MIN_DF, min_count: float | None = None
) -> ModelReport:
    """The :class:`~nbcli.reports.model.ModelReport` of the model file at ``path``.

    Parameters
    ----------
    path : str or path-like
        A model file of any format version nbcli reads (1 or 2).
    top : int
        Features listed per class (naive Bayes) or per direction (LDA), columns
        and categories per column whose parameters are shown; at least 1.
    min_df : int or float
        Least document frequency (training documents holding it, over the
        classes) of a feature a model with counts lists as indicative (words
        found in a few documents are left out): a count, or a fraction in
        (0, 1) of the training rows. Occurrences for a model file that
        stores no document frequencies.
    min_count : int or float, optional
        The former name of ``min_df``; given, it is used instead.

    Raises
    ------
    NbcliError
        When the file cannot be read or is not a valid model file.
    ValueError
        For ``top`` < 1 or an invalid ``min_count``.

    Examples
    --------
    >>> from nbcli.io.modelfile import save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.inspect import inspect_model
    >>> from nbcli.workflows.train import train
    >>> save_model(train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv")).model_file, "iris.npz")
    >>> report = inspect_model("iris.npz", top=2)
    >>> report.to_dict()["schema"], report.to_dict()["model"]
    ('nbcli.model', 'gaussian')
    """
    mf = load_model(path)
    floor = min_df if min_count is None else min_count
    return build_model_report(
        mf, path=str(path), sha256=file_sha256(path), top=top, min_count=floor
    )
