// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataSQLite", targets: ["StrataSQLite"]),
        .library(name: "StrataQueries", targets: ["StrataQueries"]),
        .library(name: "StrataObservation", targets: ["StrataObservation"]),
        .library(name: "StrataAssets", targets: ["StrataAssets"]),
        .library(name: "StrataCloud", targets: ["StrataCloud"]),
        .library(name: "StrataSync", targets: ["StrataSync"]),
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataCloudStore", targets: ["StrataCloudStore"]),
        .library(name: "StrataCloudWire", targets: ["StrataCloudWire"]),
        .library(name: "StrataCloudService", targets: ["StrataCloudService"]),
        .library(name: "StrataCloudClient", targets: ["StrataCloudClient"]),
        .executable(name: "scorekeeper", targets: ["ScorekeeperCLI"]),
        .executable(name: "scorekeeper-live", targets: ["ScorekeeperLiveCLI"]),
        .executable(name: "strata-cloud", targets: ["StrataCloudServer"]),
        .executable(name: "strata-sync-crash-writer", targets: ["StrataSyncCrashWriter"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The Clocks and Foundation traits only: the default traits also build
        // combine-schedulers and OpenCombine, which nothing here uses.
        .package(url: "https://github.com/pointfreeco/swift-dependencies", from: "1.17.1", traits: ["Clocks", "Foundation"]),
        .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.13.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.0.0"),
        .package(url: "https://github.com/pointfreeco/swift-concurrency-extras", from: "1.0.0"),
        // 603 matches the Swift 6.3 toolchain the project builds with.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // Connections, statements, records, the queue and the pool, migrations.
        .target(
            name: "StrataSQLite",
            dependencies: ["CSQLite"]
        ),
        // The macros behind @Table, @Selection, @Column, @Ephemeral, @DatabaseFunction and #sql.
        .macro(
            name: "StrataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // Typed tables and the type-safe query builder, on top of the record layer.
        .target(
            name: "StrataQueries",
            dependencies: ["StrataSQLite", "StrataMacros"]
        ),
        // Live queries: region tracking, async sequences, FetchAll / FetchOne / Fetch.
        .target(
            name: "StrataObservation",
            dependencies: ["StrataSQLite", "StrataQueries"]
        ),
        // Large binary values: zlib-compressed, chunked, content-addressed, integrity-checked.
        .target(
            name: "StrataAssets",
            dependencies: [
                "StrataSQLite",
                "StrataQueries",
                "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The cloud contract: the CloudContainer and CloudDatabase protocols, the values they
        // exchange (records, assets, shares, change tokens, hybrid timestamps) and their rules,
        // and MockCloud, its in-memory implementation. No SQLite, no storage, no networking: the
        // engine, the PostgreSQL store, the service and its client all speak it.
        .target(
            name: "StrataCloud"
        ),
        // Sync: change capture by triggers, the metadatabase, per-field merge with hybrid logical
        // clocks. Re-exports StrataCloud. No networking.
        .target(
            name: "StrataSync",
            dependencies: [
                "StrataCloud",
                "StrataSQLite",
                "StrataQueries",
                "StrataAssets",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The cloud's semantics in PostgreSQL (postgres-nio), for the live cloud service and
        // trusted server-side processes; apps never link it.
        .target(
            name: "StrataCloudStore",
            dependencies: [
                "StrataCloud",
                "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The JSON wire format the cloud service and its client share: request and response
        // bodies, routes and a lossless encoding of CloudError. No networking.
        .target(
            name: "StrataCloudWire",
            dependencies: ["StrataCloud"]
        ),
        // The live cloud's HTTP service (Hummingbird) over any CloudContainer backend: JWT
        // authentication, request limits, server-sent change hints, health and metrics.
        .target(
            name: "StrataCloudService",
            dependencies: [
                "StrataCloud",
                "StrataCloudWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The client of the live cloud: a CloudContainer over HTTP. The only module that brings
        // networking into an app.
        .target(
            name: "StrataCloudClient",
            dependencies: [
                "StrataCloud",
                "StrataCloudWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The `strata-cloud` executable: migrate, serve, token.
        .executableTarget(
            name: "StrataCloudServer",
            dependencies: [
                "StrataCloudService", "StrataCloudStore", "StrataCloud",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The umbrella: re-exports the modules above and adds the dependency container
        // (`@Dependency(\.defaultDatabase)`, live / preview / test contexts) and seeding.
        .target(
            name: "Strata",
            dependencies: [
                "StrataSQLite",
                "StrataQueries",
                "StrataObservation",
                "StrataAssets",
                "StrataCloud",
                "StrataSync",
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The Scorekeeper example: its models, queries and commands as a library, so tests run
        // the same code as the `scorekeeper` executable.
        .target(
            name: "ScorekeeperCore",
            dependencies: ["Strata", .product(name: "Logging", package: "swift-log")],
            path: "Examples/ScorekeeperCore"
        ),
        // The `scorekeeper` commands, as a library: tests cannot import an executable's main
        // module when SwiftPM builds them for the host, which it does once a test target
        // depends on a macro target (StrataMacrosTests). No networking: `--cloud` connects
        // through what `scorekeeper-live` gives it.
        .target(
            name: "ScorekeeperCommands",
            dependencies: [
                "ScorekeeperCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/ScorekeeperCommands"
        ),
        // The `scorekeeper` executable: only its entry point (its module is ScorekeeperCLI, as
        // ScorekeeperCore has a type named Scorekeeper).
        .executableTarget(
            name: "ScorekeeperCLI",
            dependencies: ["ScorekeeperCommands"],
            path: "Examples/Scorekeeper"
        ),
        // The `scorekeeper-live` executable: the same commands, with `--cloud URL` syncing
        // through a strata-cloud service. Apart from `scorekeeper` so that the README's first
        // command does not build AsyncHTTPClient, NIO and BoringSSL.
        .executableTarget(
            name: "ScorekeeperLiveCLI",
            dependencies: ["ScorekeeperCommands", "StrataCloudClient"],
            path: "Examples/ScorekeeperLive"
        ),
        // Helpers every test target shares: temporary folders, database files and pools,
        // counters and recorders for closures on other threads, bounded waits. It depends on
        // StrataSQLite only (no macros), so it builds the same for the host and the target.
        .target(
            name: "StrataTestSupport",
            dependencies: ["StrataSQLite"],
            path: "Tests/StrataTestSupport"
        ),
        // The sync tests' device (its own database and a SyncEngine over any cloud container,
        // driven by hand) and their manual wall clock, for every test target that syncs.
        .target(
            name: "StrataSyncTestSupport",
            dependencies: [
                "StrataSync", "StrataSQLite", "StrataTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/StrataSyncTestSupport"
        ),
        .testTarget(
            name: "StrataSQLiteTests",
            dependencies: ["StrataSQLite", "CSQLite", "StrataTestSupport"]
        ),
        .testTarget(
            name: "StrataMacrosTests",
            dependencies: [
                "StrataMacros",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
        .testTarget(
            name: "StrataQueriesTests",
            dependencies: ["StrataQueries", "StrataSQLite"]
        ),
        .testTarget(
            name: "StrataObservationTests",
            dependencies: ["StrataObservation", "StrataSQLite", "StrataQueries", "StrataTestSupport"]
        ),
        .testTarget(
            name: "StrataAssetsTests",
            dependencies: ["StrataAssets", "StrataSQLite", "StrataTestSupport"]
        ),
        // The cloud contract and MockCloud, without SQLite.
        .testTarget(
            name: "StrataCloudTests",
            dependencies: ["StrataCloud"]
        ),
        // The child process StrataSyncTests kills in the middle of writes.
        .executableTarget(
            name: "StrataSyncCrashWriter",
            dependencies: ["StrataSync", "StrataSQLite"],
            path: "Tests/StrataSyncCrashWriter"
        ),
        .testTarget(
            name: "StrataSyncTests",
            dependencies: [
                "StrataSync", "StrataSQLite", "StrataQueries", "StrataAssets", "StrataTestSupport", "StrataSyncTestSupport",
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // One suite of the cloud's behaviour, run against MockCloud and the PostgreSQL store.
        .testTarget(
            name: "StrataCloudConformanceTests",
            dependencies: [
                "StrataCloudStore", "StrataSync", "StrataSQLite", "StrataQueries", "StrataAssets", "StrataCloudService", "StrataCloudClient",
                "StrataSyncTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StrataCloudStoreTests",
            dependencies: [
                "StrataCloudStore", "StrataCloud",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StrataCloudServiceTests",
            dependencies: [
                "StrataCloudService", "StrataCloudClient", "StrataCloudWire", "StrataSync",
                "StrataSQLite", "StrataTestSupport", "StrataSyncTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "SQLiteDataPortTests",
            dependencies: [
                "Strata",
                "StrataTestSupport",
                .product(name: "DependenciesTestSupport", package: "swift-dependencies"),
            ]
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: [
                "Strata",
                "CSQLite",
                "StrataTestSupport",
                .product(name: "DependenciesTestSupport", package: "swift-dependencies"),
            ]
        ),
        .testTarget(
            name: "ScorekeeperTests",
            dependencies: [
                "ScorekeeperCore",
                "ScorekeeperCommands",
                "StrataTestSupport",
                .product(name: "DependenciesTestSupport", package: "swift-dependencies"),
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
    ]
)
