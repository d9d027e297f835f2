import AuditChain
import AuditStore
import Foundation
import Logging

/// The agent's log: the state directory's, opened or created at start (``StateDirectory/openOrCreateLog``).
extension Agent {
    /// Opens the log, or creates the state directory (0700), the keys (0600) and the genesis entry when it holds
    /// none; the creation is logged.
    /// - Returns: the log and whether it was created.
    static func openOrCreateLog(
        _ configuration: AgentConfiguration,
        logger: Logger
    ) async throws(AgentError) -> (AuditLog, Bool) {
        let state = configuration.state
        var settings = AuditLog.Configuration()
        settings.epochSeconds = configuration.epochSeconds
        settings.formatVersion = configuration.formatVersion
        settings.subjectKeys = configuration.subjectKeys
        // A delivery batch ends on a signed entry: a commit signs at least as often as a batch ends.
        settings.signEvery = max(1, min(settings.signEvery, configuration.policy.batchSize))
        if let file = configuration.catalogueFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw AgentError(.invalidConfiguration, "cannot read catalogue file \(file)")
            }
            do {
                settings.catalogue = try EventCatalogue.builtIn.adding(json: Array(data))
            } catch {
                throw AgentError(.invalidConfiguration, "catalogue file \(file): \(error)")
            }
        }
        do {
            let device = configuration.deviceId ?? ProcessInfo.processInfo.hostName
            let (log, created) = try await state.openOrCreateLog(deviceId: device, configuration: settings)
            if !created {
                do {
                    try log.checkAppendable()
                } catch let error as LogStoreError where error.code == .corruptState {
                    // The agent still starts: what the log holds can still be read and verified, and each refused
                    // event is answered with an error. Said now, not at the first event.
                    logger.critical(
                        "the audit log refuses appends",
                        metadata: ["stateDir": "\(state.path)", "error": "\(error.message)"]
                    )
                }
                return (log, false)
            }
            let info = try log.info()
            let signingKeyId = try log.activeSigningKey().id
            logger.notice(
                "created a new audit log (keys and genesis entry)",
                metadata: [
                    "stateDir": "\(state.path)", "logId": "\(Hex.encode(info.logId))", "deviceId": "\(device)",
                    "signingKeyId": "\(signingKeyId)",
                ]
            )
            return (log, true)
        } catch let error as LogStoreError {
            throw AgentError(.stateDirectory, "state directory \(state.path): \(error.message)")
        } catch {
            throw AgentError(.stateDirectory, "state directory \(state.path): \(error)")
        }
    }
}
