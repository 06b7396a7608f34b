
// DispatchIO's types and the ways to make a channel, as in GCD.
extension DispatchIO {
    /// How a channel reads and writes: in order from the current position (`.stream`)
    /// or at offsets (`.random`, regular files only).
    public enum StreamType: UInt, Sendable {
        case stream = 0
        case random = 1
    }

    public struct CloseFlags: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Cancel the operations under way: their handlers get ECANCELED.
        public static let stop = CloseFlags(rawValue: 1)
    }

    public struct IntervalFlags: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public init(nilLiteral: ()) { self.rawValue = 0 }

        /// Deliver at exactly the interval (a `.strict` timer), not within a leeway.
        public static let strictInterval = IntervalFlags(rawValue: 1)
    }

    /// A channel on `fileDescriptor`, which the program keeps owning: close it in
    /// `cleanupHandler`, which runs once the channel is closed and idle. A descriptor
    /// that is not open fails every operation with EBADF.
    public convenience init(type: StreamType, fileDescriptor: Int32, queue: DispatchQueue,
                            cleanupHandler: @escaping (_ error: Int32) -> Void) {
        self.init(type: type, descriptor: ChannelDescriptor(fd: fileDescriptor, owned: false), failure: 0,
                  queue: queue, cleanupHandler: cleanupHandler)
    }

    /// A channel on the file at `path` (absolute; nil otherwise), opened now with
    /// `oflag` and `mode` and closed by the channel. When it cannot be opened, the
    /// cleanup handler gets the errno and every operation fails with it.
    public convenience init?(type: StreamType, path: UnsafePointer<Int8>, oflag: Int32, mode: UInt32,
                             queue: DispatchQueue, cleanupHandler: @escaping (_ error: Int32) -> Void) {
        guard path.pointee == 0x2F else { return nil }  // '/': GCD wants an absolute path
        let opened: Result<Int32, Errno>
        do throws(Errno) {
            opened = .success(try Descriptors.open(path, flags: oflag, mode: mode))
        } catch {
            opened = .failure(error)
        }
        let fd = (try? opened.get()) ?? -1
        let failure: Int32
        if case .failure(let error) = opened { failure = error.rawValue } else { failure = 0 }
        self.init(type: type, descriptor: ChannelDescriptor(fd: fd, owned: true), failure: failure, queue: queue,
                  cleanupHandler: cleanupHandler)
    }

    /// A channel on the descriptor of `io`, of another type; the descriptor stays open
    /// until both channels are done with it.
    public convenience init(type: StreamType, io: DispatchIO, queue: DispatchQueue,
                            cleanupHandler: @escaping (_ error: Int32) -> Void) {
        io.descriptor.share()
        self.init(type: type, descriptor: io.descriptor, failure: io.failure, queue: queue,
                  cleanupHandler: cleanupHandler)
    }

    /// Reads up to `maxLength` bytes (Int.max: to the end) from the descriptor's
    /// position and calls `handler` once on `queue` with all of it, or with what was
    /// read and the errno. On a pipe or socket, as in Dispatch, it waits for the first
    /// bytes and then hands over what is there, without waiting for `maxLength` or the
    /// end. The descriptor stays the program's; the I/O of one descriptor is
    /// serialised across calls and channels.
    public class func read(fromFileDescriptor: Int32, maxLength: Int, runningHandlerOn queue: DispatchQueue,
                           handler: @escaping (_ data: DispatchData, _ error: Int32) -> Void) {
        let channel = DispatchIO(type: .stream, fileDescriptor: fromFileDescriptor, queue: queue,
                                 cleanupHandler: { _ in })
        let collected = DataCollector()
        channel.read(offset: 0, length: maxLength, queue: queue, endsWhenDrained: true) { done, data, error in
            if let data { collected.data.append(data) }
            if done {
                handler(collected.data, error)
                channel.close()
            }
        }
    }

    /// Writes `data` at the descriptor's position and calls `handler` once on `queue`:
    /// nil and 0 when all was written, else what was left and the errno. Concurrent
    /// calls on one descriptor write one after another, each whole.
    public class func write(toFileDescriptor: Int32, data: DispatchData, runningHandlerOn queue: DispatchQueue,
                            handler: @escaping (_ data: DispatchData?, _ error: Int32) -> Void) {
        let channel = DispatchIO(type: .stream, fileDescriptor: toFileDescriptor, queue: queue,
                                 cleanupHandler: { _ in })
        channel.write(offset: 0, data: data, queue: queue) { done, rest, error in
            if done {
                handler(rest, error)
                channel.close()
            }
        }
    }
}

/// The data `read(fromFileDescriptor:)` gathers; only its handler touches it, and
/// one operation's handlers never run concurrently.
// @unchecked Sendable: only the read's handler touches it, and one operation's handlers never overlap.
private final class DataCollector: @unchecked Sendable {
    var data = DispatchData.empty
}
