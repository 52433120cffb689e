// swift-tools-version:6.1
// ckbrowse: a terminal record browser for CloudKit Web Services.
// Layout and dependency rules: see ARCHITECTURE.md.
import PackageDescription

let package = Package(
    name: "ckbrowse",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ckbrowse", targets: ["ckbrowse"]),
        .library(name: "CloudKitWeb", targets: ["CloudKitWeb"]),
        .library(name: "CloudKitModels", targets: ["CloudKitModels"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // No traits: the default FullFoundation trait compiles its form coders' DateFormatter support,
        // Foundation proper, which links ICU's data (34 MB) into the binary; ckbrowse does not use it.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Already in the graph through the packages above; named because our code imports their modules.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // config.toml: a real TOML parser (toml++), with line and column in its errors.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // Wire models, JSON, request bodies, errors and the transport protocol: no I/O, no dependencies,
        // so the pure browser core can use them without linking networking.
        .target(name: "CloudKitModels"),
        // The shared client module: the client, auth, paging and the AsyncHTTPClient transport; it
        // re-exports CloudKitModels.
        .target(
            name: "CloudKitWeb",
            dependencies: [
                "CloudKitModels",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // SQLite's C API, from the system's libsqlite3.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // SQLite connections, statements, rows, transactions, a WAL pool and migrations: the database
        // layer of the server and of the browser's cache, on SQLite's C API alone (no Foundation beyond
        // FoundationEssentials, so it brings no ICU into the binary).
        .target(name: "SQLiteDB", dependencies: ["CSQLite"]),
        // The local CloudKit-compatible server: SQLite storage, the service's semantics, HTTP adapter.
        .target(
            name: "CloudKitLocal",
            dependencies: [
                "CloudKitWeb", "CloudKitModels",
                // SQLite, and its C API for writing change pages straight from column buffers (RowJSON).
                "SQLiteDB", "CSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // libc pieces Swift's Glibc module hides (wcwidth, locale, SIGWINCH pipe, posix_spawn, mallopt).
        .target(name: "CLibc"),
        // PURE terminal UI: cells, styles, width-aware text, screen buffer + diff, keys, backends.
        .target(name: "TerminalUI", dependencies: ["CLibc"]),
        // PURE browser: state, events, effects, screens. No curses, no networking.
        .target(name: "RecordBrowser", dependencies: ["TerminalUI", "CloudKitModels"]),
        // What runs the pure browser: the loop (core update, journal, effects), the effect runner (client,
        // record cache, asset transfers, push listener) and the staging journal.
        .target(
            name: "BrowserRuntime",
            dependencies: [
                "CloudKitWeb", "RecordBrowser", "SQLiteDB",
                // SHA-256 of the account in cache and journal file names.
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Test doubles of the runtime (HeadlessHost: a host without a terminal), for the tests and the
        // benchmarks, which run the browser headless; kept out of BrowserRuntime, which the app ships.
        .target(name: "BrowserRuntimeTesting", dependencies: ["BrowserRuntime", "RecordBrowser", "CloudKitModels"]),
        // ncursesw macros, globals and wide-character helpers Swift cannot import directly.
        .target(
            name: "CNcursesw",
            linkerSettings: [.linkedLibrary("ncursesw", .when(platforms: [.linux])), .linkedLibrary("ncurses", .when(platforms: [.macOS]))]
        ),
        // The only module that calls curses.
        .target(name: "CursesBackend", dependencies: ["TerminalUI", "CNcursesw", "CLibc"]),
        // The one executable: argument parsing and wiring only.
        .executableTarget(
            name: "ckbrowse",
            dependencies: [
                "CloudKitWeb",
                "CloudKitLocal",
                "TerminalUI",
                "RecordBrowser",
                "BrowserRuntime",
                // The benchmarks (`ckbrowse bench`) drive the browser headless.
                "BrowserRuntimeTesting",
                "CursesBackend",
                "CLibc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                // `serve` runs the server as a service (`runService`, `ServiceGroup.run`).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "CloudKitWebTests",
            dependencies: [
                "CloudKitWeb",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "TerminalUITests", dependencies: ["TerminalUI"]),
        .testTarget(name: "ckbrowseTests", dependencies: ["ckbrowse", "CloudKitWeb", "CursesBackend", "TerminalUI"]),
        .testTarget(
            name: "BrowserRuntimeTests",
            dependencies: ["BrowserRuntime", "BrowserRuntimeTesting", "RecordBrowser", "CloudKitWeb", "CloudKitLocal", "SQLiteDB"]
        ),
        .testTarget(name: "RecordBrowserTests", dependencies: ["RecordBrowser", "TerminalUI", "CloudKitWeb", "BrowserRuntime"], exclude: ["Snapshots"]),
        .testTarget(
            name: "CloudKitLocalTests",
            dependencies: [
                "CloudKitLocal", "CloudKitWeb", "SQLiteDB", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ],
            // Read from the source tree (#filePath), as CloudKitWebTests reads its fixtures.
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "SQLiteDBTests", dependencies: ["SQLiteDB"]),
    ],
    swiftLanguageModes: [.v6]
)

// A file sees the members of the modules it imports, not those its dependencies import: without this,
// Foundation's `StringProtocol.contains` (Foundation proper, which links ICU's data into the binary)
// wins over the standard library's in any file, through Hummingbird's or TOMLKit's own imports.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
