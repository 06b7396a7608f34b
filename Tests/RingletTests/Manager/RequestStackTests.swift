import Testing
@testable import Ringlet

/// The manager's lock-free inbox.
@Suite struct RequestStackTests {
    @Test func takeAllReturnsOldestFirst() {
        let stack = RequestStack<Int>()
        let emptyAtFirst = stack.isEmpty
        #expect(emptyAtFirst)
        for value in 0..<5 { stack.push(value) }
        let emptyAfterPushes = stack.isEmpty
        #expect(!emptyAfterPushes)
        let first = stack.takeAll(), second = stack.takeAll()
        #expect(first == [0, 1, 2, 3, 4])
        #expect(second == [])
    }

    @Test func concurrentProducersLoseNothingAndKeepTheirOwnOrder() {
        let inbox = Inbox()
        let producers = 4, perProducer = 20_000
        let group = DispatchGroup()
        let taken = Recorder<(producer: Int, sequence: Int)>()
        let done = AtomicCounter()
        for producer in 0..<producers {
            DispatchQueue.global().async(group: group) {
                for sequence in 0..<perProducer { inbox.stack.push((producer, sequence)) }
                done.increment()
            }
        }
        // The consumer takes while the producers push, as the manager does.
        while done.value < producers || !inbox.stack.isEmpty {
            for element in inbox.stack.takeAll() { taken.append(element) }
        }
        #expect(waited(group))
        let values = taken.values
        #expect(values.count == producers * perProducer)
        for producer in 0..<producers {
            let mine = values.filter { $0.producer == producer }.map(\.sequence)
            #expect(mine == Array(0..<perProducer))
        }
    }

    /// A noncopyable stack cannot be captured by an escaping closure; a class can.
    private final class Inbox: @unchecked Sendable {
        let stack = RequestStack<(producer: Int, sequence: Int)>()
    }
}
