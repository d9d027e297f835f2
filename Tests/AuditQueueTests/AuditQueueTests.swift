import Testing
@testable import AuditQueue
@Test func storeVersionIsOne() { #expect(AuditQueue.storeVersion == 1) }
