// Errno.name gives the symbolic name of every Linux errno, as the C library does,
// so that messages never show a bare number for an error the kernel defines.

import Glibc
import Testing
@testable import Ringlet

@Suite struct ErrnoNameTests {
    @Test func everyLinuxErrnoHasItsSymbolicName() {
        #expect(Errno(rawValue: 24).name == "EMFILE")
        #expect(Errno(rawValue: 23).name == "ENFILE")
        #expect(Errno(rawValue: 133).name == "EHWPOISON")
        // glibc's own table is the reference: strerrorname_np (glibc 2.32), which
        // Glibc's module hides behind _GNU_SOURCE, so it is looked up by name.
        typealias NameFunction = @convention(c) (Int32) -> UnsafePointer<CChar>?
        guard let symbol = dlsym(nil, "strerrorname_np") else { return }
        let strerrorname = unsafeBitCast(symbol, to: NameFunction.self)
        var compared = 0
        for value in Int32(1)...133 {
            guard let reference = strerrorname(value) else {
                #expect(Errno(rawValue: value).name == "errno \(value)")
                continue
            }
            #expect(Errno(rawValue: value).name == String(cString: reference), "errno \(value)")
            compared += 1
        }
        #expect(compared == 131)
    }

    @Test func numbersLinuxLeavesUnusedKeepTheFallback() {
        for value: Int32 in [0, 41, 58, 134, 4095, -1] {
            #expect(Errno(rawValue: value).name == "errno \(value)")
        }
    }

    @Test func theRuntimesOwnNamesAreTheRightNumbers() {
        let named: [(Errno, String)] = [
            (.tooManyOpenFiles, "EMFILE"), (.tooManyOpenFilesInSystem, "ENFILE"), (.brokenPipe, "EPIPE"),
            (.illegalSeek, "ESPIPE"), (.fileTooLarge, "EFBIG"), (.noSpace, "ENOSPC"), (.badAddress, "EFAULT"),
            (.isDirectory, "EISDIR"), (.notSupported, "EOPNOTSUPP"), (.notPermitted, "EPERM"),
            (.noSuchProcess, "ESRCH"), (.cancelled, "ECANCELED"), (.timeExpired, "ETIME"),
        ]
        for (errno, name) in named { #expect(errno.name == name) }
    }
}
