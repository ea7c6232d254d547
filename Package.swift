// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataSQLite", targets: ["StrataSQLite"]),
        .executable(name: "scorekeeper", targets: ["Scorekeeper"]),
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
        .target(
            name: "StrataSQLite",
            dependencies: ["CSQLite"]
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
    ]
)
