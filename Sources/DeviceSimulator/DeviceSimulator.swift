// DeviceSimulator: see DESIGN.md §4.
