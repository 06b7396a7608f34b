/// The common base of queues (and, later, sources): GCD's object lifecycle.
///
/// Objects are configured, activated, and only then used. Suspending stops an
/// object at its next item boundary (it never preempts); every `suspend()` needs a
/// matching `resume()`. Subclasses override all four methods.
public class DispatchObject {
    init() {}

    /// Changes where the object's work runs. See `DispatchQueue.setTarget(queue:)`.
    public func setTarget(queue: DispatchQueue) {}

    /// Activates an object created inactive; a no-op on an active object.
    public func activate() {}

    /// Stops the object at its next item boundary; counted, like GCD.
    public func suspend() {}

    /// Undoes one `suspend()` (or activates an inactive object). Traps when there is
    /// no suspension to undo.
    public func resume() {}
}
