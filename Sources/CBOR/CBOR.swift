// CBOR: see DESIGN.md §4.
