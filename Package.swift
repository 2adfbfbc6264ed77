// swift-tools-version:6.0
// Keyward: an attested API-key reverse proxy for mobile apps. Layout: docs/ARCHITECTURE.md.
import PackageDescription

let package = Package(
    name: "Keyward",
    // macOS 14 is the server's floor; the KeywardClient library also builds for iOS 15.
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .executable(name: "keyward", targets: ["KeywardCLI"]),
        .executable(name: "keyward-demo", targets: ["KeywardDemoMain"]),
        .executable(name: "keyward-bench", targets: ["KeywardBench"]),
        // The app side: Foundation only (FoundationNetworking on Linux), never a server module.
        .library(name: "KeywardClient", targets: ["KeywardClient"]),
    ],
    targets: [
        // Debian's C libraries, bound as system libraries (pkg-config names).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl"),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl"),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3"),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq"),
        .target(name: "CShims", dependencies: ["COpenSSL", "CCurl"]),
        .target(
            name: "CTOML",
            cxxSettings: [.define("TOML_HEADER_ONLY", to: "1"), .define("TOML_EXCEPTIONS", to: "1")]
        ),

        // The pthread lock shared by the modules checked under ThreadSanitizer.
        .target(name: "KeywardSupport"),
        // The header type and RFC 9110 field bytes (token table, case folding) every HTTP module shares.
        .target(name: "HTTPFields"),
        // TOML into Decodable values with file:line:key errors, for keyward.toml and providers.toml.
        .target(name: "TOMLDecoding", dependencies: ["CTOML", "KeywardSupport"]),

        // Core modules: no server code, no clock, store or network they are not handed.
        .target(name: "KeywardCrypto", dependencies: ["COpenSSL", "CShims", "KeywardSupport"]),
        .target(name: "CBOR"),
        .target(name: "AppAttest", dependencies: ["KeywardCrypto", "CBOR"]),
        .target(name: "PlayIntegrity", dependencies: ["KeywardCrypto"]),
        .target(name: "Sessions", dependencies: ["KeywardCrypto", "KeywardSupport"]),
        .target(name: "ProviderRegistry", dependencies: ["TOMLDecoding", "HTTPFields", "KeywardSupport"]),
        // Exact sliding-window limits in constant time, decided in memory (docs/limits.md).
        .target(name: "Limits", dependencies: ["KeywardSupport"]),

        // I/O modules.
        .target(name: "Store", dependencies: ["CSQLite", "CPostgres", "Limits", "KeywardSupport"], resources: []),
        // The strict RFC 9112 request codec: head parser and chunked body decoder, bytes in, offsets
        // or a refusal out (no I/O; fuzzed and read against h11, fuzz/ and scripts/h11-differential.sh).
        .target(name: "HTTP1Codec", dependencies: ["HTTPFields"]),
        .target(name: "HTTPServer", dependencies: ["CShims", "KeywardSupport", "HTTPFields", "HTTP1Codec"]),
        .target(name: "Upstream", dependencies: ["CCurl", "CShims", "KeywardSupport", "HTTPFields"]),

        // The application: routes, handshakes, the proxy's phases, the server and its lifecycle.
        .target(
            name: "Keyward",
            dependencies: [
                "KeywardCrypto", "CBOR", "AppAttest", "PlayIntegrity", "Sessions",
                "TOMLDecoding", "ProviderRegistry", "Limits", "Store", "HTTPServer", "Upstream", "CShims", "KeywardSupport",
            ]
        ),
        // The production executable: the operator's commands. It links no simulator and no test
        // trust anchor (scripts/check-release-binary.sh checks).
        .executableTarget(name: "KeywardCLI", dependencies: ["Keyward", "CShims"]),

        // Simulated devices and a whole deployment on loopback: only the demo, the tests and the
        // bench link these.
        .target(name: "DeviceSimulator", dependencies: ["KeywardCrypto", "CBOR", "COpenSSL", "CShims"]),
        .target(name: "KeywardDemo", dependencies: ["Keyward", "DeviceSimulator"]),
        .executableTarget(name: "KeywardDemoMain", dependencies: ["KeywardDemo", "CShims"]),
        .executableTarget(name: "KeywardBench", dependencies: ["Keyward", "KeywardDemo", "Limits", "ProviderRegistry"]),

        // Deadline-bounded waits shared by the test targets.
        .target(name: "TestWaiting", path: "Tests/TestWaiting"),

        // The client SDK for apps: no dependencies (scripts/check-client-deps.sh keeps it so).
        .target(name: "KeywardClient"),

        .testTarget(name: "KeywardCryptoTests", dependencies: ["KeywardCrypto"]),
        .testTarget(name: "CBORTests", dependencies: ["CBOR"]),
        .testTarget(name: "AppAttestTests", dependencies: ["AppAttest", "DeviceSimulator", "KeywardCrypto", "CBOR"]),
        .testTarget(name: "PlayIntegrityTests", dependencies: ["PlayIntegrity", "DeviceSimulator", "KeywardCrypto"]),
        .testTarget(name: "SessionsTests", dependencies: ["Sessions", "KeywardCrypto"]),
        .testTarget(name: "TOMLDecodingTests", dependencies: ["TOMLDecoding"]),
        .testTarget(name: "ProviderRegistryTests", dependencies: ["ProviderRegistry", "HTTPFields", "TOMLDecoding", "KeywardSupport"]),
        .testTarget(name: "LimitsTests", dependencies: ["Limits", "KeywardSupport"]),
        .testTarget(name: "KeywardSupportTests", dependencies: ["KeywardSupport"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "TestWaiting"]),
        .testTarget(name: "HTTP1CodecTests", dependencies: ["HTTP1Codec"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPFields", "HTTP1Codec", "CShims", "TestWaiting"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream", "HTTPServer", "KeywardSupport", "TestWaiting", "CShims"]),
        .testTarget(name: "KeywardTests", dependencies: ["Keyward", "KeywardDemo", "KeywardCLI", "DeviceSimulator", "TestWaiting", "CSQLite"]),
        // The SDK against a real Keyward on loopback (the demo deployment and its simulated iPhone).
        .testTarget(
            name: "KeywardClientTests",
            dependencies: ["KeywardClient", "KeywardDemo", "Keyward", "DeviceSimulator", "HTTPServer", "KeywardCrypto"]),
    ],
    cxxLanguageStandard: .cxx17
)
