package import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Why a TLS handshake with the backend failed, in words an operator can act on: BoringSSL says only "certificate
/// verify failed", so the certificate the backend presents is fetched once more, on a connection that checks
/// nothing and sends nothing, and its dates are read.
package enum TLSDiagnosis {
    /// The reason for a failed handshake with `host:port`.
    /// - Parameters:
    ///   - error: what the request failed with.
    ///   - now: the time the certificate's dates are compared with.
    package static func reason(for error: any Error, host: String, port: Int, now: Date = Date()) async -> String? {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "TLS: the collector's certificate does not name \(host) (wrong host name)"
        }
        guard error is NIOSSLError || error is BoringSSLError else { return nil }
        // Only a failed verification of the collector's chain is diagnosed; anything else (the collector refusing
        // the client certificate, no common protocol version) is the handshake's own error.
        guard "\(error)".contains("CERTIFICATE_VERIFY_FAILED") else { return "TLS handshake failed: \(error)" }
        guard let leaf = await presentedLeaf(host: host, port: port) else {
            return "TLS handshake failed: \(error)"
        }
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        let notBefore = Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))
        let format = ISO8601DateFormatter()
        if notAfter < now {
            return "TLS: the collector's certificate expired at \(format.string(from: notAfter))"
        }
        if notBefore > now {
            return "TLS: the collector's certificate is not valid before \(format.string(from: notBefore))"
        }
        return "TLS: the collector's certificate is not signed by a trusted CA (unknown CA): \(error)"
    }

    /// The leaf certificate `host:port` presents, read without verifying it; nil if none could be read.
    static func presentedLeaf(host: String, port: Int) async -> NIOSSLCertificate? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let group = HTTPClients.eventLoopGroup
        let promise = group.next().makePromise(of: NIOSSLCertificate?.self)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(
                        context: context,
                        serverHostname: host.first?.isNumber == true || host.contains(":") ? nil : host,
                        customVerificationCallback: { certificates, verification in
                            promise.succeed(certificates.first)
                            verification.succeed(.failed)
                        }
                    )
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        do {
            let channel = try await bootstrap.connect(host: host, port: port).get()
            let timeout = channel.eventLoop.scheduleTask(in: .seconds(5)) { promise.succeed(nil) }
            let leaf = try? await promise.futureResult.get()
            timeout.cancel()
            try? await channel.close()
            return leaf
        } catch {
            promise.succeed(nil)
            return nil
        }
    }
}
