import Dispatch

/// The median wall-clock seconds of `runs` runs of `body` (after one warm-up run when asked).
func medianSeconds(_ runs: Int, warmUp: Bool = false, _ body: () async throws -> Void) async rethrows -> Double {
    if warmUp { try await body() }
    var times: [Double] = []
    for _ in 0..<max(1, runs) {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    times.sort()
    return times[times.count / 2]
}
