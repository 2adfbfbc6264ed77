// PlayIntegrity: see DESIGN.md §4.
