import CRinglet

/// Whether RINGLET_TRACE may turn the trace recorder on, through the C side
/// (Sources/CRinglet/ringlet_first_use.c): a program linked for an explicit start reads
/// no RINGLET_TRACE and carries no recorder unless its configuration names a trace file
/// (`OptionalParts`; the BoardProfiles article, "What a program carries").
enum EnvironmentTrace {
    /// True when the recorder is linked for RINGLET_TRACE (and now reachable).
    static var isRead: Bool { rl_environment_trace() != 0 }
}

/// The C side's way into `OptionalParts.linkTrace()`.
@_cdecl("ringlet_link_trace")
func ringletLinkTrace() {
    OptionalParts.linkTrace()
}
