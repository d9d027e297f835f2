public import BiometricUnlock
import Synchronization

/// A biometric prompt that answers from a script, for tests and simulations.
///
/// Each prompt takes the next response; when the script is empty it answers ``fallback``. A response may take
/// time on a ``ManualClock``, which is how a test sets the measured unlock duration.
public final class ScriptedBiometricAuthenticator: BiometricAuthenticator, Sendable {
    /// One scripted prompt.
    public struct Response: Sendable, Hashable {
        /// How the prompt ends.
        public var result: BiometricPromptResult
        /// How long the user takes.
        public var takes: Duration

        /// Creates a response.
        public init(_ result: BiometricPromptResult, takes: Duration = .zero) {
            self.result = result
            self.takes = takes
        }
    }

    private struct Contents {
        var script: [Response]
        var availability: BiometricAvailability
        var fallback: BiometricPromptResult
        var prompts: [String] = []
    }

    private let contents: Mutex<Contents>
    private let clock: ManualClock?

    /// Creates an authenticator.
    /// - Parameters:
    ///   - script: the responses, in order.
    ///   - availability: what ``availability()`` reports.
    ///   - fallback: the answer once the script is used up.
    ///   - clock: advanced by each response's `takes`.
    public init(
        script: [Response] = [],
        availability: BiometricAvailability = .available(biometryType: "faceID"),
        fallback: BiometricPromptResult = .cancelled,
        clock: ManualClock? = nil
    ) {
        self.contents = Mutex(Contents(script: script, availability: availability, fallback: fallback))
        self.clock = clock
    }

    /// The reasons of the prompts shown so far.
    public var prompts: [String] { contents.withLock { $0.prompts } }
    /// The responses not used yet.
    public var remainingScript: [Response] { contents.withLock { $0.script } }

    /// Adds responses at the end of the script.
    public func enqueue(_ responses: Response...) {
        contents.withLock { $0.script += responses }
    }

    /// Replaces the responses not used yet.
    public func setScript(_ responses: [Response]) {
        contents.withLock { $0.script = responses }
    }

    /// Changes what ``availability()`` reports.
    public func setAvailability(_ availability: BiometricAvailability) {
        contents.withLock { $0.availability = availability }
    }

    /// The scripted availability.
    public func availability() async -> BiometricAvailability { contents.withLock { $0.availability } }

    /// The next scripted response.
    public func authenticate(reason: String) async -> BiometricPromptResult {
        let response = contents.withLock {
            $0.prompts.append(reason)
            return $0.script.isEmpty ? Response($0.fallback) : $0.script.removeFirst()
        }
        clock?.advance(by: response.takes)
        return response.result
    }
}
