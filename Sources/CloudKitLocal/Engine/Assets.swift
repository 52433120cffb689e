import CloudKitWeb
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SQLiteDB

/// Assets (reference §3.6, §4.16–4.18), end to end:
///
/// 1. `assets/upload` answers one upload URL per requested record field: `/upload/1/{token}` on this
///    server, the token naming the database, zone, record and field, valid 15 minutes, MAC-signed.
/// 2. `POST` of the bytes to that URL stores them (`asset_blob`, one row per file per container and
///    environment) and answers `{"singleFile": {fileChecksum, size, receipt[, wrappingKey,
///    referenceChecksum]}}`.
/// 3. `records/modify` accepts an asset value carrying that receipt, checks it and that the value's
///    checksum and size are the uploaded file's, and stores the value without receipt.
/// 4. Fetched records carry `downloadURL`: `/assets/1/{token}/${f}`, the literal `${f}` for the
///    client to replace with a file name; a GET of it answers the bytes. The token is MAC-signed, so
///    the URL itself is the permission, as Apple's signed CDN URLs are; it names the record and field
///    it was fetched with and who fetched it, and expires (`downloadURLBucket`): a GET answers only
///    while the record still holds the file and its reader may still read the record.
///
/// Not emulated: encryption. Private-database uploads get a random `wrappingKey` and its
/// `referenceChecksum`, which a save must present unchanged, but the bytes are stored as uploaded.
extension LocalCloudKit {
    /// Upload URLs are valid 15 minutes (§6).
    static let uploadURLLifetime: Int64 = 15 * 60 * 1000
    /// How long a receipt may be saved after the upload. Unconfirmed: the reference gives no figure; an
    /// hour covers a client that uploads, then edits before saving.
    static let receiptLifetime: Int64 = 60 * 60 * 1000
    static let uploadPathPrefix = "/upload/1/"
    static let downloadPathPrefix = "/assets/1/"
    /// Download URLs expire at the end of the half hour after the one they were made in (so 30 to 60
    /// minutes after). Unconfirmed: Apple's CDN URLs expire too, after a time it does not publish.
    /// Answers kept by the answer cache are dropped when the half hour turns (`AnswerCache`), so no
    /// kept answer hands out a URL that is about to expire.
    static let downloadURLBucket: Int64 = 30 * 60 * 1000

    // MARK: - assets/upload

    /// `assets/upload`: `{"tokens": [{recordName, fieldName, url}]}`, one per requested field, in order.
    /// A missing `recordName` gets a random UUID, as the reference says.
    func requestAssetUploads(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(AssetUploadRequest.self, body)
        try checkCount(request.tokens.count, "tokens")
        let (zone, context) = try zoneAndContext(db, context, request.zoneID)
        let expires = context.now + Self.uploadURLLifetime
        let base = baseURL.withLock { $0 }
        var tokens: [JSON] = []
        for item in request.tokens {
            guard Self.isValidName(item.fieldName), !item.fieldName.hasPrefix("___") else {
                throw ServiceError.badRequest("invalid fieldName '\(item.fieldName.prefix(80))'")
            }
            let recordName = item.recordName ?? UUID().uuidString
            guard Self.isValidName(recordName) else { throw ServiceError.badRequest("invalid recordName '\(recordName.prefix(80))'") }
            let token = signedToken(["u1", String(context.dbID), zone.name, recordName, item.recordType ?? "", item.fieldName, String(expires)])
            tokens.append(["recordName": .string(recordName), "fieldName": .string(item.fieldName), "url": .string(base + Self.uploadPathPrefix + token)])
        }
        return ["tokens": .array(tokens)]
    }

    /// What an upload token says, once its MAC is checked.
    struct UploadGrant {
        var dbID: Int64
        var zone: String
        var recordName: String
        var fieldName: String
        var expires: Int64
    }

    func uploadGrant(_ token: String) -> UploadGrant? {
        guard let parts = verifiedToken(token, kind: "u1", parts: 7), let dbID = Int64(parts[1]), let expires = Int64(parts[6]) else { return nil }
        return UploadGrant(dbID: dbID, zone: parts[2], recordName: parts[3], fieldName: parts[5], expires: expires)
    }

    /// `parts` (the first names the kind) and their MAC, as one opaque token: upload URLs, receipts
    /// and download URLs carry their own permission.
    func signedToken(_ parts: [String]) -> String {
        OpaqueToken.encode(parts + [mac(parts.joined(separator: "\u{1F}"))])
    }

    /// The parts of a token `signedToken` made of `parts` parts of this `kind`, if its MAC is right.
    func verifiedToken(_ token: String, kind: String, parts count: Int) -> [String]? {
        guard let parts = OpaqueToken.decode(token), parts.count == count + 1, parts[0] == kind,
            mac(parts[0..<count].joined(separator: "\u{1F}")) == parts[count]
        else { return nil }
        return Array(parts[0..<count])
    }

    // MARK: - The bytes

    /// `POST /upload/1/{token}` with the file as the body.
    func uploadAssetBytes(_ request: ServerRequest, uuid: String) async throws -> ServerResponse {
        guard request.method.uppercased() == "POST" else {
            var error = ServiceError(.badRequest, "method \(request.method.prefix(10)) not allowed: POST the file's bytes", status: 405)
            error.extraHeaders = [("Allow", "POST")]
            throw error
        }
        let token = String(request.path.dropFirst(Self.uploadPathPrefix.count))
        guard let grant = uploadGrant(token) else {
            throw ServiceError(.accessDenied, "this upload URL is not valid: request one with assets/upload", status: 403)
        }
        let now = Int64((configuration.now().timeIntervalSince1970 * 1000).rounded())
        // Unconfirmed what the CDN answers for an expired URL; ACCESS_DENIED with the reason says it.
        guard now <= grant.expires else {
            throw ServiceError(.accessDenied, "this upload URL expired (they are valid 15 minutes): request a new one with assets/upload", status: 403)
        }
        guard !request.body.isEmpty else { throw ServiceError.badRequest("the upload is empty: POST the file's bytes as the body") }
        guard request.body.count <= configuration.maximumAssetBytes else { throw assetTooLarge(request.body.count) }
        let checksum = Self.fileChecksum(request.body)
        let size = Int64(request.body.count)
        let (blobID, scope): (Int64, String) = try await store.pool.write { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT container, environment, scope FROM ckdb WHERE id = ?"), arguments: [grant.dbID]) else {
                throw ServiceError(.accessDenied, "this upload URL is for a database that no longer exists", status: 403)
            }
            // An upload URL works once, as the CDN's: a second POST stores nothing.
            try db.cachedStatement(sql: "DELETE FROM used_upload WHERE expires < ?").execute(arguments: [now])
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO used_upload (token, expires) VALUES (?, ?)").execute(arguments: [token, grant.expires])
            guard db.changesCount == 1 else {
                throw ServiceError(.accessDenied, "this upload URL was already used: request a new one with assets/upload", status: 403)
            }
            return (try Self.storeBlob(db, container: row["container"], environment: row["environment"], bytes: request.body, checksum: checksum, now: now), row["scope"])
        }
        var file = JSONObject()
        // Private (and shared) databases encrypt assets with a per-file key; its checksum goes with the
        // receipt, so a save must present the pair it was given.
        var referenceChecksum: String?
        if scope != DatabaseScope.public.rawValue {
            var random = SystemRandomNumberGenerator()
            let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
            let wrappingKey = Data(key).base64EncodedString()
            referenceChecksum = Self.fileChecksum(Array(wrappingKey.utf8))
            file.set("wrappingKey", wrappingKey)
        }
        file.set("fileChecksum", checksum)
        file.set("receipt", receipt(blobID: blobID, expires: now + Self.receiptLifetime, referenceChecksum: referenceChecksum))
        file.set("referenceChecksum", referenceChecksum)
        file.set("size", size)
        return respond(200, .object(["singleFile": .object(file)]), uuid: uuid, extra: [])
    }

    func assetTooLarge(_ bytes: Int?) -> ServiceError {
        let limit = configuration.maximumAssetBytes
        let what = bytes.map { "an asset file of \($0) bytes" } ?? "this asset file"
        return ServiceError.badRequest("\(what) exceeds the limit of \(limit) bytes (\(limit >> 20) MB; serve --max-asset-mb)")
    }

    /// The answer to an upload larger than `maximumAssetBytes` (the HTTP adapter stops reading it).
    public func assetTooLargeResponse() -> ServerResponse {
        let uuid = Self.requestUUID()
        return assetTooLarge(nil).response(uuid: uuid)
    }

    /// Stores a file's bytes once per container and environment; returns its row id.
    static func storeBlob(_ db: Database, container: String, environment: String, bytes: [UInt8], checksum: String, now: Int64) throws -> Int64 {
        try Int64.fetchOne(
            db,
            sql: """
                INSERT INTO asset_blob (container, environment, checksum, size, data, created_ms) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (container, environment, checksum) DO UPDATE SET created_ms = excluded.created_ms
                RETURNING id
                """,
            arguments: [container, environment, checksum, bytes.count, Data(bytes), now]) ?? 0
    }

    /// A file's `fileChecksum`: 21 bytes, a version byte and 20 bytes of its SHA-256, in base64 (the
    /// shape of the service's). The service's is a server-minted identity, not a digest clients can
    /// recompute (MistKit found so); clients should check `size` and not recompute this either.
    static func fileChecksum(_ bytes: [UInt8]) -> String {
        Data([1] + SHA256.hash(data: bytes).prefix(20)).base64EncodedString()
    }

    // MARK: - Receipts

    func receipt(blobID: Int64, expires: Int64, referenceChecksum: String?) -> String {
        signedToken(["r1", String(blobID), String(expires), referenceChecksum ?? ""])
    }

    struct Receipt {
        var blobID: Int64
        var expires: Int64
        var referenceChecksum: String?
    }

    func decodeReceipt(_ text: String) -> Receipt? {
        guard let parts = verifiedToken(text, kind: "r1", parts: 4), let blobID = Int64(parts[1]), let expires = Int64(parts[2]) else { return nil }
        return Receipt(blobID: blobID, expires: expires, referenceChecksum: parts[3].isEmpty ? nil : parts[3])
    }

    // MARK: - Saving asset fields

    /// The asset values of a save checked and made ready to store (receipt and download URL left
    /// out). A value with a receipt must match the file the receipt is for; one without must be the
    /// field's current asset, unchanged (a client saving back what it fetched). Which record and field
    /// a receipt was requested for is not checked: unconfirmed whether the service does, and a client
    /// that uploads once and saves elsewhere would fail here for no documented reason.
    func acceptAssets(
        _ fields: [String: FieldValue], previous: [String: FieldValue], _ db: Database, _ context: RequestContext
    ) throws -> [String: FieldValue] {
        var accepted = fields
        for (name, value) in fields {
            switch value {
            case .asset(let asset):
                accepted[name] = .asset(try acceptAsset(asset, field: name, previous: previous[name], db, context))
            case .assetList(let assets):
                accepted[name] = .assetList(try assets.map { try acceptAsset($0, field: name, previous: previous[name], db, context) })
            default:
                continue
            }
        }
        return accepted
    }

    func acceptAsset(_ asset: Asset, field: String, previous: FieldValue?, _ db: Database, _ context: RequestContext) throws -> Asset {
        guard let checksum = asset.fileChecksum, let size = asset.size else {
            throw ItemError(.badRequest, "asset field '\(field)': fileChecksum and size are required (put assets/upload's singleFile in the field)")
        }
        guard let receiptText = asset.receipt else {
            let current: [Asset]
            switch previous {
            case .asset(let a)?: current = [a]
            case .assetList(let list)?: current = list
            default: current = []
            }
            guard let kept = current.first(where: { $0.fileChecksum == checksum }) else {
                throw ItemError(.badRequest, "asset field '\(field)': a new asset needs the receipt of its upload (assets/upload, or assets/rereference to reuse one)")
            }
            return kept
        }
        guard let receipt = decodeReceipt(receiptText) else {
            throw ItemError(.badRequest, "asset field '\(field)': the receipt is not valid (it comes from uploading to an assets/upload URL)")
        }
        guard context.now <= receipt.expires else {
            throw ItemError(.badRequest, "asset field '\(field)': the receipt expired: upload the file again")
        }
        guard let blob = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT checksum, size FROM asset_blob WHERE id = ? AND container = ? AND environment = ?"),
            arguments: [receipt.blobID, context.container, context.environment.rawValue])
        else {
            throw ItemError(.badRequest, "asset field '\(field)': the receipt is for a file this container and environment do not hold (uploaded elsewhere, or reset since)")
        }
        guard blob["checksum"] == checksum, blob["size"] == size else {
            throw ItemError(.badRequest, "asset field '\(field)': fileChecksum and size are not those of the uploaded file (\(blob["size"] as Int64) bytes)")
        }
        var stored = Asset(fileChecksum: checksum, size: size)
        if let reference = receipt.referenceChecksum {
            guard let key = asset.wrappingKey, asset.referenceChecksum == reference, Self.fileChecksum(Array(key.utf8)) == reference else {
                throw ItemError(.badRequest, "asset field '\(field)': wrappingKey and referenceChecksum are required and must be those the upload answered")
            }
            stored.referenceChecksum = reference
            stored.wrappingKey = key
        }
        return stored
    }

    // MARK: - Fetching

    /// The record with a `downloadURL` on each asset whose file this server holds.
    func withDownloadURLs(_ record: StoredRecord, _ db: Database, _ context: RequestContext) throws -> StoredRecord {
        guard record.hasAssets, !record.deleted else { return record }
        var record = record
        if let text = record.storedFieldsText {
            record.fields = try Record.decodeStoredFields(text)
            record.storedFieldsText = nil
        }
        let base = baseURL.withLock { $0 }
        let reader = AssetReader(context)
        func linked(_ asset: Asset) throws -> Asset {
            guard let checksum = asset.fileChecksum, let id = try blobID(checksum: checksum, db, reader) else { return asset }
            var asset = asset
            asset.receipt = nil
            asset.downloadURL = downloadLink(base: base, blobID: id, record: record.name, zone: record.zone, reader).url
            return asset
        }
        for (name, value) in record.fields {
            switch value {
            case .asset(let a): record.fields[name] = .asset(try linked(a))
            case .assetList(let list): record.fields[name] = .assetList(try list.map(linked))
            default: continue
            }
        }
        return record
    }

    /// A stored fields text with download URLs added to its asset values, every other byte copied as
    /// stored: a change page's row holding a picture is not decoded. Asset dictionaries are stored as
    /// this server writes them (`fileChecksum` first, no `receipt` or `downloadURL`), so each begins
    /// with `{"fileChecksum":"` (inside a JSON string those quotes would be escaped), and its URL
    /// goes before its closing brace, where `Asset.json` puts it. Nil when nothing was added.
    func linkedFields(_ bytes: UnsafeBufferPointer<UInt8>, record: String, zone: String, _ db: Database, _ context: RequestContext) throws -> [UInt8]? {
        var writer = JSONWriter(capacity: bytes.count + 256)
        return try writeWithDownloadURLs(bytes, record: record, zone: zone, db, context, zoneID: nil, into: &writer) ? writer.bytes : nil
    }

    /// Writes a stored fields text or rendering with its download URLs spliced in, straight into the
    /// answer (no linked copy made first), and a query's `zoneID` as its last key when given: what
    /// `RecordWire.write` writes of `linkedFields`' bytes. False, having written nothing, when there
    /// is no URL to add.
    func writeWithDownloadURLs(
        _ bytes: UnsafeBufferPointer<UInt8>, record: String, zone: String, _ db: Database, _ context: RequestContext, zoneID: [UInt8]?,
        into writer: inout JSONWriter
    ) throws -> Bool {
        guard let links = try downloadLinks(bytes, record: record, zone: zone, db, context) else { return false }
        // The zoneID takes the closing brace's place, as in `RecordWire.write`.
        let zoneID = bytes.count > 1 ? zoneID : nil
        Self.writeLinked(bytes, upTo: zoneID == nil ? bytes.count : bytes.count - 1, links, into: &writer, write: DownloadLink.write)
        if let zoneID { RecordWire.writeZoneIDEnd(zoneID, into: &writer) }
        return true
    }

    /// Where `bytes` (a fields text or a rendering) get download URLs, and what each is made of.
    private func downloadLinks(
        _ bytes: UnsafeBufferPointer<UInt8>, record: String, zone: String, _ db: Database, _ context: RequestContext
    ) throws -> [(brace: Int, link: DownloadLink)]? {
        let base = baseURL.withLock { $0 }
        // What the links need of the context, taken once: a closure capturing the context copied all
        // of it for every record with an asset on a page.
        let reader = AssetReader(context)
        var failure: (any Error)?
        let links = Self.downloadLinks(bytes) { checksum -> DownloadLink? in
            do {
                return try blobID(checksum: checksum, db, reader).map { downloadLink(base: base, blobID: $0, record: record, zone: zone, reader) }
            } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
        return links
    }

    /// What identifies a file: its container, environment and checksum.
    struct BlobKey: Hashable {
        var container: String
        var environment: CloudKitEnvironment
        var checksum: String

        /// The checksum alone is hashed (equality still compares all three): a server's keys nearly
        /// all share their container and environment, and hashing the container's name for every
        /// asset of every page was most of what finding its file cost.
        func hash(into hasher: inout Hasher) { hasher.combine(checksum) }
    }

    /// The id of the file with `checksum` in the request's container and environment. Ids read at a
    /// change stamp are kept for requests at that stamp (a file comes and goes only with a commit).
    func blobID(checksum: String, _ db: Database, _ reader: AssetReader) throws -> Int64? {
        let key = BlobKey(container: reader.container, environment: reader.environment, checksum: checksum)
        return try blobIDs.value(at: reader.stamp, key) {
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM asset_blob WHERE container = ? AND environment = ? AND checksum = ?"),
                arguments: [key.container, key.environment.rawValue, key.checksum])
        }
    }

    /// What finding a file and granting its download take of a request's context.
    struct AssetReader {
        var container: String
        var environment: CloudKitEnvironment
        var stamp: Int64?
        var dbID: Int64
        var reader: String
        var now: Int64

        init(_ context: RequestContext) {
            container = context.container
            environment = context.environment
            stamp = context.stamp
            dbID = context.dbID
            reader = context.caller.actingRecordName ?? ""
            now = context.now
        }
    }

    /// A file's download URL in its parts (`url`: the token, then the literal `${f}` for the client's
    /// file name).
    func downloadLink(base: String, blobID: Int64, record: String, zone: String, _ reader: AssetReader) -> DownloadLink {
        let grant = DownloadGrant(
            blobID: blobID, dbID: reader.dbID, zone: zone, record: record, reader: reader.reader,
            expires: (reader.now / Self.downloadURLBucket + 2) * Self.downloadURLBucket)
        return DownloadLink(base: base, token: downloadToken(grant))
    }

    /// A download URL as its parts: the server's base URL and the grant's token (`downloadURL` is
    /// `url`). Written into an answer piece by piece, each piece escaped, so no string is made of them
    /// for every asset of every page.
    struct DownloadLink {
        var base: String
        var token: String

        var url: String { base + LocalCloudKit.downloadPathPrefix + token + "/${f}" }

        /// `writer.writeString(url)`'s bytes.
        static func write(_ link: DownloadLink, into writer: inout JSONWriter) {
            writer.raw("\"")
            writer.writeStringContents(link.base)
            writer.writeStringContents(LocalCloudKit.downloadPathPrefix)
            writer.writeStringContents(link.token)
            writer.raw("/${f}\"")
        }
    }

    /// The closing brace of each asset dictionary in `bytes` whose checksum `link` knows, with what it
    /// answered; nil when there is nothing to add, or when the text cannot be read through (then it is
    /// answered as stored, as before any URL). The marker is looked for at each `{` (`memchr`): most
    /// of a row's bytes are not in an asset dictionary.
    static func downloadLinks<Link>(_ bytes: UnsafeBufferPointer<UInt8>, link: (String) -> Link?) -> [(brace: Int, link: Link)]? {
        guard let base = bytes.baseAddress else { return nil }
        let marker: StaticString = #"{"fileChecksum":""#
        let count = bytes.count
        var links: [(brace: Int, link: Link)] = []
        var i = 0
        let markerCount = marker.utf8CodeUnitCount
        while i + markerCount <= count, let found = memchr(base + i, Int32(UInt8(ascii: "{")), count - i) {
            let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            guard at + markerCount <= count, memcmp(base + at, marker.utf8Start, markerCount) == 0 else {
                i = at + 1
                continue
            }
            let start = at + markerCount
            let end = FieldsText.closingQuote(bytes, from: start)
            guard end < count, let close = FieldsText.endOfValue(bytes, from: at), close > 0, bytes[close - 1] == UInt8(ascii: "}") else { return nil }
            let checksum = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            if let found = link(checksum) { links.append((close - 1, found)) }
            i = close
        }
        return links.isEmpty ? nil : links
    }

    /// Writes `bytes[..<end]` with `,"downloadURL":` and its link (`write`) before each brace of
    /// `links` (in order, all before `end`).
    static func writeLinked<Link>(
        _ bytes: UnsafeBufferPointer<UInt8>, upTo end: Int, _ links: [(brace: Int, link: Link)], into writer: inout JSONWriter,
        write: (Link, inout JSONWriter) -> Void
    ) {
        var copied = 0
        for (brace, link) in links {
            writer.raw(UnsafeBufferPointer(rebasing: bytes[copied..<brace]))
            writer.raw(#","downloadURL":"#)
            write(link, &writer)
            copied = brace
        }
        writer.raw(UnsafeBufferPointer(rebasing: bytes[copied..<end]))
    }

    /// What a download URL lets its holder fetch: one file, as the field of one record, as read by
    /// one reader (`""`: no signed-in user), until `expires`.
    struct DownloadGrant: Hashable {
        var blobID: Int64
        var dbID: Int64
        var zone: String
        var record: String
        var reader: String
        var expires: Int64

        /// What tells the grants of one page apart is hashed (equality still compares every part):
        /// the database, zone and reader are the same for all of them.
        func hash(into hasher: inout Hasher) {
            hasher.combine(blobID)
            hasher.combine(record)
            hasher.combine(expires)
        }
    }

    /// A grant's token (its parts and a MAC): computed once per grant and kept, since the MAC costs
    /// more than the rest of a record's answer.
    func downloadToken(_ grant: DownloadGrant) -> String {
        if let known = downloadTokens.withLock({ $0[grant] }) { return known }
        let token = signedToken(["a2", String(grant.blobID), String(grant.dbID), grant.zone, grant.record, grant.reader, String(grant.expires)])
        downloadTokens.withLock { tokens in
            if tokens.count > 100_000 { tokens.removeAll() }
            tokens[grant] = token
        }
        return token
    }

    func downloadGrant(_ token: String) -> DownloadGrant? {
        guard let parts = verifiedToken(token, kind: "a2", parts: 7), let blobID = Int64(parts[1]), let dbID = Int64(parts[2]),
            let expires = Int64(parts[6])
        else { return nil }
        return DownloadGrant(blobID: blobID, dbID: dbID, zone: parts[3], record: parts[4], reader: parts[5], expires: expires)
    }

    /// Whether the grant's reader may still read its record, and the record still holds the file.
    func downloadStillAllowed(_ grant: DownloadGrant, checksum: String, _ db: Database) throws -> Bool {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT container, environment, scope, owner FROM ckdb WHERE id = ?"), arguments: [grant.dbID]),
            let scope = DatabaseScope(rawValue: row["scope"]), let environment = CloudKitEnvironment(rawValue: row["environment"]),
            let record = try StoredRecord.load(db, dbID: grant.dbID, zone: grant.zone, name: grant.record), !record.deleted
        else { return false }
        let holdsFile = record.fields.values.contains { value in
            switch value {
            case .asset(let a): return a.fileChecksum == checksum
            case .assetList(let list): return list.contains { $0.fileChecksum == checksum }
            default: return false
            }
        }
        guard holdsFile else { return false }
        let owner: String = row["owner"]
        let key = DatabaseKey(container: row["container"], environment: environment, scope: scope, owner: owner)
        var caller = Caller()
        caller.userRecordName = grant.reader.isEmpty ? nil : grant.reader
        var context = RequestContext(
            route: Route(container: key.container, environment: environment, scope: scope, endpoint: .recordsLookup), caller: caller, key: key,
            dbID: grant.dbID, now: Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()))
        if scope != .public && owner != grant.reader {
            // Read through a share: the reader must still be an accepted participant reaching it.
            guard !grant.reader.isEmpty else { return false }
            context.access = try access(db, ownerDB: grant.dbID, zone: grant.zone, user: grant.reader)
        }
        return try mayRead(record, db, context)
    }

    /// `GET /assets/1/{token}/{file name}`: the file's bytes. The name is the client's (`${f}`).
    func downloadAsset(_ request: ServerRequest, uuid: String) async throws -> ServerResponse {
        guard request.method.uppercased() == "GET" else {
            var error = ServiceError(.badRequest, "method \(request.method.prefix(10)) not allowed: GET a download URL", status: 405)
            error.extraHeaders = [("Allow", "GET")]
            throw error
        }
        let rest = request.path.dropFirst(Self.downloadPathPrefix.count).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let token = rest.first, let grant = downloadGrant(String(token)) else {
            throw ServiceError(.notFound, "no such asset (download URLs come from fetched records)", status: 404)
        }
        let now = Int64((configuration.now().timeIntervalSince1970 * 1000).rounded())
        guard now <= grant.expires else {
            throw ServiceError(.accessDenied, "this download URL expired: fetch the record again for a new one", status: 403)
        }
        let data = try await store.pool.read { db -> Data? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT checksum, data FROM asset_blob WHERE id = ?"), arguments: [grant.blobID]) else { return nil }
            guard try self.downloadStillAllowed(grant, checksum: row["checksum"], db) else {
                throw ServiceError(.accessDenied, "this download URL no longer works: its record no longer holds the file, or its reader lost access", status: 403)
            }
            return row["data"]
        }
        guard let data else { throw ServiceError(.notFound, "the asset is gone (no record refers to it any more)", status: 404) }
        var headers: [(name: String, value: String)] = [
            (name: "Content-Type", value: "application/octet-stream"), (name: "X-Apple-Request-UUID", value: uuid),
        ]
        if rest.count > 1, let name = PercentEncoding.decode(rest[1]), let disposition = Self.contentDisposition(fileName: name) {
            headers.append((name: "Content-Disposition", value: disposition))
        }
        return ServerResponse(status: 200, headers: headers, body: Array(data))
    }

    /// `attachment` with the client's file name made safe: its last path component only (no `../`),
    /// no control, bidi or invisible formatting characters; an ASCII `filename` and the exact UTF-8 name
    /// as RFC 6266's `filename*`. Nil for no name (or `${f}` left unreplaced).
    static func contentDisposition(fileName: String) -> String? {
        let last = fileName.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let cleaned = String(String.UnicodeScalarView(last.unicodeScalars.filter { scalar in
            !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.generalCategory == .format
                || scalar.properties.generalCategory == .lineSeparator || scalar.properties.generalCategory == .paragraphSeparator)
        }))
        guard !cleaned.isEmpty, cleaned != "${f}", cleaned != ".", cleaned != ".." else { return nil }
        let ascii = String(cleaned.unicodeScalars.map { $0.isASCII && $0 != "\"" && $0 != "\\" && $0 != "%" ? Character($0) : "_" })
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''" + PercentEncoding.encodeQueryValue(cleaned)
    }

    // MARK: - assets/rereference

    /// `assets/rereference`: for each `{recordName, fieldName}`, the field's asset dictionaries with a
    /// fresh receipt, to save on other records without uploading again. The answer's top-level key is
    /// unconfirmed (the reference says "an array of asset value dictionaries"): `assets`, each entry an
    /// asset dictionary naming its record and field (one per element of an asset list); a field that
    /// cannot be read is an entry with `serverErrorCode` and `reason`.
    func rereferenceAssets(_ db: Database, _ context: RequestContext, _ body: JSON) throws -> JSON {
        let request = try decodeBody(AssetRereferenceRequest.self, body)
        try checkCount(request.assets.count, "assets")
        let (zone, context) = try zoneAndContext(db, context, request.zoneID)
        let reader = AssetReader(context)
        var entries: [JSON] = []
        func failure(_ item: AssetFieldID, _ code: ServerErrorCode, _ reason: String) -> JSON {
            ["recordName": .string(item.recordName), "fieldName": .string(item.fieldName), "serverErrorCode": .string(code.rawValue), "reason": .string(reason)]
        }
        for item in request.assets {
            guard let record = try StoredRecord.load(db, dbID: context.dbID, zone: zone.name, name: item.recordName), !record.deleted,
                context.access.map({ $0.permission(record.name) != nil }) ?? true
            else {
                entries.append(failure(item, .notFound, "Record not found"))
                continue
            }
            // A receipt is a copy of the file: only for a record the caller may READ, as records/lookup.
            guard try mayRead(record, db, context) else {
                entries.append(failure(item, .accessDenied, RecordTypeSchema.refusal(.read)))
                continue
            }
            let assets: [Asset]
            switch record.fields[item.fieldName] {
            case .asset(let a)?: assets = [a]
            case .assetList(let list)?: assets = list
            default:
                entries.append(failure(item, .badRequest, "field '\(item.fieldName)' of '\(item.recordName)' holds no asset"))
                continue
            }
            for asset in assets {
                guard let checksum = asset.fileChecksum, let id = try blobID(checksum: checksum, db, reader) else {
                    entries.append(failure(item, .notFound, "the asset's file is not held by this server"))
                    continue
                }
                var object = JSONObject()
                object.set("recordName", item.recordName)
                object.set("fieldName", item.fieldName)
                object.set("fileChecksum", checksum)
                object.set("size", asset.size)
                object.set("receipt", receipt(blobID: id, expires: context.now + Self.receiptLifetime, referenceChecksum: asset.referenceChecksum))
                object.set("referenceChecksum", asset.referenceChecksum)
                object.set("wrappingKey", asset.wrappingKey)
                entries.append(.object(object))
            }
        }
        return ["assets": .array(entries)]
    }

    // MARK: - Garbage

    /// Deletes files no record refers to, once no receipt for them can still be saved (§4.18: assets
    /// are collected only when no record references them). Run when the service starts and after a
    /// reset; returns how many went.
    @discardableResult
    static func collectUnusedAssets(_ db: Database, now: Int64) throws -> Int {
        // Files old enough to go, if unused: most starts have none, and then no record is read.
        let candidates = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, container, environment, checksum FROM asset_blob WHERE created_ms < ?"), arguments: [now - receiptLifetime])
        guard !candidates.isEmpty else { return 0 }
        var used = Set<String>()
        let rows = try Row.fetchCursor(
            db, sql: "SELECT c.container, c.environment, r.fields FROM record r JOIN ckdb c ON c.id = r.db WHERE r.has_assets = 1 AND r.deleted = 0")
        while let row = try rows.next() {
            guard let text: String = row["fields"] else { continue }
            let prefix = (row["container"] as String) + "\u{1F}" + (row["environment"] as String) + "\u{1F}"
            if let checksums = Self.fileChecksums(text) {
                for checksum in checksums { used.insert(prefix + checksum) }
                continue
            }
            guard let fields = try? Record.decodeStoredFields(text) else { continue }
            for value in fields.values {
                switch value {
                case .asset(let a): a.fileChecksum.map { _ = used.insert(prefix + $0) }
                case .assetList(let list): for a in list { a.fileChecksum.map { _ = used.insert(prefix + $0) } }
                default: continue
                }
            }
        }
        var removed = 0
        for row in candidates {
            let key = (row["container"] as String) + "\u{1F}" + (row["environment"] as String) + "\u{1F}" + (row["checksum"] as String)
            guard !used.contains(key) else { continue }
            try db.cachedStatement(sql: "DELETE FROM asset_blob WHERE id = ?").execute(arguments: [row["id"] as Int64])
            removed += 1
        }
        return removed
    }
}

extension LocalCloudKit {
    /// The `fileChecksum` values of a stored fields text, found without decoding it (a start-up read
    /// every asset record's fields, and decoding them was most of the server's start): in the compact
    /// JSON this server stores, `"fileChecksum":"` can only be an asset dictionary's key (a string's
    /// quotes are escaped, and a field of that name is followed by `{`). Nil when the text holds the
    /// word anywhere else, or a checksum with an escape: the caller then decodes it.
    static func fileChecksums(_ text: String) -> [String]? {
        let key = Array(#""fileChecksum":""#.utf8)
        let word = Array("fileChecksum".utf8)
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            var found: [String] = []
            var words = 0
            var i = 0
            while i + word.count <= bytes.count {
                guard bytes[i] == word[0], bytes[i..<(i + word.count)].elementsEqual(word) else {
                    i += 1
                    continue
                }
                // A field of that name: `"fileChecksum":{`, its value an object.
                let quoted = i >= 1 && bytes[i - 1] == UInt8(ascii: "\"")
                if quoted, i + word.count + 2 < bytes.count, bytes[i + word.count] == UInt8(ascii: "\""), bytes[i + word.count + 1] == UInt8(ascii: ":"),
                    bytes[i + word.count + 2] == UInt8(ascii: "{")
                {
                    i += word.count
                    continue
                }
                words += 1
                // A key: the word between quotes, then `:"`.
                if quoted, i - 1 + key.count <= bytes.count, bytes[(i - 1)..<(i - 1 + key.count)].elementsEqual(key) {
                    let start = i - 1 + key.count
                    var end = start
                    while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                        if bytes[end] == UInt8(ascii: "\\") { return nil }
                        end += 1
                    }
                    guard end < bytes.count else { return nil }
                    found.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
                    i = end
                } else {
                    i += word.count
                }
            }
            return words == found.count ? found : nil
        }
    }
}

extension FieldValue {
    /// An asset or a list of assets.
    var holdsAssets: Bool {
        switch self {
        case .asset, .assetList: return true
        default: return false
        }
    }
}
