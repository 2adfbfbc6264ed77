// Upstream: see DESIGN.md §4.
