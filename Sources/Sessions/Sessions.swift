// Sessions: see DESIGN.md §4.
