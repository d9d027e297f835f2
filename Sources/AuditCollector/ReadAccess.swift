/// Who may use the collector's read API: the head, checkpoint, tile, entry bundle and proof endpoints and the
/// collector's key (docs/COLLECTOR-API.md section 2). Ingest always takes the ingest token alone.
public enum ReadAccess: Sendable, Equatable {
    /// Reads take the ingest token, as ingest does (none when no ingest token is set): the default.
    case ingestToken
    /// Reads take this read token, or the ingest token (`auditd collector --read-token-file`).
    case token(String)
    /// Anyone may read (`auditd collector --public-read`).
    case everyone
}
