import CloudKitWeb
import Crypto
import Foundation
import Testing

/// The reference's §2.3 test vector and key-file handling.
@Suite struct SigningTests {
    static let privatePEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIMmvqdhFunUWa1whV2ex1pNOUMPbNuibEnuKYisSD2choAoGCCqGSM49
        AwEHoUQDQgAEYP7UuiVanTHJYet0xjVtaMBJuJI7Yfps5mliLmDyn7Z5A/4QCLi8
        maQa6elWKLxk8vGyDC1+n1F3o8KU1EYimQ==
        -----END EC PRIVATE KEY-----
        """
    static let publicPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYP7UuiVanTHJYet0xjVtaMBJuJI7
        Yfps5mliLmDyn7Z5A/4QCLi8maQa6elWKLxk8vGyDC1+n1F3o8KU1EYimQ==
        -----END PUBLIC KEY-----
        """
    static let subpath = "/database/1/iCloud.com.example.Notes/development/public/records/query"
    static let body = Array(#"{"query":{"recordType":"Note"},"resultsLimit":10}"#.utf8)
    static let expectedString =
        "2024-03-01T12:00:00Z:YyrGmWSzACdtXwWXJWnGn2jwei6CA+a1IJWV2Bs0wTc=:/database/1/iCloud.com.example.Notes/development/public/records/query"
    static let referenceSignature =
        "MEYCIQCTbr2eLB9Zu67xdOhYX0QSvOeCKWs0OJJaqo6fDlPo6gIhAJuPMPU9wDH55JlS9yW/mACJql4EtWge/oyyAXTyKKBJ"

    @Test func stringToSignMatchesTheVector() {
        #expect(ServerToServerKey.stringToSign(date: "2024-03-01T12:00:00Z", body: Self.body, subpath: Self.subpath) == Self.expectedString)
        // GET: empty middle field, not the hash of empty data.
        #expect(ServerToServerKey.stringToSign(date: "D", body: nil, subpath: "/p") == "D::/p")
    }

    @Test func referenceSignatureVerifies() throws {
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: Self.publicPEM)
        let signature = try P256.Signing.ECDSASignature(derRepresentation: Data(base64Encoded: Self.referenceSignature)!)
        #expect(publicKey.isValidSignature(signature, for: Array(Self.expectedString.utf8)))
    }

    @Test func ourSignatureVerifiesWithThePublicKey() throws {
        let key = try ServerToServerKey(keyID: "abc", pem: Self.privatePEM)
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: Self.publicPEM)
        #expect(key.publicKeyPEM.contains("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYP7UuiVanTHJYet0xjVtaMBJuJI7"))
        let signature = try key.signature(date: "2024-03-01T12:00:00Z", body: Self.body, subpath: Self.subpath)
        let der = try P256.Signing.ECDSASignature(derRepresentation: Data(base64Encoded: signature)!)
        #expect(publicKey.isValidSignature(der, for: Array(Self.expectedString.utf8)))
        // A different subpath must not verify.
        #expect(!publicKey.isValidSignature(der, for: Array(Self.expectedString.replacing("public", with: "private").utf8)))
        let headers = try key.headers(date: ISO8601.date(from: "2024-03-01T12:00:00Z")!, body: Self.body, subpath: Self.subpath)
        #expect(headers.map(\.0) == ["X-Apple-CloudKit-Request-KeyID", "X-Apple-CloudKit-Request-ISO8601Date", "X-Apple-CloudKit-Request-SignatureV1"])
        #expect(headers[1].1 == "2024-03-01T12:00:00Z")
    }

    @Test func pkcs8KeysLoadToo() throws {
        let key = P256.Signing.PrivateKey()
        #expect(try ServerToServerKey(keyID: "k", pem: key.pemRepresentation).publicKeyPEM == key.publicKey.pemRepresentation)
    }

    @Test("unusable key files give clear errors", arguments: [
        (publicPEM, "public key"), (P384.Signing.PrivateKey().pemRepresentation, "P-384"),
        ("hello", "not a PEM"), ("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----", "RSA"),
        ("-----BEGIN EC PRIVATE KEY-----\nnot base64\n-----END EC PRIVATE KEY-----", "damaged"),
    ])
    func badKeys(pem: String, phrase: String) {
        #expect {
            _ = try ServerToServerKey(keyID: "k", pem: pem)
        } throws: { error in
            (error as? CloudKitError)?.kind == .keyFile && "\(error)".contains(phrase) && !"\(error)".contains("MHcCAQEE")
        }
    }

    @Test func keyFilesReadableByOthersAreRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ck-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("eckey.pem").path
        try Self.privatePEM.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect {
            _ = try ServerToServerKey.load(keyID: "k", file: path)
        } throws: { "\($0)".contains("chmod 600") }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try ServerToServerKey.load(keyID: "k", file: path).keyID == "k")
        #expect(throws: CloudKitError.self) { try ServerToServerKey.load(keyID: "k", file: path + ".missing") }
    }

    @Test func iso8601RoundTrips() {
        let date = Date(timeIntervalSince1970: 1_453_760_143.9)
        #expect(ISO8601.string(from: date) == "2016-01-25T22:15:43Z")
        #expect(ISO8601.date(from: "2016-01-25T22:15:43Z")?.timeIntervalSince1970 == 1_453_760_143)
        #expect(ISO8601.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ISO8601.date(from: "2016-01-25T22:15:43.5Z") == nil)
    }
}
