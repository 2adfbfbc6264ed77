import XCTest
@testable import TOMLDecoding

private struct Server: Decodable {
    var host: String
    var port: Int
    var tags: [String]?
    var limits: Limits?

    enum CodingKeys: String, CodingKey, CaseIterable { case host, port, tags, limits }
}

private struct Limits: Decodable {
    var burst: UInt8?
    var enabled: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable { case burst, enabled }
}

private struct Painted: Decodable {
    enum Colour: String, Decodable { case red, green }
    var colour: Colour
    var name: String
}

private func errors(_ body: () throws -> Void) -> [ConfigError] {
    do {
        try body()
        XCTFail("expected configuration errors")
        return []
    } catch let error as ConfigErrors {
        return error.errors
    } catch {
        XCTFail("unexpected error \(error)")
        return []
    }
}

final class TOMLDocumentTests: XCTestCase {
    func testSyntaxErrorNamesFileLineAndColumn() {
        let found = errors { _ = try TOMLDocument.parse(text: "a = 1\nb = = 2\n", path: "x.toml") }
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.file, "x.toml")
        XCTAssertEqual(found.first?.line, 2)
        XCTAssertTrue(found.first?.description.hasPrefix("x.toml:2: TOML syntax: ") == true, found.first?.description ?? "")
        XCTAssertTrue(found.first?.message.contains("column") == true)
    }

    func testDuplicateKeyIsASyntaxError() {
        let found = errors { _ = try TOMLDocument.parse(text: "[s]\nhost = \"a\"\nhost = \"b\"\n", path: "d.toml") }
        XCTAssertEqual(found.first?.line, 3)
    }

    func testValuesAndLinesOfNestedTablesArraysAndInlineTables() throws {
        let text = """
        title = "t"
        [s]
        list = [
          { a = 1 },
          { a = 2.5, b = true },
        ]
        [s.inner]
        "odd.key" = "x"
        """
        let document = try TOMLDocument.parse(text: text, path: "n.toml")
        XCTAssertEqual(document.value(at: TOMLKeyPath([.key("s"), .key("list"), .index(1), .key("a")])), .float(2.5))
        XCTAssertEqual(document.value(at: TOMLKeyPath([.key("s"), .key("list"), .index(0), .key("a")])), .integer(1))
        XCTAssertEqual(document.line(of: TOMLKeyPath([.key("title")])), 1)
        XCTAssertEqual(document.line(of: TOMLKeyPath([.key("s"), .key("list")])), 3)
        XCTAssertEqual(document.line(of: TOMLKeyPath([.key("s"), .key("list"), .index(1), .key("b")])), 5)
        let odd = TOMLKeyPath([.key("s"), .key("inner"), .key("odd.key")])
        XCTAssertEqual(odd.description, "s.inner.\"odd.key\"")
        XCTAssertEqual(document.line(of: odd), 8)
        // A missing key is located at its nearest enclosing table.
        XCTAssertEqual(document.line(of: TOMLKeyPath([.key("s"), .key("inner"), .key("absent")])), 7)
    }

    func testUnknownKeyIsRefusedWithLineAndSuggestion() {
        let text = "host = \"h\"\nport = 1\nprot = 2\n[limits]\nburts = 3\n"
        let found = errors { _ = try TOMLDocument.parse(text: text, path: "u.toml").decode(Server.self) }
        XCTAssertEqual(found.map(\.description), [
            "u.toml:3: prot: unknown key (did you mean `port`?)",
            "u.toml:5: limits.burts: unknown key (did you mean `burst`?)",
        ])
    }

    func testEveryTypeErrorAndMissingKeyIsCollectedInOnePass() {
        let text = "host = 5\ntags = [\"a\", 2]\n[limits]\nburst = 300\nenabled = \"yes\"\n"
        let found = errors { _ = try TOMLDocument.parse(text: text, path: "t.toml").decode(Server.self) }
        XCTAssertEqual(found.map(\.description), [
            "t.toml:1: host: expected a string, found an integer",
            "t.toml:1: port: missing required key",
            "t.toml:2: tags[1]: expected a string, found an integer",
            "t.toml:4: limits.burst: 300 is out of range (0...255)",
            "t.toml:5: limits.enabled: expected a boolean (true or false), found a string",
        ])
    }

    func testTableWhereAValueIsExpectedIsATypeError() {
        let found = errors { _ = try TOMLDocument.parse(text: "host = \"h\"\nport = 1\nlimits = 3\n", path: "v.toml").decode(Server.self) }
        XCTAssertEqual(found.map(\.description), ["v.toml:3: limits: expected a table, found an integer"])
    }

    func testValidDocumentDecodes() throws {
        let server = try TOMLDocument.parse(text: "host = \"h\"\nport = 8080\ntags = [\"a\"]\nlimits = { burst = 9 }\n", path: "ok.toml")
            .decode(Server.self)
        XCTAssertEqual(server.host, "h")
        XCTAssertEqual(server.port, 8080)
        XCTAssertEqual(server.tags, ["a"])
        XCTAssertEqual(server.limits?.burst, 9)
        XCTAssertNil(server.limits?.enabled)
    }

    func testNonFiniteFloatIsRefusedWithItsLine() {
        let found = errors { _ = try TOMLDocument.parse(text: "a = 1\nb = nan\n", path: "f.toml") }
        XCTAssertEqual(found.first?.line, 2)
    }

    func testUnreadableFileIsAnErrorNamingTheFile() {
        let found = errors { _ = try TOMLDocument.load(path: "/nonexistent/keyward/x.toml") }
        XCTAssertEqual(found.first?.file, "/nonexistent/keyward/x.toml")
        XCTAssertTrue(found.first?.message.hasPrefix("cannot open the file") == true)
    }

    func testStringsWithEscapesAndUnicodeSurviveTheRoundTrip() throws {
        let document = try TOMLDocument.parse(text: "s = \"tab\\there \\\"q\\\" é \\u0001 😀\"\n", path: "s.toml")
        XCTAssertEqual(document.root["s"], .string("tab\there \"q\" é \u{01} 😀"))
    }

    func testErrorThrownByAModelsOwnInitIsLocatedByItsCodingPath() {
        let found = errors { _ = try TOMLDocument.parse(text: "name = \"n\"\ncolour = \"blue\"\n", path: "e.toml").decode(Painted.self) }
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.line, 2)
        XCTAssertEqual(found.first?.key, "colour")
    }

    /// toml++ 3.3 trips its own internal assertion on a stray `}` inside an array (found by
    /// PropertyTests): an abort in debug builds, undefined behaviour under NDEBUG. CTOML turns it into
    /// a located syntax error.
    func testInputThatTripsTomlPlusPlusInternalCheckIsALocatedSyntaxError() {
        for (text, line) in [("a = [ 1, } ]\n", 1), ("a = [\n  { x = 1 },\n } { x = 2 },\n]\n", 3)] {
            let found = errors { _ = try TOMLDocument.parse(text: text, path: "b.toml") }
            XCTAssertEqual(found.map(\.description), ["b.toml:\(line): TOML syntax: malformed value (look for stray brackets, braces or commas)"])
        }
    }
}
