/// A TOML table as a keyed container: marks each key read, records missing required keys.
struct TOMLKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let session: TOMLDecodingSession
    let entries: [TOMLEntry]
    let path: TOMLKeyPath
    /// True for the stand-in of an absent or mistyped table: reads give placeholders without new errors.
    let isPlaceholder: Bool

    var codingPath: [any CodingKey] { path.codingKeys }
    var allKeys: [Key] { entries.compactMap { Key(stringValue: $0.key) } }

    /// The value under `key`, marking it read.
    private func lookup(_ key: Key) -> TOMLValue? {
        guard let entry = entries.first(where: { $0.key == key.stringValue }) else { return nil }
        session.markVisited(path.appending(key.stringValue))
        return entry.value
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    /// TOML has no null: a key is "nil" exactly when it is absent.
    func decodeNil(forKey key: Key) throws -> Bool { lookup(key) == nil }

    private func decodeAny<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let childPath = path.appending(key.stringValue)
        let value = lookup(key)
        if value == nil, !isPlaceholder { session.record("missing required key", at: childPath) }
        return try session.decode(type, from: value, at: childPath)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decodeAny(type, forKey: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decodeAny(type, forKey: key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decodeAny(type, forKey: key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decodeAny(type, forKey: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decodeAny(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeAny(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decodeAny(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decodeAny(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decodeAny(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeAny(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decodeAny(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decodeAny(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decodeAny(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeAny(type, forKey: key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decodeAny(type, forKey: key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try TOMLValueDecoder(session: session, value: lookup(key), path: path.appending(key.stringValue)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try TOMLValueDecoder(session: session, value: lookup(key), path: path.appending(key.stringValue)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        TOMLValueDecoder(session: session, value: isPlaceholder ? nil : .table(entries), path: path)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        TOMLValueDecoder(session: session, value: lookup(key), path: path.appending(key.stringValue))
    }
}
