/// The protocols `DispatchSource`'s factories return, as in the toolchain's Dispatch.
/// They are class-bound, so Embedded Swift can use them as existentials.
public protocol DispatchSourceProtocol: AnyObject {
    typealias DispatchSourceHandler = () -> Void

    func setEventHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?)
    func setEventHandler(handler: DispatchWorkItem)
    func setCancelHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?)
    func setCancelHandler(handler: DispatchWorkItem)
    func setRegistrationHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?)
    func setRegistrationHandler(handler: DispatchWorkItem)
    func activate()
    func cancel()
    func resume()
    func suspend()
    /// Moves the handlers onto `queue` (GCD has this on DispatchObject only).
    func setTarget(queue: DispatchQueue)
    /// The descriptor, signal number or process id the source watches (0 for timers
    /// and user data).
    var handle: UInt { get }
    /// The events the source was asked to watch (process and file-system sources).
    var mask: UInt { get }
    /// What the current event carries: fires, bytes, signals, merged user data.
    var data: UInt { get }
    var isCancelled: Bool { get }
    #if canImport(_Concurrency)
    /// The source's events for `for await`, in place of the event handler
    /// (``DispatchSource/Events`` says what each element holds and how they end).
    ///
    /// A requirement, not an extension member, so that a call on an existential goes
    /// through the witness table to `DispatchSource`'s own getter. In Embedded Swift an
    /// extension member called on an existential is its unspecialized generic form,
    /// which Ringlet's object file holds as a trap (Embedded Swift compiles no
    /// unspecialized generics) and which wins the link over the caller's working weak
    /// copy: `source.events` ended in an illegal instruction there.
    var events: DispatchSource.Events { get }
    #endif
}

// The shorter forms (protocol requirements cannot have default arguments). Each is
// emitted into its caller, never into Ringlet's object file: in Embedded Swift, an
// extension member called on an existential is its unspecialized generic form, which
// Ringlet's object would hold as a trap that wins the link over the caller's working
// copy (`make embedded` scans the object for such traps). The same goes for the
// extensions below.
extension DispatchSourceProtocol {
    @_alwaysEmitIntoClient
    public func setEventHandler(handler: DispatchSourceHandler?) {
        setEventHandler(qos: .unspecified, flags: [], handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setEventHandler(qos: DispatchQoS, handler: DispatchSourceHandler?) {
        setEventHandler(qos: qos, flags: [], handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setEventHandler(flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {
        setEventHandler(qos: .unspecified, flags: flags, handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setCancelHandler(handler: DispatchSourceHandler?) {
        setCancelHandler(qos: .unspecified, flags: [], handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setCancelHandler(qos: DispatchQoS, handler: DispatchSourceHandler?) {
        setCancelHandler(qos: qos, flags: [], handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setCancelHandler(flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {
        setCancelHandler(qos: .unspecified, flags: flags, handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setRegistrationHandler(handler: DispatchSourceHandler?) {
        setRegistrationHandler(qos: .unspecified, flags: [], handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setRegistrationHandler(qos: DispatchQoS, handler: DispatchSourceHandler?) {
        setRegistrationHandler(qos: qos, flags: [], handler: handler)
    }
    @_alwaysEmitIntoClient
    public func setRegistrationHandler(flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {
        setRegistrationHandler(qos: .unspecified, flags: flags, handler: handler)
    }
}

public protocol DispatchSourceUserDataAdd: DispatchSourceProtocol {
    /// Adds `data` to the pending value; the handler sees the sum (0 adds nothing).
    func add(data: UInt)
}

public protocol DispatchSourceUserDataOr: DispatchSourceProtocol {
    /// ORs `data` into the pending value (0 changes nothing).
    func or(data: UInt)
}

public protocol DispatchSourceUserDataReplace: DispatchSourceProtocol {
    /// Replaces the pending value with `data` (0: no event).
    func replace(data: UInt)
}

/// A readable descriptor; `data` is an estimate of the bytes waiting (0 at EOF).
public protocol DispatchSourceRead: DispatchSourceProtocol {}

/// A writable descriptor; `data` is an estimate of the bytes that fit.
public protocol DispatchSourceWrite: DispatchSourceProtocol {}

/// A signal; `data` counts deliveries since the last handler.
public protocol DispatchSourceSignal: DispatchSourceProtocol {}

/// A child or other process: `.exit` (pidfd).
public protocol DispatchSourceProcess: DispatchSourceProtocol {}

extension DispatchSourceProcess {
    /// The process id.
    @_alwaysEmitIntoClient
    public var handle: Int32 { Int32(truncatingIfNeeded: Int(bitPattern: (self as DispatchSourceProtocol).handle)) }
    @_alwaysEmitIntoClient
    public var data: DispatchSource.ProcessEvent {
        DispatchSource.ProcessEvent(rawValue: (self as DispatchSourceProtocol).data)
    }
    @_alwaysEmitIntoClient
    public var mask: DispatchSource.ProcessEvent {
        DispatchSource.ProcessEvent(rawValue: (self as DispatchSourceProtocol).mask)
    }
}

/// Changes to an open file (inotify).
public protocol DispatchSourceFileSystemObject: DispatchSourceProtocol {}

extension DispatchSourceFileSystemObject {
    /// The watched descriptor.
    @_alwaysEmitIntoClient
    public var handle: Int32 { Int32(truncatingIfNeeded: Int(bitPattern: (self as DispatchSourceProtocol).handle)) }
    @_alwaysEmitIntoClient
    public var data: DispatchSource.FileSystemEvent {
        DispatchSource.FileSystemEvent(rawValue: (self as DispatchSourceProtocol).data)
    }
    @_alwaysEmitIntoClient
    public var mask: DispatchSource.FileSystemEvent {
        DispatchSource.FileSystemEvent(rawValue: (self as DispatchSourceProtocol).mask)
    }
}

/// A timer; `data` counts fires since the last handler (missed intervals included).
public protocol DispatchSourceTimer: DispatchSourceProtocol {
    func schedule(deadline: DispatchTime, repeating interval: DispatchTimeInterval, leeway: DispatchTimeInterval)
    func schedule(deadline: DispatchTime, repeating interval: Double, leeway: DispatchTimeInterval)
    func schedule(wallDeadline: DispatchWallTime, repeating interval: DispatchTimeInterval,
                  leeway: DispatchTimeInterval)
    func schedule(wallDeadline: DispatchWallTime, repeating interval: Double, leeway: DispatchTimeInterval)
}

extension DispatchSourceTimer {
    @_alwaysEmitIntoClient
    public func schedule(deadline: DispatchTime) {
        schedule(deadline: deadline, repeating: .never, leeway: .nanoseconds(0))
    }
    @_alwaysEmitIntoClient
    public func schedule(deadline: DispatchTime, leeway: DispatchTimeInterval) {
        schedule(deadline: deadline, repeating: .never, leeway: leeway)
    }
    @_alwaysEmitIntoClient
    public func schedule(deadline: DispatchTime, repeating interval: DispatchTimeInterval) {
        schedule(deadline: deadline, repeating: interval, leeway: .nanoseconds(0))
    }
    @_alwaysEmitIntoClient
    public func schedule(deadline: DispatchTime, repeating interval: Double) {
        schedule(deadline: deadline, repeating: interval, leeway: .nanoseconds(0))
    }
    @_alwaysEmitIntoClient
    public func schedule(wallDeadline: DispatchWallTime) {
        schedule(wallDeadline: wallDeadline, repeating: .never, leeway: .nanoseconds(0))
    }
    @_alwaysEmitIntoClient
    public func schedule(wallDeadline: DispatchWallTime, leeway: DispatchTimeInterval) {
        schedule(wallDeadline: wallDeadline, repeating: .never, leeway: leeway)
    }
    @_alwaysEmitIntoClient
    public func schedule(wallDeadline: DispatchWallTime, repeating interval: DispatchTimeInterval) {
        schedule(wallDeadline: wallDeadline, repeating: interval, leeway: .nanoseconds(0))
    }
    @_alwaysEmitIntoClient
    public func schedule(wallDeadline: DispatchWallTime, repeating interval: Double) {
        schedule(wallDeadline: wallDeadline, repeating: interval, leeway: .nanoseconds(0))
    }
}
