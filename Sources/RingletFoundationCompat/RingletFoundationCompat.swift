// RingletFoundationCompat: Ringlet for files that also see the toolchain's Dispatch.
//
// `import Foundation` re-exports the toolchain's `Dispatch`, whose top-level names
// (`DispatchQueue`, `DispatchTime`, `dispatchMain`, ...) are Ringlet's too: with both
// modules imported, each such name is ambiguous. Swift's name lookup settles a clash
// between two imported modules in favour of the declaration that a *scoped* import
// names (`import class Ringlet.DispatchQueue`), and a scoped import re-exported with
// `@_exported` stays scoped for the modules that import this one. So this module
// re-exports Ringlet whole (its operators, `Runtime` and the rest have no scoped form
// that works: operator lookup ignores scoped imports) and every name Ringlet shares
// with Dispatch once more, scoped. A file writes
//
//     import Foundation
//     import RingletFoundationCompat      // instead of `import Ringlet`
//
// and each shared name means Ringlet's, whichever other import brings Dispatch in
// (Foundation, FoundationNetworking, `import Dispatch` itself); `Dispatch.DispatchQueue`
// still names the toolchain's. The PortingFromDispatch article, "Foundation in the same
// file", has the recipe and what it leaves to the toolchain's Dispatch.
//
// Every public `Dispatch*` and `dispatch*` name of Sources/Ringlet must be listed here:
// `make import-styles` fails when one is missing.

@_exported import Ringlet

@_exported import class Ringlet.DispatchGroup
@_exported import class Ringlet.DispatchIO
@_exported import class Ringlet.DispatchObject
@_exported import class Ringlet.DispatchQueue
@_exported import class Ringlet.DispatchSemaphore
@_exported import class Ringlet.DispatchSource
@_exported import class Ringlet.DispatchSpecificKey
@_exported import class Ringlet.DispatchWorkItem
@_exported import enum Ringlet.DispatchPredicate
@_exported import enum Ringlet.DispatchTimeInterval
@_exported import enum Ringlet.DispatchTimeoutResult
@_exported import func Ringlet.dispatchMain
@_exported import func Ringlet.dispatchPrecondition
@_exported import protocol Ringlet.DispatchSourceFileSystemObject
@_exported import protocol Ringlet.DispatchSourceMemoryPressure
@_exported import protocol Ringlet.DispatchSourceProcess
@_exported import protocol Ringlet.DispatchSourceProtocol
@_exported import protocol Ringlet.DispatchSourceRead
@_exported import protocol Ringlet.DispatchSourceSignal
@_exported import protocol Ringlet.DispatchSourceTimer
@_exported import protocol Ringlet.DispatchSourceUserDataAdd
@_exported import protocol Ringlet.DispatchSourceUserDataOr
@_exported import protocol Ringlet.DispatchSourceUserDataReplace
@_exported import protocol Ringlet.DispatchSourceWrite
@_exported import struct Ringlet.DispatchData
@_exported import struct Ringlet.DispatchDataIterator
@_exported import struct Ringlet.DispatchQoS
@_exported import struct Ringlet.DispatchTime
@_exported import struct Ringlet.DispatchWallTime
@_exported import struct Ringlet.DispatchWorkItemFlags
