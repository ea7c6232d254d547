// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataSQLite", targets: ["StrataSQLite"]),
        .library(name: "StrataObservation", targets: ["StrataObservation"]),
        .library(name: "StrataAssets", targets: ["StrataAssets"]),
        .executable(name: "scorekeeper", targets: ["Scorekeeper"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
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
        // Live queries: region tracking, async sequences, FetchAll / FetchOne / Fetch.
        .target(
            name: "StrataObservation",
            dependencies: ["StrataSQLite"]
        ),
        // Large binary values: zlib-compressed, chunked, content-addressed, integrity-checked.
        .target(
            name: "StrataAssets",
            dependencies: [
                "StrataSQLite",
                "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "Scorekeeper",
            dependencies: ["StrataSQLite"],
            path: "Examples/Scorekeeper"
        ),
        .testTarget(
            name: "StrataSQLiteTests",
            dependencies: ["StrataSQLite", "CSQLite"]
        ),
        .testTarget(
            name: "StrataObservationTests",
            dependencies: ["StrataObservation", "StrataSQLite"]
        ),
        .testTarget(
            name: "StrataAssetsTests",
            dependencies: ["StrataAssets", "StrataSQLite"]
        ),
    ]
)
