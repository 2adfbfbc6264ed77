/// A TOML array as an unkeyed container; element paths are `array[i]`.
struct TOMLUnkeyedContainer: UnkeyedDecodingContainer {
    let session: TOMLDecodingSession
    let elements: [TOMLValue]
    let path: TOMLKeyPath
    private(set) var currentIndex = 0

    init(session: TOMLDecodingSession, elements: [TOMLValue], path: TOMLKeyPath) {
        self.session = session
        self.elements = elements
        self.path = path
    }

    var codingPath: [any CodingKey] { path.codingKeys }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// TOML arrays hold no nulls.
    mutating func decodeNil() throws -> Bool { false }

    private mutating func next() throws -> (TOMLValue, TOMLKeyPath) {
        guard currentIndex < elements.count else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "array has too few elements"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], path.appending(index: currentIndex))
    }

    private mutating func decodeAny<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, elementPath) = try next()
        return try session.decode(type, from: value, at: elementPath)
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeAny(type) }
    mutating func decode(_ type: String.Type) throws -> String { try decodeAny(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodeAny(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeAny(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeAny(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeAny(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeAny(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeAny(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeAny(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeAny(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeAny(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeAny(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeAny(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeAny(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeAny(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, elementPath) = try next()
        return try TOMLValueDecoder(session: session, value: value, path: elementPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, elementPath) = try next()
        return try TOMLValueDecoder(session: session, value: value, path: elementPath).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, elementPath) = try next()
        return TOMLValueDecoder(session: session, value: value, path: elementPath)
    }
}
