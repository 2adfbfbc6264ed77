// Store: see DESIGN.md §4.
