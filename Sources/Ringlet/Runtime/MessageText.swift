// How the runtime's messages (misuse traps, warnings, errors, stall reports, the live
// dump) are built: every piece of text goes through one call that is never inlined.
//
// The runtime writes many messages, each a string interpolation or a chain of `+=`.
// The standard library's versions of these operations are inlinable, and inlined they
// make each literal piece and each interpolated value a few dozen instructions at the
// place that writes the message (a small-string fast path, then the append); through
// the functions below each piece is one short call. Over all the messages, the
// difference is a good part of an aarch64 program (the BoardProfiles article, "What a program carries").
// Messages are not on any hot path, so the calls cost nothing that matters.
//
// These declarations shadow the standard library's for code in this module only (a
// declaration in the module being compiled is preferred over an imported one with the
// same signature): the literal syntax stays as it is, and other modules are not
// affected. Values of other types still take the standard library's generic
// `appendInterpolation`, so a message never fails to build.

extension DefaultStringInterpolation {
    @inline(never)
    mutating func appendLiteral(_ literal: String) { write(literal) }

    @inline(never)
    mutating func appendInterpolation(_ value: String) { write(value) }

    @inline(never)
    mutating func appendInterpolation(_ value: Int64) { write(String(value)) }

    @inline(never)
    mutating func appendInterpolation(_ value: UInt64) { write(String(value)) }

    mutating func appendInterpolation(_ value: Int) { appendInterpolation(Int64(value)) }
    mutating func appendInterpolation(_ value: Int32) { appendInterpolation(Int64(value)) }
    mutating func appendInterpolation(_ value: UInt) { appendInterpolation(UInt64(value)) }
    mutating func appendInterpolation(_ value: UInt32) { appendInterpolation(UInt64(value)) }
    mutating func appendInterpolation(_ value: UInt16) { appendInterpolation(UInt64(value)) }
    mutating func appendInterpolation(_ value: UInt8) { appendInterpolation(UInt64(value)) }

    /// Errors, `Errno`, `WaitReason` and the other described types: their description.
    @inline(never)
    mutating func appendInterpolation<T: CustomStringConvertible>(_ value: T) { write(value.description) }
}

extension String {
    @inline(never)
    static func += (lhs: inout String, rhs: String) { lhs.append(rhs) }
}
