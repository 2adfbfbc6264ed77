/// A `Decoder` over `TOMLValue` that records problems instead of stopping at the first.
///
/// A type mismatch, a missing required key or an out-of-range integer is recorded in the session with
/// its key path, and decoding continues with a placeholder (zero, "", false, an empty container) so
/// one pass finds every problem. Any recorded problem fails the whole decode, so placeholders never
/// reach a caller. Every key read is marked, so the session can report the keys nobody read.
struct TOMLValueDecoder: Decoder {
    let session: TOMLDecodingSession
    /// nil: the value is absent (or its container had the wrong type); read as placeholders, silently.
    let value: TOMLValue?
    let path: TOMLKeyPath

    var codingPath: [any CodingKey] { path.codingKeys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch value {
        case .table(let entries)?:
            session.markOpened(path, knownKeys: knownKeyNames(type))
            return KeyedDecodingContainer(TOMLKeyedContainer<Key>(session: session, entries: entries, path: path, isPlaceholder: false))
        case let other?:
            session.typeMismatch(expected: "a table", found: other, at: path)
            fallthrough
        case nil:
            return KeyedDecodingContainer(TOMLKeyedContainer<Key>(session: session, entries: [], path: path, isPlaceholder: true))
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(let elements)?:
            return TOMLUnkeyedContainer(session: session, elements: elements, path: path)
        case let other?:
            session.typeMismatch(expected: "an array", found: other, at: path)
            fallthrough
        case nil:
            return TOMLUnkeyedContainer(session: session, elements: [], path: path)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TOMLSingleValueContainer(session: session, value: value, path: path)
    }
}

/// The names of `Key`'s cases when it is `CaseIterable` (for "did you mean" hints), else none.
private func knownKeyNames<Key: CodingKey>(_ type: Key.Type) -> [String] {
    guard let iterable = type as? any CaseIterable.Type else { return [] }
    return caseNames(iterable)
}

private func caseNames<C: CaseIterable>(_ type: C.Type) -> [String] {
    type.allCases.compactMap { ($0 as? any CodingKey)?.stringValue }
}

extension TOMLKeyPath {
    var codingKeys: [any CodingKey] {
        components.map { component -> any CodingKey in
            switch component {
            case .key(let key): return TOMLCodingKey(stringValue: key)
            case .index(let index): return TOMLCodingKey(intValue: index)
            }
        }
    }
}

extension TOMLDecodingSession {
    /// Decodes `type` from `value` at `path`: primitives here (recording mismatches), anything else
    /// through its own `init(from:)`.
    func decode<T: Decodable>(_ type: T.Type, from value: TOMLValue?, at path: TOMLKeyPath) throws -> T {
        if let primitive = primitive(type, from: value, at: path) { return primitive }
        return try T(from: TOMLValueDecoder(session: self, value: value, path: path))
    }

    /// The value for a primitive `type` (placeholder on absence or mismatch), or nil if `type` is not primitive.
    private func primitive<T>(_ type: T.Type, from value: TOMLValue?, at path: TOMLKeyPath) -> T? {
        switch type {
        case is String.Type: return string(value, at: path) as? T
        case is Bool.Type: return boolean(value, at: path) as? T
        case is Double.Type: return double(value, at: path) as? T
        case is Float.Type: return Float(double(value, at: path)) as? T
        case is Int.Type: return integer(Int.self, value, at: path) as? T
        case is Int8.Type: return integer(Int8.self, value, at: path) as? T
        case is Int16.Type: return integer(Int16.self, value, at: path) as? T
        case is Int32.Type: return integer(Int32.self, value, at: path) as? T
        case is Int64.Type: return integer(Int64.self, value, at: path) as? T
        case is UInt.Type: return integer(UInt.self, value, at: path) as? T
        case is UInt8.Type: return integer(UInt8.self, value, at: path) as? T
        case is UInt16.Type: return integer(UInt16.self, value, at: path) as? T
        case is UInt32.Type: return integer(UInt32.self, value, at: path) as? T
        case is UInt64.Type: return integer(UInt64.self, value, at: path) as? T
        default: return nil
        }
    }

    func string(_ value: TOMLValue?, at path: TOMLKeyPath) -> String {
        guard let value else { return "" }
        if case .string(let text) = value { return text }
        typeMismatch(expected: "a string", found: value, at: path)
        return ""
    }

    func boolean(_ value: TOMLValue?, at path: TOMLKeyPath) -> Bool {
        guard let value else { return false }
        if case .boolean(let flag) = value { return flag }
        typeMismatch(expected: "a boolean (true or false)", found: value, at: path)
        return false
    }

    func double(_ value: TOMLValue?, at path: TOMLKeyPath) -> Double {
        switch value {
        case nil: return 0
        case .float(let number)?: return number
        case .integer(let number)?: return Double(number)
        case let other?:
            typeMismatch(expected: "a number", found: other, at: path)
            return 0
        }
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type, _ value: TOMLValue?, at path: TOMLKeyPath) -> I {
        guard let value else { return 0 }
        guard case .integer(let number) = value else {
            typeMismatch(expected: "an integer", found: value, at: path)
            return 0
        }
        guard let exact = I(exactly: number) else {
            record("\(number) is out of range (\(I.min)...\(I.max))", at: path)
            return 0
        }
        return exact
    }
}

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
