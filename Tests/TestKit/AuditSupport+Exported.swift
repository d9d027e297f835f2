// The private-file helpers (``PrivateFile``) moved from AuditWire to AuditSupport (issue 31, part 4); test files that
// write private files through TestKit get them without naming the new target.
@_exported public import AuditSupport
