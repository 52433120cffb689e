import CloudKitWeb
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Who may call the server: exactly what the flags and `--config` say at this start (SERVER.md, "Threat
/// model"). Nothing of it is kept in the data directory, so an API token, user or key removed from the
/// flags stops working at the next start, and a user whose token changed loses every token minted
/// from the old one (`fingerprint`). Immutable once built: lookups are dictionary reads, no SQLite.
struct CredentialSet: Sendable {
    /// A configured user.
    struct User: Sendable, Hashable {
        var name: String
        var recordName: String
        /// A digest of every token the configuration gives this user: minted tokens carry it under
        /// their MAC, so changing the user's token revokes them.
        var fingerprint: String
    }

    /// A server-to-server key: its PEM public key and the container it is bound to (nil: any).
    struct ServerKey: Sendable {
        var publicKeyPEM: String
        var container: String?
    }

    /// API token → the container it is bound to (nil: any container, a local convenience).
    private(set) var apiTokens: [String: String?] = [:]
    /// Configured web auth token → its user and the session it stands for.
    private(set) var usersByToken: [String: (user: User, session: String)] = [:]
    private(set) var usersByName: [String: User] = [:]
    private(set) var serverKeys: [String: ServerKey] = [:]

    init(_ configuration: LocalServerConfiguration) {
        for token in configuration.apiTokens {
            apiTokens[token] = configuration.credentialContainers[token]
        }
        var tokensByName: [String: [String]] = [:]
        for user in configuration.users { tokensByName[user.name, default: []].append(user.token) }
        for (name, tokens) in tokensByName {
            let digest = SHA256.hash(data: Data(tokens.sorted().joined(separator: "\u{1F}").utf8))
            let user = User(
                name: name, recordName: LocalCloudKit.userRecordName(for: name),
                fingerprint: String.hex(digest.prefix(12)))
            usersByName[name] = user
            for token in tokens { usersByToken[token] = (user, LocalCloudKit.session(ofWebToken: token)) }
        }
        for key in configuration.serverKeys {
            serverKeys[key.keyID] = ServerKey(publicKeyPEM: key.publicKeyPEM, container: configuration.credentialContainers[key.keyID])
        }
    }

    /// An API token is known and, when bound to a container, used for that one (§2.1, §7.8).
    func acceptsAPIToken(_ token: String, container: String) -> Bool {
        guard let bound = apiTokens[token] else { return false }
        return bound == nil || bound == container
    }

    /// The public key of a server-to-server key that may sign for `container`.
    func serverKey(_ keyID: String, container: String) -> String? {
        guard let key = serverKeys[keyID], key.container == nil || key.container == container else { return nil }
        return key.publicKeyPEM
    }

    /// Users by name, sorted (the sign-in page lists them).
    var userNames: [String] { usersByName.keys.sorted() }
}

/// A signed-in caller as authentication found them.
struct SignedInUser: Sendable {
    var name: String
    var recordName: String
    /// The web auth session of the token they came with (stable across rotations).
    var session: String
}
