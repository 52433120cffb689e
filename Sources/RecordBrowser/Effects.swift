import CloudKitWeb
import TerminalUI

/// Something the browser needs done outside the pure core; its result comes back as an event.
public enum BrowserEffect: Sendable, Hashable {
    case loadZones(DatabaseScope)
    /// One page of a zone's change feed after `syncToken`.
    case loadChanges(DatabaseScope, ZoneID, syncToken: String?, generation: Int)
    case runQuery(DatabaseScope, QueryRequest, generation: Int)
    case lookupRecord(DatabaseScope, ZoneID, String)
    case loadSubscriptions(DatabaseScope)
    /// Put text on the clipboard (OSC 52).
    case copy(String)
    case quit
}

/// Input to `update`: keys, terminal changes, and results of effects.
public enum BrowserEvent: Sendable {
    case key(Key)
    case resized(width: Int, height: Int)
    case zonesLoaded(DatabaseScope, Result<[ZoneResult], BrowserFailure>)
    case changesLoaded(generation: Int, Result<RecordChangesPage, BrowserFailure>)
    case queryLoaded(generation: Int, Result<QueryResponse, BrowserFailure>)
    /// A looked-up record (or its per-item error), with the record dictionary as the server sent it.
    case recordLoaded(String, Result<(RecordResult, JSON), BrowserFailure>)
    case subscriptionsLoaded(DatabaseScope, Result<[SubscriptionResult], BrowserFailure>)
    case requestFinished(RequestRecord)
    /// The app restored cached records of a zone (shown at once, then refreshed from the token).
    case cacheLoaded(ZoneID, records: [Record], syncToken: String?)
    case notice(String)
}
