// KeywardCrypto: see DESIGN.md §4.
