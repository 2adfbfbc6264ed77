// swift-tools-version:6.0
// Keyward: an attested API-key reverse proxy for mobile apps. Layout: DESIGN.md §4.
import PackageDescription

let package = Package(
    name: "Keyward",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "keyward", targets: ["KeywardCLI"]),
        .executable(name: "keyward-bench", targets: ["KeywardBench"]),
    ],
    targets: [
        // Debian's C libraries, bound as system libraries (CLIBS.md).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl"),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl"),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3"),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq"),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd"),
        .target(name: "CShims", dependencies: ["COpenSSL", "CCurl", "CMicroHTTPD"]),
        .target(
            name: "CTOML",
            cxxSettings: [.define("TOML_HEADER_ONLY", to: "1"), .define("TOML_EXCEPTIONS", to: "1")]
        ),

        // The pthread lock shared by the modules checked under ThreadSanitizer.
        .target(name: "KeywardSupport"),

        // Core modules: no server code, no clock, store or network they are not handed.
        .target(name: "KeywardCrypto", dependencies: ["COpenSSL", "CShims", "KeywardSupport"]),
        .target(name: "CBOR"),
        .target(name: "AppAttest", dependencies: ["KeywardCrypto", "CBOR"]),
        .target(name: "PlayIntegrity", dependencies: ["KeywardCrypto"]),
        .target(name: "Sessions", dependencies: ["KeywardCrypto", "KeywardSupport"]),
        .target(name: "ProviderRegistry", dependencies: ["CTOML"]),
        // Exact sliding-window limits in constant time, decided in memory (docs/limits.md).
        .target(name: "Limits", dependencies: ["KeywardSupport"]),

        // I/O modules.
        .target(name: "Store", dependencies: ["CSQLite", "CPostgres", "Limits", "KeywardSupport"], resources: []),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CShims", "KeywardSupport"]),
        .target(name: "Upstream", dependencies: ["CCurl", "CShims", "KeywardSupport"]),

        // The application and its executables.
        .target(
            name: "Keyward",
            dependencies: [
                "KeywardCrypto", "CBOR", "AppAttest", "PlayIntegrity", "Sessions",
                "ProviderRegistry", "Limits", "Store", "HTTPServer", "Upstream", "DeviceSimulator",
            ]
        ),
        .target(name: "DeviceSimulator", dependencies: ["KeywardCrypto", "CBOR", "COpenSSL", "CShims"]),
        .executableTarget(name: "KeywardCLI", dependencies: ["Keyward"]),
        .executableTarget(name: "KeywardBench", dependencies: ["Keyward", "Limits"]),

        .testTarget(name: "KeywardCryptoTests", dependencies: ["KeywardCrypto"]),
        .testTarget(name: "CBORTests", dependencies: ["CBOR"]),
        .testTarget(name: "AppAttestTests", dependencies: ["AppAttest", "DeviceSimulator", "KeywardCrypto", "CBOR"]),
        .testTarget(name: "PlayIntegrityTests", dependencies: ["PlayIntegrity", "DeviceSimulator", "KeywardCrypto"]),
        .testTarget(name: "SessionsTests", dependencies: ["Sessions", "KeywardCrypto"]),
        .testTarget(name: "ProviderRegistryTests", dependencies: ["ProviderRegistry"]),
        .testTarget(name: "LimitsTests", dependencies: ["Limits", "KeywardSupport"]),
        .testTarget(name: "StoreTests", dependencies: ["Store"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream", "HTTPServer", "KeywardSupport"]),
        .testTarget(name: "KeywardTests", dependencies: ["Keyward", "DeviceSimulator", "CSQLite"]),
    ],
    cxxLanguageStandard: .cxx17
)
