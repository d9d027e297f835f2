public import AuditServerKit

extension ListenAddress {
    /// Parses `HOST:PORT` for the agent setting `setting`.
    /// - Throws: ``AgentError`` (``AgentError/Code/invalidConfiguration``) if the text has no host or port.
    public init(parsing text: String, setting: String) throws(AgentError) {
        do {
            try self.init(parsing: text)
        } catch {
            throw AgentError(.invalidConfiguration, error.message(setting, text: text))
        }
    }
}
