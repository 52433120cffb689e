import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// The browser in someone else's zone: owners by name, READ_ONLY said before staging, the share
/// view, and :accept.
@Suite struct SharingViewTests {
    static let owner = "_77aa0000000000000000000000000000"
    static let sharedZone = ZoneID(zoneName: "Notes", ownerRecordName: owner, zoneType: .regularCustomZone)

    func shared() -> Harness {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("3"))
        #expect(h.effects.contains(.loadZones(.shared)))
        h.send(.zonesLoaded(.shared, .success([.zone(Zone(zoneID: Self.sharedZone, atomic: true))])))
        return h
    }

    @Test func ownersAreNamedOnceDiscovered() {
        var h = shared()
        #expect(h.effects == [.discoverUsers([Self.owner])], "the owner is looked up")
        #expect(h.screen.line(2).contains(String(Self.owner.prefix(12))))
        h.send(.usersDiscovered([Self.owner: "alice <alice@example.com>"]))
        #expect(h.screen.line(2).contains("alice <alice@example.com>"))
    }

    @Test func aReadOnlyZoneRefusesStagingUpFront() {
        var h = shared()
        h.keys(.enter)
        let zone = zoneKey(.shared, Self.sharedZone)
        #expect(h.effects.contains(.loadSharePermission(zone)), "opening a shared zone asks for the permission: \(h.effects)")
        h.send(.sharePermissionLoaded(zone, .readOnly))
        var record = Record(recordName: "n1", recordType: "Note", recordChangeTag: "t1")
        record.fields = ["text": .string("hello")]
        h.page([.record(record)], token: "t", more: false)
        h.keys(.char("d"))
        h.send(.recordToDelete(RecordKey(zone: zone, recordName: "n1"), record))
        #expect(h.state.staged.isEmpty)
        #expect(h.state.message?.contains("shared with you READ_ONLY") == true, "\(h.state.message ?? "")")
        // READ_WRITE: the same key stages.
        h.send(.sharePermissionLoaded(zone, .readWrite))
        h.send(.recordToDelete(RecordKey(zone: zone, recordName: "n1"), record))
        #expect(h.state.staged.operations.count == 1)
    }

    @Test func aShareRecordShowsWhoItIsSharedWith() {
        var h = shared()
        h.keys(.enter)
        var share = Record.share(of: nil, participants: [])
        share.recordChangeTag = "s1"
        share.shortGUID = "abcDEF123"
        share.owner = ShareParticipant(userIdentity: UserIdentity(lookupInfo: UserLookupInfo(emailAddress: "alice@example.com"), userRecordName: Self.owner, nameComponents: NameComponents(givenName: "alice")), permission: .readWrite, type: .owner, acceptanceStatus: .accepted)
        let bob = ShareParticipant(userIdentity: UserIdentity(lookupInfo: UserLookupInfo(emailAddress: "bob@example.com")), permission: .readOnly, type: .user, acceptanceStatus: .invited)
        share.participants = [share.owner!, bob]
        h.page([.record(share)], token: "t", more: false)
        h.keys(.enter)
        h.send(.recordLoaded(RecordKey(zone: zoneKey(.shared, Self.sharedZone), recordName: Record.zoneShareName), .success((.record(share), share.json))))
        let text = (0..<30).map { h.screen.line($0) }.joined(separator: "\n")
        #expect(text.contains("alice <alice@example.com>") && text.contains("the whole zone"))
        #expect(text.contains("<bob@example.com> · READ_ONLY · INVITED"))
        #expect(text.contains("https://www.icloud.com/share/abcDEF123"), "Apple's share URL for Apple's server")
    }

    @Test func acceptTakesAURLOrAShortGUID() {
        var h = Harness()
        h.keys(.char(":"))
        h.type("accept https://www.icloud.com/share/0AbCdEf")
        h.keys(.enter)
        #expect(h.effects == [.acceptShare("0AbCdEf")])
        var result = ShortGUIDResult()
        result.zoneID = Self.sharedZone
        result.ownerIdentity = UserIdentity(userRecordName: Self.owner, nameComponents: NameComponents(givenName: "alice"))
        result.participantPermission = .readWrite
        h.send(.shareAccepted("0AbCdEf", .success(result)))
        #expect(h.state.message == "accepted: zone Notes, shared by alice (READ_WRITE) · 3 opens the shared database")
    }
}

/// Shares changed from the browser: staged as updates (or a create) of the share record, with the
/// participants and public permission on the wire.
@Suite struct ShareStagingTests {
    func openShare(_ share: Record, database: DatabaseScope = .private) -> Harness {
        var h = Harness(width: 100, height: 30)
        h.openDetail(share)
        return h
    }

    static var share: Record {
        var share = Record.share(of: nil, participants: [])
        share.recordChangeTag = "s1"
        share.shortGUID = "abc"
        let owner = ShareParticipant(userIdentity: UserIdentity(userRecordName: "_me"), permission: .readWrite, type: .owner, acceptanceStatus: .accepted)
        let bob = ShareParticipant(userIdentity: UserIdentity(lookupInfo: UserLookupInfo(emailAddress: "bob@example.com")), permission: .readOnly, type: .user, acceptanceStatus: .accepted, participantId: "p-bob")
        share.owner = owner
        share.participants = [owner, bob]
        share.currentUserParticipant = owner
        share.publicPermission = .noPermission
        return share
    }

    @Test func inviteTogglePublicAndRemoveAreOneUpdateOfTheShare() throws {
        var h = openShare(Self.share)
        h.keys(.char("i"))
        h.type("carol@example.com READ_WRITE")
        h.keys(.enter)
        h.keys(.char("P"))
        let op = try #require(h.state.staged.operations.first)
        #expect(h.state.staged.operations.count == 1 && op.kind == .update && op.baseTag == "s1")
        let record = op.recordOperation.record
        #expect(op.recordOperation.operationType == .update)
        #expect(record.participants?.map { ShareEdit.who($0) } == ["bob@example.com", "carol@example.com"], "the owner is left out: the server keeps them")
        #expect(record.participants?.last?.permission == .readWrite && record.publicPermission == .readOnly)
        #expect(op.diff.map(\.field) == ["publicPermission", "participants"])
        // p and x on bob's line.
        let lines = Browser.detailPage(h.state)!.lines
        let bob = lines.firstIndex { $0.owner == "participants" && $0.element == 0 }!
        while h.state.detail!.selection < bob { h.keys(.char("j")) }
        h.keys(.char("p"))
        #expect(h.state.staged.operations.first?.share?.participants.first?.permission == .readWrite)
        h.keys(.char("x"))
        #expect(h.state.staged.operations.first?.share?.participants.map { ShareEdit.who($0) } == ["carol@example.com"])
        #expect((0..<30).contains { h.screen.line($0).contains("<bob@example.com> · to remove") })
    }

    @Test func aParticipantCannotChangeTheShare() {
        var share = Self.share
        share.currentUserParticipant = share.participants?.last
        var h = openShare(share)
        h.keys(.char("P"))
        #expect(h.state.staged.isEmpty && h.state.message == "only the share's owner can change who it is shared with")
    }

    @Test func shareStagesANewShareOfTheOpenRecord() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.keys(.char(":"))
        h.type("share")
        h.keys(.enter)
        h.keys(.char("i"))
        h.type("bob@example.com")
        h.keys(.enter)
        let op = try #require(h.state.staged.operations.first)
        #expect(op.mode == .create && op.recordName == "share-artwork-7")
        let wire = op.recordOperation
        #expect(wire.operationType == .create && wire.record.recordType == Record.shareRecordType)
        #expect(wire.record.forRecord?.recordName == "artwork-7" && wire.record.forRecord?.recordChangeTag == Harness.detailRecord.recordChangeTag)
        #expect(wire.record.participants?.first?.permission == .readOnly)
    }

    /// `:share` in a record that was not found says there is nothing to share (it said "this is a share
    /// already").
    @Test func shareOfARecordNotFoundSaysSo() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.keys(.char(":"))
        h.type("open nosuch-rec")
        h.keys(.enter)
        let key = try #require(h.state.detail?.key)
        #expect(key.recordName == "nosuch-rec")
        let missing = RecordError(recordName: key.recordName, info: ServerErrorInfo(serverErrorCode: .notFound, reason: "Record not found"))
        h.send(.recordLoaded(key, .success((.failure(missing), missing.json))))
        #expect(h.state.detail?.record == nil)
        h.keys(.char(":"))
        h.type("share")
        h.keys(.enter)
        #expect(h.state.staged.isEmpty && h.state.message?.hasPrefix("no record to share here") == true, "\(h.state.message ?? "")")
    }
}

@Suite struct SharesListTests {
    @Test func sharesListsEveryShareWithItsParticipants() {
        var h = Harness(width: 100, height: 30)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char(":"))
        h.type("shares")
        h.keys(.enter)
        #expect(h.effects == [.loadShares(.private)] && h.state.pane == .shares)
        var zoneShare = ShareStagingTests.share
        zoneShare.zoneID = ZoneID(zoneName: "Gallery", ownerRecordName: Harness.owner)
        var recordShare = Record.share(of: nil, recordName: "share-artwork-1")
        recordShare.zoneID = ZoneID(zoneName: "Gallery", ownerRecordName: Harness.owner)
        recordShare.publicPermission = .readOnly
        h.send(.sharesLoaded(.private, .success([zoneShare, recordShare])))
        #expect(h.screen.line(2).contains("the whole zone") && h.screen.line(2).contains("1 (1 accepted)") && h.screen.line(2).contains("owner"))
        #expect(h.screen.line(3).contains("records (share-artwork-1)") && h.screen.line(3).contains("READ_ONLY") && h.screen.line(3).contains("none"))
        h.keys(.char("j"), .enter)
        #expect(h.state.pane == .recordDetail && h.effects.contains(.lookupRecord(RecordKey(zone: zoneKey(.private, ZoneID(zoneName: "Gallery", ownerRecordName: Harness.owner)), recordName: "share-artwork-1"))))
    }
}
