"""Reading data files (CSV, gzip-compressed CSV, NPZ, Parquet, stdin) into arrays."""
