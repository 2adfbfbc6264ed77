// AppAttest: see DESIGN.md §4.
