#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file written through its descriptor, in place of Foundation's `FileHandle` (Foundation
/// proper, which links ICU's data into the binary: PERFORMANCE.md, issue 33). Package-internal.
package final class FileOutput: @unchecked Sendable {
    /// The failed call's `errno`.
    package struct Failure: Error, Sendable { package let code: Int32 }

    private var descriptor: Int32
    private let owned: Bool

    /// The existing file at `path`, opened for writing from its start (not truncated, as
    /// `FileHandle(forWritingAtPath:)`); nil when it cannot be opened.
    package init?(forWritingAtPath path: String) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        descriptor = fd
        owned = true
    }

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        owned = false
    }

    package static let standardOutput = FileOutput(descriptor: 1)
    package static let standardError = FileOutput(descriptor: 2)

    deinit { if owned && descriptor >= 0 { _ = Glibc_or_Darwin_close(descriptor) } }

    /// Writes all of `bytes`, retrying short writes and interruptions.
    package func write(contentsOf bytes: some Collection<UInt8>) throws {
        let array = Array(bytes)
        var offset = 0
        try array.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc_or_Darwin_write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Failure(code: errno)
                }
                offset += n
            }
        }
    }

    /// Writes `text` as UTF-8; errors are ignored (for messages to a terminal that may be gone).
    package func write(_ text: String) { try? write(contentsOf: Array(text.utf8)) }

    /// Asks the system to put what was written on the disk (`fsync`).
    package func synchronize() throws {
        if fsync(descriptor) != 0 { throw Failure(code: errno) }
    }

    /// Closes the file; later writes fail.
    package func close() throws {
        guard owned, descriptor >= 0 else { return }
        let fd = descriptor
        descriptor = -1
        if Glibc_or_Darwin_close(fd) != 0 { throw Failure(code: errno) }
    }

    /// Everything left on standard input, until its end.
    package static func readStandardInput() -> [UInt8] {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return all }
            all += chunk[0..<n]
        }
    }
}

// `write` and `close` named apart from FileOutput's own methods.
@inline(__always) private func Glibc_or_Darwin_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
@inline(__always) private func Glibc_or_Darwin_close(_ fd: Int32) -> Int32 { close(fd) }
