@testable import AuditHTTPClient
import Foundation
import Testing

/// ``PinnedHTTPClient``'s request target and its client for a URL.
@Suite struct PinnedHTTPClientURLTests {
    @Test("the request target is the URL's path and query, percent-encoded as given, `/` for none")
    func target() throws {
        let url = try #require(URL(string: "https://collector.example:8443/v1/logs/ab/proof/consistency?from=1&to=2"))
        #expect(PinnedHTTPClient.target(of: url) == "/v1/logs/ab/proof/consistency?from=1&to=2")
        #expect(PinnedHTTPClient.target(of: try #require(URL(string: "https://c.example"))) == "/")
        #expect(
            PinnedHTTPClient.target(of: try #require(URL(string: "https://c.example/a%20b?q=%2F"))) == "/a%20b?q=%2F"
        )
    }

    @Test("no pinned client without pins or for a URL that is not https://")
    func noPinnedClient() throws {
        let unpinned = SyncTLS()
        #expect(
            PinnedHTTPClient(
                url: try #require(URL(string: "https://c.example")),
                tls: unpinned,
                connectTimeout: .seconds(1),
                reuseConnections: false
            ) == nil
        )
        let pin = CertificatePin(subjectPublicKeyInfo: Array(repeating: 1, count: 44))
        let pinned = try SyncTLS(caFile: nil, clientCertificateFile: nil, clientKeyFile: nil, pins: [pin])
        #expect(
            PinnedHTTPClient(
                url: try #require(URL(string: "http://c.example")),
                tls: pinned,
                connectTimeout: .seconds(1),
                reuseConnections: false
            ) == nil
        )
        #expect(
            PinnedHTTPClient(
                url: try #require(URL(string: "https://[::1]:8443/v1")),
                tls: pinned,
                connectTimeout: .seconds(1),
                reuseConnections: false
            ) != nil
        )
    }
}
