import CloudKitModels

/// The words of the hint line's reports: the one place a `Notice` becomes a sentence.
extension Browser {
    public static func words(_ notice: Notice, _ state: BrowserState) -> String {
        let batch = "(b batch, c commit)"
        switch notice {
        // Staging and unstaging
        case .staged(let change, let total):
            let count = " · \(total) staged \(batch)"
            switch change {
            case .field(let field, let record): return "staged: '\(field)' of '\(record)'" + count
            case .fieldChanges(let n, let record, 0): return "staged \(Format.plural(n, "field change")) to '\(record)'" + count
            case .fieldChanges(let n, let record, let cleared):
                // A field left out of the file is cleared: said, not left to the batch screen to show.
                return "staged \(Format.plural(n, "field change")) to '\(record)', \(cleared == n ? (n == 1 ? "it clears a field" : "all clearing fields") : "\(cleared) of them clearing fields") (b shows them)" + count
            case .elementRemoved(let i, let field): return "staged: remove [\(i)] of '\(field)'" + count
            case .cleared(let field, let record): return "staged: clear '\(field)' of '\(record)'" + count
            case .deletion(let record): return "staged: delete '\(record)'" + count
            case .upload(let path, let bytes, let field): return "staged: upload \(path) (\(AssetProgress.bytes(bytes))) into '\(field)' on commit" + count
            case .publicPermission(let permission): return "staged: public permission \(permission.rawValue)" + count
            case .participantRemoved(let who): return "staged: remove \(who) from the share" + count
            case .participantPermission(let who, let permission): return "staged: \(who) \(permission.rawValue)" + count
            case .invited(let address, let permission): return "staged: invite \(address) (\(permission.rawValue))" + count
            case .subscription(let id, .delete): return "staged the deletion of subscription '\(id)' · \(total) staged (b batch, c commit, u unstages)"
            case .subscription(let id, .update): return "staged a change of subscription '\(id)'" + count
            case .subscription(let id, .create): return "staged new subscription '\(id)'" + count
            case .subscriptionRecreated(let id): return "staged '\(id)' to be created again (firesOnce: it fires once more) · c commits"
            }
        case .stagedNewRecord(let type, let name): return "staged: a new \(type) '\(name)' · a adds a field, E edits all as JSON, c commits (it is created then)"
        case .stagedZoneCreation(let name): return "staged: create zone \(name) · c commits it (with any records staged in it)"
        case .stagedZoneDeletion(let name): return "staged: delete zone \(name) and its records · c commits (u unstages)"
        case .stagedNewShare(let record, let zone):
            return "staged: a new share of \(record.map { "'\($0)'" } ?? "zone \(zone)") · i invites by email · c commits"
        case .bulkStaged(let purpose, let records, let notCached, let staged):
            var text: String
            switch purpose {
            case .delete: text = "staged the deletion of \(Format.plural(records, "record"))"
            case .set(let field, let value): text = "staged \(field) = \(value) on \(Format.plural(records, "record"))"
            }
            if notCached > 0 { text += " (\(Format.plural(notCached, "marked record")) not in the cache, not staged)" }
            return text + " · marks cleared · \(staged) staged \(batch)"
        case .nothingStaged(let why): return words(why)
        case .unstaged(let what, let total):
            let text: String
            switch what {
            case .record(let name): text = "unstaged '\(name)'"
            case .zone(let name, nil): text = "unstaged zone \(name)"
            case .zone(let name, let kind?): text = "unstaged the \(kind == .create ? "creation" : "deletion") of zone \(name)"
            case .subscription(let id, let kind): text = "unstaged the \(kind.rawValue) of subscription '\(id)'"
            }
            return text + (total.map { " · \($0) staged" } ?? "")
        case .unstagedField(let field, let record, let left):
            return "unstaged '\(field)' of '\(record)'" + (left > 0 ? " · \(Format.plural(left, "field change")) of it still staged" : "")
        case .discarded(let n): return "discarded \(Format.plural(n, "staged operation"))"
        case .keptStaged: return "kept the staged operations"
        case .backToConflicts: return "back to the conflicts: nothing was thrown away"
        case .recordNotLoaded: return "the record is not loaded"
        case .fieldCleared(let name): return "'\(name)' is cleared: a adds it again with a type"
        case .alreadyCleared(let name): return "'\(name)' is already cleared"
        case .alreadyDeleted(let name): return "'\(name)' is already deleted"
        case .typeNotEditable(let type): return "fields of type \(type.rawValue) cannot be edited here"
        case .notCachedToDelete(let name): return "'\(name)' is not in the local cache: open it (Enter) and press d there"
        case .zoneOperationHint: return "a zone operation: u unstages it; z lists the zones"
        case .inOtherDatabase(let name, let scope): return "'\(name)' is in the \(scope.rawValue) database: :db \(scope.rawValue) first"
        case .defaultZoneUndeletable: return "the default zone cannot be deleted"
        case .select(let what):
            switch what {
            case .fieldToEdit: return "select a field to edit (system fields cannot be edited); a adds a field"
            case .fieldToClear: return "select a field to clear"
            case .elementToEdit: return "select an element ([0], [1] …) to edit it; E edits the whole record"
            case .elementToRemove: return "select an element to remove it; x on the field's first line clears the whole field"
            case .participant: return "select a participant (a line under participants) first"
            case .assetField: return "o saves an asset to a file: select an ASSETID field"
            }
        case .selectReferenceToFollow: return "Enter follows a REFERENCE: select a reference line"
        case .deleteImpact(let record, let impact): return impact.lines(deleting: record).first?.text ?? "'\(record)' is referred to by no cached record"
        case .targetMissing(let record, let field, let target, let deleted, let more):
            let first = ChangeWords.missingTarget("\(record).\(field) → \(target)", stagedForDeletion: deleted)
            return more == 0 ? first : "\(first) (and \(more) more: b shows them)"

        // Marks and bulk edits
        case .cannotMarkDeleted(let record): return "'\(record)' is deleted: it cannot be marked"
        case .markToggled(let record, let marked, let total): return "\(marked ? "marked" : "unmarked") '\(record)' · \(Format.count(total)) marked"
        case .rangeNeedsAnchor: return "V marks from the last record marked (Space) to this one: mark one first"
        case .nothingToMark: return "nothing to mark: the list is empty"
        case .readingMarked(let n, .delete): return "reading \(Format.plural(n, "marked record")) to stage their deletion…"
        case .readingMarked(let n, .set): return "reading \(Format.plural(n, "marked record"))…"
        case .unmarked(let n): return "unmarked \(Format.plural(n, "record"))"
        case .markedMore(let added, let total, let partial, let skipped):
            var text = "marked \(Format.plural(added, "more record")) · \(Format.count(total)) marked"
            if partial { text += " · records not loaded yet are not marked (G loads the rest)" }
            if skipped > 0 { text += " · \(Format.plural(skipped, "deleted row")) not marked" }
            return text
        case .checkingPath(let path): return "checking \(path)…"
        case .writing(let path): return "writing \(path)…"
        case .exported(let n, let path, let format): return "exported \(Format.plural(n, "record")) to \(path) (\(format.rawValue))"
        case .exportPageFailed: return "a page failed while loading the zone for the export (! shows why): nothing exported"

        // Lists and records
        case .loadingToEnd(let loaded, let forExport):
            let count = loaded.map { " \(Format.count($0)) loaded" } ?? ""
            return (forExport ? "loading the rest of the zone for the export…" : "loading to the end…") + count + " (Esc stops)"
        case .stoppedLoading(let n, let dropped): return "stopped loading at \(Format.count(n)) records" + (dropped ? ": nothing exported" : "")
        case .fetchingChangesSinceCache(let n): return "showing \(Format.count(n)) cached records; fetching changes since the saved sync token…"
        case .refreshing: return "refreshing changes since the last sync token…"
        case .syncTokenRefused: return "the server refused the cached sync token: the zone was fetched again from the start"
        case .defaultZoneHasNoFeed: return "The default zone has no change feed: type :query TYPE [FIELD COMPARATOR VALUE]"
        case .queryFailed(.whereTyped): return "the query failed (! shows why): back to where it was typed"
        case .queryFailed(.listBefore): return "the query failed (! shows why): the list before it is shown again"
        case .productionWillRefuse(let reason):
            return "this query works in development, but CloudKit will refuse it in production: \(reason) (deploy an index for it)"
        case .columns(let type, let names):
            return names.isEmpty ? "columns of \(type): back to the default" : "columns of \(type): \(names.joined(separator: ", ")) (remembered)"
        case .sorted(let sort):
            return sort.map { "sorted by \($0.field) \($0.descending ? "descending" : "ascending") (the loaded rows)" } ?? "back to the fetched order"
        case .noMoreMatches: return "no more matches"
        case .copied(let what):
            switch what {
            case .exchange: return "copied the exchange (secrets redacted)"
            case .record(let name): return "copied record '\(name)' as JSON"
            case .field(let field): return "copied field '\(field)' as JSON"
            case .userRecordName(let json): return "copied the user record name \(json)"
            case .subscription: return "copied the subscription as JSON"
            case .pushPayload: return "copied the push's payload as received"
            }
        case .exchangeNotKept(let kept): return "only the latest \(kept) requests keep their whole exchange; this one shows its summary only"
        case .notCachedToCopy(let name): return "'\(name)' is not in the local cache: open it and copy it there"
        case .cache(.unreadable(let reason)): return "the local cache could not be read: \(reason)"
        case .cache(.notUpdated(let reason)): return "the local cache could not be updated: \(reason)"
        case .cacheDropped(let file): return "removed the cache of an earlier version (\(file)): it did not record its server, so zones are fetched again"
        case .schemaRead(let path, let n): return "schema of \(path): \(n) record types"
        case .schemaInferred(let source): return "schema \(source)"
        case .failed(let failure): return failure.message

        // Assets
        case .notAnAsset(let field, let type): return "o saves an asset to a file: '\(field)' is \(type.rawValue)"
        case .assetNotUploaded(let field, let path): return "'\(field)' is the local file \(path), staged for upload: nothing to download yet"
        case .assetHasNoURL(let field): return "'\(field)' has no download URL (the server sent none): r reloads the record"
        case .downloading(let label, let path): return "downloading \(label) to \(path)…"
        case .downloadProgress(let label, let done, let total): return "downloading \(label): \(AssetProgress.describe(done: done, total: total))"
        case .assetSaved(let label, let path, let bytes): return "saved \(label) to \(path) (\(AssetProgress.bytes(bytes)), size checked)"

        // Sharing
        case .sharedReadOnly(let zone): return "\(zone) is shared with you READ_ONLY: it can be read, not edited"
        case .shareAccepted(let share, let inShared):
            let owner = share.ownerIdentity.flatMap { $0.nameComponents?.givenName ?? $0.userRecordName } ?? "its owner"
            let what = share.rootRecordName.map { "'\($0)' in zone \(share.zoneID?.zoneName ?? "?")" } ?? "zone \(share.zoneID?.zoneName ?? "?")"
            return "accepted: \(what), shared by \(owner) (\(share.participantPermission?.rawValue ?? "?"))" + (inShared ? "" : " · 3 opens the shared database")
        case .acceptingShare(let guid): return "accepting the share \(guid)…"
        case .shareOwnerOnly: return "only the share's owner can change who it is shared with"
        case .shareNeeds(.privateDatabase): return ":share works in the private database: records and zones you own"
        case .shareNeeds(.customZone): return ":share needs a custom zone: open a record to share it, or a zone's list to share the zone"
        case .shareNeeds(.notAShare): return "this is a share already: i invites, P changes the public permission"
        case .shareNeeds(.aRecord): return "no record to share here (it was not found, or is still loading): :open one that exists"
        case .alreadyShared(let record, let share): return "'\(record)' is already shared: Enter on its share line (\(share)) opens the share"

        // Subscriptions and pushes
        case .firedOnceDeleted(let id, true): return "'\(id)' fired once: the server deleted it; R makes it again"
        case .firedOnceDeleted(let id, false): return "'\(id)' fired once and the server deleted it: R re-creates it"
        case .subscriptionRowIsError: return "this row is an error the server listed: nothing to edit"
        case .subscriptionStagedForDeletion(let id): return "'\(id)' is staged for deletion: u unstages it first"
        case .subscriptionDropped(let id): return "'\(id)' was only staged: dropped from the batch"
        case .subscriptionFiredGone(let id): return "'\(id)' is already gone from the server (it fired once)"
        case .subscriptionAsOnServer(let id): return "'\(id)' is as on the server again: unstaged"
        case .recreateNeedsFired: return "R re-creates a firesOnce subscription that fired (shown dim, marked F); this one is on the server"
        case .notificationsReconnected:
            return "notifications reconnected: pushes sent while disconnected are lost (CloudKit has no endpoint to fetch them); R refreshes the zone"
        case .notificationsDropped(let n): return "the server dropped \(Format.plural(n, "notification")) from a full queue"
        case .notificationsCleared: return "cleared the notifications list"
        case .pushed(let notification): return "push: \(summary(notification)) (N shows all)"
        case .pushIn(.otherDatabase(let scope)): return "the notification is from the \(scope.rawValue) database: :db \(scope.rawValue) first"
        case .pushIn(.unknownDatabase(let code)): return "the notification does not say which database it is from (dbs \(code)); :db and R to look"
        case .pushIn(.pruned): return "the payload was pruned: it names no record"
        case .pushIn(.deletedRecord(let name)): return "'\(name)' was deleted (that is what the notification says)"
        case .openZoneFirst(.refreshFromPush): return "open a zone first: R refreshes the open zone's records"

        // Commit
        case .commitInFlight: return "a commit is in flight: waiting for its answer"
        case .nothingToCommit: return "nothing staged: in a record, e edits a field and d stages its deletion"
        case .notSent(.readOnly(let reason)): return "read-only: \(reason). Nothing sent."
        case .notSent(.subscriptionCreateInProduction(let id)):
            return "subscription '\(id)' is staged for creation, and CloudKit creates subscriptions in development only: u unstages it on the batch screen (b). Nothing sent."
        case .notSent(.countMistyped(let expected, let count)): return "not sent: type \(expected) (\(count?.what ?? "")) exactly to send"
        case .notSent(.impactPending): return "not sent: still counting what the deletes take with them; the preview shows it in a moment"
        case .notSent(.batchChanged): return "not sent: the batch changed since this preview; here it is again, review it and confirm"
        case .commitCancelled(let n): return "commit cancelled: nothing sent; \(n) still staged"
        case .typeToSend(let expected?, let count):
            return "type exactly '\(expected)' to send to production" + (count.map { " (\($0.count): \($0.what))" } ?? "")
        case .typeToSend(nil, let count):
            return "type \(count.map { String($0.count) } ?? "") (\(count?.what ?? "")), then Enter, to send; Esc cancels"
        case .waitingForAnswer: return "waiting for the server's answer…"
        case .sending(let n): return "sending \(Format.plural(n, "request"))…"
        case .committed(let saved, let deleted, let subscriptions, let failed):
            if saved + deleted + subscriptions == 0 && failed > 0 {
                return "nothing committed: \(failed) failed and \(Format.agree(failed, "stays", "stay")) staged"
            }
            var text = "committed \(Format.plural(saved + deleted + subscriptions, "operation")) (\(saved) saved, \(deleted) deleted"
                + (subscriptions > 0 ? ", \(Format.plural(subscriptions, "subscription"))" : "") + ")"
            if failed > 0 { text += "; \(failed) failed and \(Format.agree(failed, "stays", "stay")) staged" }
            return text
        case .commitReport(let report): return reportLines(report, state).first?.text ?? ""
        case .conflicted(let n):
            return "\(Format.plural(n, "record")) changed on the server: nothing of their batch was applied; fetching the server's versions…"
        case .answerLost: return "the answer was lost: checking whether the commit was applied…"
        case .alreadyApplied(let n): return "\(Format.plural(n, "record")) already held exactly your change on the server: dropped from the batch"
        case .fetchingServerVersion(let name): return "fetching the server's version of '\(name)'…"
        case .conflictKeys(.changedOnServer): return "m keep mine (re-base) · f force mine · t take the server's · g merge per field · e edit again · a abort"
        case .conflictKeys(.serverVersionFailed(let why)): return "the server's version could not be fetched (\(why)): f force mine, t drop mine, a abort"
        case .conflictKeys(.deletedOnServer): return "deleted on the server: r re-creates it with your version, t accepts the deletion, a aborts"
        case .conflictKeys(.deletedOnServerToo): return "already deleted on the server: t drops your delete, a aborts"
        case .rebasedToEdit(let name, let tag):
            return "re-based '\(name)' on the server's version (tag \(tag ?? "?")): edit it, then c commits again"
        case .commitAborted(let n):
            return "commit aborted: nothing was applied; \(Format.plural(n, "operation")) \(Format.agree(n, "stays staged on its original change tag", "stay staged on their original change tags"))"
        case .conflictsResolvedNothingLeft: return "conflicts resolved: nothing left to commit"
        case .reviewAgain: return "review the new requests; confirm to commit again"
        case .checkingInflightCommit: return "a commit was in flight when ckbrowse stopped: checking whether it was applied…"
        case .journalRestored(let n):
            return "restored \(Format.plural(n, "staged operation")) from the journal, on the \(Format.agree(n, "change tag it was", "change tags they were")) based on — b reviews, c commits"
        case .legacyJournal(.kept(let n, let server)): return "kept \(Format.plural(n, "staged operation")) for \(server) — b reviews \(Format.agree(n, "it", "them"))"
        case .legacyJournal(.discarded(let n)): return "discarded \(Format.plural(n, "staged operation")) of the earlier journal"
        case .legacyJournal(.leftAlone): return "the earlier journal is left as it was; ckbrowse asks again at the next start"
        case .journal(.cannotOpen(let reason)): return "the staging journal could not be opened (\(reason)): staged edits will not survive a crash"
        case .journal(.unreadable(let path, let reason)):
            return "the staging journal \(path) could not be read (\(reason)); it is left untouched and this session's edits are not journaled"
        case .journal(.cannotWrite(let reason)): return "the staging journal could not be written: \(reason)"
        case .journal(.legacyUnreadable(let path, let reason)): return "the earlier journal \(path) could not be read (\(reason)); it is left untouched"

        case .refused(let refusal): return words(refusal)
        }
    }

    static func words(_ refusal: Notice.Refusal) -> String {
        let editable = FieldInput.editableTypes.map(\.rawValue).joined(separator: " ")
        let fieldName = "(a letter, then letters, digits or _)"
        switch refusal {
        case .unknownCommand(let verb):
            return "unknown command ':\(verb)' (try :query, :schema, :db, :open, :share, :shares, :accept, :columns, :sort, :set, :export, :q; Tab completes)"
        case .dbUsage: return ":db takes public, private or shared"
        case .openUsage: return ":open takes one record name (:open NAME)"
        case .openNeedsZone: return ":open needs a zone: select one on the zones screen (z), or open one"
        case .takesNoArguments(let verb): return ":\(verb) takes nothing after it"
        case .acceptUsage: return ":accept takes a share URL or its shortGUID"
        case .noZoneForQuery: return "no zone is known yet to run the query in (z lists the zones)"
        case .queryZoneUnnamed: return "name the zone to run the query in"
        case .unknownZone(let name, let scope): return "no zone '\(name)' in the \(scope.rawValue) database (Tab completes)"
        case .needsRecordsList(let command): return "\(command) works on a records list: open a zone first"
        case .columnsNeedRecord: return ":columns needs a record to take the record type from"
        case .notAFieldName(let name): return "'\(name)' is not a field name"
        case .noSuchField(let field, let types): return "no field '\(field)' in \(types.joined(separator: ", ")) (by the schema)"
        case .sortUsage: return ":sort FIELD [asc|desc]"
        case .failed(let failure): return failure.message
        case .zoneNameMismatch(let name): return "not deleted: the name typed was not \(name)"
        case .invalidZoneName: return "a zone name is letters, digits, _ - and . (not _defaultZone)"
        case .zonesOnlyInPrivate: return "zones are created in the private database (:db private)"
        case .zoneExists(let name): return "zone \(name) exists already"
        case .newRecordUsage: return "a new record is: TYPE [NAME] (the name is made up when left out)"
        case .invalidRecordType(let type): return "'\(type)' is not a record type name \(fieldName)"
        case .alreadyStaged(let name): return "'\(name)' is already staged: b shows the batch"
        case .addFieldUsage: return "add a field as: NAME TYPE (e.g. rating INT64; types: \(editable), ASSETID for a file)"
        case .schemaTypeDiffers(let name, let type, let source, let wire): return "'\(name)' is \(type) in the schema (\(source)): add it as \(name) \(wire)"
        case .invalidFieldName(let name): return "'\(name)' is not a valid field name \(fieldName)"
        case .fieldExists(let name, let type): return "'\(name)' exists as \(type.rawValue); e edits it"
        case .typeNotTypeable(let type): return "\(type) is not a type that can be typed here; use one of \(editable)"
        case .newSubscriptionUsage: return "a new subscription is: query TYPE [ZONE], zone ZONE, or database"
        case .subscriptionQueryNeedsType: return "query takes the record type it watches (Tab completes): query TYPE [ZONE]"
        case .unknownRecordType(let type): return "record type '\(type)' is not in the schema (Tab completes)"
        case .subscriptionZoneNeedsZone: return "zone takes the zone it watches (Tab completes): zone ZONE"
        case .inviteUsage: return "invite takes an email address and, optionally, READ_ONLY or READ_WRITE"
        case .invalidPermission(let word): return "the permission is READ_ONLY or READ_WRITE, not \(word)"
        case .setUsage:
            return ":set FIELD VALUE changes one field of every marked record (Space marks; the value is typed from the schema, else the field's type in each record)"
        case .setNeedsList: return ":set acts on the marked records of a zone's list: open a zone and mark records (Space, V, *)"
        case .setNeedsMarks: return "no record is marked: Space marks the selected record, V a range, * every record shown"
        case .setTypeUnknown(let field, let record, let recordType?):
            return "nothing staged: \(recordType) has no field '\(field)' in the schema, and '\(record)' has no value to take its type from: add it to one record first (a, in the record), then :set"
        case .setTypeUnknown(let field, let record, nil):
            return "nothing staged: the type of '\(field)' is unknown for '\(record)' (not in the schema, and the record has no value): load the schema (:schema) or edit it in the record"
        case .setValueInvalid(let value, let type, let field, let record, let error):
            // "an INT64", "a STRING": the article as the type's name is read.
            let article = type.rawValue.first.map { "AEIOU".contains($0) } == true ? "an" : "a"
            return "nothing staged: '\(value)' is not \(article) \(type.rawValue) ('\(field)' of \(record)): \(error)"
        case .exportUsage: return ":export FILE writes the marked records (else every record the filter shows) as JSON lines, or CSV when FILE ends in .csv"
        case .exportNeedsZone: return ":export writes a zone's records: open a zone first"
        case .exportNotWritten(let why): return "nothing written: \(why)"
        case .saveNeedsName: return "nothing saved: give a file name"
        case .uploadNeedsPath: return "nothing staged: give the path of a file"
        case .fileRefused(let why, let staging): return (staging ? "nothing staged: " : "nothing saved: ") + why
        }
    }

    static func words(_ why: Notice.NothingStaged) -> String {
        switch why {
        case .readOnly(let reason): return "read-only: \(reason). Nothing staged."
        case .sharedReadOnly(let zone, let owner): return "read-only: \(zone) is shared with you READ_ONLY by \(owner). Nothing staged."
        case .editCancelled: return "edit cancelled: nothing staged"
        case .unchanged(let field): return "'\(field)' is unchanged: nothing staged"
        case .editedFileUnreadable: return "the edited file could not be read: nothing staged"
        case .editorFailed(let status): return "the editor exited with status \(status): nothing staged"
        case .editorFileNotWritten(let path): return "could not write \(path) for the editor: nothing staged"
        case .notSaved: return "the editor quit without saving: nothing staged"
        case .editorNotFound(let editor): return "the editor '\(editor)' was not found ($VISUAL, else $EDITOR, else vi): nothing staged"
        case .noChange: return "no change: nothing staged"
        case .fileEmptied: return "the file was emptied: edit cancelled, nothing staged"
        case .fieldsEqual(let record): return "the fields equal the record's: nothing staged for '\(record)'"
        case .zone(let name): return "zone \(name) has nothing staged"
        case .record(let name): return "'\(name)' has nothing staged"
        case .subscription: return "nothing is staged for this subscription"
        case .subscriptionsInDevelopmentOnly: return "CloudKit creates subscriptions in development only (they reach production with the schema): nothing staged"
        case .databaseChanged: return "the database changed while the editor was open: nothing staged"
        case .recordClosed(let path): return "nothing staged: the record was closed before \(path) was checked"
        case .failed(let failure): return "nothing staged: \(failure.message)"
        }
    }
}
