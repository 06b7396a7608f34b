import CRinglet

/// What this kernel's io_uring offers, for `ringlet board` and diagnostics: the
/// setup flags the manager tries, and every operation the runtime submits.
/// Probing creates and destroys a few small rings; call it once, not per request.
public struct IOUringFeatures: Sendable {
    /// A setup flag and whether the kernel accepts it.
    public struct SetupFlag: Sendable {
        /// The flag's name, e.g. "SINGLE_ISSUER (Linux 6.0)".
        public let name: String
        public let supported: Bool
    }

    /// An operation the runtime submits and whether the kernel's probe lists it
    /// (nil: the kernel has no probe, before Linux 5.6).
    public struct Operation: Sendable {
        public let name: String
        /// The runtime works without it (it then does the same another way); the
        /// others it cannot run the ring without.
        public let optional: Bool
        public let supported: Bool?
    }

    /// Nil when io_uring works; else why not, with the fix.
    public let unavailable: RingUnavailable?
    /// IORING_FEAT_* bits reported by io_uring_setup(2).
    public let featureBits: UInt32
    public let setupFlags: [SetupFlag]
    public let operations: [Operation]

    /// Probes the running kernel.
    public static func probe() -> IOUringFeatures {
        var info = rl_uring_info()
        let result = rl_uring_probe(&info)
        if result < 0 {
            let refusal = RingUnavailable(errno: Errno(negated: result),
                                          ioUringDisabled: RingUnavailable.readDisabledSysctl())
            return IOUringFeatures(unavailable: refusal, featureBits: 0, setupFlags: [], operations: [])
        }
        // The flags the manager's ring tries, in order (see rl_ring_create).
        let flags: [(String, UInt32)] = [("SINGLE_ISSUER (Linux 6.0)", UInt32(RL_RING_SINGLE_ISSUER)),
                                         ("DEFER_TASKRUN (Linux 6.1)", UInt32(RL_RING_DEFER_TASKRUN)),
                                         ("COOP_TASKRUN (Linux 5.19)", UInt32(RL_RING_COOP_TASKRUN))]
        let setupFlags = flags.map { name, bits -> SetupFlag in
            // DEFER_TASKRUN is only accepted together with SINGLE_ISSUER.
            let asked = bits == UInt32(RL_RING_DEFER_TASKRUN) ? bits | UInt32(RL_RING_SINGLE_ISSUER) : bits
            return SetupFlag(name: name, supported: rl_uring_setup_flags_supported(asked) == 1)
        }
        var operations: [Operation] = []
        for index in 0..<rl_uring_used_opcode_count() {
            let name = String(cString: rl_uring_used_opcode_name(index))
            let supported = rl_uring_used_opcode_supported(index)
            operations.append(Operation(name: name, optional: rl_uring_used_opcode_optional(index) == 1,
                                        supported: supported < 0 ? nil : supported == 1))
        }
        return IOUringFeatures(unavailable: nil, featureBits: info.features, setupFlags: setupFlags,
                               operations: operations)
    }
}
