"""Regenerate ``expected.npz``: posteriors of the v1 model files in this folder.

The model files were written by nbcli 0.1.0 (before format version 2) with model-file format version 1
(``nbcli fit`` / ``nbcli calibrate`` on ``sample_data``); the posteriors were
computed by the same code, so a later nbcli that loads these files must give
the same numbers. Run from the repository root: python tests/data/v1/expected.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

from nbcli.io.modelfile import load_model

HERE = Path(__file__).parent
DATA = {"iris": "sample_data/iris_test.csv", "wine": "sample_data/wine_test.csv"}

out = {}
for path in sorted(HERE.glob("*.npz")):
    if path.name == "expected.npz":
        continue
    mf = load_model(path)
    (name,) = [part for part in path.stem.split("_") if part in DATA]
    frame = pd.read_csv(DATA[name])
    X = frame[mf.feature_names].to_numpy(dtype=np.float64)
    out[path.stem] = mf.predict_proba(X)
np.savez(HERE / "expected.npz", **out)
