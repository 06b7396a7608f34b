/// A queue holds its target: the last release of the bottom of a target chain frees
/// every queue of the chain, each deinit releasing the next. Nested, that took a few
/// stack frames per queue, and a chain of 10,000 overflowed a worker's stack. The
/// deinits follow one another instead: an outer one that releases a target lets the
/// targets its release frees wait in the thread's context, and releases them in turn.
extension DispatchQueue {
    /// Releases `target`, a deinit's reference to its (non-global) target.
    static func releaseTarget(_ target: consuming DispatchQueue) {
        // A thread that is exiting has no context left: a plain release then.
        guard let context = ThreadContext.currentIfPresent else { return }
        if context.targetsToRelease != nil {
            // Inside an outer deinit's release: that one releases it when this ends.
            context.targetsToRelease!.append(target)
            return
        }
        context.targetsToRelease = [target]
        while let next = context.targetsToRelease!.popLast() {
            // The release of `next` (maybe its last) runs its deinit here, which may
            // leave its own target in the list.
            _ = consume next
        }
        context.targetsToRelease = nil
    }
}
