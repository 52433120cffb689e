import ArgumentParser
import CloudKitWeb
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

/// Exit statuses of the headless commands: scripts can tell outcomes apart.
enum ExitStatus {
    static let failure: Int32 = 1
    static let conflict: Int32 = 2
    static let notFound: Int32 = 3
    static let authentication: Int32 = 4
    static let readOnly: Int32 = 5
    static let usage: Int32 = 64
}

/// `ckbrowse apply FILE.json`: send a batch file (the records/modify body) as one request.
struct Apply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a records/modify batch file, atomic by default, and print per-record results as JSON.",
        discussion: """
            FILE holds a records/modify body: {"zoneID": {...}, "operations": [...]} (use - for standard input). \
            The batch is sent atomically unless the file says "atomic": false or --non-atomic is given. \
            Prints one JSON object per record. Exit status: 0 all applied, 1 failure, 2 conflict, \
            3 not found, 4 authentication, 5 refused because the connection is read-only, 64 bad usage or file.
            """
    )

    @Argument(help: "The batch file (records/modify body), or - for standard input.") var file: String
    @Flag(help: "Print the request that would be sent and send nothing.") var dryRun = false
    @Flag(help: "Apply the operations non-atomically (each succeeds or fails on its own).") var nonAtomic = false
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        guard let data = Out.input(file) else { return fail(SystemErrorWords.cannotRead(file, expected: "readable"), ExitStatus.usage) }
        var request: ModifyRecordsRequest
        do {
            request = try ModifyRecordsRequest.decode(from: data)
        } catch {
            return fail("\(file) is not a records/modify body: \(error)", ExitStatus.usage)
        }
        if nonAtomic { request.atomic = false } else if request.atomic == nil { request.atomic = true }
        if request.operations.count > ModifyRecordsRequest.maximumOperations {
            return fail("\(request.operations.count) operations; one request allows at most \(ModifyRecordsRequest.maximumOperations), and an atomic batch is never split", ExitStatus.usage)
        }
        let resolved = try await connection.resolve()
        let scope = resolved.info.database
        if dryRun {
            let path = Endpoint.recordsModify.path(container: resolved.info.container, environment: resolved.info.environment, database: scope)
            let preview: JSON = ["method": "POST", "server": .string(resolved.info.server), "path": .string(path), "body": request.json]
            Out.json(preview, pretty: true)
            return
        }
        if let reason = resolved.readOnlyReason {
            return fail("refusing to write: this connection is read-only (\(reason))", ExitStatus.readOnly)
        }
        let result: ModifyRecordsResult
        do {
            result = try await resolved.client.database(scope).modifyRecords(request)
        } catch {
            // The request as a whole failed: the same statuses as the read commands (an unknown zone
            // is "not found", a refused token "authentication").
            Failure.exit(error)
        }
        for (operation, item) in zip(request.operations, result.results) {
            var line = JSONObject()
            line.set("recordName", item.recordName ?? operation.record.recordName)
            line.set("operationType", operation.operationType.rawValue)
            switch item {
            case .record(let record):
                line.set("status", "saved")
                line.set("recordChangeTag", record.recordChangeTag)
            case .deleted:
                line.set("status", "deleted")
            case .failure(let error):
                line.set("status", "error")
                line.set("serverErrorCode", error.serverErrorCode.rawValue)
                line.set("reason", error.reason)
            }
            Out.json(.object(line))
        }
        guard !result.isCompleteSuccess else { return }
        let codes = Set(result.failures.map(\.serverErrorCode))
        if result.isAtomicFailure {
            FileOutput.standardError.write("ckbrowse: the atomic batch failed; nothing was applied\n")
        }
        if codes.contains(.conflict) { throw ExitCode(ExitStatus.conflict) }
        if codes.contains(.notFound) { throw ExitCode(ExitStatus.notFound) }
        throw ExitCode(ExitStatus.failure)
    }

    func fail(_ message: String, _ status: Int32) {
        Out.error("ckbrowse: \(message)")
        exitProcess(status)
    }
}
