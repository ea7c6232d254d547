// swift-tools-version: 6.1
import PackageDescription

// A separate package so that the benchmark's dependencies (GRDB) never enter Strata's own graph.
// Run: swift run -c release --package-path Benchmarks strata-bench [--quick] [--json PATH] [--svg PATH] [--filter NAME]
let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strata-bench", targets: ["StrataBench"]),
        .executable(name: "strata-cloud-bench", targets: ["StrataCloudBench"]),
    ],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/sqlite-nio", exact: "1.13.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Direct access to the system SQLite for the hand-written C API baseline.
        .systemLibrary(
            name: "CSQLiteBench",
            path: "Sources/CSQLiteBench",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Direct access to the system zlib for the assets workload's baseline.
        .systemLibrary(
            name: "CZlibBench",
            path: "Sources/CZlibBench",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // What both benchmarks share: the report's environment (machine, commit, date, load),
        // JSON and SVG escaping, peak resident memory, the failure type.
        .target(name: "BenchSupport", path: "Sources/BenchSupport"),
        .executableTarget(
            name: "StrataBench",
            dependencies: [
                "BenchSupport",
                "CSQLiteBench",
                "CZlibBench",
                .product(name: "StrataAssets", package: "Strata"),
                .product(name: "StrataSQLite", package: "Strata"),
                .product(name: "StrataQueries", package: "Strata"),
                .product(name: "StrataObservation", package: "Strata"),
                .product(name: "StrataSync", package: "Strata"),
                .product(name: "StrataCloud", package: "Strata"),
                .product(name: "StrataCloudWire", package: "Strata"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            path: "Sources/StrataBench",
            swiftSettings: [
                // Each library lives in its own file with its own imports; this keeps the
                // extension members of one (GRDB's and Strata's `fetchOne` on Int, say) out of
                // the other files.
                .enableUpcomingFeature("MemberImportVisibility")
            ]
        ),
        // Issue #27's sync targets: the live cloud on loopback (service processes over PostgreSQL)
        // and the engine against MockCloud. quick.sh runs only its engine phase, which needs no
        // PostgreSQL server.
        .executableTarget(
            name: "StrataCloudBench",
            dependencies: [
                "BenchSupport",
                "CSQLiteBench",
                .product(name: "StrataSQLite", package: "Strata"),
                .product(name: "StrataSync", package: "Strata"),
                .product(name: "StrataObservation", package: "Strata"),
                .product(name: "StrataCloudStore", package: "Strata"),
                .product(name: "StrataCloudService", package: "Strata"),
                .product(name: "StrataCloudClient", package: "Strata"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/StrataCloudBench"
        ),
    ],
    swiftLanguageModes: [.v5]
)
