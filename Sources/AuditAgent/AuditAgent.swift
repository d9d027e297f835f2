/// The audit agent: ingest API, sync loop, metrics (docs/PROTOCOL.md).
public enum AuditAgentModule {}
