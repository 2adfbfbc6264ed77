import Foundation
@testable import Keyward
import XCTest

/// README's answer table (`| code (`error` and `Keyward-Error`) | status | when |`) is the list
/// client libraries are written from (the Swift SDK and the Android library name a constant for
/// each of its codes): it names every code the proxy listener answers with, at the status Keyward
/// sends it, and nothing else but the admin API's own codes (rows whose "when" starts with
/// "admin API only").
final class APIAnswerTableTests: XCTestCase {
    struct Row: Equatable {
        let code: String
        let status: Int
        let adminOnly: Bool
    }

    /// The table's rows, in order: from the header line to the first line that is not a table row.
    static func readmeRows() throws -> [Row] {
        let readme = try String(contentsOf: KeywardBinary.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.components(separatedBy: "\n")
        let header = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("| code (`error` and `Keyward-Error`) | status |") },
                                   "README.md: no answer table header")
        var rows: [Row] = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            XCTAssertGreaterThanOrEqual(cells.count, 4, line)
            guard cells.count >= 4, cells[1].hasPrefix("`"), cells[1].hasSuffix("`"), let status = Int(cells[2]) else {
                XCTFail("README.md: answer table row not `code` | status | when: \(line)")
                continue
            }
            rows.append(Row(code: String(cells[1].dropFirst().dropLast()), status: status, adminOnly: cells[3].hasPrefix("admin API only")))
        }
        return rows
    }

    func testTheTableNamesEveryCodeOfTheProxyListenerAtItsStatus() throws {
        let rows = try Self.readmeRows()
        XCTAssertEqual(Set(rows.map(\.code)).count, rows.count, "a code listed twice")
        let listed = rows.filter { !$0.adminOnly }
        XCTAssertEqual(listed.map(\.code).sorted(), APIErrorCode.allCases.map(\.rawValue).sorted(),
                       "README's answer table and APIErrorCode disagree")
        for code in APIErrorCode.allCases {
            XCTAssertEqual(listed.first { $0.code == code.rawValue }?.status, code.status, code.rawValue)
        }
        // The admin API's own refusal, answered on the admin listener only.
        XCTAssertEqual(rows.filter(\.adminOnly), [Row(code: "unauthorized", status: 401, adminOnly: true)])
    }
}
