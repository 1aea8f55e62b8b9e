"""scikit-learn's own test files for naive Bayes and discriminant analysis, run on nbcli (see run.py)."""
