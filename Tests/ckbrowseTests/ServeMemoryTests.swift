#if os(Linux)
import Glibc
import Testing
@testable import ckbrowse

/// `serve` tunes glibc's malloc (`Serve.keepFreedMemory`) so that answer-sized buffers come from the
/// heap and stay there once freed. With the defaults, a computed 200-record page's two 256 KiB buffers
/// were mapped, faulted in page by page and given back on every request (75 page faults a page,
/// PERFORMANCE.md): glibc's sliding threshold did not settle for that pattern on the event loops.
@Suite struct ServeMemoryTests {
    @Test func answerSizedBuffersComeFromTheHeap() throws {
        #expect(Serve.keepFreedMemory(), "glibc takes serve's settings")
        // An 8 MiB answer: the 16 MiB set takes it from the heap. (glibc's defaults map it unless an
        // earlier test in this process freed a mapped chunk that large: their threshold starts at
        // 128 KiB and slides up to sizes freed. So this check alone could pass untuned; the one above
        // cannot.) glibc marks a mapped chunk in its size word (bit 1, IS_MMAPPED).
        let buffer = try #require(malloc(8 << 20))
        defer { free(buffer) }
        let sizeWord = buffer.load(fromByteOffset: -MemoryLayout<UInt>.size, as: UInt.self)
        #expect(sizeWord & 2 == 0, "an 8 MiB buffer was mapped for itself, not taken from the heap")
    }
}
#endif
