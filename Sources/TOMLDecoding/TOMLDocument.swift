import KeywardSupport
import CTOML

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A parsed TOML file: its values, where each key sits, and the name used in error messages.
///
/// Parsing goes through CTOML (toml++, TOML 1.0). Decoding into a `Decodable` model refuses keys the
/// model does not read, so a typo is an error rather than a silently ignored setting.
public struct TOMLDocument: Sendable {
    /// The file name used in errors (as given to `parse`/`load`).
    public let path: String
    /// The root table.
    public let root: TOMLValue
    /// Rendered key path → 1-based line of the key (of the element, for array elements).
    let lines: [String: Int]

    /// Parses TOML `text`; `path` only names the file in errors.
    /// - Throws: `ConfigErrors` with one syntax error (`path:line: message (column c)`), as toml++ stops at the first.
    public static func parse(text: String, path: String) throws(ConfigErrors) -> TOMLDocument {
        var utf8 = Array(text.utf8)
        let count = utf8.count
        var result = utf8.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: count) { ctoml_parse($0, count) }
            } ?? ctoml_parse(nil, 0)
        }
        defer { ctoml_result_free(&result) }
        if let error = result.error {
            let message = String(cString: error)
            let column = result.error_column > 0 ? " (column \(result.error_column))" : ""
            throw ConfigErrors(ConfigError(file: path, line: Int(result.error_line), key: "", message: "TOML syntax: " + message + column))
        }
        guard let json = result.json, let lineMap = result.line_map else {
            throw ConfigErrors(ConfigError(file: path, line: 0, key: "", message: "internal error: TOML reader returned nothing"))
        }
        let jsonBytes = UnsafeRawBufferPointer(start: json, count: result.json_length)
        let mapBytes = UnsafeRawBufferPointer(start: lineMap, count: result.line_map_length)
        do {
            let root = try CTOMLOutputReader.value(json: Array(jsonBytes))
            return TOMLDocument(path: path, root: root, lines: CTOMLOutputReader.lines(lineMap: Array(mapBytes)))
        } catch {
            throw ConfigErrors(ConfigError(file: path, line: 0, key: "", message: "internal error: unreadable TOML reader output"))
        }
    }

    /// Reads and parses the file at `filePath` (UTF-8, at most 4 MiB).
    /// - Throws: `ConfigErrors` for an unreadable or oversized file, invalid UTF-8, or a syntax error.
    public static func load(path filePath: String) throws(ConfigErrors) -> TOMLDocument {
        let text = try readTextFile(filePath)
        return try parse(text: text, path: filePath)
    }

    /// The line of `keyPath`, or of its nearest ancestor that has one; 1 for the root.
    public func line(of keyPath: TOMLKeyPath) -> Int {
        var current: TOMLKeyPath? = keyPath
        while let path = current, !path.components.isEmpty {
            if let line = lines[path.description] { return line }
            current = path.parent
        }
        return 1
    }

    /// The value at `keyPath`, or nil.
    public func value(at keyPath: TOMLKeyPath) -> TOMLValue? {
        var current: TOMLValue? = root
        for component in keyPath.components {
            switch (component, current) {
            case (.key(let key), .some(let value)): current = value[key]
            case (.index(let index), .some(.array(let elements))): current = elements.indices.contains(index) ? elements[index] : nil
            default: return nil
            }
        }
        return current
    }

    /// An error located at `keyPath` (its line, or the nearest enclosing table's when the key is missing).
    public func error(_ message: String, at keyPath: TOMLKeyPath) -> ConfigError {
        ConfigError(file: path, line: line(of: keyPath), key: keyPath.description, message: message)
    }

    /// Decodes the whole document into `T`, refusing keys `T` does not read.
    /// - Throws: `ConfigErrors` with every type mismatch, missing required key, out-of-range number
    ///   and unknown key found in one pass.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws(ConfigErrors) -> T {
        let outcome = decodeCollectingErrors(type)
        guard let value = outcome.value, outcome.errors.isEmpty else { throw ConfigErrors(outcome.errors) }
        return value
    }

    /// Decodes like `decode`, returning the problems instead of throwing.
    ///
    /// `value` is non-nil when the only problems are unknown keys: the model is then sound, so a
    /// caller can go on to validate its meaning and report those errors in the same pass.
    public func decodeCollectingErrors<T: Decodable>(_ type: T.Type = T.self) -> (value: T?, errors: [ConfigError]) {
        let session = TOMLDecodingSession(document: self)
        let decoder = TOMLValueDecoder(session: session, value: root, path: .root)
        var value: T?
        do {
            value = try T(from: decoder)
        } catch {
            session.record(thrown: error)
        }
        let typeErrors = session.errors
        if value != nil, typeErrors.isEmpty == false { value = nil }
        var errors = typeErrors
        // Unknown keys are only known once every table the model reads has been read.
        if !session.aborted { errors += session.unknownKeyErrors() }
        return (value, errors)
    }
}

/// Reads a whole UTF-8 text file with the C library (no Foundation), bounded to 4 MiB. Anything
/// but a regular file (a named pipe, a directory, a device) is refused before it is read, so a
/// FIFO given as the configuration fails at once instead of blocking start-up.
func readTextFile(_ filePath: String) throws(ConfigErrors) -> String {
    let bytes: [UInt8]
    do { bytes = try RegularFile.read(filePath, limit: 4 << 20) } catch {
        throw ConfigErrors(ConfigError(file: filePath, line: 0, key: "", message: error.description))
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw ConfigErrors(ConfigError(file: filePath, line: 0, key: "", message: "not valid UTF-8"))
    }
    return text
}
