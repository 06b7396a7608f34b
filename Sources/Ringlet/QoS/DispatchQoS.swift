// DispatchQoS: quality-of-service classes, source-compatible with the Dispatch module on
// Linux, plus the two internal forms the scheduler works with:
//
//   QoSLevel     a dense 0...5 index (one run queue per level), ordered by urgency
//   QoSPriority  (level, relativePriority) packed in one byte, so "who runs first" is
//                a single integer comparison and fits in an atomic word
//
// Class values are Darwin's qos_class_t (<sys/qos.h>); relative priorities range over
// QOS_MIN_RELATIVE_PRIORITY (-15) ... 0.

/// A quality-of-service class plus a relative priority within it: how urgently work
/// should run compared with other work. O(1) value; nothing here traps.
public struct DispatchQoS: Equatable, Sendable {
    /// The class: the main ordering between pieces of work.
    public let qosClass: QoSClass

    /// The order within `qosClass`, from -15 (lowest) to 0 (highest).
    public let relativePriority: Int

    /// For maintenance or cleanup the user does not see; runs last.
    public static let background = DispatchQoS(qosClass: .background, relativePriority: 0)
    /// For long-running work the user follows with a progress indicator.
    public static let utility = DispatchQoS(qosClass: .utility, relativePriority: 0)
    /// The class used when nothing more specific is known.
    public static let `default` = DispatchQoS(qosClass: .default, relativePriority: 0)
    /// For work the user started and waits for.
    public static let userInitiated = DispatchQoS(qosClass: .userInitiated, relativePriority: 0)
    /// For work that must finish within a frame, such as handling input.
    public static let userInteractive = DispatchQoS(qosClass: .userInteractive, relativePriority: 0)
    /// No class: the work inherits one from its queue or from the thread submitting it.
    public static let unspecified = DispatchQoS(qosClass: .unspecified, relativePriority: 0)

    /// A quality-of-service class, from `background` (least urgent) to `userInteractive`.
    public enum QoSClass: Sendable {
        /// Maintenance or cleanup the user does not see (QOS_CLASS_BACKGROUND).
        case background
        /// Long-running work with visible progress (QOS_CLASS_UTILITY).
        case utility
        /// The fallback class (QOS_CLASS_DEFAULT).
        case `default`
        /// Work the user started and waits for (QOS_CLASS_USER_INITIATED).
        case userInitiated
        /// Work the user interacts with directly (QOS_CLASS_USER_INTERACTIVE).
        case userInteractive
        /// No class; inherit one (QOS_CLASS_UNSPECIFIED).
        case unspecified
    }

    /// Creates a QoS of `qosClass` with `relativePriority` clamped to -15...0, the range
    /// GCD accepts (dispatch_queue_attr_make_with_qos_class(3)); GCD rejects values
    /// outside it, we keep the nearest valid one. O(1); never traps.
    public init(qosClass: QoSClass, relativePriority: Int) {
        self.qosClass = qosClass
        self.relativePriority = min(0, max(QoSPriority.minimumRelativePriority, relativePriority))
    }
}

/// Returns whether `a` and `b` have the same class and relative priority. O(1).
public func == (a: DispatchQoS, b: DispatchQoS) -> Bool {
    a.qosClass == b.qosClass && a.relativePriority == b.relativePriority
}

extension DispatchQoS.QoSClass {
    // Internal, as in Dispatch on Linux (where the raw type `_OSQoSClass` is internal);
    // on Darwin these are public and typed `qos_class_t`.

    /// The class for a Darwin `qos_class_t` value, or nil for a value that names none.
    init?(rawValue: UInt32) {
        switch rawValue {
        case 0x09: self = .background
        case 0x11: self = .utility
        case 0x15: self = .default
        case 0x19: self = .userInitiated
        case 0x21: self = .userInteractive
        case 0x00: self = .unspecified
        default: return nil
        }
    }

    /// The Darwin `qos_class_t` value of this class.
    var rawValue: UInt32 {
        switch self {
        case .background: return 0x09
        case .utility: return 0x11
        case .default: return 0x15
        case .userInitiated: return 0x19
        case .userInteractive: return 0x21
        case .unspecified: return 0x00
        }
    }

    /// This class as a dense run-queue index.
    var level: QoSLevel {
        switch self {
        case .unspecified: return .unspecified
        case .background: return .background
        case .utility: return .utility
        case .default: return .default
        case .userInitiated: return .userInitiated
        case .userInteractive: return .userInteractive
        }
    }
}

extension DispatchQoS {
    /// The class of this QoS as a dense run-queue index.
    var level: QoSLevel { qosClass.level }
}

/// A QoS class as a dense index 0..<count, ordered from least to most urgent; the
/// scheduler keeps one run queue per level. `unspecified` sorts lowest.
enum QoSLevel: Int, Comparable, CaseIterable, Sendable {
    case unspecified = 0
    case background = 1
    case utility = 2
    case `default` = 3
    case userInitiated = 4
    case userInteractive = 5

    /// The number of levels (the size of per-level arrays).
    static let count = 6

    /// Every level, in `rawValue` order (index `i` holds the level whose rawValue is `i`).
    static let allLevels: [QoSLevel] = [.unspecified, .background, .utility, .default, .userInitiated, .userInteractive]

    /// The case name, for reports ("userInitiated").
    var name: String {
        switch self {
        case .unspecified: return "unspecified"
        case .background: return "background"
        case .utility: return "utility"
        case .default: return "default"
        case .userInitiated: return "userInitiated"
        case .userInteractive: return "userInteractive"
        }
    }

    /// The middle of GCD's root queue label, "com.apple.root.<rootLabel>-qos".
    var rootLabel: String {
        switch self {
        case .unspecified: return "unspecified"
        case .background: return "background"
        case .utility: return "utility"
        case .default: return "default"
        case .userInitiated: return "user-initiated"
        case .userInteractive: return "user-interactive"
        }
    }

    static func < (a: QoSLevel, b: QoSLevel) -> Bool { a.rawValue < b.rawValue }

    /// The public class this level stands for.
    var qosClass: DispatchQoS.QoSClass {
        switch self {
        case .unspecified: return .unspecified
        case .background: return .background
        case .utility: return .utility
        case .default: return .default
        case .userInitiated: return .userInitiated
        case .userInteractive: return .userInteractive
        }
    }
}

/// A `DispatchQoS` packed into one byte so that comparing priorities is comparing
/// integers: bits 4...6 hold the level (0...5), bits 0...3 hold relativePriority + 15
/// (0...15). A higher class therefore always wins, and within a class relative
/// priority 0 beats -15.
struct QoSPriority: Comparable, Hashable, Sendable {
    /// The lowest relative priority GCD accepts (QOS_MIN_RELATIVE_PRIORITY).
    static let minimumRelativePriority = -15

    /// The lowest priority, (unspecified, -15), raw value 0: the "nothing pending" value.
    static let lowest = QoSPriority(level: .unspecified, relativePriority: minimumRelativePriority)

    /// The packed form: `level << 4 | (relativePriority + 15)`; at most 0x5F.
    let rawValue: UInt8

    /// Packs `level` and `relativePriority` (clamped to -15...0).
    init(level: QoSLevel, relativePriority: Int) {
        let clamped = min(0, max(Self.minimumRelativePriority, relativePriority))
        rawValue = UInt8(level.rawValue << 4 | (clamped - Self.minimumRelativePriority))
    }

    /// Packs `qos`.
    init(_ qos: DispatchQoS) {
        self.init(level: qos.level, relativePriority: qos.relativePriority)
    }

    /// The class part.
    @inline(__always)
    var level: QoSLevel {
        // The initialiser only stores levels 0...5 here.
        QoSLevel(rawValue: Int(rawValue >> 4)) ?? .userInteractive
    }

    /// The relative priority part, -15...0.
    var relativePriority: Int {
        Int(rawValue & 0x0F) + Self.minimumRelativePriority
    }

    /// The QoS this priority was packed from.
    var qos: DispatchQoS {
        DispatchQoS(qosClass: level.qosClass, relativePriority: relativePriority)
    }

    static func < (a: QoSPriority, b: QoSPriority) -> Bool { a.rawValue < b.rawValue }
}
