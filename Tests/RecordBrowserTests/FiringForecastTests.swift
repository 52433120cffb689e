import CloudKitWeb
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 31: what a commit will fire, named in its preview before anything is sent.
@Suite struct FiringForecastTests {
    static let gallery = ZoneID(zoneName: "Gallery", ownerRecordName: Harness.owner)
    static let subscriptions: [Subscription] = [
        .query("old-artworks", Query(recordType: "Artwork", filterBy: [Filter("year", .lessThan, .int64(1900))]), firesOn: [.create, .update, .delete], zoneID: gallery),
        .query("artist-changes", Query(recordType: "Artist"), firesOn: [.update], zoneID: gallery),
        .zone("gallery-zone", gallery),
    ]

    func operation(year: Int64, kind: StagedOperation.Kind = .update) -> StagedOperation {
        let zone = ZoneKey(scope: Harness().state.connection.scope, zoneID: Self.gallery)
        var base = Harness.detailRecord
        base.fields["year"] = .int64(1831)
        return StagedOperation(kind: kind, zone: zone, base: base, changes: kind == .update ? ["year": .int64(year)] : [:])
    }

    @Test func theForecastCountsEachSubscriptionItFires() {
        let forecast = FiringForecast([operation(year: 1850), operation(year: 1860)], subscriptions: Self.subscriptions)
        #expect(forecast.summary == "old-artworks (update) × 2, gallery-zone (zone) × 2")
        // Out of the filter after the update: the query subscription does not fire, the zone's does.
        let out = FiringForecast([operation(year: 1950)], subscriptions: Self.subscriptions)
        #expect(out.summary == "gallery-zone (zone)")
        // A delete fires on the record as it was (1831 matches).
        let gone = FiringForecast([operation(year: 0, kind: .delete)], subscriptions: Self.subscriptions)
        #expect(gone.summary == "old-artworks (delete), gallery-zone (zone)")
        // In another zone, nothing.
        var elsewhere = operation(year: 1850)
        elsewhere.key = RecordKey(zone: ZoneKey(scope: Harness().state.connection.scope, zoneID: ZoneID(zoneName: "Drafts")), recordName: "x")
        #expect(FiringForecast([elsewhere], subscriptions: Self.subscriptions).firings.isEmpty)
    }

    /// A delete's cascade fires too (a new user saw 342 pushes from a commit said to fire two): the
    /// cascade's records fire what needs none of their fields, and "may fire" what filters on them.
    @Test func aCascadeAndANewSharesRootFireToo() {
        let scope = Harness().state.connection.scope
        let zone = ZoneKey(scope: scope, zoneID: Self.gallery)
        var artist = Record(recordName: "artist-hokusai", recordType: "Artist", recordChangeTag: "t")
        artist.fields = ["name": .string("Hokusai")]
        let delete = StagedOperation(kind: .delete, zone: zone, base: artist)
        let cascade = (0..<3).map { i in
            Referrer(key: RecordKey(zone: zone, recordName: "artwork-\(i)"), recordType: "Artwork", field: "artist", action: .deleteSelf, target: "artist-hokusai")
        }
        let subscriptions = Self.subscriptions + [.query("artwork-gone", Query(recordType: "Artwork"), firesOn: [.delete], zoneID: Self.gallery)]
        let forecast = FiringForecast([delete], cascade: cascade, subscriptions: subscriptions)
        #expect(forecast.summary == "gallery-zone (zone) × 4, artwork-gone (delete) × 3", "\(forecast.summary)")
        #expect(forecast.mayFireSummary == "old-artworks (delete) × up to 3")
        // A record staged for deletion itself is not counted again as the cascade's.
        let both = FiringForecast([delete, StagedOperation(kind: .delete, zone: zone, base: Record(recordName: "artwork-0", recordType: "Artwork", recordChangeTag: "t"))],
                                  cascade: cascade, subscriptions: subscriptions)
        #expect(both.firings.first { $0.subscriptionID == "artwork-gone" }?.count == 3)
        // A new share of a record updates its root: the root's update subscriptions fire.
        var share = StagedOperation.newRecord(zone: zone, recordType: Record.shareRecordType, recordName: "share-artist-hokusai")
        share.share = ShareEdit(newShareOf: RecordLink(recordName: "artist-hokusai", recordChangeTag: "t"))
        share.share?.root = artist
        #expect(FiringForecast([share], subscriptions: Self.subscriptions).summary == "gallery-zone (zone) × 2, artist-changes (update)")
    }

    /// The record opened, its year edited to `year` and staged, and `c` pressed.
    func commitPreview(year: String) -> Harness {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "year")
        h.keys(.char("e"), .ctrl("u"))
        h.type(year)
        h.keys(.enter)
        h.keys(.char("c"))
        return h
    }

    /// `c` asks for the database's subscriptions, and the preview names what the commit fires; an edit
    /// that matches no filter names none.
    @Test func theCommitPreviewNamesWhatItFires() {
        var h = commitPreview(year: "1850")
        // Asked for when the record opened (else by c).
        #expect(h.state.subscriptionsLoading)
        #expect(h.screen.allText.contains("this commit fires: checking the private database's subscriptions…"))
        h.send(.subscriptionsLoaded(.private, .success(Self.subscriptions.map { .subscription($0) })))
        #expect(h.screen.allText.contains("this commit fires: old-artworks (update), gallery-zone (zone)"), "\(h.screen.allText)")

        var none = commitPreview(year: "1950")
        none.send(.subscriptionsLoaded(.private, .success([Self.subscriptions[0], Self.subscriptions[1]].map { .subscription($0) })))
        #expect(none.screen.allText.contains("this commit fires no subscription (2 subscriptions of the private database checked)"), "\(none.screen.allText)")
    }

    /// Subscriptions staged in the same commit go before its records: the preview judges the records
    /// against them as they will be (a new one counted, a deleted one not).
    @Test func theForecastCountsSubscriptionsStagedInTheSameCommit() {
        var h = commitPreview(year: "1950")
        h.send(.subscriptionsLoaded(.private, .success(Self.subscriptions.map { .subscription($0) })))
        #expect(h.screen.allText.contains("this commit fires: gallery-zone (zone)"), "\(h.screen.allText)")
        let scope = h.state.connection.scope
        let late = Subscription.query("late-works", Query(recordType: "Artwork", filterBy: [Filter("year", .greaterThan, .int64(1900))]), firesOn: [.update], zoneID: Self.gallery)
        h.state.staged.stage(subscription: StagedSubscriptionOperation(kind: .create, scope: scope, subscription: late, base: nil))
        h.state.staged.stage(subscription: StagedSubscriptionOperation(kind: .delete, scope: scope, subscription: Self.subscriptions[2], base: Self.subscriptions[2]))
        h.keys(.escape, .char("c"))
        let text = h.screen.allText
        #expect(text.contains("this commit fires: late-works (update)"), "\(text)")
        #expect(!text.contains("gallery-zone (zone)"), "a subscription deleted first fires no more")
        #expect(text.contains("CREATE SUBSCRIPTION private › late-works"), "what changes lists the subscription too: \(text)")
    }

    /// A record's view says, per subscription, whether an update or a delete of it fires, or the first
    /// reason it does not.
    @Test func aRecordSaysWhatAChangeOfItFires() {
        var h = Harness(width: 120, height: 40)
        h.openDetail()
        #expect(h.effects.contains(.loadSubscriptions(.private)) || h.state.subscriptionsLoading)
        h.send(.subscriptionsLoaded(.private, .success(Self.subscriptions.map { .subscription($0) })))
        let text = h.screen.allText
        #expect(text.contains("SUBSCRIPTIONS"), "\(text)")
        #expect(text.contains("old-artworks") && text.contains("update, delete: fires"), "\(text)")
        #expect(text.contains("artist-changes") && text.contains("update, delete: no (it watches Artist, not Artwork)"), "\(text)")
        h.select(field: "year")
        h.keys(.char("e"), .ctrl("u"))
        h.type("1950")
        h.keys(.enter)
        let staged = h.screen.allText
        #expect(staged.contains("update as staged: no (year LESS_THAN does not hold) · delete: fires"), "\(staged)")
    }

    /// A new record's view judges its create, not an update: it has no "before".
    @Test func aNewRecordSaysWhatItsCreateFires() {
        var h = Harness(width: 120, height: 40)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<5), token: "t", more: false)
        h.send(.subscriptionsLoaded(.private, .success(Self.subscriptions.map { .subscription($0) })))
        h.keys(.char("n"))
        h.type("Artwork fresh-1")
        h.keys(.enter)
        h.keys(.char("a"))
        h.type("year INT64")
        h.keys(.enter)
        h.type("1850")
        h.keys(.enter)
        let text = h.screen.allText
        #expect(text.contains("create as staged, delete: fires"), "old-artworks fires on create: \(text)")
        #expect(!text.contains("update as staged"), "\(text)")
    }
}
