import BrowserCache
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
