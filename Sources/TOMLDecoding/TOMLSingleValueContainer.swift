/// One TOML value as a single-value container.
struct TOMLSingleValueContainer: SingleValueDecodingContainer {
    let session: TOMLDecodingSession
    let value: TOMLValue?
    let path: TOMLKeyPath

    var codingPath: [any CodingKey] { path.codingKeys }

    /// Absent reads as nil, so `Optional` placeholders stay nil.
    func decodeNil() -> Bool { value == nil }

    func decode(_ type: Bool.Type) throws -> Bool { try session.decode(type, from: value, at: path) }
    func decode(_ type: String.Type) throws -> String { try session.decode(type, from: value, at: path) }
    func decode(_ type: Double.Type) throws -> Double { try session.decode(type, from: value, at: path) }
    func decode(_ type: Float.Type) throws -> Float { try session.decode(type, from: value, at: path) }
    func decode(_ type: Int.Type) throws -> Int { try session.decode(type, from: value, at: path) }
    func decode(_ type: Int8.Type) throws -> Int8 { try session.decode(type, from: value, at: path) }
    func decode(_ type: Int16.Type) throws -> Int16 { try session.decode(type, from: value, at: path) }
    func decode(_ type: Int32.Type) throws -> Int32 { try session.decode(type, from: value, at: path) }
    func decode(_ type: Int64.Type) throws -> Int64 { try session.decode(type, from: value, at: path) }
    func decode(_ type: UInt.Type) throws -> UInt { try session.decode(type, from: value, at: path) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try session.decode(type, from: value, at: path) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try session.decode(type, from: value, at: path) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try session.decode(type, from: value, at: path) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try session.decode(type, from: value, at: path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try session.decode(type, from: value, at: path) }
}
