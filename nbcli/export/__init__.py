"""Models written out for other runtimes (ONNX graphs)."""
