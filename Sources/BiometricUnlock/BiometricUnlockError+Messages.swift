extension BiometricUnlockError {
    /// The error reported when the password is required for `reason`, if that reason is a fault.
    static func forFallback(_ reason: PasswordReason, maxAttempts: Int) -> BiometricUnlockError? {
        switch reason {
        case .clockInconsistent:
            BiometricUnlockError(
                .inconsistentClock,
                "the wall clock is behind the last password authentication or implausibly far ahead of it; "
                    + "the password is required (check the device's date and time)"
            )
        case .counterInconsistent: counterInconsistent()
        case .biometricRevoked: biometricSetChanged()
        case .promptCancelled:
            BiometricUnlockError(.promptCancelled, "the biometric prompt was cancelled; enter the password to unlock")
        case .biometricUnavailable:
            BiometricUnlockError(
                .unavailable,
                "the biometric sensor is unavailable; enter the password to unlock"
            )
        case .artefactsUnreadable:
            BiometricUnlockError(
                .unavailable,
                "the biometric key or envelope is missing or does not open, so it was purged; unlock with the "
                    + "password and enable biometric unlock again"
            )
        case .deviceBoot, .passwordChanged, .lockout, .timeoutExceeded, .firstUnlock, .userChosePassword: nil
        }
    }

    static func counterInconsistent() -> BiometricUnlockError {
        BiometricUnlockError(
            .inconsistentCounter,
            "the failed biometric attempt counter was unreadable or impossible; it was reset and the password is "
                + "required"
        )
    }

    static func biometricSetChanged() -> BiometricUnlockError {
        BiometricUnlockError(
            .biometricSetChanged,
            "the enrolled biometric set changed, so biometric unlock was revoked and its key purged; unlock with the "
                + "password and enable biometric unlock again"
        )
    }

    static func recognitionFailed(attempt: Int, of maximum: Int) -> BiometricUnlockError {
        let next = attempt < maximum ? "try again or use the password" : "enter the password to unlock"
        return BiometricUnlockError(
            .recognitionFailed,
            "the biometric was not recognised (attempt \(attempt) of \(maximum)); \(next)"
        )
    }

    static func passwordRejected() -> BiometricUnlockError {
        BiometricUnlockError(.badPassword, "the password was not accepted; check it and try again")
    }

    static func passwordThrottled(retryAfterMs: Int64) -> BiometricUnlockError {
        guard retryAfterMs > 0 else {
            return BiometricUnlockError(
                .passwordThrottled,
                "another password attempt is being checked, so this one was not; wait for its answer"
            )
        }
        let seconds = retryAfterMs / 1000 + (retryAfterMs % 1000 > 0 ? 1 : 0)
        return BiometricUnlockError(
            .passwordThrottled,
            "too many wrong passwords in a row, so the password is not checked for \(seconds) more second(s); "
                + "wait and try again"
        )
    }
}
