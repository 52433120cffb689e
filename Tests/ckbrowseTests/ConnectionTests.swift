import CloudKitWeb
import Foundation
import Testing
@testable import ckbrowse
import ArgumentParser

@Suite struct ProfileTests {
    @Test func parsesProfilesWithCommentsAndQuoting() throws {
        let file = try ProfileFile.parse("""
            # ckbrowse profiles
            [profiles.notes-dev]
            container = "iCloud.com.example.Notes"   # trailing comment
            environment = 'development'
            api-token-env = "NOTES_TOKEN"
            read-only = true

            [profiles."prod"]
            container = "iCloud.com.example.Notes"
            environment = "production"
            key-file = "a # inside quotes"
            """)
        #expect(file.profiles["notes-dev"]?["container"] == "iCloud.com.example.Notes")
        #expect(file.profiles["notes-dev"]?["environment"] == "development" && file.profiles["notes-dev"]?["read-only"] == "true")
        #expect(file.profiles["prod"]?["key-file"] == "a # inside quotes")
    }

    /// A key the file does not know, or a value of another kind, is an error naming it: a misspelt
    /// `readonly = true` or `read-only = "yes"` was read as no setting, and the profile wrote.
    @Test("unknown keys and wrong kinds are refused, named", arguments: [
        ("readonly = true", "profiles.p.readonly: unknown key"), ("read-only = \"yes\"", "profiles.p.read-only: use true or false"),
        ("read-only = 1", "profiles.p.read-only: use true or false"), ("container = 42", "profiles.p.container: use a string"),
        ("contianer = \"iCloud.x\"", "profiles.p.contianer: unknown key"),
    ])
    func strictKeys(line: String, said: String) {
        #expect { try ProfileFile.parse("[profiles.p]\n\(line)\n", path: "c.toml") } throws: { "\($0)".hasPrefix("c.toml: " + said) }
    }

    @Test("bad profile files name the line", arguments: ["container = \"x\"", "[profiles.a]\ncontainer = x", "[profiles.a\nx = 1", "[profiles.a]\njunk"])
    func badFiles(text: String) {
        #expect { try ProfileFile.parse(text, path: "c.toml") } throws: { "\($0)".hasPrefix("c.toml:") }
    }

    /// A real TOML parser: its errors name line and column; inline tables and multi-line strings work.
    @Test func syntaxErrorsNameLineAndColumn() throws {
        #expect { try ProfileFile.parse("[profiles.a]\ncontainer = \"x\"\nserver = nope\n", path: "c.toml") } throws: {
            "\($0)".hasPrefix("c.toml:3:11:")
        }
        let file = try ProfileFile.parse("profiles = { a = { container = \"iCloud.x\", read-only = true } }\n")
        #expect(file.profiles["a"]?["container"] == "iCloud.x" && file.profiles["a"]?["read-only"] == "true")
    }

    @Test func flagsBeatEnvironmentBeatProfiles() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("ckb-prof-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("ckbrowse"), withIntermediateDirectories: true)
        try """
            [profiles.p]
            container = "iCloud.from.profile"
            environment = "production"
            database = "shared"
            api-token = "profile-token"
            server = "http://127.0.0.1:9"

            [profiles.v]
            container = "iCloud.from.profile"
            api-token-env = "CKB_TEST_UNSET_TOKEN_VARIABLE"
            server = "http://127.0.0.1:9"
            """.write(to: home.appendingPathComponent("ckbrowse/config.toml"), atomically: true, encoding: .utf8)
        setenv("XDG_CONFIG_HOME", home.path, 1)
        defer { unsetenv("XDG_CONFIG_HOME") }
        // A profile's token variable that is unset is said to be (the words blamed the profile).
        unsetenv("CKB_TEST_UNSET_TOKEN_VARIABLE")
        let unset = try ConnectionOptions.parse(["--profile", "v"])
        await #expect { _ = try await unset.resolve() } throws: { "\($0)".contains("$CKB_TEST_UNSET_TOKEN_VARIABLE (api-token-env), which is not set") }
        var options = try ConnectionOptions.parse(["--profile", "p"])
        var resolved = try await options.resolve()
        #expect(resolved.info.container == "iCloud.from.profile" && resolved.info.environment == .production && resolved.info.database == .shared)
        #expect(!resolved.isDemo && resolved.info.server == "127.0.0.1:9")
        options = try ConnectionOptions.parse(["--profile", "p", "--container", "iCloud.from.flag", "--database", "public"])
        resolved = try await options.resolve()
        #expect(resolved.info.container == "iCloud.from.flag" && resolved.info.database == .public)
        await #expect { try await ConnectionOptions.parse(["--profile", "missing"]).resolve() } throws: { "\($0)".contains("no profile 'missing'") }
        await #expect { try await ConnectionOptions.parse(["--container", "iCloud.x"]).resolve() } throws: { "\($0)".contains("no credentials") }
    }

    /// `ckbrowse` with no arguments starts the browser without ArgumentParser (`CKBrowse.main`): with
    /// exactly what parsing no arguments gives.
    @Test func noArgumentsStartTheBrowserWithTheParsedDefaults() throws {
        #expect(try CKBrowse.parseAsRoot([]) is Browse)
        #expect(try Browse.parse([]).connection.settings == ConnectionOptions.Settings())
        #expect(try Browse.parse(["--read-only"]).connection.settings != ConnectionOptions.Settings())
    }
}
