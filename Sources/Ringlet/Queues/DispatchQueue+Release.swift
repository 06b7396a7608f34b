/// A queue holds its target: the last release of the bottom of a target chain frees
/// every queue of the chain, each deinit releasing the next. Nested, that took a few
/// stack frames per queue, and a chain of 10,000 overflowed a worker's stack. The
/// deinits follow one another instead: an outer one that releases a target lets the
/// targets its release frees wait in the thread's context, and releases them in turn.
extension DispatchQueue {
    /// Releases `target`, a deinit's reference to its (non-global) target.
    static func releaseTarget(_ target: inout DispatchQueue?) {
        // Only a release that frees the target goes on down the chain.
        guard isKnownUniquelyReferenced(&target), let last = target.take() else { return }
        let context = ThreadContext.current
        if context.targetsToRelease != nil {
            // Inside an outer deinit's release: that one releases it when this ends.
            context.targetsToRelease!.append(consume last)
            return
        }
        // Moved into the list, not copied: a reference left in `last` would free the
        // target at this function's end, after the list is gone, nested again.
        context.targetsToRelease = [consume last]
        while let next = context.targetsToRelease!.popLast() {
            // The release of `next` (its last) runs its deinit here, which may leave its
            // own target in the list.
            _ = consume next
        }
        context.targetsToRelease = nil
    }
}
