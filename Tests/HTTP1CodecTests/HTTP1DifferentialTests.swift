import Foundation
import HTTP1Codec
import XCTest

/// Keyward's request-head parser against Python's h11 on one corpus of heads
/// (`Tests/Fixtures/http1-heads/corpus.json`). h11's reading of each head is recorded in
/// `h11-verdicts.json` by `scripts/h11-differential.sh` (h11 pinned, from PyPI); this test reads
/// both and fails on any disagreement not listed below with its reason, and on a listed one that
/// no longer occurs.
///
/// A disagreement is whether the head is accepted, refused or incomplete, or, when both accept,
/// the method, target, version, field names (compared lowercased, as h11 gives them) and values,
/// or the body framing (h11 frames a request without a body as a length of 0). Where both accept,
/// every part is compared. On the 106 heads, 80 are read alike and 26 are the choices below.
final class HTTP1DifferentialTests: XCTestCase {
    /// Every case where Keyward's parser reads a head otherwise than h11 0.16.0, and why.
    static let documentedChoices: [String: String] = [
        // Line ends.
        "bare-lf-everywhere": "RFC 9112 §2.2 lets a recipient accept a bare LF; Keyward refuses it (bare_line_feed) so no line end is read two ways",
        "bare-lf-one-field": "as bare-lf-everywhere",
        "bare-lf-end": "as bare-lf-everywhere",
        "leading-empty-line": "RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line; h11 refuses it on a new connection",
        "leading-empty-lines": "as leading-empty-line (they count toward the head limit)",
        // Field lines.
        "fold-making-content-length": "RFC 9112 §5.2 lets a server refuse obs-fold or unfold it; Keyward refuses (obsolete_line_folding), h11 unfolds",
        "fold-ordinary": "as fold-making-content-length",
        "fold-tab": "as fold-making-content-length",
        "ctl-in-value": "RFC 9110 §5.5: Keyward refuses every control byte but HTAB in a value (invalid_field_value); h11 refuses only NUL, CR, LF",
        "del-in-value": "as ctl-in-value (DEL is a control byte)",
        // Framing.
        "chunked-with-content-length": "RFC 9112 §6.3 (3): both present ought to be handled as an error; Keyward refuses, h11 reads chunked",
        "content-length-after-chunked": "as chunked-with-content-length",
        "content-length-list-identical": "RFC 9110 §8.6 lets a recipient accept a list of identical values; Keyward accepts identical repeated fields only, a list in one field is invalid_content_length",
        "content-length-nineteen-digits": "Keyward reads at most 18 digits (the length fits an Int on every platform); h11 has no bound",
        "transfer-encoding-http10": "RFC 9112 §6.1: Transfer-Encoding on HTTP/1.0 means faulty framing; Keyward refuses, h11 reads chunked",
        // Request line.
        "fragment-in-target": "RFC 9110 §4.2.4: a fragment is never sent; libcurl would cut the forwarded URL at #, so Keyward refuses (invalid_target)",
        "fragment-only": "as fragment-in-target",
        "absolute-form": "RFC 9112 §3.2.2: a server must accept absolute-form; Keyward reads it as its path and query (the target it routes by), h11 gives the target as sent",
        "authority-form-connect": "RFC 9112 §3.2.3: authority-form is CONNECT's, and Keyward is no tunnel; refused (invalid_target), h11 does not check",
        "asterisk-get": "RFC 9112 §3.2.4: asterisk-form is for OPTIONS only; Keyward refuses it with other methods, h11 does not check",
        "http2-preface": "the HTTP/2 preface's PRI * is asterisk-form without OPTIONS (invalid_target); h11 accepts any version digit",
        "version-2.0": "RFC 9110 §15.6.6: Keyward serves major version 1 only (505 unsupported_version); h11 accepts any digit",
        "version-0.9": "as version-2.0",
        // Limits.
        "head-one-over-limit": "Keyward's head limit (16 KiB) is exact to the byte (431 head_too_large); h11 checks its limit only while a head is incomplete, not on one given whole",
        "whitespace-padding-over-limit": "as head-one-over-limit: whitespace received counts",
        "hundred-one-fields": "Keyward allows 100 field lines (431 too_many_fields); h11 has no field count limit",
    ]

    struct Case: Decodable {
        let name: String
        let head: String
    }

    struct Verdicts: Decodable {
        let h11: String
        let cases: [String: Reading]
    }

    struct Reading: Decodable, Equatable {
        let verdict: String
        var method: String?
        var target: String?
        var version: String?
        var fields: [[String]]?
        var framing: String?
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/http1-heads")

    /// Keyward's reading in h11's terms; text decoded as latin-1, one code point per byte, as the corpus is written.
    static func keywardReading(_ bytes: [UInt8]) -> Reading {
        var parser = RequestHeadParser()
        return bytes.withUnsafeBytes { buffer in
            func text(_ span: Range<Int>) -> String { String(buffer[span].map { Character(Unicode.Scalar($0)) }) }
            switch parser.parse(buffer) {
            case .needMore: return Reading(verdict: "incomplete")
            case .refused: return Reading(verdict: "refuse")
            case .head(let head):
                let framing: String
                switch head.framing {
                case .none: framing = "length 0"
                case .contentLength(let length): framing = "length \(length)"
                case .chunked: framing = "chunked"
                }
                // h11 rewrites two fields as it validates them: a repeated Content-Length is kept
                // once, a Transfer-Encoding value is lowercased. The same is done here, to compare.
                var fields: [[String]] = []
                for field in head.fields {
                    let name = text(field.name).lowercased(), value = text(field.value)
                    if name == "content-length", fields.contains(where: { $0[0] == name }) { continue }
                    fields.append([name, name == "transfer-encoding" ? value.lowercased() : value])
                }
                return Reading(
                    verdict: "accept", method: text(head.method), target: text(head.target),
                    version: head.version == .http10 ? "1.0" : "1.1", fields: fields, framing: framing)
            }
        }
    }

    /// h11's reading, reduced to what is compared (its refusal text is dropped; its 1.x minor versions read as 1.1).
    static func comparable(_ reading: Reading) -> Reading {
        guard reading.verdict == "accept" else { return Reading(verdict: reading.verdict) }
        var reduced = reading
        if let version = reading.version, version != "1.0" { reduced.version = "1.1" }
        return reduced
    }

    func testEveryDisagreementWithH11IsADocumentedChoice() throws {
        let corpus = try JSONDecoder().decode([Case].self, from: Data(contentsOf: Self.directory.appendingPathComponent("corpus.json")))
        let verdicts = try JSONDecoder().decode(Verdicts.self, from: Data(contentsOf: Self.directory.appendingPathComponent("h11-verdicts.json")))
        XCTAssertEqual(verdicts.h11, "0.16.0")
        XCTAssertGreaterThanOrEqual(corpus.count, 100)
        XCTAssertEqual(Set(corpus.map(\.name)), Set(verdicts.cases.keys), "h11-verdicts.json is out of date: run scripts/h11-differential.sh")
        var disagreements: [String: String] = [:]
        for item in corpus {
            let bytes = item.head.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
            guard let h11 = verdicts.cases[item.name] else { continue }
            let ours = Self.keywardReading(bytes), theirs = Self.comparable(h11)
            if ours != theirs { disagreements[item.name] = "Keyward \(ours.verdict), h11 \(theirs.verdict)" }
        }
        for (name, what) in disagreements.sorted(by: { $0.key < $1.key }) where Self.documentedChoices[name] == nil {
            XCTFail("undocumented disagreement with h11 on \(name): \(what)")
        }
        for name in Self.documentedChoices.keys.sorted() where disagreements[name] == nil {
            XCTFail("\(name) is listed as a disagreement but Keyward and h11 now agree on it")
        }
    }

    func testDocumentedChoicesAreRefusalsWithTheirReason() throws {
        // Every choice but three is a refusal where h11 accepts; the reason is asserted for each.
        let corpus = try JSONDecoder().decode([Case].self, from: Data(contentsOf: Self.directory.appendingPathComponent("corpus.json")))
        let heads = Dictionary(uniqueKeysWithValues: corpus.map { ($0.name, $0.head.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }) })
        let expected: [String: HeadRefusal] = [
            "bare-lf-everywhere": .bareLineFeed, "bare-lf-one-field": .bareLineFeed, "bare-lf-end": .bareLineFeed,
            "fold-making-content-length": .obsoleteLineFolding, "fold-ordinary": .obsoleteLineFolding, "fold-tab": .obsoleteLineFolding,
            "ctl-in-value": .invalidFieldValue, "del-in-value": .invalidFieldValue,
            "chunked-with-content-length": .contentLengthWithTransferEncoding,
            "content-length-after-chunked": .contentLengthWithTransferEncoding,
            "content-length-list-identical": .invalidContentLength, "content-length-nineteen-digits": .invalidContentLength,
            "transfer-encoding-http10": .transferEncodingOnHTTP10,
            "fragment-in-target": .invalidTarget, "fragment-only": .invalidTarget, "asterisk-get": .invalidTarget,
            "http2-preface": .invalidTarget, "authority-form-connect": .invalidTarget, "version-2.0": .unsupportedVersion, "version-0.9": .unsupportedVersion,
            "head-one-over-limit": .headTooLarge, "whitespace-padding-over-limit": .headTooLarge, "hundred-one-fields": .tooManyFields,
        ]
        XCTAssertEqual(Set(expected.keys).union(["leading-empty-line", "leading-empty-lines", "absolute-form"]), Set(Self.documentedChoices.keys))
        for (name, reason) in expected {
            XCTAssertEqual(parse(try XCTUnwrap(heads[name], name)).refusal, reason, name)
        }
        for name in ["leading-empty-line", "leading-empty-lines"] {
            XCTAssertEqual(parse(try XCTUnwrap(heads[name])).head?.target, "/", name)
        }
        XCTAssertEqual(parse(try XCTUnwrap(heads["absolute-form"])).head?.target, "/p/x")
    }
}
