// Which kernel interface the manager's ring runs on (Architecture, "The epoll backend"):
// io_uring unless epoll was asked for; with `backend = auto`, epoll when the kernel or
// a container refuses io_uring, with one line on stderr saying why. The rest of the
// manager sees one `Ring` either way. Manager thread only, at start.

extension ManagerThread {
    /// I/O helper threads of the epoll backend, created with it at start: the regular
    /// files' reads that miss the page cache and their writes block in them, two at a
    /// time — enough to overlap a disk wait with the next request on a small board,
    /// while reads of cached bytes and every pipe and socket never leave the manager.
    static let epollHelperThreads = 2

    /// Creates the manager's ring on the backend `request` allows.
    func openRing(_ request: BackendRequest) throws(RuntimeError) -> (Ring, BackendSelection) {
        var refusal: RingUnavailable?
        if request.choice != .epoll {
            let entries = UInt32(configuration.ringEntries)
            do throws(RingUnavailable) {
                let ring = try Ring(submissionEntries: entries, completionEntries: 4 * entries)
                let reason: BackendSelection.Reason = request.choice == .ioUring ? .requested(how: request.how) : .ioUringWorks
                return (ring, BackendSelection(backend: .ioUring, reason: reason))
            } catch {
                if request.choice == .ioUring { throw RuntimeError.ioUringUnavailable(error) }
                refusal = error
            }
        }
        let ring: Ring
        do throws(EpollSetupError) {
            ring = try Ring(epollWithHelperThreads: Self.epollHelperThreads)
        } catch {
            throw RuntimeError.epollUnavailable(call: error.call, errno: error.errno, ioUringRefusal: refusal)
        }
        let reason: BackendSelection.Reason = refusal.map { .ioUringRefused($0) } ?? .requested(how: request.how)
        let selection = BackendSelection(backend: .epoll, reason: reason)
        if let line = selection.startLine { writeToStandardError(line) }
        return (ring, selection)
    }
}
