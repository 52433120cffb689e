import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue #32's smaller items, each as a new user reported it.
@Suite(.serialized) struct SmallItemsTests {
    // MARK: 1. number agreement wherever a count is said

    @Test func countsAgreeWithTheirWords() {
        let h = Harness()
        let zone = zoneKey(.private, Harness.gallery)
        func words(_ report: CommitReport) -> String { Browser.reportLines(report, h.state).map(\.text).joined(separator: "\n") }
        #expect(words(.request(zone: zone, atomic: true, .appliedAll(1))).contains("applied 1 operation atomically."))
        #expect(words(.request(zone: zone, atomic: true, .appliedAll(3))).contains("applied all 3 operations atomically."))
        #expect(words(.verified(applied: 0, notApplied: 1, unclear: 0))
                == "The commit was NOT applied: its 1 operation stays staged; c sends it again.")
        #expect(words(.verified(applied: 0, notApplied: 2, unclear: 0))
                == "The commit was NOT applied: its 2 operations stay staged; c sends them again.")
    }

    @Test func oneRestoredOrAbortedOperationIsSpokenOfInTheSingular() throws {
        var h = Harness()
        var batch = StagedBatch()
        batch.stage(StagedOperation(kind: .delete, database: .private, zoneID: Harness.gallery, base: Harness.detailRecord))
        h.send(.journalRestored(batch, inflight: []))
        #expect(h.state.message == "restored 1 staged operation from the journal, on the change tag it was based on — b reviews, c commits")
        h.keys(.char("b"), .char("X"))
        #expect(h.screen.snapshot.contains("Discard the staged operation? y discards · any other key keeps it"))
    }
}
