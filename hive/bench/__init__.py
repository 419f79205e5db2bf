"""The benchmarks of DESIGN 9: each reports ratios measured side by side in one run."""
