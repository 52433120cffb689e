import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

@Suite struct HTTPAdapterTests {
    /// A body over the limit is refused as BAD_REQUEST without the adapter building a body of the
    /// limit's size; one under it is served.
    @Test func aBodyOverTheLimitIsABadRequest() async throws {
        let server = try await LiveServer.start(maximumBodyBytes: 4096)
        let big = #"{"operations":[],"pad":""# + String(repeating: "x", count: 8192) + #""}"#
        let refused = try await server.raw(.post, server.path("private", "records/modify"), body: big)
        let error = try ServerErrorInfo(object: JSON(parsing: refused.body).object())
        #expect(refused.status == 400 && error.serverErrorCode == .badRequest)
        let small = try await server.raw(.get, server.path("private", "zones/list"))
        #expect(small.status == 200)
        await server.stop()
    }
}
