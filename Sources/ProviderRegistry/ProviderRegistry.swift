// ProviderRegistry: see DESIGN.md §4.
