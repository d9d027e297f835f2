package import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP proxy in front of a backend that injects one fault at a time: refused connections, silence,
/// error statuses, resets in the middle of a response, slow answers, 413 for large batches.
///
/// One request per client connection (it answers `Connection: close`), one thread per connection, blocking
/// sockets. ``shutdown()`` closes every socket and waits for every thread; call it at the end of each test.
package final class FaultProxy: Sendable {
    /// What the proxy does with the next request.
    package enum Mode: Sendable, Hashable {
        /// Forward to the backend and back.
        case passThrough
        /// Stop listening: connecting is refused (ECONNREFUSED).
        case refuse
        /// Accept and read the request, never answer (the client times out).
        case blackhole
        /// Answer this status without forwarding, with an optional Retry-After.
        case status(Int, retryAfter: String? = nil)
        /// Forward, then send only the first half of the response and reset the connection.
        case resetMidResponse
        /// Wait this long, then forward.
        case slow(milliseconds: Int)
        /// Forward at once, then hold the backend's answer this long before passing it on (the backend has stored
        /// the request; a client with a shorter deadline never learns it).
        case answerLate(milliseconds: Int)
        /// Answer 413 when the batch has more than this many entries (counts `"idempotencyKey":`), else forward.
        case tooLargeAbove(entries: Int)

        /// The key under which requests are counted.
        package var name: String {
            switch self {
            case .passThrough: "passThrough"
            case .refuse: "refuse"
            case .blackhole: "blackhole"
            case .status(let code, _): "status\(code)"
            case .resetMidResponse: "reset"
            case .slow: "slow"
            case .answerLate: "answerLate"
            case .tooLargeAbove: "tooLarge"
            }
        }
    }

    private struct State {
        var mode = Mode.passThrough
        var listener: Int32 = -1
        var stopping = false
        var open: Set<Int32> = []
        var threads = 0
        var counts: [String: Int] = [:]
        var forwarded = 0
    }

    /// The port the proxy listens on (kept across ``Mode/refuse``).
    package let port: UInt16
    /// The backend's port on 127.0.0.1 (``setUpstream(_:)`` moves it, as a load balancer would to a new backend).
    package var upstream: UInt16 { upstreamPort.withLock { $0 } }
    private let upstreamPort: Mutex<UInt16>
    private let state = Mutex(State())

    /// Starts a proxy on 127.0.0.1, port 0, in front of 127.0.0.1:`upstream`.
    package init(upstream: Int) throws {
        self.upstreamPort = Mutex(UInt16(upstream))
        let (fd, port) = try SyncFaultSocket.listen(port: 0)
        self.port = port
        state.withLock {
            $0.listener = fd
            $0.threads = 1
        }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Forwards to another backend from the next request on.
    package func setUpstream(_ port: Int) { upstreamPort.withLock { $0 = UInt16(port) } }

    /// The proxy's base URL.
    package var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Switches the mode; switching to or from ``Mode/refuse`` closes or re-opens the listening socket at once.
    package func set(_ mode: Mode) throws {
        try state.withLock { state in
            state.mode = mode
            if mode == .refuse, state.listener >= 0 {
                // shutdown leaves LISTEN at once, even while the accept thread still polls the descriptor.
                Glibc.shutdown(state.listener, Int32(SHUT_RDWR))
                close(state.listener)
                state.listener = -1
            } else if mode != .refuse, state.listener < 0 {
                state.listener = try SyncFaultSocket.listen(port: port).fd
            }
        }
    }

    /// Requests seen, by mode name (``Mode/name``); refused connections are not seen.
    package var counts: [String: Int] { state.withLock { $0.counts } }

    /// Requests forwarded to the backend.
    package var forwarded: Int { state.withLock { $0.forwarded } }

    /// Closes every socket and waits (bounded) for every thread to finish.
    package func shutdown() {
        state.withLock { state in
            state.stopping = true
            if state.listener >= 0 {
                Glibc.shutdown(state.listener, Int32(SHUT_RDWR))
                close(state.listener)
            }
            state.listener = -1
            for fd in state.open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while state.withLock({ $0.threads }) > 0, ContinuousClock.now < deadline { usleep(5000) }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func acceptLoop() {
        defer { state.withLock { $0.threads -= 1 } }
        while true {
            guard let fd = state.withLock({ $0.stopping ? nil : $0.listener }) else { return }
            if fd < 0 {
                usleep(5000)
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            // Accept under the lock, so the listener cannot be closed (and its number reused) in between.
            let client = state.withLock { state -> Int32 in
                guard !state.stopping, state.listener == fd else { return -1 }
                let client = accept(fd, nil, nil)
                if client >= 0 {
                    state.open.insert(client)
                    state.threads += 1
                }
                return client
            }
            guard client >= 0 else { continue }
            Thread.detachNewThread { [self] in
                handle(client)
                state.withLock { state in
                    state.open.remove(client)
                    state.threads -= 1
                }
                close(client)
            }
        }
    }

    private func handle(_ client: Int32) {
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK)
        SyncFaultSocket.setReceiveTimeout(client, seconds: 30)
        let request = SyncFaultSocket.readMessage(client, isResponse: false) { head in
            if head.header("Expect")?.lowercased() == "100-continue" {
                SyncFaultSocket.write(client, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            }
        }
        guard let request else { return }
        let mode = state.withLock { state in
            state.counts[state.mode.name, default: 0] += 1
            return state.mode
        }
        switch mode {
        case .passThrough, .refuse:
            forward(request, to: client, cutInHalf: false)
        case .blackhole:
            // Hold the connection until the client gives up or the proxy stops.
            var byte: UInt8 = 0
            while !stopping {
                let count = recv(client, &byte, 1, 0)
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { break }
            }
        case .status(let code, let retryAfter):
            answer(client, status: code, retryAfter: retryAfter)
        case .resetMidResponse:
            forward(request, to: client, cutInHalf: true)
        case .slow(let milliseconds):
            let until = ContinuousClock.now + .milliseconds(milliseconds)
            while ContinuousClock.now < until, !stopping { usleep(5000) }
            forward(request, to: client, cutInHalf: false)
        case .answerLate(let milliseconds):
            forward(request, to: client, cutInHalf: false, holdFor: .milliseconds(milliseconds))
        case .tooLargeAbove(let limit):
            if SyncFaultSocket.count(Array(#""idempotencyKey":"#.utf8), in: request.body) > limit {
                answer(client, status: 413, retryAfter: nil)
            } else {
                forward(request, to: client, cutInHalf: false)
            }
        }
    }

    /// Forwards one request and its response; `cutInHalf` sends half the response, then an RST; `holdFor` waits
    /// that long between the backend's answer and passing it on.
    private func forward(
        _ request: SyncFaultSocket.Message,
        to client: Int32,
        cutInHalf: Bool,
        holdFor: Duration = .zero
    ) {
        guard let backend = try? SyncFaultSocket.connect(port: upstream) else {
            answer(client, status: 502, retryAfter: nil)
            return
        }
        let registered = state.withLock { state in
            guard !state.stopping else { return false }
            state.open.insert(backend)
            state.forwarded += 1
            return true
        }
        defer {
            state.withLock { _ = $0.open.remove(backend) }
            close(backend)
        }
        guard registered, SyncFaultSocket.write(backend, request.bytesForwarded),
            let response = SyncFaultSocket.readMessage(backend, isResponse: true)
        else {
            SyncFaultSocket.reset(client)
            return
        }
        var bytes = response.bytesForwarded
        let until = ContinuousClock.now + holdFor
        while ContinuousClock.now < until, !stopping { usleep(5000) }
        if cutInHalf {
            bytes = Array(bytes.prefix(bytes.count / 2))
            SyncFaultSocket.write(client, bytes)
            SyncFaultSocket.reset(client)
        } else {
            SyncFaultSocket.write(client, bytes)
        }
    }

    private func answer(_ client: Int32, status: Int, retryAfter: String?) {
        let body = Array(#"{"error":"fault proxy: injected HTTP \#(status)"}"#.utf8)
        var head = "HTTP/1.1 \(status) Injected\r\nContent-Type: application/json\r\n"
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n"
        if let retryAfter { head += "Retry-After: \(retryAfter)\r\n" }
        head += "\r\n"
        SyncFaultSocket.write(client, Array(head.utf8) + body)
    }
}
