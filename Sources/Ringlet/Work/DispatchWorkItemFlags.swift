/// How a work item runs and which QoS it takes (GCD's block flags).
public struct DispatchWorkItemFlags: OptionSet, RawRepresentable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// On a concurrent queue, run alone: after the items before it, before the ones after.
    public static let barrier = DispatchWorkItemFlags(rawValue: 0x1)
    /// Take no QoS from the submitting thread (source handlers and timers use this).
    public static let detached = DispatchWorkItemFlags(rawValue: 0x2)
    /// Capture the creating thread's QoS at `init`, for items stored and submitted later.
    public static let assignCurrentContext = DispatchWorkItemFlags(rawValue: 0x4)
    /// Carry no QoS at all: the queue's QoS (or default) applies.
    public static let noQoS = DispatchWorkItemFlags(rawValue: 0x8)
    /// Prefer the queue's QoS over the item's (the default for `async`).
    public static let inheritQoS = DispatchWorkItemFlags(rawValue: 0x10)
    /// Prefer the item's QoS over the queue's when it is higher.
    public static let enforceQoS = DispatchWorkItemFlags(rawValue: 0x20)
}
