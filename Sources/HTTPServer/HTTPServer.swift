// HTTPServer: see DESIGN.md §4.
