/// A parsed TOML value, as CTOML hands it over (JSON shapes, TOML types kept apart).
///
/// Tables keep their entries in the order CTOML emits them (toml++ orders keys by name); source
/// lines live in `TOMLDocument`, keyed by path.
public indirect enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    /// Dates and times arrive as strings in TOML notation, so they decode as `.string`.
    case array([TOMLValue])
    case table([TOMLEntry])

    /// The value under `key` when this is a table.
    public subscript(key: String) -> TOMLValue? {
        guard case .table(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// "a string", "an integer"… for type-mismatch messages.
    public var kindDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .float: return "a float"
        case .boolean: return "a boolean"
        case .array: return "an array"
        case .table: return "a table"
        }
    }
}

/// One key/value pair of a TOML table.
public struct TOMLEntry: Sendable, Equatable {
    public let key: String
    public let value: TOMLValue

    public init(key: String, value: TOMLValue) {
        self.key = key
        self.value = value
    }
}
