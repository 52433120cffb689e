import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How requests authenticate.
public enum Credentials: Sendable {
    /// `ckAPIToken` (and optionally `ckWebAuthToken` for a signed-in user) as query parameters.
    case apiToken(String, webAuthToken: String? = nil)
    /// Signed headers with a server-to-server key; reaches only the public database.
    case serverToServer(ServerToServerKey)

    /// The secrets these credentials contain, for redaction.
    var secrets: [String] {
        switch self {
        case .apiToken(let token, let web): return [token] + (web.map { [$0] } ?? [])
        case .serverToServer: return []
        }
    }
}

/// A server-to-server key: the Key ID from CloudKit Console and the P-256 private key behind it.
public struct ServerToServerKey: Sendable {
    public let keyID: String
    /// The raw 32-byte scalar (swift-crypto's key type is not `Sendable`, so the key is rebuilt to sign).
    private let rawKey: Data

    var privateKey: P256.Signing.PrivateKey {
        // The bytes came from a valid key, so this cannot fail.
        try! P256.Signing.PrivateKey(rawRepresentation: rawKey)
    }

    /// The PEM of the public key to paste into CloudKit Console.
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    public init(keyID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.rawKey = privateKey.rawRepresentation
    }

    /// Reads a P-256 private key in PEM (`EC PRIVATE KEY` as `openssl ecparam -genkey` writes it, or PKCS#8
    /// `PRIVATE KEY`). Errors say what is wrong with the file without quoting it.
    public init(keyID: String, pem: String) throws {
        self.init(keyID: keyID, privateKey: try Self.parsePrivateKey(pem: pem))
    }

    /// Loads the key from a file, refusing files that other users can read (as ssh does).
    public static func load(keyID: String, file path: String) throws -> ServerToServerKey {
        func fail(_ reason: String) -> CloudKitError { CloudKitError(kind: .keyFile, reason: reason) }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw fail("cannot read key file \(path): no such file or not accessible")
        }
        if let permissions = integerAttribute(attributes[.posixPermissions]), permissions & 0o077 != 0 {
            let mode = String(permissions & 0o777, radix: 8)
            throw fail("key file \(path) is readable by other users (mode \(mode)); run: chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw fail("cannot read key file \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw fail("key file \(path) is not a PEM text file")
        }
        do {
            return try ServerToServerKey(keyID: keyID, pem: text)
        } catch let error as CloudKitError {
            throw CloudKitError(kind: .keyFile, reason: "key file \(path): " + (error.reason ?? "unusable"))
        }
    }

    static func parsePrivateKey(pem: String) throws -> P256.Signing.PrivateKey {
        func fail(_ reason: String) -> CloudKitError { CloudKitError(kind: .keyFile, reason: reason) }
        guard let label = pem.firstMatchLabel else {
            throw fail("not a PEM file (no -----BEGIN ...----- line)")
        }
        switch label {
        case "PUBLIC KEY":
            throw fail("this is a public key; give the private key (openssl ecparam -name prime256v1 -genkey)")
        case "RSA PRIVATE KEY":
            throw fail("this is an RSA key; CloudKit needs an EC P-256 (prime256v1) key")
        case "ENCRYPTED PRIVATE KEY":
            throw fail("the key is encrypted; decrypt it first (openssl ec -in KEY -out KEY.pem)")
        case "EC PRIVATE KEY", "PRIVATE KEY":
            break
        default:
            throw fail("unexpected PEM block '\(label)'; expected an EC PRIVATE KEY")
        }
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) { return key }
        if (try? P384.Signing.PrivateKey(pemRepresentation: pem)) != nil {
            throw fail("this is a P-384 key; CloudKit needs P-256 (prime256v1)")
        }
        if (try? P521.Signing.PrivateKey(pemRepresentation: pem)) != nil {
            throw fail("this is a P-521 key; CloudKit needs P-256 (prime256v1)")
        }
        throw fail("not a P-256 private key, or the PEM is damaged")
    }

    /// The string the service verifies: `date:base64(sha256(body)):subpath`. For bodyless requests
    /// (GET) the middle field is empty, as live clients send it.
    public static func stringToSign(date: String, body: [UInt8]?, subpath: String) -> String {
        let hash = body.map { Data(SHA256.hash(data: $0)).base64EncodedString() } ?? ""
        return "\(date):\(hash):\(subpath)"
    }

    /// Base64 of the DER-encoded ECDSA P-256/SHA-256 signature.
    public func signature(date: String, body: [UInt8]?, subpath: String) throws -> String {
        let message = Array(Self.stringToSign(date: date, body: body, subpath: subpath).utf8)
        return try privateKey.signature(for: message).derRepresentation.base64EncodedString()
    }

    /// The three `X-Apple-CloudKit-Request-*` headers for a request.
    public func headers(date: Date, body: [UInt8]?, subpath: String) throws -> [(String, String)] {
        let dateString = ISO8601.string(from: date)
        return [
            ("X-Apple-CloudKit-Request-KeyID", keyID),
            ("X-Apple-CloudKit-Request-ISO8601Date", dateString),
            ("X-Apple-CloudKit-Request-SignatureV1", try signature(date: dateString, body: body, subpath: subpath)),
        ]
    }
}

extension String {
    /// The label of the first `-----BEGIN LABEL-----` line.
    fileprivate var firstMatchLabel: String? {
        guard let start = firstRange(of: "-----BEGIN ") else { return nil }
        let rest = self[start.upperBound...]
        guard let end = rest.firstRange(of: "-----") else { return nil }
        return String(rest[..<end.lowerBound])
    }
}


