// libFuzzer target: the proxy's path canonicalizer and query rewrite on arbitrary text.
// Properties checked besides "never traps":
// - whatever `ProxyPath.canonicalSegments` accepts has segments that are never "", ".", "..", and
//   never contain "/", "\" or NUL, and `ProxyPath.encode` of them canonicalizes to the same segments;
// - `splitProxyRoute` only ever cuts the path, it never changes it;
// - `RequestRewrite.upstreamQuery` for a query-key provider leaves exactly one parameter whose name,
//   percent-decoded once, equals the key's name ignoring ASCII case — ours — and keeps every other
//   non-empty parameter byte for byte and in order. The parameters are read as an upstream reads
//   them: the bytes between `&`, the name up to the first `=`.
// The providers are built once from providers.toml text, through CTOML, as Keyward does.
import ProviderRegistry

#if canImport(Glibc)
import Glibc
#endif

/// `precondition` that also says why in -O builds (where precondition messages are dropped).
private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition() { failure(message(), line: line) }
}

private func failure(_ message: String, line: UInt = #line) -> Never {
    fputs("FuzzProxyPath.swift:\(line): property failed: \(message)\n", stderr)
    abort()
}

private let secret = "AIza&x=1 %é"

private struct Fixture {
    let queryProvider: Provider
    let queryCredential: ProviderCredential
    let queryName: [UInt8]          // lowercased
    let ours: String                // name=<percent-encoded secret>
    let mixedCaseProvider: Provider
    let mixedCaseCredential: ProviderCredential
    let mixedCaseName: [UInt8]
    let mixedCaseOurs: String
    let headerProvider: Provider
    let headerCredential: ProviderCredential
}

private let fixture: Fixture = {
    let text = """
    [gemini]
    base_url = "https://generativelanguage.googleapis.com"
    secret = "GEMINI_API_KEY"
    auth = { type = "query", name = "key" }
    allow = [{ method = "POST", path = "/v1beta/models/*" }]

    [mixed]
    base_url = "https://api.example.com"
    secret = "MIXED_KEY"
    auth = { type = "query", name = "Api_Key.v2~" }
    allow = [{ method = "GET", path = "/v1/*" }]

    [openai]
    base_url = "https://api.openai.com"
    secret = "OPENAI_API_KEY"
    auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
    allow = [{ method = "POST", path = "/v1/chat/completions" }]
    """
    do {
        let registry = try ProviderRegistry.parse(text: text, path: "fuzz-providers.toml")
        let gemini = registry.provider(named: "gemini")!
        let mixed = registry.provider(named: "mixed")!
        let openai = registry.provider(named: "openai")!
        return Fixture(
            queryProvider: gemini,
            queryCredential: try ProviderCredential(provider: gemini, secretValue: secret),
            queryName: Array("key".utf8),
            ours: "key=" + PercentEncoding.encodeQueryComponent(secret),
            mixedCaseProvider: mixed,
            mixedCaseCredential: try ProviderCredential(provider: mixed, secretValue: secret),
            mixedCaseName: Array("api_key.v2~".utf8),
            mixedCaseOurs: PercentEncoding.encodeQueryComponent("Api_Key.v2~") + "=" + PercentEncoding.encodeQueryComponent(secret),
            headerProvider: openai,
            headerCredential: try ProviderCredential(provider: openai, secretValue: secret)
        )
    } catch {
        fatalError("fixture: \(error)")
    }
}()

// MARK: - Oracles, written independently of the code under test

private func hex(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: return byte - 0x30
    case 0x41...0x46: return byte - 0x41 + 10
    case 0x61...0x66: return byte - 0x61 + 10
    default: return nil
    }
}

/// Each valid %XX decoded once, anything else literal.
private func decodeOnce(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    let bytes = Array(bytes)
    var out: [UInt8] = []
    var i = 0
    while i < bytes.count {
        if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let h = hex(bytes[i + 1]), let l = hex(bytes[i + 2]) {
            out.append(h << 4 | l)
            i += 3
        } else {
            out.append(bytes[i])
            i += 1
        }
    }
    return out
}

private func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

/// The query's parameters as an upstream splits them: non-empty byte runs between `&`.
private func parameters(_ query: String) -> [ArraySlice<UInt8>] {
    Array(query.utf8).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true)
}

private func isKeyParameter(_ parameter: ArraySlice<UInt8>, lowercasedName: [UInt8]) -> Bool {
    let name = parameter.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false).first ?? parameter
    return decodeOnce(name).map(lower) == lowercasedName
}

private func checkQuery(_ raw: String?, provider: Provider, credential: ProviderCredential, name: [UInt8], ours: String) {
    guard let output = RequestRewrite.upstreamQuery(raw, provider: provider, credential: credential) else {
        failure("a query-key provider got no query")
    }
    let outputParameters = parameters(output)
    let keyed = outputParameters.filter { isKeyParameter($0, lowercasedName: name) }
    check(keyed.count == 1, "upstream query has \(keyed.count) key parameters: \(output.debugDescription)")
    check(Array(keyed[0]) == Array(ours.utf8), "the key parameter is not ours: \(output.debugDescription)")
    check(Array(output.utf8).suffix(ours.utf8.count).elementsEqual(ours.utf8), "ours is not last")
    let kept = parameters(raw ?? "").filter { !isKeyParameter($0, lowercasedName: name) }.map(Array.init)
    let others = outputParameters.filter { !isKeyParameter($0, lowercasedName: name) }.map(Array.init)
    check(kept == others, "client parameters were not kept as sent: \(output.debugDescription)")
}

// MARK: - Paths

private func checkPath(_ raw: String) {
    guard let segments = try? ProxyPath.canonicalSegments(rawPath: raw) else { return }
    check(!segments.isEmpty, "accepted path without segments")
    check(segments.count <= ProxyPath.maximumSegments)
    for segment in segments {
        let bytes = Array(segment.utf8)
        check(!bytes.isEmpty && segment != "." && segment != "..", "bad segment \(segment.debugDescription)")
        check(!bytes.contains(UInt8(ascii: "/")) && !bytes.contains(UInt8(ascii: "\\")) && !bytes.contains(0),
                     "segment with separator or NUL: \(segment.debugDescription)")
        check(!bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }), "segment with a control character")
    }
    let encoded = ProxyPath.encode(segments)
    let again: [String]
    do {
        again = try ProxyPath.canonicalSegments(rawPath: encoded)
    } catch {
        failure("re-encoded path \(encoded.debugDescription) is refused: \(error)")
    }
    check(again == segments, "re-encoded path canonicalizes differently")
    check(ProxyPath.encode(again) == encoded, "encode is not stable")
    // Substring callers (the router hands over a slice of the request path) see the same thing.
    let padded = "/p/x" + raw
    if let split = ProxyPath.splitProxyRoute(padded) {
        check((try? ProxyPath.canonicalSegments(rawPath: split.rest)) == segments || split.provider != "x")
    }
}

private func checkRoute(_ text: String) {
    guard let split = ProxyPath.splitProxyRoute(text) else { return }
    check(!split.provider.isEmpty && !split.provider.utf8.contains(UInt8(ascii: "/")))
    check("/p/" + split.provider + split.rest == text, "splitProxyRoute changed the path")
    check(split.rest.isEmpty || split.rest.utf8.first == UInt8(ascii: "/"))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProxyPath(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    checkPath(text)
    checkPath("/" + text)
    checkRoute(text)
    let f = fixture
    checkQuery(text, provider: f.queryProvider, credential: f.queryCredential, name: f.queryName, ours: f.ours)
    checkQuery(text, provider: f.mixedCaseProvider, credential: f.mixedCaseCredential, name: f.mixedCaseName, ours: f.mixedCaseOurs)
    let passed = RequestRewrite.upstreamQuery(text, provider: f.headerProvider, credential: f.headerCredential)
    check(passed == (text.isEmpty ? nil : text), "a header-auth provider's query was changed")
    return 0
}

// MARK: - Seeds

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutableRawPointer) -> CInt {
    _ = fixture
    guard let directory = getenv("KEYWARD_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    let seeds = [
        "/v1/chat/completions", "/v1beta/models/gemini-2.5-flash:generateContent", "/a%20b/%C3%A9/c@d:e",
        "/v1/..", "/v1/%2e%2E/x", "/v1//x", "/v1/a%2Fb", "/v1/%5c", "/x/%00", "/x/%ff", "/p/openai/v1/models",
        "key=c1&KEY=c2&k%65y=c3&key=", "alt=sse&key=c1&b=2&&Key&%4B%45%59=z", "k%2565y=1&keys=2&monkey=3",
        "api_key.v2~=x&API_KEY.V2%7E=y&Api%5FKey.v2~", "a=1&b=%zz&c",
        // The first finding (fixed): `&` + a combining mark is one Character and hid a boundary.
        "Key&\u{734}", "x=1\u{600}&key=c1",
    ]
    for (index, seed) in seeds.enumerated() {
        guard let file = fopen(directory + "/seed-\(index)", "wb") else { continue }
        _ = Array(seed.utf8).withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
    exit(0)
}
