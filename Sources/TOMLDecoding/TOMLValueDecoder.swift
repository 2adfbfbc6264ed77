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
