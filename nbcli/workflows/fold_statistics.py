"""The per-fold statistics of a data file, and the fold models and scores they give.

:class:`FoldStatistics` is what :func:`nbcli.workflows.folds.collect_fold_statistics`
returns: every fold's sufficient statistics, the fold plan, and the rows
(kept in memory, or the way to read them again). It turns the statistics into
fold models with any hyperparameters (merges, never refits) and scores the
out-of-fold rows.
"""

from __future__ import annotations

import contextlib
import warnings as python_warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nbcli.errors import NbcliError


@dataclass
class FoldStatistics:
    """Per-fold sufficient statistics of one data file, and the way back to its rows.

    Attributes
    ----------
    estimator : BayesClassifier
        Unfitted template: its type and hyperparameters make the fold models.
    classes : ndarray of shape (n_classes,)
        Sorted class labels (typed as ``nbcli fit`` types them).
    codes : ndarray of int, shape (n_samples,)
        Class index of every row.
    labels : ndarray of shape (n_samples,)
        Class label of every row (``classes[codes]``).
    folds : ndarray of int, shape (n_repeats, n_samples)
        Fold number of every row in every repeat.
    fold_values : ndarray of shape (n_folds,)
        Name of each fold number (its value in the fold column, or the number).
    stats : list of list
        ``stats[r][f]``: statistics of the rows of fold ``f`` in repeat ``r``
        (None for an empty fold).
    feature_names : list of str
    target : str or None
    plan : dict
        What the report's ``plan`` says (method, folds, repeats, seed, columns, passes).
    training : dict
        ``n_samples``, ``class_counts``, fingerprint and data path, for a model file.
    warnings : list of str
        What reading the table said (rows skipped without a label, column plan).
    """

    estimator: Any
    classes: np.ndarray
    codes: np.ndarray
    labels: np.ndarray
    folds: np.ndarray
    fold_values: np.ndarray
    stats: list
    feature_names: list
    target: str | None
    plan: dict
    training: dict
    path: str = ""
    warnings: list = field(default_factory=list)
    _chunks: list | None = None
    _stream: Any = None
    _layouts: list | None = None
    _widths: Any = None
    _row_filter: Any = None
    _merged: dict = field(default_factory=dict)
    #: Warnings the models gave when built, each with the folds that gave it.
    _model_warnings: dict = field(default_factory=dict)

    @property
    def n_repeats(self) -> int:
        return int(self.folds.shape[0])

    @property
    def n_folds(self) -> int:
        return int(self.fold_values.size)

    def rows(self):
        """``(first row, X)`` of every chunk, from memory or from the file again.

        Chunks kept in memory are in :meth:`hold_by_fold`'s order when it ran.
        """
        if self._chunks is not None:
            start = 0
            for X in self._chunks:
                yield start, X
                start += X.shape[0]
            return
        self.plan["passes"] += 1
        start = 0
        skip = self._row_filter() if self._row_filter is not None else None
        for ds in self._stream:
            if skip is not None:
                ds = skip(ds)
            yield start, self.estimator.validated_rows(ds.X)
            start += ds.X.shape[0]

    def hold_by_fold(self) -> None:
        """Reorder the chunks kept in memory so that the rows of each fold (of
        the first repeat) are together, in file order within the fold.

        Every later pass then takes a fold's rows of a chunk as one slice
        instead of gathering them (gathering rows of the column-major arrays
        the reader gives is several times slower), once per pass and not once
        per hyperparameter set. A column-major chunk is reordered in place,
        a column at a time, so no second copy of the data is made: fresh
        memory costs more than the copying here.
        """
        if self._chunks is None or self._layouts is not None:
            return
        # Small unsigned fold numbers let the stable sort be a radix sort.
        small = np.min_scalar_type(max(0, self.n_folds - 1))
        layouts: list = []
        start = 0
        for i, X in enumerate(self._chunks):
            stop = start + X.shape[0]
            folds = self.folds[0, start:stop]
            start = stop
            if not isinstance(X, np.ndarray) or X.ndim != 2:
                layouts.append(None)  # sparse rows stay as they are
                continue
            order = np.argsort(folds.astype(small), kind="stable")
            bounds = np.searchsorted(folds[order], np.arange(self.n_folds + 1))
            if X.flags.f_contiguous and X.flags.writeable:
                column = np.empty(X.shape[0], dtype=X.dtype)
                for j in range(X.shape[1]):
                    np.take(X[:, j], order, out=column)
                    X[:, j] = column
            else:
                self._chunks[i] = X[order]
            layouts.append((order, bounds))
        self._layouts = layouts

    def fold_pieces(self):
        """Yield ``(repeat, fold, rows, X)``: every chunk's rows of every fold of
        every repeat, reading the file once (again) if it is not kept.

        ``rows`` are the fold's row numbers in the chunk's part of the file,
        increasing; ``X`` their validated feature values, in that order.
        """
        layouts = self._layouts if self._chunks is not None else None
        for i, (start, X) in enumerate(self.rows()):
            layout = layouts[i] if layouts is not None else None
            if layout is None:
                file_rows = np.arange(start, start + X.shape[0])
            else:
                order, bounds = layout
                file_rows = start + order
            for r in range(self.n_repeats):
                chunk_folds = self.folds[r, file_rows]
                if r == 0 and layout is not None:
                    for f in range(self.n_folds):
                        lo, hi = bounds[f], bounds[f + 1]
                        if hi > lo:
                            # Row-major, as a gather would give the rows: the
                            # same scores to the last bit.
                            yield r, f, file_rows[lo:hi], np.ascontiguousarray(X[lo:hi])
                    continue
                for f in np.unique(chunk_folds).tolist():
                    at = np.flatnonzero(chunk_folds == f)
                    if layout is not None:
                        # Back to file order within the fold.
                        at = at[np.argsort(order[at], kind="stable")]
                    yield r, f, file_rows[at], X[at]

    def merged(self, repeat: int, leave_out: int | None = None):
        """Statistics of all folds of ``repeat`` but ``leave_out`` (None: all rows).

        Merged once and kept: every hyperparameter set's model of the fold
        starts from the same sums; each call returns its own copy.
        """
        key = (repeat, leave_out)
        total = self._merged.get(key)
        if total is None:
            for f, s in enumerate(self.stats[repeat]):
                if f == leave_out or s is None:
                    continue
                total = s.copy() if total is None else total.merge(s)
            self._merged[key] = total
        return None if total is None else total.copy()

    def model(self, params: dict, repeat: int = 0, leave_out: int | None = None):
        """The fitted model of fold ``leave_out`` (None: of all rows) with ``params``.

        Raises
        ------
        NbcliError
            When no model follows from the statistics with these values.
        """
        est = self.estimator
        given = {**est.get_params(), **params}
        widths = self.category_widths()
        if widths is not None:
            own = given.get("min_categories")
            if own is not None:
                widths = np.maximum(widths, np.broadcast_to(np.asarray(own), widths.shape))
            given["min_categories"] = widths
        where = "all rows" if leave_out is None else f"fold {self._name(leave_out)}"
        try:
            # What a model says when built (LDA's collinear directions) is
            # collected for the report, not printed as a Python warning.
            with (
                np.errstate(over="ignore", invalid="ignore"),
                python_warnings.catch_warnings(record=True) as caught,
            ):
                python_warnings.simplefilter("always")
                model = type(est).from_stats(
                    self.merged(repeat, leave_out),
                    self.classes.copy(),
                    given,
                    len(self.feature_names),
                )
        except ValueError as exc:
            raise NbcliError(f"{self.path}: {where}: {exc}") from None
        for w in caught:
            seen = self._model_warnings.setdefault(str(w.message), [])
            if where not in seen:
                seen.append(where)
        return model

    def model_warnings(self) -> list[str]:
        """The warnings the models built so far gave, one line per message,
        naming the columns and the folds (or all rows) whose model gave it."""
        from nbcli.workflows.train import _named

        lines = []
        for message, where in self._model_warnings.items():
            folds = [w.removeprefix("fold ") for w in where if w.startswith("fold ")]
            places = [w for w in where if not w.startswith("fold ")]
            if folds:
                places.insert(0, ("folds " if len(folds) > 1 else "fold ") + ", ".join(folds))
            named = _named(message, self.feature_names)
            lines.append(f"{self.path}: {'; '.join(places)}: {named}")
        return lines

    def model_file(self, params: dict, search: dict | None = None):
        """The model of all rows with ``params`` as a :class:`~nbcli.io.modelfile.ModelFile`,
        with the search summary ``search`` (``nbcli tune -o``).

        Raises
        ------
        NbcliError
            As :meth:`model`.
        """
        from nbcli.io.modelfile import ModelFile

        return ModelFile(
            model=self.model(params),
            feature_names=list(self.feature_names),
            target=self.target,
            training=dict(self.training),
            search=search,
        )

    def category_widths(self) -> np.ndarray | None:
        """Categories of each feature in the whole data set, shape (n_features,)
        (0 for a feature that is not categorical); None for a model without
        categories.

        A fold model takes them as its ``min_categories``: it has the
        categories one fit on all rows has, so an out-of-fold row never
        carries a category its model cannot score.
        """
        if self._widths is None:
            if "min_categories" not in self.estimator.get_params():
                return None
            total = self.merged(0)
            k = np.asarray(getattr(total, "n_categories", ()), dtype=np.int64)
            d = len(self.feature_names)
            if k.size != d:
                # The mixed model counts categories of its categorical columns only.
                full = np.zeros(d, dtype=np.int64)
                types = self.estimator.get_params().get("column_types") or []
                full[[j for j, t in enumerate(types) if t == "categorical"]] = k
                k = full
            self._widths = k
        return self._widths

    def fold_only_categories(self, categories: dict | None = None) -> list[str]:
        """Warnings naming, per fold, the categories that only its own rows hold.

        Fold models know every category of the data (:meth:`category_widths`),
        so such a category is scored as ``nbcli fit --min-categories`` with
        the data's widths would score it: a zero count, smoothed. ``fit`` on
        the other folds alone, then ``predict``, would refuse it (``--unseen
        error``) or leave it out (``--unseen ignore``), and give the column's
        other categories a little more weight; the warning says so.
        ``categories`` maps a column name to its categories in code order
        (text categories), for naming them.
        """
        from nbcli.models._table_stats import grow_categories

        widths = self.category_widths()
        if widths is None:
            return []
        columns = [j for j in range(len(widths)) if widths[j] > 0]
        starts = np.concatenate(([0], np.cumsum(widths[columns])))
        out = []
        for f in range(self.n_folds):
            train = self.merged(0, f)
            if train is None:
                continue
            counts = grow_categories(train.category_count, train.n_categories, widths[columns])
            seen = counts.sum(axis=0) > 0
            named = []
            for q, j in enumerate(columns):
                missing = np.flatnonzero(~seen[starts[q] : starts[q + 1]])
                if missing.size == 0:
                    continue
                name = self.feature_names[j]
                values = (categories or {}).get(name)
                shown = [repr(values[c]) if values else str(c) for c in missing[:2].tolist()]
                more = f" and {missing.size - 2} more" if missing.size > 2 else ""
                named.append(f"{name} {', '.join(shown)}{more}")
            if named:
                out.append(
                    f"{self.path}: fold {self._name(f)} holds categories no other fold has "
                    f"({'; '.join(named[:3])}{'; ...' if len(named) > 3 else ''}); its model "
                    "knows every category of the file and counts them as seen zero times, "
                    "where fit on the other folds then predict would refuse them (or leave "
                    "them out with --unseen ignore)"
                )
        return out

    def _name(self, f: int) -> str:
        v = self.fold_values[f]
        return str(v.item() if isinstance(v, np.generic) else v)

    def train_counts(self) -> np.ndarray:
        """Rows each fold's model is built from, shape (n_repeats, n_folds)."""
        sizes = np.stack([np.bincount(r, minlength=self.n_folds) for r in self.folds])
        return self.codes.size - sizes

    def out_of_fold(self, param_sets: list[dict], failed: dict | None = None) -> list[np.ndarray]:
        """Out-of-fold log posteriors for every set of hyperparameters, in one pass.

        Parameters
        ----------
        param_sets : list of dict
            Hyperparameters of each set (the others are the template's).
        failed : dict, optional
            When given, a set whose fold models cannot be built (a singular
            covariance) gets NaN posteriors and ``failed[index]`` the message,
            instead of an error.

        Returns
        -------
        list of ndarray of shape (n_repeats * n_samples, n_classes)
            Entry ``p`` for ``param_sets[p]``; rows repeat after repeat, in file order.

        Raises
        ------
        NbcliError
            When a fold model cannot be built and ``failed`` is None.
        """
        with _one_blas_thread(self, param_sets):
            return self._out_of_fold(param_sets, failed)

    def _out_of_fold(self, param_sets: list[dict], failed: dict | None) -> list[np.ndarray]:
        n, k = self.codes.size, self.classes.size
        models: list = []
        for i, p in enumerate(param_sets):
            try:
                models.append(
                    [
                        [self.model(p, r, f) for f in range(self.n_folds)]
                        for r in range(self.n_repeats)
                    ]
                )
            except NbcliError as exc:
                if failed is None:
                    raise
                failed[i] = str(exc)
                models.append(None)
        live = [j for j in range(len(param_sets)) if models[j] is not None]
        # Every row is in one fold of every repeat, so a live set's rows are all written.
        out = [
            np.empty((self.n_repeats * n, k))
            if m is not None
            else np.full((self.n_repeats * n, k), np.nan)
            for m in models
        ]
        if not live:
            return out
        self.hold_by_fold()
        for r, f, rows, X in self.fold_pieces():
            at = r * n + rows
            for j in live:
                out[j][at] = models[j][r][f].predict_log_proba(X)
        return out


@contextlib.contextmanager
def _one_blas_thread(fs: FoldStatistics, param_sets: list[dict]):
    """A context in which every BLAS library the fold models use runs on one thread.

    Building a fold model is work on matrices of n_features squared at most,
    and a fold's rows are scored in blocks of a few thousand rows (on
    several threads of their own when there are enough blocks): there,
    waking BLAS threads costs more than it saves. On one thread QDA's fold
    models build 20 to 50 times faster and its folds score about twice as
    fast; the results are the same. The limit is set again once a first
    model is built, so that the libraries that loads (SciPy's BLAS for QDA)
    are limited too.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        if param_sets:
            try:
                fs.model(param_sets[0], 0, 0)
            except NbcliError:
                pass  # refused again, and reported, below
        with threadpool_limits(limits=1, user_api="blas"):
            yield
