import XCTest
@testable import ProviderRegistry
@testable import TOMLDecoding

/// Seeded pseudo-random inputs (SplitMix64): the same cases on every run, thousands of them.
private struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

final class PropertyTests: XCTestCase {
    /// Accepted paths re-encode to a path that canonicalizes to the same segments, and the upstream
    /// path never carries an escape for a separator, a dot or a percent sign.
    func testCanonicalPathsRoundTripAndRefusalsNeverTrap() throws {
        var random = SplitMix64(state: 42)
        let alphabet = Array("/%2eEfF5cC0aA.\\ :@+-_~é?#".unicodeScalars)
        var accepted = 0
        for _ in 0..<20_000 {
            var raw = "/"
            for _ in 0..<random.below(14) { raw.unicodeScalars.append(alphabet[random.below(alphabet.count)]) }
            guard let segments = try? ProxyPath.canonicalSegments(rawPath: raw) else { continue }
            accepted += 1
            let encoded = ProxyPath.encode(segments)
            XCTAssertEqual(try ProxyPath.canonicalSegments(rawPath: encoded), segments, raw)
            // A path may end in one `/`; closing the others with one shows dot segments at the end.
            let closed = encoded.hasSuffix("/") ? encoded : encoded + "/"
            for forbidden in ["%2F", "%2E", "%25", "%5C", "//", "/./", "/../"] {
                XCTAssertFalse(closed.contains(forbidden), "\(raw) → \(encoded)")
            }
        }
        XCTAssertGreaterThan(accepted, 1_000)
    }

    /// The backtracking glob agrees with a plain recursive definition of "`*` = one or more segments"
    /// over the segments before the ending `/`, which pattern and path must agree on.
    func testGlobMatchingAgreesWithTheRecursiveDefinition() throws {
        func reference(_ pattern: ArraySlice<PathPattern.Segment>, _ path: ArraySlice<String>) -> Bool {
            guard let first = pattern.first else { return path.isEmpty }
            switch first {
            case .literal(let literal):
                return path.first == literal && reference(pattern.dropFirst(), path.dropFirst())
            case .wildcard:
                guard !path.isEmpty else { return false }
                for taken in 1...path.count where reference(pattern.dropFirst(), path.dropFirst(taken)) { return true }
                return false
            }
        }
        var random = SplitMix64(state: 7)
        let words = ["a", "b", "c"]
        var matched = 0
        for _ in 0..<20_000 {
            var patternText = ""
            var wildcards = 0
            for _ in 0..<(1 + random.below(5)) {
                if random.below(3) == 0, wildcards < PathPattern.maximumWildcards {
                    patternText += "/*"
                    wildcards += 1
                } else {
                    patternText += "/" + words[random.below(words.count)]
                }
            }
            var path = (0..<(1 + random.below(6))).map { _ in words[random.below(words.count)] }
            let patternEndsInSlash = random.below(4) == 0, pathEndsInSlash = random.below(4) == 0
            if patternEndsInSlash { patternText += "/" }
            let body = path
            if pathEndsInSlash { path.append("") }
            let pattern = try PathPattern.parse(patternText)
            let expected = patternEndsInSlash == pathEndsInSlash && reference(pattern.segments[...], body[...])
            XCTAssertEqual(pattern.matches(path), expected, "\(patternText) vs /\(path.joined(separator: "/"))")
            if expected { matched += 1 }
        }
        XCTAssertGreaterThan(matched, 1_000)
    }

    /// Mangled providers files give errors (with a line within the file), never a trap.
    func testMangledProvidersFilesAreRefusedWithLocatedErrors() throws {
        let original = Array(try readTextFile(repositoryRoot() + "/providers.toml").utf8)
        let lineCount = original.filter { $0 == 0x0A }.count + 1
        var random = SplitMix64(state: 99)
        let replacements = Array("=[]{}\"',.#\n\\x1 ".utf8)
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<(1 + random.below(4)) {
                let index = random.below(bytes.count)
                switch random.below(3) {
                case 0: bytes[index] = replacements[random.below(replacements.count)]
                case 1: bytes.remove(at: index)
                default: bytes.insert(replacements[random.below(replacements.count)], at: index)
                }
            }
            do {
                _ = try ProviderRegistry.parse(text: String(decoding: bytes, as: UTF8.self), path: "m.toml")
            } catch {
                for found in error.errors {
                    XCTAssertEqual(found.file, "m.toml")
                    XCTAssertTrue((1...(lineCount + 2)).contains(found.line), found.description)
                }
            }
        }
    }
}
