"""The benchmarks, one package per paper."""
