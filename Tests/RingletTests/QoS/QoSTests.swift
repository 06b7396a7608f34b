// Unit tests for DispatchQoS, QoSLevel and QoSPriority: raw values, clamping, and the
// ordering the scheduler relies on. No kernel dependence.

import Testing
@testable import Ringlet

/// Every class, least urgent first (unspecified sorts lowest).
private let classesInOrder: [DispatchQoS.QoSClass] = [
    .unspecified, .background, .utility, .default, .userInitiated, .userInteractive,
]

@Suite("DispatchQoS")
struct DispatchQoSTests {
    @Test(arguments: zip(classesInOrder, [UInt32(0x00), 0x09, 0x11, 0x15, 0x19, 0x21]))
    func rawValuesAreDarwinQoSClasses(qosClass: DispatchQoS.QoSClass, raw: UInt32) {
        #expect(qosClass.rawValue == raw)
        #expect(DispatchQoS.QoSClass(rawValue: raw) == qosClass)
    }

    @Test(arguments: [UInt32(0x01), 0x08, 0x10, 0x14, 0x20, 0x22, 0xFF, UInt32.max])
    func unknownRawValuesAreRejected(raw: UInt32) {
        #expect(DispatchQoS.QoSClass(rawValue: raw) == nil)
    }

    @Test func namedQoSHaveRelativePriorityZero() {
        let named: [(DispatchQoS, DispatchQoS.QoSClass)] = [
            (.background, .background), (.utility, .utility), (.default, .default),
            (.userInitiated, .userInitiated), (.userInteractive, .userInteractive),
            (.unspecified, .unspecified),
        ]
        for (qos, qosClass) in named {
            #expect(qos.qosClass == qosClass)
            #expect(qos.relativePriority == 0)
        }
    }

    @Test(arguments: [(5, 0), (1, 0), (0, 0), (-1, -1), (-7, -7), (-15, -15), (-16, -15), (Int.min, -15), (Int.max, 0)])
    func relativePriorityIsClamped(requested: Int, stored: Int) {
        #expect(DispatchQoS(qosClass: .utility, relativePriority: requested).relativePriority == stored)
    }

    @Test func equalityComparesClassAndRelativePriority() {
        #expect(DispatchQoS(qosClass: .default, relativePriority: 0) == .default)
        #expect(DispatchQoS(qosClass: .default, relativePriority: -1) != .default)
        #expect(DispatchQoS.utility != .background)
        // Clamping happens before comparison.
        #expect(DispatchQoS(qosClass: .utility, relativePriority: -40) == DispatchQoS(qosClass: .utility, relativePriority: -15))
    }
}

@Suite("QoSLevel")
struct QoSLevelTests {
    @Test func levelsAreDenseAndOrdered() {
        #expect(QoSLevel.count == 6)
        #expect(QoSLevel.allCases.count == QoSLevel.count)
        #expect(QoSLevel.allCases.map(\.rawValue) == Array(0..<QoSLevel.count))
        #expect(QoSLevel.allCases == QoSLevel.allCases.sorted())
        #expect(QoSLevel.unspecified < .background && QoSLevel.userInitiated < .userInteractive)
        #expect(!(QoSLevel.default < .default))
    }

    @Test func allLevelsAreIndexedByRawValue() {
        #expect(QoSLevel.allLevels.count == QoSLevel.count)
        for (index, level) in QoSLevel.allLevels.enumerated() {
            #expect(level.rawValue == index)
        }
        #expect(QoSLevel.allLevels.map(\.rootLabel) == [
            "unspecified", "background", "utility", "default", "user-initiated", "user-interactive",
        ])
        #expect(QoSLevel.userInitiated.name == "userInitiated")
    }

    @Test func conversionsRoundTrip() {
        for (index, qosClass) in classesInOrder.enumerated() {
            #expect(qosClass.level.rawValue == index)
            #expect(qosClass.level.qosClass == qosClass)
            #expect(DispatchQoS(qosClass: qosClass, relativePriority: -3).level == qosClass.level)
        }
        for level in QoSLevel.allCases {
            #expect(level.qosClass.level == level)
        }
    }
}

@Suite("QoSPriority")
struct QoSPriorityTests {
    @Test func higherClassAlwaysWins() {
        for (lowerIndex, lower) in classesInOrder.enumerated() {
            for higher in classesInOrder[(lowerIndex + 1)...] {
                let best = QoSPriority(DispatchQoS(qosClass: lower, relativePriority: 0))
                let worst = QoSPriority(DispatchQoS(qosClass: higher, relativePriority: -15))
                #expect(best < worst, "\(lower) at 0 must rank below \(higher) at -15")
            }
        }
    }

    @Test func withinAClassZeroBeatsMinusFifteen() {
        for qosClass in classesInOrder {
            let priorities = (-15...0).map { QoSPriority(DispatchQoS(qosClass: qosClass, relativePriority: $0)) }
            #expect(priorities == priorities.sorted())
            #expect(Set(priorities).count == 16)
            #expect(QoSPriority(DispatchQoS(qosClass: qosClass, relativePriority: -15)) < QoSPriority(DispatchQoS(qosClass: qosClass, relativePriority: 0)))
        }
    }

    @Test func packsIntoOneByteAndRoundTrips() {
        var seen = Set<UInt8>()
        for qosClass in classesInOrder {
            for relativePriority in -15...0 {
                let qos = DispatchQoS(qosClass: qosClass, relativePriority: relativePriority)
                let priority = QoSPriority(qos)
                #expect(priority.qos == qos)
                #expect(priority.level == qos.level)
                #expect(priority.relativePriority == relativePriority)
                #expect(priority.rawValue <= 0x5F)
                seen.insert(priority.rawValue)
            }
        }
        #expect(seen.count == QoSLevel.count * 16)
        #expect(QoSPriority(.userInteractive).rawValue == 0x5F)
        #expect(QoSPriority(DispatchQoS(qosClass: .unspecified, relativePriority: -15)).rawValue == 0)
    }

    @Test func lowestIsBelowEveryOtherPriority() {
        #expect(QoSPriority.lowest.rawValue == 0)
        #expect(QoSPriority.lowest.qos == DispatchQoS(qosClass: .unspecified, relativePriority: -15))
        #expect(QoSPriority.lowest < QoSPriority(.unspecified))
        #expect(QoSPriority.lowest < QoSPriority(DispatchQoS(qosClass: .background, relativePriority: -15)))
    }

    @Test func levelInitialiserClamps() {
        #expect(QoSPriority(level: .utility, relativePriority: 3) == QoSPriority(.utility))
        #expect(QoSPriority(level: .utility, relativePriority: -99).relativePriority == -15)
        #expect(max(QoSPriority(.background), QoSPriority(.userInitiated)).qos == .userInitiated)
    }
}
