// `keyward-bench`: release benchmarks.
print("keyward-bench: not yet implemented")
