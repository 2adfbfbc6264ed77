import HTTPServer
import XCTest

final class HTTPRequestHeadTests: XCTestCase {
    func testOnlyHeaderIsTheValueOfTheOneFieldOfThatName() {
        let head = HTTPRequestHead(
            method: "GET", target: "/p/x/y?a=1",
            headers: [("Host", "h"), ("authorization", "Bearer one"), ("X-Twice", "1"), ("x-twice", "2")])
        XCTAssertEqual(head.onlyHeader("Authorization"), "Bearer one")
        XCTAssertEqual(head.header("x-twice"), "1")
        XCTAssertNil(head.onlyHeader("X-Twice"), "two fields of one name are not one value")
        XCTAssertNil(head.onlyHeader("Cookie"))
        XCTAssertEqual(head.headers(named: "X-TWICE"), ["1", "2"])
        XCTAssertEqual(head.path, "/p/x/y")
    }
}
