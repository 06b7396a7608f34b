extension QoSPriority {
    /// Rebuilds a priority from its packed `rawValue` (as stored in an atomic).
    init(packed rawValue: UInt8) {
        self.rawValue = rawValue
    }
}
